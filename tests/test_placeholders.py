"""No report ever shows a pattern's unfilled `{placeholder}`: it is filled, or the sentence reads without it."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.fixes.context import interpolate
from logsleuth.models import Fix

REPO = Path(__file__).resolve().parents[1]
LOGS = sorted(
    [*REPO.glob("tests/fixtures/patterns/*/*.log"), *REPO.glob("tests/fixtures/sglang/*/*.log"), *REPO.glob("tests/fixtures/wild/*/*.log")]
)
UNFILLED = regex.compile(r"\{[a-z_][\w\[\]\-]*\}")


def _prose(fix: Fix) -> list[str]:
    return [fix.summary, *fix.steps, *(text for alternative in fix.alternatives for text in _prose(alternative))]


def test_interpolate_leaves_out_what_it_cannot_fill() -> None:
    assert interpolate("The collective ({op}) waited for {what}.", {}) == "The collective waited for."
    assert interpolate("Port {port} is in use.", {"port": "30000"}) == "Port 30000 is in use."
    assert interpolate("Use {cmd[--tp-size]} GPUs, {x}.", {"x": "now"}) == "Use GPUs, now."
    assert interpolate("A {{literal}} brace", {}) == "A {literal} brace"


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("chunk", range(4))
def test_no_report_shows_an_unfilled_placeholder(chunk: int) -> None:
    assert LOGS
    for log in LOGS[chunk::4]:
        report = diagnose([str(log)], DiagnoseOptions(include_user_patterns=False))
        for group in report.failures:
            diagnosis = group.diagnosis
            if diagnosis is None:
                continue
            texts = [diagnosis.title, diagnosis.root_cause, *(_prose(diagnosis.fix) if diagnosis.fix else [])]
            bad = [text for text in texts if UNFILLED.search(text)]
            assert not bad, f"{log}: {bad}"
