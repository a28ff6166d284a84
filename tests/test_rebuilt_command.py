"""A command rebuilt from a logged `server_args=` (issue 30, finding 9): labelled as rebuilt from the log's
server_args in every format (never printed as the user's command), and it keeps the non-default fields, such as
`cuda_graph_max_bs`, even when the log names no version.

The fixture is the seed incident (examples/eagle3-incident.log) with its command line replaced by the whole
`server_args=` line of SGLang 0.5.9 (tests/fixtures/health/0.5.9/nearmiss-cuda-graph-large-batch.log), given the
seed's speculative flags; the log names no version."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Report
from logsleuth.render.options import OutputFormat
from tests.render.helpers import render

LOG = Path(__file__).resolve().parent / "fixtures" / "launch" / "eagle3-server-args-no-version.log"
REBUILT = "rebuilt from the log's server_args"


@pytest.fixture(scope="module")
def report() -> Report:
    return diagnose_text(LOG.read_text(), DiagnoseOptions(include_user_patterns=False))


def test_the_rebuilt_command_keeps_non_default_fields_without_a_version(report: Report) -> None:
    assert report.launch.engine_version is None and report.launch.command_source == "server_args"
    words = shlex.split(report.launch.command or "")
    assert words[words.index("--cuda-graph-max-bs") + 1] == "128"
    # Fields of a newer release that this launch never had are not invented.
    assert "--swa-full-tokens-ratio" not in words and "--encoder-transfer-backend" not in words


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.RICH, OutputFormat.MARKDOWN, OutputFormat.SLACK])
def test_the_corrected_command_is_labelled_as_rebuilt(report: Report, fmt: OutputFormat) -> None:
    text = render(report, fmt).replace("\\_", "_")  # Markdown escapes the underscore
    assert "--speculative-num-steps 15" in text
    assert REBUILT in text


def test_json_says_where_the_command_came_from(report: Report) -> None:
    data = json.loads(render(report, OutputFormat.JSON))
    assert data["failures"][0]["diagnosis"]["fix"]["command_origin"] == "server_args"
