"""Every format renders every dev-corpus log; the Slack report always fits and closes its fences."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.redact import redact_report
from logsleuth.render.options import OutputFormat
from tests.render.helpers import FORMATS, markdown_fences, render, slack_fences_balanced

CORPUS = Path(__file__).resolve().parents[3] / "shared" / "corpus"
LOGS = sorted(CORPUS.glob("**/*.log"))
COMMAND = (
    "python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /d --speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
)

pytestmark = pytest.mark.skipif(not LOGS, reason=f"dev corpus not found under {CORPUS}")


def _check(report_output: dict[OutputFormat, str]) -> None:
    slack = report_output[OutputFormat.SLACK]
    assert len(slack) <= 3500, len(slack)
    assert slack_fences_balanced(slack)
    markdown_fences(report_output[OutputFormat.MARKDOWN])


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(CORPUS)) for p in LOGS])
def test_every_format_renders_every_corpus_log(log: Path) -> None:
    for options in (DiagnoseOptions(), DiagnoseOptions(all_failures=True, command=COMMAND)):
        report = redact_report(diagnose([str(log)], options))
        _check({fmt: render(report, fmt) for fmt in FORMATS})


def test_the_whole_corpus_as_one_multi_source_report() -> None:
    report = redact_report(diagnose([str(p) for p in LOGS], DiagnoseOptions(all_failures=True)))
    assert len(report.failures) > 5
    outputs = {fmt: render(report, fmt) for fmt in FORMATS}
    _check(outputs)
    text = outputs[OutputFormat.TEXT]
    # Several sources: the answer comes first as which one failed first and with what, then the groups.
    # Compared with the wrapping undone: a long corpus path (as on CI) pushes "first:" onto the next line.
    unwrapped = " ".join(text.split())
    assert report.fleet is not None and unwrapped.startswith(f"{report.fleet.root} failed first:")
    assert "\n[1] " in text
    assert "the first is the root failure." in text
