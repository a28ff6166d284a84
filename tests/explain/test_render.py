"""The model's answer in every format: its own section, labelled unverified, after what logsleuth found, each
proposed flag marked ✓/✗ (checked) or "not checked", and as inert as log text."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Explanation, FlagCheck, FlagOp, Report
from logsleuth.redact import redact_report
from logsleuth.render.options import OutputFormat
from tests.render.helpers import FORMATS, render

REPO = Path(__file__).resolve().parents[2]
MODEL = "standin/Qwen3-8B"
EXPLANATION = Explanation(
    model=MODEL,
    endpoint="http://127.0.0.1:30000/v1/chat/completions",
    root_cause="The speculative top-k and the page size do not fit together on this attention backend.",
    category="spec-decoding-args",
    flags=(FlagOp("set", "--attention-backend", "flashinfer"), FlagOp("set", "--context-len", "4096")),
    upgrade="None needed.",
    evidence=(("ValueError: speculative_eagle_topk > 1", True), ("CUDA error: out of memory", False)),
)
CHECKED = replace(
    EXPLANATION,
    checks=(
        FlagCheck(EXPLANATION.flags[0], True, "a choice of --attention-backend in sglang 0.5.9", verified=True),
        FlagCheck(EXPLANATION.flags[1], False, "no such flag in sglang 0.5.9 (did you mean --context-length?)"),
    ),
)


@pytest.fixture(scope="module")
def matched_report() -> Report:
    """A failure a pattern explains: the explanation must come after the pattern's answer, not instead of it."""
    log = REPO / "tests/fixtures/patterns/sglang-eagle-partial-spec-args/negative-topk-page-size.log"
    report = redact_report(diagnose_text(log.read_text(), DiagnoseOptions(include_user_patterns=False)))
    assert report.primary is not None and report.primary.diagnosis is not None
    return report


@pytest.mark.parametrize("fmt", FORMATS)
def test_every_format_labels_the_answer_unverified_and_puts_it_after_the_pattern(
    matched_report: Report, fmt: OutputFormat
) -> None:
    text = render(replace(matched_report, explanation=EXPLANATION), fmt)
    assert f"nverified explanation from {MODEL}" in text
    assert "flashinfer" in text
    pattern_root_cause = '"diagnosis": {' if fmt is OutputFormat.JSON else "Root cause"
    assert 0 <= text.find(pattern_root_cause) < text.find("nverified explanation")


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_report_without_explanation_has_no_section(matched_report: Report, fmt: OutputFormat) -> None:
    assert "nverified explanation" not in render(matched_report, fmt)


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK])
def test_checked_flags_are_marked_with_the_reason_and_unchecked_ones_say_so(
    matched_report: Report, fmt: OutputFormat
) -> None:
    checked = render(replace(matched_report, explanation=CHECKED), fmt)
    assert "✓" in checked and "✗" in checked and "did you mean --context-length?" in checked
    unchecked = render(replace(matched_report, explanation=EXPLANATION), fmt)
    assert unchecked.count("not checked") >= 2 and "✗ `set --context-len" not in unchecked


def test_text_marks_quotes_the_case_file_does_not_hold(matched_report: Report) -> None:
    text = render(replace(matched_report, explanation=EXPLANATION), OutputFormat.TEXT)
    assert "✓ ValueError: speculative_eagle_topk > 1" in text
    assert "✗ CUDA error: out of memory (not in the case file)" in text


def test_the_json_report_validates_and_says_unverified(matched_report: Report) -> None:
    schema = json.loads(resources.files("logsleuth").joinpath("report.schema.json").read_text())
    data = json.loads(render(replace(matched_report, explanation=CHECKED), OutputFormat.JSON))
    jsonschema.Draft202012Validator(schema).validate(data)
    explanation = data["explanation"]
    assert explanation["verified"] is False and explanation["label"] == f"unverified explanation from {MODEL}"
    assert [flag["check"]["ok"] for flag in explanation["flags"]] == [True, False]
    assert explanation["evidence"][1] == {"text": "CUDA error: out of memory", "in_case_file": False}
    unchecked = json.loads(render(replace(matched_report, explanation=EXPLANATION), OutputFormat.JSON))
    jsonschema.Draft202012Validator(schema).validate(unchecked)
    assert [flag["check"] for flag in unchecked["explanation"]["flags"]] == [None, None]
    assert json.loads(render(matched_report, OutputFormat.JSON))["explanation"] is None
    explanation["verified"] = True  # the schema holds the label to its word
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate(data)


HOSTILE = replace(
    EXPLANATION,
    model="evil\x1b]52;c;cm0gLXJmIC8=\x07model",
    root_cause="Ping @here <!channel> and run ```rm -rf /``` \x1b[2J [bold]now[/bold] <img src=x onerror=alert(1)>",
    flags=(FlagOp("set", "--x", "@channel"),),
)


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_models_text_is_as_inert_as_log_text(matched_report: Report, fmt: OutputFormat) -> None:
    text = render(replace(matched_report, explanation=HOSTILE), fmt, color=fmt is OutputFormat.RICH)
    if fmt is OutputFormat.JSON:  # data, kept as it is, and escaped: no raw escape reaches a terminal
        assert "\x1b" not in text and "\x07" not in text
    else:
        assert "]52;" not in text and "\x1b[2J" not in text
    if fmt in (OutputFormat.MARKDOWN, OutputFormat.SLACK):
        assert "@here" not in text and "<!channel>" not in text
    if fmt is OutputFormat.MARKDOWN:
        assert "<img" not in text
