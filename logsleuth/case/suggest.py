"""`logsleuth case --suggest-pattern`: a case plus the fix the user confirms, as a draft pattern with fixtures.

The draft is a pattern TOML of the bundled schema (docs/writing-patterns.md) with a positive fixture (the
failure as the log printed it, redacted) and a negative one (a near miss: the same frames ending in another
exception).  Before anything is written, the draft is loaded with the project's own loader and diagnosed
against both fixtures, as `diagnose --patterns DIR` would: it must match the positive and not the negative.
Files are created exclusively: an existing file is never overwritten.
"""

from __future__ import annotations

import dataclasses
import json
import re
import shlex
import tempfile
from dataclasses import dataclass
from pathlib import Path

from logsleuth.case.build import case_launch, primary_failure, redacted_inputs
from logsleuth.case.flags import choose_catalogs
from logsleuth.case.markdown import traceback_lines
from logsleuth.case.model import LogWindow
from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.facts.message_templates import short_type
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.catalog import Catalog
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENV_NAME, FailureGroup, FlagOp, LaunchInfo, Report
from logsleuth.render.view import describe_op

DRAFT_PRIORITY = 500  # between the specific patterns (100-470) and the catch-alls (600-900)
MESSAGE_CHARS = 160  # of the failure's message line a draft matches on
_OPS = ("add", "remove", "set", "rename")
_FLAG = compile_lazily(r"--[A-Za-z0-9][\w-]*")


class DraftError(LogsleuthError):
    """A draft that does not match its own failure: a logsleuth limitation, reported in one line."""

    exit_status = ExitStatus.INTERNAL


@dataclass(frozen=True)
class ConfirmedFix:
    """The fix a user says worked, as flag operations and environment settings."""
    flags: tuple[FlagOp, ...]
    env: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class Draft:
    """A drafted pattern: its TOML and the fixtures it was proven on."""
    pattern_id: str
    toml: str
    positive: str  # log text
    negative: str

    def files(self) -> dict[str, str]:
        """Relative path -> text, laid out as the bundled library is (tests/fixtures/patterns/<id>/…)."""
        return {
            f"{self.pattern_id}.toml": self.toml,
            f"{self.pattern_id}/positive-case.log": self.positive,
            f"{self.pattern_id}/negative-near-miss.log": self.negative,
        }


# -- the fix the user confirms --------------------------------------------------------------------------------


def parse_confirmed_fix(text: str) -> ConfirmedFix:
    """`--speculative-num-steps 3 remove --speculative-eagle-topk HF_HOME=/data`: a flag with a value is set, a
    flag alone is added (a switch), `add`/`remove`/`set`/`rename OLD NEW` say the operation, NAME=value sets an
    environment variable.  The words logsleuth prints in a fix (`add --x 15`, `rename --a -> --b`) read back."""
    try:
        words = shlex.split(text)
    except ValueError as exc:
        raise UsageError(f"--confirmed-fix: cannot read {text!r}: {exc}") from None
    ops: list[FlagOp] = []
    env: list[tuple[str, str]] = []
    op: str | None = None
    while words:
        word = words.pop(0)
        if word in _OPS:
            op = word
            continue
        name, equals, value = word.partition("=")
        if equals and ENV_NAME.fullmatch(name) and not word.startswith("-"):
            env.append((name, value))
            continue
        if not _FLAG.fullmatch(name):
            raise UsageError(f"--confirmed-fix: {word!r} is not a --flag, an operation (add, remove, set, rename) or NAME=value")
        value_given = value if equals else (words.pop(0) if words and _is_value(words[0]) else None)
        ops.append(_op(op, name, value_given, words))
        op = None
    if not ops and not env:
        raise UsageError("--confirmed-fix: no flag given (e.g. --confirmed-fix \"--speculative-num-steps 3\")")
    return ConfirmedFix(tuple(ops), tuple(env))


def _is_value(word: str) -> bool:
    return word not in _OPS and word not in ("->", "=>") and not _FLAG.fullmatch(word.partition("=")[0])


def _op(op: str | None, flag: str, value: str | None, words: list[str]) -> FlagOp:
    if op == "rename":
        if words and words[0] in ("->", "=>"):
            words.pop(0)
        target = words.pop(0) if words and _FLAG.fullmatch(words[0]) else None
        if target is None:
            raise UsageError(f"--confirmed-fix: rename {flag} needs the new name (rename {flag} --new-name)")
        return FlagOp("rename", flag, to=target)
    if op == "remove":
        return FlagOp("remove", flag)
    if op is None:
        op = "set" if value is not None else "add"
    return FlagOp(op, flag, value)  # type: ignore[arg-type]


