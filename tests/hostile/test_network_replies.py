"""What `--explain`'s endpoint and the Slack webhook may answer, and where their requests may go.

A raw-socket server on 127.0.0.1 (raw_http.py) sends replies no HTTP library would: a bad status line, too
many or too long headers, a broken chunk, a body cut short, deeply nested JSON, a reply dripped one byte at a
time.  Each must end as one line on stderr with the report still printed.  A URL's `user:password@` must never
reach the resolver as part of a host name, a webhook's redirect is not followed, and neither request goes
through a proxy the environment names.
"""

from __future__ import annotations

import base64
import json
import os
import socket
import subprocess
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.cli.slack_webhook import post_to_slack
from logsleuth.errors import LogsleuthError
from logsleuth.explain import ExplainError, explain_report
from logsleuth.explain.config import ExplainOptions, resolve_settings
from tests.explain.conftest import planted_log
from tests.explain.llm_standin import Behaviour, answer, standin_server
from tests.hostile.checks import Output, run_cli_bytes
from tests.hostile.raw_http import RawReply, http_reply, raw_http_server

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "eagle3-incident.log"
LOGSLEUTH = str(Path(sys.executable).with_name("logsleuth"))
HANG = 60  # seconds: a test waits this long only when the code under test hangs
OK = b"HTTP/1.1 200 OK"

MALFORMED: dict[str, bytes] = {
    "bad status line": b"HTTX/1.1 200 OK\r\n\r\n{}",
    "escapes in the status line": b"\x1b]52;c;cHduZWQ=\x07 200 \x1b[2J\r\n\r\n",
    "too many headers": http_reply(OK, [b"X-Header-%d: v" % i for i in range(150)], b"{}"),
    "too long a header": http_reply(OK, [b"X-Long: " + b"a" * 70_000], b"{}"),
    "broken chunk": http_reply(OK, [b"Transfer-Encoding: chunked"], b"zz\r\nabc\r\n0\r\n\r\n"),
    "body cut short": http_reply(OK, [b"Content-Length: 5000"], b'{"choices": ['),
}
NESTED_JSON = http_reply(OK, [b"Content-Type: application/json"], b"[" * 200_000 + b"]" * 200_000)


