"""`--explain`'s answer is as untrusted as the log: a model (or the server in front of it) may echo the API key
or any secret, and write escape sequences, in any field.  Every format, the Slack post and the JSON report must
show it redacted and inert; and a value it proposes is shown shell-quoted, never marked ✓ when it is shell
syntax rather than a value.  Against the OpenAI-compatible stand-in on 127.0.0.1 (tests/explain/llm_standin.py:
no real model runs on these machines)."""

from __future__ import annotations

import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from logsleuth.check.ops import check_flag_ops
from logsleuth.models import Explanation, FlagOp, LaunchInfo, Report
from tests.explain.llm_standin import Behaviour, answer, standin_server
from tests.hostile.checks import CONTROL, Output, run_cli_bytes
from tests.hostile.raw_http import RawReply, http_reply, raw_http_server
from tests.render.helpers import FORMATS, render

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eagle3-incident.log"
API_KEY = "local-key-Wombat-7f3a91c2"  # the key the endpoint is given: no redaction rule knows its shape
ECHOED_TOKEN = "hf_EchoedHuggingFaceToken0123456789ab"
OPENAI_KEY = "sk-echoedOpenAIKey0123456789abcdefXYZ"
SECRETS = (API_KEY, ECHOED_TOKEN, OPENAI_KEY, "Wombat")
OSC52 = "\x1b]52;c;cm0gLXJmIC8=\x07"
CLEAR = "\x1b[2J"

HOSTILE_ANSWER = answer(
    root_cause=f"The server got Authorization: Bearer {API_KEY}{OSC52} and HF_TOKEN={ECHOED_TOKEN}.{CLEAR}",
    fix=[
        {"op": "set", "flag": "--api-key", "value": OPENAI_KEY, "to": None},
        {"op": "set", "flag": "--served-model-name", "value": f"m{OSC52}", "to": None},
    ],
    upgrade=f"Upgrade, then export OPENAI_API_KEY={OPENAI_KEY} \u202etxt.exe",
    evidence=[f"api_key={API_KEY}", f"assert cfg{CLEAR}"],
)


@pytest.fixture(autouse=True)
def _endpoint_key(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in list(os.environ):
        if name.startswith(("LOGSLEUTH_LLM", "LOGSLEUTH_SLACK")):
            monkeypatch.delenv(name)
    monkeypatch.setenv("LOGSLEUTH_LLM_API_KEY", API_KEY)


def explained(*args: str) -> Output:
    with standin_server(Behaviour(content=HOSTILE_ANSWER)) as url:
        return run_cli_bytes("diagnose", str(EXAMPLE), "--explain", "--llm-url", url, "--llm-model", "m", *args)


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [text for item in value.values() for text in _strings(item)]
    if isinstance(value, list):
        return [text for item in value for text in _strings(item)]
    return []


@pytest.mark.parametrize("fmt", [fmt.value for fmt in FORMATS])
@pytest.mark.parametrize("no_redact", [False, True])
def test_the_answer_is_redacted_and_inert_in_every_format(fmt: str, no_redact: bool) -> None:
    result = explained("--format", fmt, *(["--no-redact"] if no_redact else []))
    assert result.exit_code == 1, result.errors
    assert "nverified explanation" in result.text, result.errors
    for secret in SECRETS:
        assert secret not in result.text + result.errors, (fmt, secret)
    if fmt == "json":
        explanation = result.json()["explanation"]
        assert explanation["root_cause"].startswith("The server got")
        assert not [text for text in _strings(explanation) if CONTROL.search(text.replace("\n", ""))]
    else:
        shown = result.text if fmt != "rich" else result.text.replace("\x1b[", "")  # rich's own colours aside
        assert "]52;" not in shown and "2J" not in shown and "\u202e" not in shown


def test_the_answer_posted_to_slack_is_redacted_and_inert() -> None:
    hook = RawReply(head=http_reply(b"HTTP/1.1 200 OK", [], b"ok"))
    with raw_http_server(hook) as url:
        result = explained("--format", "json", "--slack-webhook", url + "/services/T/B/X")
    assert result.exit_code == 1 and "posted the report to Slack" in result.errors, result.errors
    (request,) = hook.requests
    posted = json.loads(request.partition(b"\r\n\r\n")[2])["text"]
    assert "nverified explanation" in posted
    for secret in SECRETS:
        assert secret not in posted
    assert not CONTROL.search(posted.replace("\n", ""))


# Proposed values


PROPOSED = Explanation(
    model="standin/Qwen3-8B",
    endpoint="http://127.0.0.1:30000/v1/chat/completions",
    root_cause="The model path is wrong.",
    category="other",
    flags=(FlagOp("set", "--model-path", "$(touch /tmp/pwned)"), FlagOp("set", "--tp-size", "2")),
    upgrade=None,
    evidence=(),
)


@pytest.fixture(scope="module")
def report() -> Report:
    from logsleuth.api import DiagnoseOptions, diagnose_text

    return diagnose_text(EXAMPLE.read_text(), DiagnoseOptions(include_user_patterns=False))


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_proposed_value_is_shell_quoted_in_every_format(report: Report, fmt: Any) -> None:
    checked = replace(PROPOSED, checks=check_flag_ops(PROPOSED.flags, LaunchInfo(engine_version="0.5.9")))
    text = render(replace(report, explanation=checked), fmt)
    if fmt.value == "json":
        flags = json.loads(text)["explanation"]["flags"]
        assert [flag["change"] for flag in flags] == ["set --model-path '$(touch /tmp/pwned)'", "set --tp-size 2"]
        assert flags[0]["check"]["ok"] is False
    else:
        assert "set --model-path '$(touch /tmp/pwned)'" in text
        assert "--model-path $(touch" not in text
        assert "✓ set --model-path" not in text and "✓ `set --model-path" not in text


def test_shell_syntax_in_a_proposed_value_is_never_marked_checked() -> None:
    values = ["$(touch /tmp/pwned)", "`id`", "/models/a; rm -rf ~", "a && b", "x | sh", "a > /etc/passwd", "a\nb"]
    ops = tuple(FlagOp("set", "--model-path", value) for value in values)
    checks = check_flag_ops((*ops, FlagOp("set", "--model-path", "/models/Llama-3.1 8B")), LaunchInfo())
    assert [check.ok for check in checks] == [False] * len(values) + [True]
    assert all("shell" in check.reason for check in checks[:-1])
