"""Done when (issue 28, item 4): the engine is right on every log of every corpus.

Every log of the wild corpus (its .toml's `engine`), of the pattern fixtures (their directory's engine) and of
the team's shared corpus (its .toml's `engine`; skipped where /work/shared is absent) is diagnosed once; the
report names the log's engine.  "Unknown" is accepted only where the log truly carries no positive evidence and
says so: a wild .toml with `engine_shown = false` and the reason in `engine_unshown`
(scripts/wild_fixtures/engine_unshown.py), a pattern fixture listed below with its reason.  The other engine is
never accepted.  (tests/test_engine_decision.py checks, over the same logs, that no pattern of the other engine
fires.)"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator
from dataclasses import fields, is_dataclass
from functools import cache
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.fixes import static_catalogs
from logsleuth.models import Diagnosis, Report
from tests.test_engine_logged_and_launched import RENDEZVOUS

REPO = Path(__file__).resolve().parents[1]
WILD = REPO / "tests" / "fixtures" / "wild"
PATTERN_FIXTURES = REPO / "tests" / "fixtures" / "patterns"
SHARED_CORPUS = REPO.parent / "shared" / "corpus"
OPTIONS = DiagnoseOptions(include_user_patterns=False)

# Pattern fixtures (they have no .toml) whose log shows no engine, and why.
PATTERN_FIXTURES_UNSHOWN = {
    "common-k8s-image-pull-failed/negative-config-error": "a pod's missing-secret events: no image, command or engine output",
    "common-k8s-insufficient-gpu/negative-insufficient-memory": "a pod's scheduling events: no image, command or engine output",
    "common-k8s-insufficient-gpu/positive-insufficient-gpu": "a pod's scheduling events: no image, command or engine output",
    "common-transformers-unknown-model-type/negative-exception-line-other-key": "a bare KeyError line",
    "common-transformers-unknown-model-type/positive-exception-line-only": "a bare KeyError line",
    "vllm-chat-template-missing/negative-0.11.0-client-tool-choice": "a client's curl and the JSON error body: no server output",
    "vllm-gated-repo/positive-transformers-4.34.1-paste": "huggingface_hub's gated-repo error alone: a library's words",
    "vllm-gated-repo/positive-transformers-4.57.1-paste": "huggingface_hub's gated-repo error alone: a library's words",
}
# Pattern fixtures whose log is the other engine's: the engine-neutral resolver pattern's fixtures of vLLM's pins.
PATTERN_FIXTURES_OTHER_ENGINE = {
    "common-pip-resolver-conflict/positive-vllm-cannot-install": "vllm",
    "common-pip-resolver-conflict/positive-vllm-installed-conflict": "vllm",
    "common-nccl-duplicate-gpu/positive-0.33.0-last-error": "vllm",
    "common-nccl-duplicate-gpu/negative-0.11.0-unhandled-cuda-error": "vllm",
    # vllm-ascend's EngineCore records (scripts/pattern_fixtures/cases/host_limits.py)
    "common-ascend-op-missing-from-op-library/positive-vllm-ascend-engine-core": "vllm",
    "common-ascend-op-missing-from-op-library/negative-operator-call-failed": "vllm",
}


def pattern_fixture_engine(log: Path) -> str:
    """The engine of a pattern fixture's log: its pattern's (the directory's prefix); the engine-neutral patterns'
    (patterns/common/) fixtures are written as SGLang launches, but for those listed above."""
    prefix = log.parent.name.split("-", 1)[0]
    return PATTERN_FIXTURES_OTHER_ENGINE.get(f"{log.parent.name}/{log.stem}", "sglang" if prefix == "common" else prefix)


def _toml_cases(root: Path) -> list[tuple[Path, str, str | None]]:
    """(log, engine, why no engine is shown or None) of each case of a corpus of .log and .toml pairs."""
    cases = []
    for expectation in sorted(root.rglob("*.toml")):
        want = tomllib.loads(expectation.read_text(encoding="utf-8"))
        if "engine" not in want or not expectation.with_suffix(".log").exists():
            continue
        unshown = want.get("engine_unshown") if want.get("engine_shown") is False else None
        cases.append((expectation.with_suffix(".log"), str(want["engine"]), unshown))
    return cases


def _pattern_cases() -> list[tuple[Path, str, str | None]]:
    cases = []
    for log in sorted(PATTERN_FIXTURES.rglob("*.log")):
        name = f"{log.parent.name}/{log.stem}"
        cases.append((log, pattern_fixture_engine(log), PATTERN_FIXTURES_UNSHOWN.get(name)))
    return cases


@cache
def _report(log: Path) -> Report:
    """One diagnosis per log, shared by the engine test and the flag test of the same corpus."""
    return diagnose_text(log.read_text(encoding="utf-8", errors="surrogateescape"), OPTIONS)


def _check(cases: list[tuple[Path, str, str | None]]) -> list[str]:
    wrong = []
    for log, engine, unshown in cases:
        got = _report(log).launch.engine
        if got == engine or (got is None and unshown):
            continue
        wrong.append(f"{log.relative_to(log.parents[2])}: the log's engine is {engine}, the report says {got}")
    return wrong


def test_the_engine_is_right_on_every_wild_log() -> None:
    cases = _toml_cases(WILD)
    assert len(cases) > 150
    assert not (wrong := _check(cases)), "\n".join(wrong)


def test_the_engine_is_right_on_every_pattern_fixture() -> None:
    cases = _pattern_cases()
    assert len(cases) > 300
    assert not (wrong := _check(cases)), "\n".join(wrong)


def test_the_engine_is_right_on_every_log_of_the_shared_corpus() -> None:
    if not SHARED_CORPUS.is_dir():
        pytest.skip(f"the shared corpus is not here ({SHARED_CORPUS})")
    cases = _toml_cases(SHARED_CORPUS)
    assert cases
    assert not (wrong := _check(cases)), "\n".join(wrong)


# Lines that only name an engine (issue 28: "never from a message that only names the other engine"): SGLang's own
# instruction to install vLLM (sglang/srt/layers/quantization), an import that failed, a model directory named after
# the engine, and paths into the parts of vLLM that SGLang imports and runs (engine_evidence.SGLANG_RUNS_OF_VLLM).
# A launcher's or a user's word that an engine did not come up names no engine either (instructlab's `vLLM failed to
# start.  Retry with --enable-serving-output …`, instructlab/instructlab#3466; a runner's `sglang did not become
# healthy at …`, split 13's C-03; a user's sentence): any line may say it, of any engine.  Nor does a wrapper's record
# quoting torch's rendezvous timeout, which opens vLLM's `Timed out after {}s waiting for {} lock: {}` only through a
# hole swallowing a sentence (xorbitsai/inference#2486).
ONLY_NAMING = {
    "vllm": ("Please install vllm by `pip install vllm==0.8.4` to use this quantization method.",
             "ModuleNotFoundError: No module named 'vllm'",
             "Loading model from /models/vllm-finetuned-llama/config.json",
             "AttributeError: module 'vllm.distributed.parallel_state' has no attribute 'get_tp_group'",
             "OSError: /usr/local/lib/python3.10/dist-packages/vllm/_C.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi",
             "vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure.",
             "vLLM failed to start with the same model too.",
             RENDEZVOUS),
    "sglang": ("Please install sglang: pip install 'sglang[all]'",
               "ModuleNotFoundError: No module named 'sglang'",
               "Loading model from /models/sglang-test/config.json",
               "sglang did not become healthy at http://127.0.0.1:30000/health within 900s",
               "SGLang failed to start with the same model too."),
}


@pytest.mark.slow
def test_a_line_only_naming_the_other_engine_never_names_it() -> None:
    """Over every wild log, a line that only names the other engine, put before the paste or after it, never makes
    the report name that engine (it may leave a log the failure's message decided unnamed: a second failure)."""
    wrong = []
    for log, engine, _ in _toml_cases(WILD):
        text = log.read_text(encoding="utf-8", errors="surrogateescape")
        other = next(name for name in ENGINES if name != engine)
        for line in ONLY_NAMING[other]:
            for pasted in (f"{line}\n{text}", f"{text.rstrip()}\n{line}\n"):
                if diagnose_text(pasted, OPTIONS).launch.engine == other:
                    wrong.append(f"{log.relative_to(WILD)}: named {other} after {line!r}")
    assert not wrong, "\n".join(wrong)


FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
ENGINES = ("sglang", "vllm")
# What a report says of its own making and quotes as given, not advice: the corrected command is the user's
# own launch, the engine's words are quoted as the engine said them.
QUOTED_FIELDS = {"command", "text"}


def _said(value: object) -> Iterator[str]:
    """Every string logsleuth wrote in a diagnosis (its fix, alternatives, evidence), not what it quotes."""
    if isinstance(value, str):
        yield value
    elif is_dataclass(value) and not isinstance(value, type):
        for item in fields(value):
            if item.name not in QUOTED_FIELDS:
                yield from _said(getattr(value, item.name))
    elif isinstance(value, tuple):
        for item in value:
            yield from _said(item)


def _flags_of_the_other_engine(diagnosis: Diagnosis, engine: str, log_text: str) -> set[str]:
    """The flags a diagnosis names that only the other engine has (every release's catalog), and the log does not
    show: advice for the wrong engine, which is harmful."""
    other = next(name for name in ENGINES if name != engine)
    named = {flag for text in _said(diagnosis) for flag in FLAG.findall(text)}
    return {flag for flag in named if flag not in log_text and flag in static_catalogs.all_flags(other)
            and flag not in static_catalogs.all_flags(engine)}


def _check_flags(cases: list[tuple[Path, str, str | None]]) -> list[str]:
    wrong = []
    for log, engine, _ in cases:
        text = log.read_text(encoding="utf-8", errors="surrogateescape")
        for group in _report(log).failures:
            if group.diagnosis is not None and (flags := _flags_of_the_other_engine(group.diagnosis, engine, text)):
                wrong.append(f"{log.relative_to(log.parents[2])}: a {engine} log, {group.diagnosis.pattern} names {sorted(flags)}")
    return wrong


def test_no_report_names_a_flag_of_the_other_engine() -> None:
    """Every pattern and rule that names a flag is scoped to the engine that has it: over every corpus, no report
    names a flag only the other engine's releases have (issue 28: a `Killed` line in a vLLM log was told about
    SGLang's --mem-fraction-static)."""
    cases = [*_toml_cases(WILD), *_pattern_cases()]
    if SHARED_CORPUS.is_dir():
        cases += _toml_cases(SHARED_CORPUS)
    assert not (wrong := _check_flags(cases)), "\n".join(wrong)


def test_every_declared_exception_is_a_log_that_shows_no_engine() -> None:
    """A declaration stays honest: a listed log the report now names correctly is no longer unshown."""
    declared = [case for case in (*_toml_cases(WILD), *_pattern_cases()) if case[2]]
    named = [f"{log.relative_to(log.parents[2])}" for log, engine, _ in declared
             if _report(log).launch.engine == engine]
    assert not named, "these logs show their engine now: drop them from the declarations\n" + "\n".join(named)
