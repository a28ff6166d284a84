"""A long report on a terminal ends with one recap line (issue 30, finding 5): in a pane shorter than the report,
the last screen is otherwise the cascade's advice and the answer has scrolled away.  Drawn by rich's own Console
at a fixed width and height (a real render)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions

REPO = Path(__file__).resolve().parents[2]
SEED = REPO / "examples" / "eagle3-incident.log"
GENERAL = REPO / "tests/fixtures/patterns/sglang-deepgemm-unsupported-arch/negative-nvcc-failed.log"  # general


def _report(path: Path) -> Report:
    return diagnose_text(path.read_text(), DiagnoseOptions(include_user_patterns=False))


def _rich(report: Report, width: int, height: int | None) -> list[str]:
    return render(report, RenderOptions(format=OutputFormat.RICH, width=width, height=height)).splitlines()


@pytest.mark.parametrize("width", [60, 80, 200])
def test_a_report_taller_than_the_terminal_ends_with_one_recap_line(width: int) -> None:
    lines = _rich(_report(SEED), width, height=20)
    assert len(lines) > 20
    assert sum(line.startswith("Recap:") for line in lines) == 1
    start = next(i for i, line in enumerate(lines) if line.startswith("Recap:"))
    recap = " ".join(line.strip() for line in lines[start:])
    assert recap.startswith("Recap: EAGLE speculative")
    assert "spec-decoding-args" in recap and "fix: add --speculative-num-steps 15" in recap
    assert all(len(line) <= width for line in lines[start:])
    if width >= 120:  # wide enough: one line
        assert len(lines) == start + 1


def test_a_report_that_fits_or_is_not_on_a_terminal_has_no_recap() -> None:
    report = _report(SEED)
    assert not any(line.startswith("Recap:") for line in _rich(report, 200, height=500))
    assert not any(line.startswith("Recap:") for line in _rich(report, 80, height=None))  # piped: no terminal


def test_the_recap_says_when_there_is_no_proven_fix() -> None:
    report = _report(GENERAL)
    assert report.primary is not None and report.primary.diagnosis is not None
    assert report.primary.diagnosis.basis == "general"
    lines = _rich(report, 80, height=10)
    assert lines[-1].startswith("Recap: ") and lines[-1].endswith("no proven fix")