def check_against_catalogs(fix: ConfirmedFix, known: tuple[Catalog, ...], note: str) -> None:
    """Every flag the fix adds, sets or renames to must be one of the log's engine version (a removed flag may
    be anything: removing a flag of another engine is a fix), and a value must be one of its choices."""
    if not known:
        return
    for op in fix.flags:
        flag = op.to if op.op == "rename" else op.flag
        if op.op == "remove" or flag is None:
            continue
        infos = [info for catalog in known if (info := catalog.find(flag)) is not None]
        if not infos:
            elsewhere = catalogs.versions_with(known[0].engine, flag)
            where = f" (it exists in {', '.join(elsewhere)})" if elsewhere else ""
            raise UsageError(f"--confirmed-fix: {flag} is not a flag of {note}{where}")
        choices = set().union(*(info.choices for info in infos))
        if op.value is not None and choices and op.value not in choices:
            raise UsageError(f"--confirmed-fix: {op.value!r} is not a choice of {flag} (choose from {', '.join(sorted(choices))})")


# -- the draft ------------------------------------------------------------------------------------------------

_CATEGORY_HINTS: tuple[tuple[str, str], ...] = (
    (r"OutOfMemory|CUDA out of memory", "gpu-oom"),
    (r"unrecognized arguments", "unknown-flag"),
    (r"invalid choice|invalid \w+ value|expected one argument|ignored explicit argument", "invalid-flag-value"),
    (r"illegal memory access", "illegal-memory-access"),
    (r"device-side assert", "device-assert"),
    (r"Address already in use|Errno 98", "port-in-use"),
    (r"\bNCCL\b|nccl", "nccl"),
    (r"speculative|eagle", "spec-decoding-args"),
    (r"\blora\b", "lora-config"),
    (r"context.length", "context-length"),
    (r"tp_size|tensor.parallel|dp_size|pp_size|nnodes", "parallel-config"),
    (r"Segmentation fault|Aborted", "native-crash"),
    (r"ImportError|ModuleNotFoundError|undefined symbol", "dependency-version"),
    (r"load_weights|weight", "weight-loading"),
    (r"\bKilled\b|SIGKILL", "process-killed"),
)


def guess_category(group: FailureGroup, fix: ConfirmedFix) -> str:
    final = group.failure.final
    functions = " ".join(frame.function or "" for frame in final.frames[-3:])
    text = f"{final.type}: {final.message}\n{functions}\n" + " ".join(op.flag for op in fix.flags)
    for hint, category in _CATEGORY_HINTS:
        if re.search(hint, text, re.IGNORECASE):
            return category
    return "missing-flag" if all(op.op == "add" for op in fix.flags) else "invalid-flag-value"


_METACHARACTERS = compile_lazily(r"([.^$*+?{}\[\]\\|()])")


def _literal(text: str) -> str:
    """`text` as a regex that matches it literally, escaping only what a regex reads (re.escape also escapes
    spaces and dashes, which makes a pattern file hard to read)."""
    return _METACHARACTERS.sub(r"\\\1", text)


def _generalized(text: str) -> str:
    """A message line as a regex: literal, with numbers and addresses free (they change from run to run)."""
    pattern = _literal(text[:MESSAGE_CHARS])
    pattern = re.sub(r"0x[0-9a-fA-F]+", r"0x[0-9a-fA-F]+", pattern)
    return re.sub(r"(?<![\w\\])\d+(?:\\\.\d+)?", r"\\d+(?:\\.\\d+)?", pattern)


def match_rule(group: FailureGroup) -> dict[str, str | list[str]]:
    """What identifies this failure: its kind (beyond tracebacks), exception type, message, and the innermost
    frame of the engine's own code (its source line when the message says nothing, as for a bare assert)."""
    failure = group.failure
    final = failure.final
    rule: dict[str, str | list[str]] = {}
    if failure.kind not in ("traceback", "bare"):
        rule["kind"] = [failure.kind]
    rule["exception_type"] = _literal(final.type)
    first = final.message.split("\n", 1)[0].strip() if final.message else ""
    if first and failure.kind != "killed":
        rule["usage" if failure.kind == "usage" else "message"] = _generalized(first)
    frame = next((f for f in reversed(final.frames) if f.in_app), final.frames[-1] if final.frames else None)
    if frame is not None and frame.function:
        rule["frame_function"] = f"^{_literal(frame.function)}$"
        if not first and frame.source:
            rule["source"] = _literal(frame.source.strip())
    return rule


