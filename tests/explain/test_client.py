"""`--explain` against an OpenAI-compatible stand-in server on 127.0.0.1 (tests/explain/llm_standin.py).

No real model can run on these machines (no GPU, no weights): the stand-in answers as SGLang's or vLLM's
`/v1/chat/completions` does, and each test makes it answer well, badly, slowly or not at all.  Every failure
must come back as one `ExplainError` line; nothing planted as a secret in the log may be in any request.
"""

from __future__ import annotations

import json
import socket
from dataclasses import replace
from typing import Any

import pytest

from logsleuth.case import case_markdown
from logsleuth.explain import ExplainError, explain_report
from logsleuth.explain.config import ExplainOptions, ExplainSettings, resolve_settings
from logsleuth.models import FlagOp, LaunchInfo, Report
from logsleuth.redact import redact_report, redact_secrets
from tests.explain.conftest import PLANTED, PLANTED_API_KEY
from tests.explain.llm_standin import MODEL, Behaviour, Request, answer, standin_server

# The client's timeout (seconds): generous for every answer the stand-in gives at once (a loaded machine may
# take a while to serve it); short where a test waits for it to run out, on a stand-in that answers later.
ANSWER_TIMEOUT = 30.0
TIMEOUT = 0.5


def settings_for(url: str, **changes: Any) -> ExplainSettings:
    settings = resolve_settings(ExplainOptions(enabled=True, url=url), environ={}, config_file=None)
    return replace(settings, **{"timeout": ANSWER_TIMEOUT, "backoff": 0.01, **changes})


def explain(report: Report, behaviour: Behaviour, **changes: Any) -> Any:
    with standin_server(behaviour) as url:
        return explain_report(report, settings_for(url, **changes))


def posts(behaviour: Behaviour) -> list[Request]:
    return [request for request in behaviour.requests if request.method == "POST"]


def assert_one_line(error: ExplainError) -> str:
    text = str(error)
    assert text and "\n" not in text and "Traceback" not in text
    return text


def test_a_valid_answer_becomes_the_explanation(planted_report: Report) -> None:
    behaviour = Behaviour(content=answer())
    explanation = explain(planted_report, behaviour)
    assert explanation.model == MODEL  # asked of /v1/models (no model configured), named as the server names it
    assert explanation.category == "parallel-config"
    assert explanation.flags == (FlagOp("set", "--dp-size", "2"),)
    assert explanation.evidence == (('assert cfg["tp"] % cfg["dp"] == 0, "tp must divide dp"', True),)
    assert explanation.endpoint.endswith("/v1/chat/completions")
    [request] = posts(behaviour)
    assert request.path == "/v1/chat/completions"
    assert request.json()["response_format"]["type"] == "json_schema"


def test_the_request_holds_the_redacted_case_file_and_no_planted_secret(planted_report: Report) -> None:
    behaviour = Behaviour(content=answer())
    explain(planted_report, behaviour)
    sent = [message["content"] for message in posts(behaviour)[0].json()["messages"]]
    case = redact_secrets(case_markdown(redact_report(planted_report)))
    assert case in sent[-1]
    assert "AssertionError: tp must divide dp" in sent[-1]
    everything = repr([(r.path, r.headers, r.body.decode()) for r in behaviour.requests])
    for secret in PLANTED:
        assert secret not in everything


def test_a_case_builder_that_leaks_is_redacted_all_the_same(planted_report: Report) -> None:
    behaviour = Behaviour(content=answer())
    leaky = f"server_args=ServerArgs(api_key='{PLANTED_API_KEY}')\nAssertionError: tp must divide dp"
    with standin_server(behaviour) as url:
        explain_report(planted_report, settings_for(url), build_case=lambda report: leaky)
    body = posts(behaviour)[0].body.decode()
    assert "AssertionError: tp must divide dp" in body and PLANTED_API_KEY not in body


def test_an_answer_with_flags_the_engine_lacks_is_kept_and_not_passed_off_as_checked(planted_report: Report) -> None:
    # `--context-len` is no SGLang flag (it is `--context-length`): the answer is still shown, labelled unverified.
    # Without a checker nothing is marked (test_the_check_marks_* below: with logsleuth.check's).
    content = answer(fix=[{"op": "set", "flag": "--context-len", "value": "4096", "to": None}])
    explanation = explain(planted_report, Behaviour(content=content))
    assert explanation.flags == (FlagOp("set", "--context-len", "4096"),)
    assert explanation.checks == ()


