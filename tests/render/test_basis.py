"""How far to trust an answer shows in every format (issue 28): a "general" diagnosis is labelled general
guidance, not a proven fix; a "rule" one shows the facts it used; the engine's own instruction shows as "The
engine says: …" with what logsleuth checked of it beneath."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest

from logsleuth.render.options import OutputFormat
from tests.render.cases import general_failure, rule_failure, single_failure, unknown_failure
from tests.render.helpers import render

PROSE_FORMATS = (OutputFormat.TEXT, OutputFormat.RICH, OutputFormat.MARKDOWN, OutputFormat.SLACK)
SCHEMA = json.loads(resources.files("logsleuth").joinpath("report.schema.json").read_text(encoding="utf-8"))
GENERAL_LABEL = "general guidance, not a proven fix"


def _flat(text: str) -> str:
    """The words of a report, whatever its wrapping and markup."""
    return " ".join(text.replace("*", "").replace("`", "").split())


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_a_general_diagnosis_is_labelled_general_guidance(fmt: OutputFormat) -> None:
    text = _flat(render(general_failure(), fmt, width=200))
    assert GENERAL_LABEL in text
    assert "Try a newer release of SGLang." in text
    assert GENERAL_LABEL not in _flat(render(single_failure(), fmt, width=200))


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_a_rule_diagnosis_shows_its_facts(fmt: OutputFormat) -> None:
    text = _flat(render(rule_failure(), fmt, width=200))
    assert "Facts:" in text
    assert "The log shows a Tesla T4 (compute capability 7.5)." in text
    assert "bfloat16 needs compute capability 8.0." in text
    assert GENERAL_LABEL not in text


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_the_engine_says_is_shown_with_its_checks(fmt: OutputFormat) -> None:
    text = _flat(render(general_failure(), fmt, width=200))
    said = text.index("The engine says: Please enable --enable-flashinfer-allreduce-fusion")
    assert text.index("a flag of SGLang 0.5.9") > said


def test_the_json_report_carries_basis_evidence_and_engine_words() -> None:
    general = json.loads(render(general_failure(), OutputFormat.JSON))
    rule = json.loads(render(rule_failure(), OutputFormat.JSON))
    pattern = json.loads(render(single_failure(), OutputFormat.JSON))
    for report in (general, rule, pattern):
        jsonschema.Draft202012Validator(SCHEMA).validate(report)
    assert general["failures"][0]["diagnosis"]["basis"] == "general"
    assert general["failures"][0]["diagnosis"]["engine_says"] == [
        {"text": "Please enable --enable-flashinfer-allreduce-fusion", "checks": ["a flag of SGLang 0.5.9"]}
    ]
    assert rule["failures"][0]["diagnosis"]["basis"] == "rule"
    assert rule["failures"][0]["diagnosis"]["evidence"] == [
        "The log shows a Tesla T4 (compute capability 7.5).",
        "bfloat16 needs compute capability 8.0.",
    ]
    assert pattern["failures"][0]["diagnosis"]["basis"] == "pattern"
    assert unknown_failure().failures[0].diagnosis is None
