"""A failure that matches a bug a later release fixed: upgrading is the fix, the workaround an alternative."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import load_test_pattern

PATTERN = '''
id = "test-engine-bug"
title = "An engine bug"
category = "weight-loading"
fixed_in = "0.5.4.post2"
priority = 1

root_cause = "A bug."

[[match]]
exception_type = "KeyError"
message = "zz_test_key"

[fix]
summary = "Tie the embeddings."
flags = [{ op = "add", flag = "--json-model-override-args", value = '{"tie_word_embeddings": true}' }]
'''

CRASH = "KeyError: 'zz_test_key'\n"


@pytest.fixture()
def patterns(tmp_path: Path):  # type: ignore[no-untyped-def]
    return load_test_pattern(tmp_path, "engine-bug", PATTERN)


def _fix(log: str, patterns, version: str | None = None):  # type: ignore[no-untyped-def]
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, engine_version=version), patterns=patterns)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "test-engine-bug"
    return diagnosis.fix


def test_an_older_release_is_told_to_upgrade_first(patterns) -> None:  # type: ignore[no-untyped-def]
    fix = _fix("sglang==0.5.3 starting\n" + CRASH, patterns)
    assert fix.flags == () and fix.steps == ('pip install --upgrade "sglang>=0.5.4.post2"',)
    assert fix.summary.startswith("Upgrade SGLang to 0.5.4.post2 or later: 0.5.3 has this bug")
    assert [op.flag for op in fix.alternatives[0].flags] == ["--json-model-override-args"]
    assert fix.alternatives[0].summary.startswith("Or, without upgrading:")


def test_the_fixed_release_gets_the_workaround_only(patterns) -> None:  # type: ignore[no-untyped-def]
    fix = _fix(CRASH, patterns, version="0.5.9")
    assert [op.flag for op in fix.flags] == ["--json-model-override-args"]
    assert not any("pip install" in step for step in fix.steps)


def test_an_unknown_version_is_told_the_condition(patterns) -> None:  # type: ignore[no-untyped-def]
    fix = _fix(CRASH, patterns)
    assert fix.summary.startswith("If your SGLang is older than 0.5.4.post2, upgrade")
    assert fix.alternatives and fix.alternatives[0].flags


def test_fixed_in_must_be_a_version(tmp_path: Path) -> None:
    from logsleuth.diagnosis.library import parse_pattern
    from logsleuth.errors import PatternError

    with pytest.raises(PatternError, match="fixed_in must be an engine version"):
        parse_pattern(PATTERN.replace('"0.5.4.post2"', '"soon"'), "x.toml", "user")
