"""Matching a failure against the patterns: the best pattern and what its regexes captured."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import regex

from logsleuth import versions
from logsleuth.diagnosis.schema import (
    CATEGORIES,
    REGEX_TIMEOUT,
    MatchRule,
    Pattern,
    PatternMatch,
    PatternTimeout,
    Regex,
)
from logsleuth.facts.categories import neutral_checks
from logsleuth.facts.message_templates import short_type
from logsleuth.models import Diagnosis, ExceptionBlock, Failure, Fix, Frame, LaunchInfo
from logsleuth.pydantic_display import validator_error

# The id of a diagnosis made without knowing the engine: `engine-unknown-<category>`.
ENGINE_UNKNOWN_PREFIX = "engine-unknown-"
# The programs whose argparse is the engine's own: its commands (`vllm serve`, `sglang`), the entry points run with
# `python -m` (`api_server.py`, `launch_server.py`, a package's `__main__.py`), SGLang's offline benchmarks, whose
# parser adds all of the server's arguments (`bench_one_batch.py: error: …`), and vLLM's `vllm bench latency|throughput`,
# whose parser adds the engine's (facts/entry_points.py).  SGLang's `bench_offline_throughput.py` counts only where
# the log shows SGLang's LLM engine ran it: its multimodal_gen package has a benchmark of that name whose parser is
# another (sglang/multimodal_gen/benchmarks/bench_offline_throughput.py, 0.5.23).
_ENGINE_PROGRAM = regex.compile(
    r"(?:vllm|sglang)(?: [\w-]+)?|vllm bench (?:throughput|latency)"
    r"|[\w./-]*\b(?:api_server|launch_server|__main__|run_batch|bench_one_batch|bench_offline_throughput)\.py"
)
_SHARED_NAME = "bench_offline_throughput.py"


def _search(pattern: Regex, text: str) -> regex.Match[str] | None:
    try:
        return pattern.search(text, timeout=REGEX_TIMEOUT)
    except TimeoutError as exc:
        raise PatternTimeout(pattern.pattern) from exc


def _fullmatch(pattern: Regex, text: str) -> regex.Match[str] | None:
    try:
        return pattern.fullmatch(text, timeout=REGEX_TIMEOUT)
    except TimeoutError as exc:
        raise PatternTimeout(pattern.pattern) from exc


def _frame_matches(rule: MatchRule, frame: Frame, captures: dict[str, str]) -> bool:
    checks = ((rule.frame_file, frame.file), (rule.frame_function, frame.function or ""), (rule.source, frame.source or ""))
    found: dict[str, str] = {}
    for pattern, text in checks:
        if pattern is None:
            continue
        m = _search(pattern, text)
        if m is None:
            return False
        found.update({k: v for k, v in m.groupdict().items() if v is not None})
    captures.update(found)
    return True


def _rule_matches(rule: MatchRule, failure: Failure, log_lines: Iterable[str], command: str | None = None) -> dict[str, str] | None:
    final: ExceptionBlock = failure.final
    captures: dict[str, str] = {}
    if rule.kind and failure.kind not in rule.kind:
        return None
    # A pydantic ValidationError carrying a validator's ValueError (vLLM's config classes, a wrapper's settings
    # model) is that ValueError to a rule written for the raising code's words: the engine or library raised it so.
    raised = validator_error(final)
    if rule.exception_type is not None:
        names = (final.type, short_type(final.type), *(("ValueError",) if raised is not None else ()))
        if not any(_fullmatch(rule.exception_type, name) for name in names):
            return None
    if rule.usage is not None:
        if failure.kind != "usage":
            return None
        m = _search(rule.usage, final.message)
        if m is None:
            return None
        captures.update({k: v for k, v in m.groupdict().items() if v is not None})
    if rule.message is not None:
        m = _search(rule.message, final.message)
        if m is None and raised is not None and (
                rule.exception_type is None or _fullmatch(rule.exception_type, "ValueError")):
            m = _search(rule.message, raised)  # a rule anchored at the ValueError's own first word
        if m is None:
            return None
        captures.update({k: v for k, v in m.groupdict().items() if v is not None})
    if rule.chain_message is not None:
        for block in failure.exceptions:
            m = _search(rule.chain_message, f"{block.type}: {block.message}")
            if m is not None:
                captures.update({k: v for k, v in m.groupdict().items() if v is not None})
                break
        else:
            return None
    if rule.frame_file or rule.frame_function or rule.source:
        if not any(_frame_matches(rule, frame, captures) for frame in reversed(final.frames)):
            return None
    if rule.log_line is not None:
        for text in (*failure.context, *log_lines):
            m = _search(rule.log_line, text)
            if m is not None:
                captures.update({k: v for k, v in m.groupdict().items() if v is not None})
                break
        else:
            return None
    if rule.command is not None:
        m = _search(rule.command, command) if command else None
        if m is None:
            return None
        captures.update({k: v for k, v in m.groupdict().items() if v is not None})
    return captures


def match_failure(
    patterns: Iterable[Pattern],
    failure: Failure,
    log_lines: Iterable[str] = (),
    *,
    engine: str | None = None,
    engine_version: str | None = None,
    command: str | None = None,
    on_error: Any = None,
    disabled: set[str] | None = None,
) -> PatternMatch | None:
    """The best pattern for a failure: lowest priority number, then the last layer loaded.

    A pattern with `versions` is skipped when the engine version is known and outside them.  A pattern whose
    regex times out is reported once through `on_error` and added to `disabled`, which later calls skip: one
    catastrophic user regex costs REGEX_TIMEOUT once per run, not once per failure."""
    best: PatternMatch | None = None
    lines = tuple(log_lines)
    for pattern in patterns:
        if disabled is not None and pattern.id in disabled:
            continue
        if engine and pattern.engine and pattern.engine != engine:
            continue
        if not versions.matches(pattern.versions, engine_version):
            continue
        try:
            for rule in pattern.rules:
                captures = _rule_matches(rule, failure, lines, command)
                if captures is not None:
                    if best is None or pattern.priority <= best.pattern.priority:
                        best = PatternMatch(pattern, captures)
                    break
        except PatternTimeout as exc:
            if disabled is not None:
                disabled.add(pattern.id)
            if on_error is not None:
                on_error(
                    f"pattern {pattern.id} ({pattern.path}): regex timed out; the pattern is disabled for this run: {exc}"
                )
    return best


def other_program(failure: Failure, launch: LaunchInfo | None = None) -> str | None:
    """The program argparse names on a usage error when it is not the engine's (`llamafactory-cli`, `swift infer`,
    `xinference-local`, a user's `run.py`): that program's own parser refused the argument, so none of the engine's
    flags, choices or releases says anything of it (stop 42's blind split: a wrapper's CLI given an engine's fix).
    With the `launch` known, SGLang's `bench_offline_throughput.py` is the engine's only when the launch ran its LLM
    benchmark (_ENGINE_PROGRAM)."""
    program = failure.program if failure.kind == "usage" else None
    if not program or not _ENGINE_PROGRAM.fullmatch(program):
        return program
    if launch is not None and program.endswith(_SHARED_NAME) and "offline_throughput" not in (launch.other_entry_point or ""):
        return program
    return None


def engine_unknown_diagnosis(pattern: Pattern, keep: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
                             texts: tuple[str, ...] = ()) -> Diagnosis:
    """What an engine's pattern may say when the log does not show which engine ran: its category and that
    category's engine-neutral general checks (facts/categories.toml), nothing of its engine.  The engines word
    many failures alike (SGLang's registry raises vLLM's "Model architectures [...] are not supported for now"),
    and a fix names one engine's flags, releases and packages: said for the wrong engine, it is harmful.  So no
    engine-specific fix, the general checks (basis "general"), and one line on how to let logsleuth know the
    engine.  `keep`: which of those checks hold for this failure (reasoning/remote_code.py drops a trust-remote-code
    check that cannot help).  `texts`: the failure's own lines, which pick the category's worded engine-neutral checks."""
    meaning = CATEGORIES.get(pattern.category, pattern.category)
    checks = neutral_checks(pattern.category, texts)
    checks = keep(checks) if keep is not None else checks
    fix = Fix(summary=f"General checks for {pattern.category}, for either engine:", steps=(*checks, CMD_HINT))
    return Diagnosis(
        pattern=ENGINE_UNKNOWN_PREFIX + pattern.category,
        title=meaning[:1].upper() + meaning[1:],
        category=pattern.category,
        root_cause=(
            f"The failure reads as {pattern.category} ({meaning}). The log does not show which engine ran "
            "(no launch command, no argparse program name, no version banner, no engine frame), and the engines "
            "word this failure alike, so no engine-specific cause or fix is given."
        ),
        fix=fix if checks else Fix(summary=CMD_HINT),
        basis="general",
    )


# How to let logsleuth know the engine and its launch: one line, said where the command is not known.
CMD_HINT = (
    "Give logsleuth the launch command (--cmd '...') or the start of the log, so the engine and its version are "
    "known and the fix can be specific."
)
