"""Issue 30, finding 10: small faults of the report's wording, each shown on a real input of the corpus."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Report
from logsleuth.render.options import OutputFormat
from tests.render.helpers import render

REPO = Path(__file__).resolve().parents[2]
FIXTURES = REPO / "tests" / "fixtures"
WORDED = (OutputFormat.TEXT, OutputFormat.RICH, OutputFormat.MARKDOWN, OutputFormat.SLACK)


def _report(path: Path) -> Report:
    return diagnose_text(path.read_text(), DiagnoseOptions(include_user_patterns=False))


@pytest.mark.parametrize("fmt", WORDED)
def test_an_alternative_is_labelled_or_once(fmt: OutputFormat) -> None:
    # The pattern's alternative summary begins "Or: set --page-size ...": under the "Or:" label it said it twice.
    text = render(_report(FIXTURES / "patterns/sglang-chunked-prefill-page-size/positive-0.5.9.log"), fmt)
    assert "set --page-size" in text
    flat = " ".join(text.replace("*", "").split())
    assert "Or: Or" not in flat and "Or: set --page-size" not in flat


@pytest.mark.parametrize("fmt", WORDED)
def test_the_seed_pattern_says_what_it_means_without_a_double_negative(fmt: OutputFormat) -> None:
    text = " ".join(render(_report(REPO / "examples/eagle3-incident.log"), fmt).split())
    assert "not unsupported" not in text
    assert "must be given all together or not at all" in text


@pytest.mark.parametrize("fmt", WORDED)
def test_failures_of_two_separate_launches_are_not_called_root_and_cascade(fmt: OutputFormat) -> None:
    # Two launches in one log (the seed incident, then a relaunch that fails on flashinfer): unrelated failures.
    report = _report(FIXTURES / "launch/two-launches-unrelated.log")
    assert len(report.failures) == 2
    text = " ".join(render(report, fmt).replace("*", "").split())
    assert "root failure" not in text
    assert "2 separate launches" in text


def test_two_failures_of_one_launch_still_name_the_root() -> None:
    report = _report(REPO / "examples/tp8-oom-then-nccl.log")
    assert len(report.failures) > 1
    assert "the first is the root failure" in render(report, OutputFormat.TEXT)


def test_the_summary_table_clips_a_failure_only_at_the_real_width() -> None:
    report = _report(FIXTURES / "launch/two-launches-unrelated.log")
    title = "flashinfer is older than SGLang requires, or not installed under the name SGLang checks"
    wide = render(report, OutputFormat.TEXT, width=200).splitlines()
    row = next(line for line in wide if line.lstrip().startswith("2  flashinfer"))
    assert title in row and "chars)" not in row
    narrow = render(report, OutputFormat.TEXT, width=80).splitlines()
    row = next(line for line in narrow if line.lstrip().startswith("2  flashinfer"))
    assert len(row) <= 80 and "…" in row and "chars)" not in row  # cut where the pane ends, and only there


@pytest.mark.parametrize("fmt", WORDED)
def test_an_unknown_launch_command_is_hinted_where_the_corrected_command_would_be(fmt: OutputFormat) -> None:
    # A proven fix with flag changes, and no launch command in the log: no corrected command can be printed.
    report = _report(FIXTURES / "patterns/sglang-chunked-prefill-page-size/positive-0.5.9.log")
    assert report.launch.command is None
    lines = render(report, fmt).splitlines()
    change = next(i for i, line in enumerate(lines) if "set --chunked-prefill-size" in line)
    assert any("--cmd" in line for line in lines[change + 1 : change + 3]), lines[change : change + 3]
    assert sum("--cmd" in line for line in lines) == 1  # said once, not again at the end