def test_an_answer_with_removed_flags_is_kept_for_the_logs_version(planted_report: Report) -> None:
    # `--cuda-graph-max-bs` is in SGLang 0.5.9's catalog and not in 0.5.23's.
    report = replace(planted_report, launch=replace(planted_report.launch, engine_version="0.5.23"))
    content = answer(fix=[{"op": "add", "flag": "--cuda-graph-max-bs", "value": "32", "to": None}])
    behaviour = Behaviour(content=content)
    explanation = explain(report, behaviour)
    assert explanation.flags == (FlagOp("add", "--cuda-graph-max-bs", "32"),)
    assert "0.5.23" in posts(behaviour)[0].json()["messages"][-1]["content"]


def test_a_flag_check_given_by_the_caller_marks_each_flag(planted_report: Report) -> None:
    from logsleuth.models import FlagCheck

    def check(ops: tuple[FlagOp, ...], launch: LaunchInfo) -> tuple[FlagCheck, ...]:
        return tuple(FlagCheck(op, op.flag == "--dp-size", f"checked for {launch.engine_version}") for op in ops)

    with standin_server(Behaviour(content=answer())) as url:
        explanation = explain_report(planted_report, settings_for(url), check_flags=check)
    assert [(c.op.flag, c.ok, c.reason) for c in explanation.checks] == [("--dp-size", True, "checked for 0.5.9")]


def test_evidence_the_case_file_does_not_hold_is_marked(planted_report: Report) -> None:
    content = answer(evidence=["AssertionError: tp must divide dp", "RuntimeError: CUDA out of memory"])
    explanation = explain(planted_report, Behaviour(content=content))
    assert explanation.evidence == (
        ("AssertionError: tp must divide dp", True),
        ("RuntimeError: CUDA out of memory", False),
    )


def test_malformed_json_is_one_line(planted_report: Report) -> None:
    with pytest.raises(ExplainError) as caught:
        explain(planted_report, Behaviour(content='{"root_cause": "the tp size", "category": '))
    assert "not JSON" in assert_one_line(caught.value)


def test_a_reply_that_is_no_chat_completion_is_one_line(planted_report: Report) -> None:
    with pytest.raises(ExplainError) as caught:
        explain(planted_report, Behaviour(raw_body=b"<html>502 Bad Gateway</html>"))
    assert "not an OpenAI-compatible" in assert_one_line(caught.value)


@pytest.mark.parametrize(
    ("change", "named"),
    [
        ({"category": "bad-luck"}, "category"),
        ({"fix": [{"op": "append", "flag": "--tp-size", "value": "2", "to": None}]}, "fix[0].op"),
        ({"fix": [{"op": "add", "flag": "tensor parallel size", "value": "2", "to": None}]}, "fix[0].flag"),
        ({"fix": [{"op": "rename", "flag": "--tp", "value": None, "to": None}]}, "fix[0].to"),
        ({"root_cause": ""}, "root_cause"),
        ({"confidence": 0.9}, "confidence"),
    ],
)
def test_a_schema_invalid_answer_is_one_line_naming_the_field(
    planted_report: Report, change: dict[str, Any], named: str
) -> None:
    with pytest.raises(ExplainError) as caught:
        explain(planted_report, Behaviour(content=answer(**change)))
    text = assert_one_line(caught.value)
    assert "does not fit the answer's schema" in text and named in text


def test_a_timeout_is_one_line_and_not_retried(planted_report: Report) -> None:
    behaviour = Behaviour(content=answer(), sleep=TIMEOUT * 4)
    with pytest.raises(ExplainError) as caught:
        explain(planted_report, behaviour, timeout=TIMEOUT)
    assert f"no answer within {TIMEOUT:g} s" in assert_one_line(caught.value)
    assert len(posts(behaviour)) == 1  # a slow model would be as slow again: not retried


def test_http_500_is_retried_then_one_line(planted_report: Report) -> None:
    behaviour = Behaviour(status=500)
    with pytest.raises(ExplainError) as caught:
        explain(planted_report, behaviour, attempts=3)
    text = assert_one_line(caught.value)
    assert "500" in text and "tried 3 times" in text
    assert len(posts(behaviour)) == 3