@pytest.fixture(autouse=True)
def _no_config_or_proxy(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No config file, endpoint, key or proxy of the machine's."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    for name in list(os.environ):
        if name.startswith(("LOGSLEUTH_LLM", "LOGSLEUTH_SLACK")) or name.lower().endswith("_proxy"):
            monkeypatch.delenv(name)


def diagnose(*args: str) -> Output:
    return run_cli_bytes("diagnose", str(EXAMPLE), "--format", "json", *args)


def assert_one_line_and_the_report(result: Output, prefix: str, status: int) -> str:
    """The report is on stdout whole, the exit status is `status`, and stderr says `prefix` on one line."""
    assert result.exit_code == status, result.errors
    assert result.json()["failures"], "the report is printed"
    lines = [line for line in result.errors.splitlines() if prefix in line]
    assert len(lines) == 1 and "internal error" not in result.errors, result.errors
    assert "\x1b" not in result.errors
    return lines[0]


# --explain's endpoint


@pytest.mark.parametrize("case", [*MALFORMED, "deeply nested JSON"])
def test_a_malformed_reply_from_the_explain_endpoint_is_one_line(case: str) -> None:
    reply = RawReply(head=MALFORMED.get(case, NESTED_JSON))
    with raw_http_server(reply) as url:
        result = diagnose("--explain", "--llm-url", url, "--llm-model", "m")
    line = assert_one_line_and_the_report(result, "--explain:", 1)
    assert result.json()["explanation"] is None
    assert url.removeprefix("http://") in line


def _config(tmp_path: Path, table: str) -> dict[str, str]:
    config = tmp_path / "config" / "logsleuth" / "config.toml"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(f"[explain]\n{table}\n")
    environment = {k: v for k, v in os.environ.items() if not k.startswith("LOGSLEUTH_LLM")}
    return {**environment, "XDG_CONFIG_HOME": str(tmp_path / "config")}


def test_an_endpoint_that_drips_its_reply_meets_the_deadline(tmp_path: Path) -> None:
    # Each byte comes well within the socket timeout; the whole reply never comes.
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
    reply = RawReply(head=head, drip=b"{", drip_every=0.05, drip_forever=True)
    with raw_http_server(reply) as url:
        done = subprocess.run(
            [LOGSLEUTH, "diagnose", str(EXAMPLE), "--format", "json", "--explain", "--llm-url", url, "--llm-model", "m"],
            capture_output=True, text=True, timeout=HANG, env=_config(tmp_path, "timeout = 1"),
        )
    assert done.returncode == 1, done.stderr
    assert json.loads(done.stdout)["failures"] and json.loads(done.stdout)["explanation"] is None
    assert "--explain:" in done.stderr and "within 1 s" in done.stderr, done.stderr
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr


# the URL's user information


def test_a_password_in_the_llm_url_never_reaches_the_resolver(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[object] = []
    real = socket.getaddrinfo

    def spying_getaddrinfo(host: object, *args: Any, **kwargs: Any) -> Any:  # the real resolver, watched
        asked.append(host)
        return real(host, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(socket, "getaddrinfo", spying_getaddrinfo)
    behaviour = Behaviour(content=answer())
    with standin_server(behaviour) as url:
        with_password = url.replace("http://", "http://alice:pw-Quokka%2F42@")
        result = diagnose("--explain", "--llm-url", with_password, "--llm-model", "m")
    assert result.exit_code == 1, result.errors
    assert asked and all("Quokka" not in str(host) and "@" not in str(host) for host in asked), asked
    assert result.json()["explanation"] is not None, result.errors
    # Sent as basic authentication, once decoded; never in the Host header or any output.
    (request,) = [r for r in behaviour.requests if r.method == "POST"]
    assert request.headers["Authorization"] == "Basic " + base64.b64encode(b"alice:pw-Quokka/42").decode()
    assert "Quokka" not in request.headers["Host"]
    assert "Quokka" not in result.text + result.errors


def test_a_password_in_the_url_and_an_api_key_are_refused_together(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOGSLEUTH_LLM_API_KEY", "key-Wombat-1234")
    behaviour = Behaviour(content=answer())
    with standin_server(behaviour) as url:
        result = diagnose("--explain", "--llm-url", url.replace("http://", "http://alice:pw-Quokka@"))
    line = assert_one_line_and_the_report(result, "--explain:", 1)
    assert behaviour.requests == [] and "Quokka" not in line and "Wombat" not in line


def test_a_webhook_url_with_a_password_is_refused_before_any_lookup(monkeypatch: pytest.MonkeyPatch) -> None:
    def no_lookup(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"looked up {args[0]!r}")

    monkeypatch.setattr(socket, "getaddrinfo", no_lookup)
    with pytest.raises(LogsleuthError) as caught:
        post_to_slack("https://u:pw-Quokka@hooks.slack.com/services/T/B/X", "x", backoff=0.01)
    assert "user" in str(caught.value) and "Quokka" not in str(caught.value)


# the Slack webhook


@pytest.mark.parametrize("case", MALFORMED)
def test_a_malformed_reply_from_the_webhook_is_one_line(case: str) -> None:
    reply = RawReply(head=MALFORMED[case])
    with raw_http_server(reply) as url:
        result = diagnose("--slack-webhook", url + "/services/T/B/X")
    # docs/report-formats.md: a failed post is one line; the report's status (1: a failure found) stands
    assert_one_line_and_the_report(result, "--slack-webhook:", 1)
    assert "posted the report" not in result.errors


def _post_with_a_one_second_deadline(reply: RawReply) -> BaseException | None:
    """Post to a webhook sending `reply`, in a thread the test waits for only as long as a hang takes; what
    the post raised, or None."""
    outcome: list[BaseException | None] = []

    def post() -> None:
        try:
            post_to_slack(url + "/services/T/B/X", "x", timeout=1.0, backoff=0.01)
            outcome.append(None)
        except LogsleuthError as error:
            outcome.append(error)

    with raw_http_server(reply) as url:
        thread = threading.Thread(target=post, daemon=True)
        thread.start()
        thread.join(HANG)
    assert not thread.is_alive(), "the post outlived its deadline"
    (error,) = outcome
    return error


def test_a_webhook_that_drips_its_reply_meets_the_deadline() -> None:
    reply = RawReply(head=b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n", drip=b"o", drip_every=0.05,
                     drip_forever=True)
    error = _post_with_a_one_second_deadline(reply)
    assert isinstance(error, LogsleuthError) and "within 1 s" in str(error)


def test_a_webhook_redirect_is_not_followed_and_not_called_posted() -> None:
    elsewhere = RawReply(head=http_reply(OK, [], b"ok"))
    with raw_http_server(elsewhere) as other:
        redirect = http_reply(b"HTTP/1.1 302 Found", [b"Location: " + other.encode() + b"/collect"], b"")
        with raw_http_server(RawReply(head=redirect)) as url:
            result = diagnose("--slack-webhook", url + "/services/T/B/X")
    line = assert_one_line_and_the_report(result, "--slack-webhook:", 1)
    assert "redirect" in line
    assert elsewhere.requests == [], "the report went to a host the user never named"
    assert "posted the report" not in result.errors


def test_the_webhook_ignores_proxy_variables(tmp_path: Path) -> None:
    # A process of its own: urllib keeps the proxies of its first request for the life of a process.
    proxy = RawReply(head=http_reply(OK, [], b"ok"))
    hook = RawReply(head=http_reply(OK, [], b"ok"))
    with raw_http_server(proxy) as proxy_url, raw_http_server(hook) as url:
        proxies = {name: proxy_url for name in ("http_proxy", "HTTP_PROXY", "https_proxy", "all_proxy")}
        done = subprocess.run(
            [LOGSLEUTH, "diagnose", str(EXAMPLE), "--format", "json", "--slack-webhook", url + "/services/T/B/X"],
            capture_output=True, text=True, timeout=HANG, env={**os.environ, **proxies},
        )
    assert done.returncode == 1, done.stderr
    assert proxy.requests == [], "the webhook's URL (a secret) went to a proxy"
    assert len(hook.requests) == 1 and "posted the report to Slack" in done.stderr


def test_the_explain_deadline_holds_across_retries() -> None:
    # Each attempt is answered (a 500, retried) within the deadline; all of them together are not.
    report = diagnose_text(planted_log(), DiagnoseOptions(include_user_patterns=False))
    behaviour = Behaviour(status=500, sleep=0.4)
    with standin_server(behaviour) as url, pytest.raises(ExplainError) as caught:
        settings = resolve_settings(ExplainOptions(enabled=True, url=url, model="m"), environ={}, config_file=None)
        explain_report(report, replace(settings, timeout=1.0, attempts=6, backoff=0.01))
    assert "within 1 s" in str(caught.value)
    assert len(behaviour.requests) < 6


def test_the_webhook_deadline_holds_across_retries() -> None:
    """A hook that answers 503 with a long Retry-After: the waits between tries stop at the post's one deadline
    (issue 26: an overall deadline), instead of the 30 s Retry-After the tries would otherwise wait."""
    busy = RawReply(head=http_reply(b"HTTP/1.1 503 Service Unavailable", [b"Retry-After: 30"], b"busy"))
    error = _post_with_a_one_second_deadline(busy)
    assert isinstance(error, LogsleuthError) and "503" in str(error) and "within 1 s" in str(error)