def pattern_id(group: FailureGroup, engine: str | None) -> str:
    final = group.failure.final
    frame = next((f for f in reversed(final.frames) if f.in_app and f.function), None)
    words = f"{short_type(final.type)} {frame.function if frame else ''}"
    slug = re.sub(r"[^a-z0-9]+", "-", re.sub(r"(?<=[a-z])(?=[A-Z])", " ", words).lower()).strip("-")[:60].strip("-")
    return f"user-{engine or 'any'}-{slug or 'failure'}"


def _toml(value: str) -> str:
    """A TOML basic string: JSON's escapes are TOML's."""
    return json.dumps(value, ensure_ascii=False)


def _flag_table(op: FlagOp) -> str:
    parts = [f"op = {_toml(op.op)}", f"flag = {_toml(op.flag)}"]
    if op.value is not None:
        parts.append(f"value = {_toml(op.value)}")
    if op.to:
        parts.append(f"to = {_toml(op.to)}")
    return "{ " + ", ".join(parts) + " }"


def draft_toml(
    group: FailureGroup, launch: LaunchInfo, fix: ConfirmedFix, *, category: str, guessed: bool, priority: int, source: str
) -> str:
    seen = primary_failure(group).headline
    version = f"{launch.engine} {launch.engine_version}" if launch.engine and launch.engine_version else (launch.engine or "an unknown engine")
    summary = "Confirmed fix: " + "; ".join(describe_op(op) for op in fix.flags) + "." if fix.flags else "Confirmed fix."
    lines = [
        f"# Drafted by `logsleuth case --suggest-pattern` from {source} ({version}); review it before use.",
        "# Load it with `logsleuth diagnose --patterns DIR`; to contribute it, see docs/writing-patterns.md.",
        f"id = {_toml(pattern_id(group, launch.engine))}",
        f"title = {_toml('Draft: ' + seen[:100])}",
        f"category = {_toml(category)}" + ("  # guessed: check it (docs/writing-patterns.md#categories)" if guessed else ""),
        f"priority = {priority}",
    ]
    if launch.engine:
        lines.append(f"engine = {_toml(launch.engine)}")
    cause = f"TODO: say why this fails. logsleuth saw `{seen[:200]}`; the fix below was confirmed on {version}."
    lines += [f"root_cause = {_toml(cause)}", "", "[[match]]"]
    lines += [f"{key} = {_toml(value) if isinstance(value, str) else '[' + ', '.join(map(_toml, value)) + ']'}" for key, value in match_rule(group).items()]
    lines += ["", "[fix]", f"summary = {_toml(summary)}"]
    if fix.flags:
        lines.append("flags = [" + ", ".join(_flag_table(op) for op in fix.flags) + "]")
    if fix.env:
        lines.append("env = { " + ", ".join(f"{name} = {_toml(value)}" for name, value in fix.env) + " }")
    return "\n".join(lines) + "\n"


def _near_miss(group: FailureGroup, before: tuple[str, ...]) -> str:
    """The same frames ending in another exception: a failure at the same place that this draft must not
    claim."""
    failure = primary_failure(group)
    last = failure.chain[-1]
    other = "ValueError" if short_type(last.type) == "RuntimeError" else "RuntimeError"
    near = dataclasses.replace(last, type=other, message=("logsleuth near miss: another failure at the same place",), message_left_out=0)
    failure = dataclasses.replace(failure, kind="traceback", chain=(*failure.chain[:-1], near), header=None)
    return "\n".join([*before, *traceback_lines(failure)]) + "\n"


FIXTURE_HEADER = "# drafted by logsleuth case --suggest-pattern from a redacted log; review it before use\n"


def _positives(group: FailureGroup, window: LogWindow, command: str | None) -> list[str]:
    """Candidate positive fixtures, most faithful first: the log's own lines (before the failure and the
    failure itself), the failure's lines alone, then the failure rebuilt in CPython's layout."""
    launch = [f"+ {command}"] if command else []
    candidates = []
    if window.failure:
        candidates += [[*launch, *window.before, *window.failure], list(window.failure)]
        if window.opening:  # the log's lines do not show the engine without it: tried when those fail
            candidates.insert(1, [*launch, window.opening, *window.before, *window.failure])
    candidates.append(traceback_lines(primary_failure(group)))
    return [FIXTURE_HEADER + "\n".join(lines) + "\n" for lines in candidates]


