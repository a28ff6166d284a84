"""How far to trust an answer shows in every format (issue 28): a "general" diagnosis is labelled general
guidance, not a proven fix; a "rule" one shows the facts it used; the engine's own instruction shows as "The
engine says: …" with what logsleuth checked of it beneath."""

from __future__ import annotations

import json
from dataclasses import replace
from importlib import resources

import jsonschema
import pytest

from logsleuth.models import Report, SourceInfo
from logsleuth.render.options import OutputFormat
from tests.render.cases import chained, general_failure, rule_failure, single_failure, unknown_failure
from tests.render.helpers import render

PROSE_FORMATS = (OutputFormat.TEXT, OutputFormat.RICH, OutputFormat.MARKDOWN, OutputFormat.SLACK)
SCHEMA = json.loads(resources.files("logsleuth").joinpath("report.schema.json").read_text(encoding="utf-8"))
GENERAL_LABEL = "general guidance, not a proven fix"


def _valid_json(report: Report) -> dict:
    """The JSON report, checked against the published schema."""
    data = json.loads(render(report, OutputFormat.JSON))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    return data


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
    general, rule, pattern = (_valid_json(case()) for case in (general_failure, rule_failure, single_failure))
    assert general["failures"][0]["diagnosis"]["basis"] == "general"
    assert general["failures"][0]["diagnosis"]["engine_says"] == [
        {"text": "Please enable --enable-flashinfer-allreduce-fusion", "checks": ["a flag of SGLang 0.5.9"], "speaker": None}
    ]
    assert rule["failures"][0]["diagnosis"]["basis"] == "rule"
    assert rule["failures"][0]["diagnosis"]["evidence"] == [
        "The log shows a Tesla T4 (compute capability 7.5).",
        "bfloat16 needs compute capability 8.0.",
    ]
    assert pattern["failures"][0]["diagnosis"]["basis"] == "pattern"
    assert unknown_failure().failures[0].diagnosis is None


# -- the report's ending (issue 28, item 6): more help when there is no proven fix; the --cmd hint ---------------


def _with_source(report: Report, name: str) -> Report:
    return replace(report, sources=(SourceInfo(name, 100, 100),))


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
@pytest.mark.parametrize("case", [general_failure, unknown_failure], ids=["general", "no-diagnosis"])
def test_a_report_without_a_proven_fix_ends_by_offering_case_and_explain(fmt: OutputFormat, case: object) -> None:
    report = _with_source(case(), "gpu7:/var/log/sglang server.log")  # type: ignore[operator]
    text = render(report, fmt, width=200)
    flat = _flat(text)
    assert "logsleuth case 'gpu7:/var/log/sglang server.log'" in flat
    assert "logsleuth diagnose --explain 'gpu7:/var/log/sglang server.log'" in flat
    # It is the report's ending: nothing of the failure comes after it.
    assert flat.rindex("logsleuth case") > flat.rindex(report.failures[0].failure.final.type)


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_a_proven_fix_with_its_command_ends_without_either(fmt: OutputFormat) -> None:
    text = _flat(render(single_failure(), fmt, width=200))
    assert "logsleuth case" not in text and "--explain" not in text
    assert "--cmd" not in text


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_an_unknown_launch_command_is_hinted_once(fmt: OutputFormat) -> None:
    text = _flat(render(chained(), fmt, width=200))  # a proven fix, the command not in the log
    assert text.count("--cmd") == 1
    assert "logsleuth case" not in text


def test_a_paste_on_stdin_is_given_again_on_stdin() -> None:
    text = _flat(render(_with_source(general_failure(), "-"), OutputFormat.TEXT, width=200))
    assert "logsleuth case -" in text and "same input on stdin" in text


def test_the_json_ending() -> None:
    general, proven, hint_only = (_valid_json(case()) for case in (general_failure, single_failure, chained))
    assert general["next_steps"]["no_proven_fix"] is True
    assert general["next_steps"]["case_command"] == "logsleuth case server.log"
    assert general["next_steps"]["explain_command"] == "logsleuth diagnose --explain server.log"
    assert proven["next_steps"] is None
    assert hint_only["next_steps"]["no_proven_fix"] is False and "--cmd" in hint_only["next_steps"]["cmd_hint"]


@pytest.mark.parametrize("fmt", PROSE_FORMATS, ids=[f.value for f in PROSE_FORMATS])
def test_a_source_name_with_terminal_escapes_is_not_printed_in_the_offer(fmt: OutputFormat) -> None:
    report = _with_source(general_failure(), "server-\x1b]0;pwned-title\x07.log")
    text = render(report, fmt, width=200)
    assert "pwned-title" not in text and "\x1b" not in text
    assert "logsleuth case '<the log you gave>'" in _flat(text)


CUT_BEFORE_ITS_EXCEPTION = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2000, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 800, in event_loop_overlap\n'
    "    self.process_input_requests(recv_reqs)\n"
)


@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK])
def test_a_traceback_cut_before_its_exception_line_searches_for_its_innermost_source_line(fmt: OutputFormat) -> None:
    # with no exception line, the search text was the empty type: an empty "Search for:" line
    from logsleuth.api import DiagnoseOptions, diagnose_text

    report = diagnose_text(CUT_BEFORE_ITS_EXCEPTION, DiagnoseOptions(include_user_patterns=False))
    text = render(report, fmt)
    searched = text[text.index("Search for:"):]
    assert "self.process_input_requests(recv_reqs)" in "\n".join(searched.splitlines()[:3])  # slack: in a fence


def test_a_type_read_from_the_raising_statement_searches_for_the_statement() -> None:
    from logsleuth.api import DiagnoseOptions, diagnose_text

    cut = CUT_BEFORE_ITS_EXCEPTION + ('  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", '
                                      'line 900, in process_input_requests\n'
                                      '    raise ValueError(f"unknown request type {type(recv_req)}")\n')
    report = diagnose_text(cut, DiagnoseOptions(include_user_patterns=False))
    assert report.failures[0].failure.final.typed_from_statement
    text = render(report, OutputFormat.TEXT)
    searched = text[text.index("Search for:"):].splitlines()[1]
    assert 'raise ValueError(f"unknown request type' in searched  # not the bare `ValueError` the statement names
    assert "inferred from the last frame" in text
