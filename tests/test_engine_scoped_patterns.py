"""Every pattern that names a flag is scoped to the engine that has it (issue 28: harmful advice is a flag of the
wrong engine).  A pattern without `engine` fires on either engine's log, so what it says (title, root cause, fix)
names no flag that only one engine's releases have, unless its match rules read that flag in the user's own
launch command (the command shows the engine then).  Flags of neither engine (docker's --memory, logsleuth's
own --all) are no engine's advice."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator

import pytest

from logsleuth.diagnosis.library import bundled_files
from logsleuth.fixes import static_catalogs

FLAG = re.compile(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
SAID = ("title", "root_cause", "fix")


def _strings(value: object) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for item in value.values():
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _one_engine_only(flag: str) -> str | None:
    """The engine that alone has `flag` in some release, else None (both have it, or neither)."""
    owners = [engine for engine in ("sglang", "vllm") if flag in static_catalogs.all_flags(engine)]
    return owners[0] if len(owners) == 1 else None


def _unscoped_flags(data: dict[str, object]) -> set[str]:
    said = {flag for key in SAID for text in _strings(data.get(key, "")) for flag in FLAG.findall(text)}
    commands = " ".join(str(rule.get("command", "")) for rule in data.get("match", []) if isinstance(rule, dict))  # type: ignore[union-attr]
    return {flag for flag in said if _one_engine_only(flag) and flag not in commands}


NEUTRAL = [(path, data) for path, text in bundled_files() if "engine" not in (data := tomllib.loads(text))]


def test_the_library_has_engine_neutral_patterns() -> None:
    assert len(NEUTRAL) >= 10


@pytest.mark.parametrize(("path", "data"), NEUTRAL, ids=[path for path, _ in NEUTRAL])
def test_an_engine_neutral_pattern_names_no_flag_of_one_engine(path: str, data: dict[str, object]) -> None:
    assert not (flags := _unscoped_flags(data)), f"{path} fires on either engine's log but names {sorted(flags)}"


def test_the_check_finds_a_flag_of_one_engine() -> None:
    """The test can fail: SGLang's --mem-fraction-static in a neutral pattern's step is found, vLLM's too."""
    assert _unscoped_flags({"fix": {"steps": ["lower --mem-fraction-static"]}}) == {"--mem-fraction-static"}
    assert _unscoped_flags({"root_cause": "raise --gpu-memory-utilization"}) == {"--gpu-memory-utilization"}
    assert not _unscoped_flags({"fix": {"steps": ["docker run --memory 64g; --trust-remote-code"]}})
    assert not _unscoped_flags({"root_cause": "--hicache-size", "match": [{"command": "--hicache-size=(\\d+)"}]})


def test_a_vllm_log_killed_is_told_no_sglang_flag() -> None:
    """The engine-neutral process-killed pattern on a vLLM log whose only failure is bash's `Killed` notice."""
    from logsleuth.api import DiagnoseOptions, diagnose_text

    log = ("INFO 05-01 10:00:00 [__init__.py:239] Automatically detected platform cuda.\n"
           "INFO 05-01 10:00:02 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "INFO 05-01 10:00:09 [loader.py:458] Loading weights took 31.20 seconds\n"
           "Killed\n")
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.failures and report.failures[0].diagnosis is not None
    diagnosis = report.failures[0].diagnosis
    assert diagnosis.category == "process-killed"
    said = " ".join([diagnosis.root_cause, diagnosis.fix.summary if diagnosis.fix else "", *(diagnosis.fix.steps if diagnosis.fix else ())])
    assert not {flag for flag in FLAG.findall(said) if _one_engine_only(flag) == "sglang"}