def verify(draft: Draft, directory: Path) -> str | None:
    """Why the draft in `directory` fails its own fixtures (None: it loads, matches its positive and not its
    negative), through the loader and diagnosis `diagnose --patterns DIR` uses."""
    from logsleuth.api import DiagnoseOptions, diagnose_text, load_library

    options = DiagnoseOptions(pattern_dirs=(str(directory),), include_user_patterns=False)
    library = load_library(options)
    if library.errors:
        return library.errors[0]
    if not any(pattern.id == draft.pattern_id for pattern in library.patterns):
        return "the draft did not load"
    positive = diagnose_text(draft.positive, options, patterns=library).primary
    if positive is None or positive.diagnosis is None or positive.diagnosis.pattern != draft.pattern_id:
        return "the draft does not match its positive fixture"
    negative = diagnose_text(draft.negative, options, patterns=library)
    if any(group.diagnosis and group.diagnosis.pattern == draft.pattern_id for group in negative.failures):
        return "the draft matches its negative fixture"
    return None


def _write(directory: Path, files: dict[str, str], *, exclusive: bool) -> list[Path]:
    written = []
    for relative, text in files.items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("x" if exclusive else "w", encoding="utf-8") as handle:
            handle.write(text)
        written.append(path)
    return written


def suggest_pattern(
    report: Report, fix_text: str, out: Path, *, category: str | None = None, window: LogWindow | None = None
) -> tuple[Draft, list[Path]]:
    """Draft a pattern for `report`'s primary failure with the confirmed fix, verify it, and write it to `out`
    (created when missing; no existing file is replaced).  The files written, in order."""
    if category is not None and category not in CATEGORIES:
        raise UsageError(f"--category: unknown category {category!r} (known: {', '.join(sorted(CATEGORIES))})")
    fix = parse_confirmed_fix(fix_text)
    redacted, window = redacted_inputs(report, window)
    group = redacted.primary
    if group is None:
        raise UsageError("--suggest-pattern: the log holds no failure to draft a pattern from")
    launch = case_launch(redacted.launch)
    known, note = choose_catalogs(launch)
    check_against_catalogs(fix, known, ", ".join(f"{c.engine} {c.version}" for c in known) or note)
    priority = min(DRAFT_PRIORITY, _matched_priority(report))
    toml = draft_toml(
        group, launch, fix, category=category or guess_category(group, fix), guessed=category is None,
        priority=priority, source=Path(group.sources[0]).name if group.sources else "a log",
    )
    negatives = [FIXTURE_HEADER + _near_miss(group, window.before), FIXTURE_HEADER + _near_miss(group, ())]
    existing = [out / relative for relative in Draft(pattern_id(group, launch.engine), "", "", "").files() if (out / relative).exists()]
    if existing:
        raise UsageError(f"--out: {existing[0]} exists; logsleuth never overwrites a draft (choose another directory)")
    reasons = []
    for positive in _positives(group, window, launch.command):
        for negative in negatives:
            draft = Draft(pattern_id(group, launch.engine), toml, positive, negative)
            with tempfile.TemporaryDirectory(prefix="logsleuth-draft-") as scratch:
                _write(Path(scratch), draft.files(), exclusive=False)
                reason = verify(draft, Path(scratch))
            if reason is None:
                try:
                    return draft, _write(out, draft.files(), exclusive=True)
                except FileExistsError as exc:
                    raise UsageError(f"--out: {exc.filename} exists; logsleuth never overwrites a draft") from None
                except OSError as exc:
                    raise LogsleuthError(f"--out: cannot write {exc.filename or out}: {exc.strerror or exc}") from None
            reasons.append(reason)
    raise DraftError(f"could not draft a pattern that matches this failure ({reasons[0]}); please report it")


def _matched_priority(report: Report) -> int:
    """The priority of the pattern that already matched this failure: the draft takes its place (a later
    layer wins a tie), so that its own fix is the one shown."""
    from logsleuth.api import DiagnoseOptions, load_library

    primary = report.primary
    if primary is None or primary.diagnosis is None:
        return DRAFT_PRIORITY
    library = load_library(DiagnoseOptions(include_user_patterns=False))
    return next((p.priority for p in library.patterns if p.id == primary.diagnosis.pattern), DRAFT_PRIORITY)
