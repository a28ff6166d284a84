"""The health report (`logsleuth health`) in every format: the verdict first, each finding with its numbers,
root cause, likely causes in order and evidence, then the series; inert and redacted log text; Slack within
its budget; JSON valid against its schema.

The reports are built by hand (the scanner that builds them is tested on its own, with real logs).
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys
from importlib import resources

import jsonschema
import pytest

from logsleuth.health.model import Cause, Evidence, Finding, HealthReport, Series, SeriesPoint
from logsleuth.models import LaunchInfo, SourceInfo
from logsleuth.redact import _SECRET_FIELDS, _walk, redact_lines, redact_secrets
from logsleuth.render.health import render_health
from logsleuth.render.options import OutputFormat, RenderOptions
from logsleuth.render.sparkline import BARS
from tests.render.helpers import FORMATS, markdown_fences, slack_fences_balanced

START = 1_767_261_600.0  # 2026-01-01 10:00:00 UTC
SECRET = "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567"
API_KEY = "s3cret-api-key-0001"
ESCAPE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"  # an OSC 52 clipboard write and a screen clear
SCHEMA = json.loads(resources.files("logsleuth").joinpath("health_report.schema.json").read_text())

DECODE_LINE = (
    "Decode batch, #running-req: 32, #token: 81234, token usage: 0.41, accept len: 1.00, accept rate: 0.00, "
    "cuda graph: True, gen throughput (token/s): 1234.56, #queue-req: 0,"
)
FIRST_CAUSE = "The draft's weights were not loaded: its checkpoint names the decoder layer layers.0, SGLang expects midlayer"
SECOND_CAUSE = "The draft is an EAGLE-3 model served with --speculative-algorithm EAGLE"


def _series(name: str, unit: str, values: tuple[float, ...], stamped: bool = True) -> Series:
    points = tuple(SeriesPoint(START + 60 * i if stamped else None, value) for i, value in enumerate(values))
    return Series(name, unit, points, samples=10 * len(values))


def accept_length_finding() -> Finding:
    return Finding(
        pattern_id="sglang-health-accept-length-near-one",
        title="Speculative decoding accepts no draft token",
        category="speculative",
        summary="accept len ≤ 1.05 over 412 of 415 decode batches (mean 1.00)",
        root_cause="Every step accepts only the target's own token, so the draft model predicts nothing useful.",
        causes=(
            Cause(
                FIRST_CAUSE,
                "Rename the draft's keys layers.0.* to midlayer.*, or upgrade SGLang to 0.5.23",
                evidence=f"Some weights of the draft were not initialized: layers.0.self_attn (token {SECRET})",
            ),
            Cause(SECOND_CAUSE, "Launch with --speculative-algorithm EAGLE3"),
            Cause("The draft was trained for another base model", "Use the draft trained for this model"),
        ),
        evidence=(
            Evidence(f"{DECODE_LINE} {ESCAPE}", 120_000, "2026-01-01 10:00:05", line_number=1204),
            Evidence(f"server_args=ServerArgs(api_key='{API_KEY}', tp_size=8)", 900, "2026-01-01 09:58:00"),
            *(Evidence(DECODE_LINE, 130_000 + i, None) for i in range(6)),
        ),
        occurrences=412,
        first_seconds=START,
        last_seconds=START + 5400,
        references=("https://github.com/sgl-project/sglang/issues/0000",),
    )


def kv_pool_finding() -> Finding:
    return Finding(
        pattern_id="sglang-health-kv-pool-full-retract",
        title="KV cache pool full: requests retracted",
        category="memory",
        summary="KV cache pool is full 37 times in 90 minutes",
        root_cause="The KV cache holds too few tokens for the load, so running requests are retracted.",
        causes=(Cause("Too little memory left for the KV cache", "Raise --mem-fraction-static to 0.88"),),
        evidence=(
            Evidence(
                "KV cache pool is full. Retract requests. #retracted_reqs: 3", 140_000, "2026-01-01 10:30:00"
            ),
        ),
        occurrences=37,
    )


def speculative_report() -> HealthReport:
    return HealthReport(
        sources=(
            SourceInfo("gpu7:/var/log/sglang.log", 2_000_000_000, 2_000_000_000, host="gpu7"),
            SourceInfo(
                "gpu8:/var/log/sglang.log", 0, None, error="gpu8:/var/log/sglang.log: permission denied"
            ),
        ),
        findings=(accept_length_finding(), kv_pool_finding()),
        series=(
            _series("queue_requests", "requests", (0, 0, 3, 9, 27, 81)),
            _series("throughput", "token/s", (2904.4, 2810.0, 1500.0, 900.0, 400.0, 212.0)),
            _series("accept_length", "tokens", (1.0, 1.0, 1.01, 1.0, 1.0, 1.0)),
            _series("running_requests", "requests", (32, 32, 31, 32, 30, 32)),
        ),
        launch=LaunchInfo("sglang", "0.5.9"),
        batches=12_345,
        sampled=True,
        speculative=True,
        warnings=(f"gpu7: slow read (token {SECRET})",),
    )


def healthy_report() -> HealthReport:
    return HealthReport(
        sources=(SourceInfo("server.log", 4096, 4096),),
        findings=(),
        series=(
            _series("throughput", "token/s", (2900.0, 2950.0, 2904.0)),
            _series("queue_requests", "requests", (0, 1, 0)),
        ),
        batches=4_321,
    )


def no_batches_report() -> HealthReport:
    return HealthReport(sources=(SourceInfo("server.log", 512, 512),), findings=(), series=(), batches=0)


def render(report: HealthReport, fmt: OutputFormat, **options: object) -> str:
    settings: dict[str, object] = {"width": 100, "color": False, "max_chars": 100_000, **options}
    return render_health(report, RenderOptions(format=fmt, **settings))  # type: ignore[arg-type]


def redacted(report: HealthReport) -> HealthReport:
    """What the CLI does before rendering, as it does for a crash report with `redact_report` (whose walk over
    the frozen dataclasses this is: redact_report itself takes a crash `Report` only)."""
    return _walk(report, redact_secrets, _SECRET_FIELDS, redact_lines)


PROSE_FORMATS = [fmt for fmt in FORMATS if fmt is not OutputFormat.JSON]


# -- the answer first --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_verdict_comes_first_and_names_every_finding(fmt: OutputFormat) -> None:
    output = render(speculative_report(), fmt, width=200)
    first = output.splitlines()[0]
    assert "2 findings in 12,345 batch lines (sampled)" in first
    assert "Speculative decoding accepts no draft token" in first and "KV cache pool full" in first
    assert "1 of 2 sources could not be read" in first


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_each_finding_shows_its_numbers_root_cause_and_causes_in_order(fmt: OutputFormat) -> None:
    output = render(speculative_report(), fmt, width=300)
    body = output.split("\n", 1)[1]  # past the verdict, which names the titles too
    for finding in speculative_report().findings:
        assert finding.title in body
        assert finding.summary in body
        assert " ".join(finding.causes[0].fix.split()[:4]) in body  # the words, past any format's escaping
    assert FIRST_CAUSE.split(":")[0] in body
    assert body.index(FIRST_CAUSE.split(":")[0]) < body.index(SECOND_CAUSE.split(" with")[0]), (
        "most likely first"
    )
    assert body.index("Rename the draft's keys") < body.index("Raise --mem-fraction-static"), (
        "findings in order"
    )
    assert "Decode batch, #running-req: 32" in body  # an evidence line


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_healthy_report_reads_plainly_as_healthy(fmt: OutputFormat) -> None:
    output = render(healthy_report(), fmt)
    assert "healthy: no finding in 4,321 batch lines" in output.splitlines()[0]
    assert "Root cause" not in output and "sampled" not in output
    assert any(bar in output for bar in BARS), "the series are drawn"


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_no_batch_lines_says_so_instead_of_drawing_nothing(fmt: OutputFormat) -> None:
    output = render(no_batches_report(), fmt)
    assert "healthy" not in output, "no batch line read: nothing shows the server is healthy"
    assert "no Prefill/Decode batch lines found" in output.splitlines()[0]
    assert output.count("no Prefill/Decode batch lines found") == 2  # the verdict, and where the series go
    assert not any(bar in output for bar in BARS)


def test_findings_without_batch_lines_say_there_were_none() -> None:
    """A warning line can show a finding (CUDA graph disabled) in a log with no batch line yet."""
    report = dataclasses.replace(no_batches_report(), findings=(kv_pool_finding(),))
    first = render(report, OutputFormat.TEXT, width=300).splitlines()[0]
    assert first == "1 finding (no Prefill/Decode batch lines found): KV cache pool full: requests retracted"


def test_json_status_and_verdict() -> None:
    statuses = {
        "findings": speculative_report(),
        "healthy": healthy_report(),
        "no-batches": no_batches_report(),
        "unreadable": HealthReport((SourceInfo("x.log", 0, None, error="x.log: no such file"),), (), ()),
    }
    for status, report in statuses.items():
        data = json.loads(render(report, OutputFormat.JSON))
        assert data["status"] == status
        assert data["verdict"] == render(report, OutputFormat.TEXT, width=300).splitlines()[0]


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_sampling_and_unreadable_sources_are_said(fmt: OutputFormat) -> None:
    output = render(speculative_report(), fmt)
    if fmt is OutputFormat.JSON:
        data = json.loads(output)
        assert data["sampled"] is True and data["batches"] == 12_345
        assert data["sources"][1]["error"] == "gpu8:/var/log/sglang.log: permission denied"
        return
    assert "The log was sampled: 12,345 batch lines were read" in output
    assert "could not read gpu8:/var/log/sglang.log: permission denied" in output


# -- the series --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.RICH, OutputFormat.SLACK])
def test_series_are_sparklines_in_order(fmt: OutputFormat) -> None:
    output = render(speculative_report(), fmt)
    rows = [line.strip() for line in output.splitlines() if any(bar in line for bar in BARS)]
    assert [row.split("  ")[0] for row in rows] == [
        "throughput",
        "accept length",
        "queue depth",
        "running requests",
    ]
    assert rows[0].endswith("min 212  max 2,904 token/s")
    assert rows[2].endswith("min 0  max 81 requests")
    assert len({row.index(next(c for c in row if c in BARS)) for row in rows}) == 1, (
        "the bars share one column"
    )


def test_markdown_series_is_a_table_with_the_numbers() -> None:
    output = render(speculative_report(), OutputFormat.MARKDOWN)
    assert "| Series | Trend | Min | Max | Last | Unit |" in output
    throughput = next(line for line in output.splitlines() if line.startswith("| throughput"))
    assert throughput.endswith("| 212 | 2,904 | 212 | token/s |")
    markdown_fences(output)  # every fence closed


def test_accept_length_only_for_a_speculative_run() -> None:
    report = dataclasses.replace(speculative_report(), speculative=False)
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        assert "accept length" not in render(report, fmt)
    assert "accept length" in render(speculative_report(), OutputFormat.TEXT)


def test_series_without_timestamps_say_they_are_by_position() -> None:
    report = dataclasses.replace(
        healthy_report(), series=(_series("throughput", "token/s", (1.0, 2.0), stamped=False),)
    )
    assert "by position in the log" in render(report, OutputFormat.TEXT)
    stamped = render(healthy_report(), OutputFormat.TEXT)
    assert "2026-01-01 10:00:00 – 10:02:00" in stamped


def test_json_carries_the_series_numbers_with_their_timestamps_and_validates() -> None:
    report = speculative_report()
    data = json.loads(render(report, OutputFormat.JSON))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    throughput = next(series for series in data["series"] if series["name"] == "throughput")
    assert throughput["points"][0] == {"seconds": START, "value": 2904.4}
    assert [point["value"] for point in throughput["points"]][-1] == 212.0
    first = data["findings"][0]
    assert [cause["text"] for cause in first["causes"]][:2] == [FIRST_CAUSE, SECOND_CAUSE]
    assert first["evidence"][0]["line_number"] == 1204


def test_json_writes_a_missing_value_as_null_and_still_validates() -> None:
    report = dataclasses.replace(
        healthy_report(), series=(_series("throughput", "token/s", (1.0, float("nan"))),)
    )
    data = json.loads(render(report, OutputFormat.JSON))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    assert data["series"][0]["points"][1]["value"] is None
    for report in (healthy_report(), no_batches_report()):
        jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(render(report, OutputFormat.JSON)))


def test_schema_rejects_what_is_not_a_health_report() -> None:
    data = json.loads(render(speculative_report(), OutputFormat.JSON))
    data["findings"][0]["causes"] = []
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(SCHEMA).validate(data)


# -- inert and redacted ------------------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_escape_sequences_in_evidence_are_stripped(fmt: OutputFormat) -> None:
    output = render(speculative_report(), fmt)
    assert "\x1b" not in output and "\x07" not in output
    if fmt is OutputFormat.JSON:  # kept as the log has it, escaped: a program reading the JSON sees it whole
        assert json.loads(output)["findings"][0]["evidence"][0]["text"].endswith(ESCAPE)
    else:
        assert "cuda graph: True, gen throughput" in output


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_planted_secrets_are_redacted_in_every_format(fmt: OutputFormat) -> None:
    output = render(redacted(speculative_report()), fmt)
    assert SECRET not in output and API_KEY not in output
    assert "REDACTED" in output
    unredacted = render(speculative_report(), fmt)  # --no-redact: the log as it is
    assert API_KEY in unredacted


def test_slack_prose_is_defanged_and_markdown_cannot_be_injected() -> None:
    finding = dataclasses.replace(
        kv_pool_finding(), summary="@here pool full <!channel> ```", title="KV [link](http://x) <b>full</b>"
    )
    report = dataclasses.replace(healthy_report(), findings=(finding,))
    slack = render(report, OutputFormat.SLACK)
    assert "@here" not in slack and "<!channel>" not in slack
    assert slack_fences_balanced(slack)
    markdown = render(report, OutputFormat.MARKDOWN)
    assert "<b>" not in markdown and "[link](http" not in markdown


# -- the options -------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("limit", [3500, 1500, 800, 400, 200])
def test_slack_is_one_message_within_the_limit(limit: int) -> None:
    many = tuple(dataclasses.replace(accept_length_finding(), title=f"Finding {i}") for i in range(8))
    report = dataclasses.replace(speculative_report(), findings=many)
    output = render(report, OutputFormat.SLACK, max_chars=limit)
    assert len(output) <= limit
    assert slack_fences_balanced(output)
    assert output.startswith("*logsleuth health:* 8 findings")


def test_slack_gives_up_evidence_before_the_answer() -> None:
    report = speculative_report()
    full = render(report, OutputFormat.SLACK)
    assert "```" in full and "Decode batch" in full
    tight = render(report, OutputFormat.SLACK, max_chars=len(full) - 200)
    assert len(tight) < len(full) - 200
    assert "Rename the draft's keys layers.0.* to midlayer.*" in tight, "the first fix stays"
    assert "Launch with --speculative-algorithm EAGLE3" in tight


@pytest.mark.parametrize("width", [40, 60, 100])
def test_text_wraps_at_the_width(width: int) -> None:
    output = render(speculative_report(), OutputFormat.TEXT, width=width)
    # Only unbreakable words (paths, flags, a log token) may run past the width.
    too_long = [
        line for line in output.splitlines() if len(line) > width and " " in line.strip()[: width - 10]
    ]
    assert not [line for line in too_long if len(max(line.split(), key=len)) < width - 10]


def test_rich_honours_the_colour_option() -> None:
    coloured = render(speculative_report(), OutputFormat.RICH, color=True)
    plain = render(speculative_report(), OutputFormat.RICH, color=False)
    assert "\x1b[" in coloured
    assert "\x1b" not in plain
    assert plain == render(speculative_report(), OutputFormat.TEXT)


def test_text_report_does_not_import_rich() -> None:
    """rich is slow to import: only the rich format may load it (a fresh interpreter, so nothing loaded it before)."""
    code = (
        "import sys\n"
        "from logsleuth.health.model import HealthReport\n"
        "from logsleuth.render.health import render_health\n"
        "from logsleuth.render.options import OutputFormat, RenderOptions\n"
        "for fmt in ('text', 'markdown', 'slack', 'json'):\n"
        "    render_health(HealthReport((), (), ()), RenderOptions(format=OutputFormat(fmt)))\n"
        "print('rich' in sys.modules)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK, OutputFormat.RICH])
@pytest.mark.parametrize("values", [(1.0,) * 6, (1.0, 1.0, 1.01, 1.0, 1.0, 1.0)], ids=["flat", "wavering"])
def test_an_accept_length_stuck_at_one_draws_a_low_line_not_a_full_bar(fmt: OutputFormat, values: tuple[float, ...]) -> None:
    """Issue 30, finding 10: accept length 1.0 is speculation gaining nothing, the worst it can be; drawn from zero
    it filled every bar.  It is drawn from 1 token, the level without speculation."""
    report = dataclasses.replace(
        speculative_report(),
        series=(_series("accept_length", "tokens", values), _series("throughput", "token/s", (900.0,) * 6)),
    )
    text = render(report, fmt)
    (row,) = [line for line in text.splitlines() if "accept length" in line and any(bar in line for bar in BARS)]
    assert {char for char in row if char in BARS} == {BARS[0]}, row
    if values == (1.0,) * 6 and fmt is not OutputFormat.MARKDOWN:
        assert "flat 1 tokens" in row


def test_a_healthy_accept_length_keeps_its_shape() -> None:
    report = dataclasses.replace(speculative_report(), series=(_series("accept_length", "tokens", (3.5, 3.4, 1.0)),))
    text = render(report, OutputFormat.TEXT)
    (row,) = [line for line in text.splitlines() if "accept length" in line]
    assert BARS[-1] in row and BARS[0] in row, row