def test_connection_refused_is_one_line(planted_report: Report) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings = settings_for(f"http://127.0.0.1:{port}/v1", model="m", attempts=2)
    with pytest.raises(ExplainError) as caught:
        explain_report(planted_report, settings)
    text = assert_one_line(caught.value)
    assert "refused" in text and f"127.0.0.1:{port}" in text


def test_a_server_without_json_schema_gets_json_object(planted_report: Report) -> None:
    behaviour = Behaviour(content=answer(), rejects=("json_schema",))
    explanation = explain(planted_report, behaviour)
    assert explanation.category == "parallel-config"
    kinds = [(request.json().get("response_format") or {}).get("type") for request in posts(behaviour)]
    assert kinds == ["json_schema", "json_object"]


def test_a_server_without_structured_output_is_parsed_from_text(planted_report: Report) -> None:
    # A model that thinks aloud and fences its JSON, on a server that takes no response_format at all.
    content = "<think>tp=2, dp=3 ...</think>\nHere is the answer:\n```json\n" + answer() + "\n```"
    behaviour = Behaviour(content=content, rejects=("json_schema", "json_object"))
    explanation = explain(planted_report, behaviour)
    assert explanation.flags == (FlagOp("set", "--dp-size", "2"),)
    assert "response_format" not in posts(behaviour)[-1].json()


def test_a_redirect_is_not_followed(planted_report: Report) -> None:
    elsewhere = Behaviour(content=answer())
    with standin_server(elsewhere) as other_url, pytest.raises(ExplainError) as caught:
        explain(planted_report, Behaviour(redirect_to=other_url + "/chat/completions"), model="m")
    assert "redirect" in assert_one_line(caught.value)
    assert elsewhere.requests == []  # the case file went only to the URL the user named


def test_the_api_key_is_sent_as_a_bearer_token_and_never_printed(planted_report: Report) -> None:
    key = "local-server-key-123456"
    echo = json.dumps({"error": f"bad request, Authorization: Bearer {key}"}).encode()
    behaviour = Behaviour(status=500, raw_body=echo)
    with pytest.raises(ExplainError) as caught:
        explain(planted_report, behaviour, api_key=key, attempts=1, model="m")
    assert posts(behaviour)[0].headers["Authorization"] == f"Bearer {key}"
    assert key not in str(caught.value)


def test_no_failure_sends_nothing() -> None:
    behaviour = Behaviour(content=answer())
    with pytest.raises(ExplainError) as caught:
        explain(Report(sources=(), failures=()), behaviour)
    assert "nothing was sent" in assert_one_line(caught.value)
    assert behaviour.requests == []


def _checked(report: Report, content: str) -> Any:
    from logsleuth.check.ops import check_flag_ops

    with standin_server(Behaviour(content=content)) as url:
        return explain_report(report, settings_for(url), check_flags=check_flag_ops)


def test_the_check_marks_a_flag_the_engine_lacks(planted_report: Report) -> None:
    # A model mixing engines: vLLM's --max-model-len is no SGLang flag; --context-len is argparse's accepted
    # abbreviation of --context-length (✓, with advice to write it in full).
    content = answer(fix=[{"op": "set", "flag": "--max-model-len", "value": "4096", "to": None},
                          {"op": "set", "flag": "--context-len", "value": "4096", "to": None},
                          {"op": "set", "flag": "--dp-size", "value": "2", "to": None}])
    report = replace(planted_report, launch=replace(planted_report.launch, engine_version="0.5.9"))
    checks = _checked(report, content).checks
    assert [check.ok for check in checks] == [False, True, True]
    assert "--context-length" in checks[0].reason and "abbreviation" in checks[1].reason


def test_the_check_marks_a_removed_flag_for_the_logs_version(planted_report: Report) -> None:
    # `--cuda-graph-max-bs` is in SGLang 0.5.9's catalog and not in 0.5.23's.
    content = answer(fix=[{"op": "add", "flag": "--cuda-graph-max-bs", "value": "32", "to": None}])
    for version, ok in (("0.5.23", False), ("0.5.9", True)):
        report = replace(planted_report, launch=replace(planted_report.launch, engine_version=version))
        (check,) = _checked(report, content).checks
        assert check.ok is ok, (version, check.reason)
