"""Slack: the length budget gives up the least useful parts first, and --slack-webhook posts
an API-escaped report (tested against a local HTTP server on 127.0.0.1)."""

from __future__ import annotations

import dataclasses
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path

import pytest

from logsleuth.__main__ import main
from logsleuth.cli.slack_webhook import post_to_slack
from logsleuth.errors import LogsleuthError
from logsleuth.models import Frame, Report
from logsleuth.render.options import OutputFormat
from tests.render.cases import several_hosts, single_failure, unknown_failure
from tests.render.helpers import render, slack_fences_balanced


def with_library_frames(report: Report, count: int = 40) -> Report:
    group = report.failures[0]
    block = group.failure.final
    library = tuple(
        Frame(
            f"/usr/lib/python3.11/site-packages/torch/nn/mod{i}.py", i, f"call{i}", f"return forward_{i}(x)"
        )
        for i in range(count)
    )
    block = dataclasses.replace(block, frames=(*block.frames[:2], *library, *block.frames[2:]))
    failure = dataclasses.replace(group.failure, exceptions=(block,))
    return dataclasses.replace(report, failures=(dataclasses.replace(group, failure=failure),))


@pytest.mark.parametrize("limit", [3500, 1500, 900, 600, 300, 120])
@pytest.mark.parametrize("make", [single_failure, unknown_failure, several_hosts])
def test_fits_the_budget_with_closed_fences(make: object, limit: int) -> None:
    output = render(with_library_frames(make()), OutputFormat.SLACK, max_chars=limit)  # type: ignore[operator]
    assert len(output) <= limit  # the final newline included
    assert slack_fences_balanced(output)


def test_the_evidence_gives_way_before_the_answer() -> None:
    """Under a tight budget the log lines go first, then the frames; the root cause, the fix and the corrected
    command stay whole."""
    report = with_library_frames(unknown_failure())
    full = render(report, OutputFormat.SLACK, max_chars=100_000)
    assert "Log lines just before it" in full and "› app/serve.py:14 in main" in full
    tighter = render(report, OutputFormat.SLACK, max_chars=len(full) - 10)
    assert "Log lines just before it" not in tighter, "context lines go first"
    assert "ValueError: Unsupported rope_scaling type" in tighter
    answer = render(single_failure(), OutputFormat.SLACK, max_chars=100_000)
    evidence = answer.index("\n```\n    … 3 earlier frames")
    tightest = render(single_failure(), OutputFormat.SLACK, max_chars=evidence + 10)
    assert "›" not in tightest, "the frames give way"
    assert single_failure().failures[0].diagnosis.root_cause.split()[-1] in tightest  # type: ignore[union-attr]
    assert "--speculative-num-steps 15\n```" in tightest


@pytest.mark.parametrize(("limit", "alternative"), [(900, True), (700, False)])
def test_the_corrected_command_survives_a_tight_budget(limit: int, alternative: bool) -> None:
    output = render(single_failure(), OutputFormat.SLACK, max_chars=limit)
    assert "--speculative-num-steps 15\n```" in output
    assert "›" not in output, "the frames go before any fix"
    assert ("*Or:*" in output) is alternative, "the alternative goes after the frames, before the main fix"


class _Hook(BaseHTTPRequestHandler):
    received: list[dict[str, str]] = []
    status = 200
    first: list[int] = []  # statuses answered before `status`, one per request

    def do_POST(self) -> None:  # noqa: N802 - http.server's naming
        body = self.rfile.read(int(self.headers["Content-Length"]))
        _Hook.received.append(json.loads(body))
        status = _Hook.first.pop(0) if _Hook.first else _Hook.status
        self.send_response(status)
        if status == 429:
            self.send_header("Retry-After", "0")
        self.end_headers()
        self.wfile.write(b"ok" if status == 200 else b"invalid_payload")

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def webhook() -> Iterator[str]:
    server = HTTPServer(("127.0.0.1", 0), _Hook)
    _Hook.received = []
    _Hook.status = 200
    _Hook.first = []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/services/T/B/X"
    server.shutdown()
    server.server_close()


def test_post_escapes_control_characters(webhook: str) -> None:
    post_to_slack(webhook, "a & b <module> -> <!channel>")
    assert _Hook.received == [{"text": "a &amp; b &lt;module&gt; -&gt; &lt;!channel&gt;"}]


def test_post_reports_a_refusal(webhook: str) -> None:
    _Hook.status = 400
    with pytest.raises(LogsleuthError, match="400 invalid_payload"):
        post_to_slack(webhook, "x")


@pytest.mark.parametrize("transient", [503, 500, 429])
def test_post_retries_a_transient_failure(webhook: str, transient: int) -> None:
    _Hook.first = [transient]
    post_to_slack(webhook, "x", backoff=0.01)
    assert len(_Hook.received) == 2


def test_post_gives_up_after_three_tries(webhook: str) -> None:
    _Hook.status = 503
    with pytest.raises(LogsleuthError, match=r"503 invalid_payload \(tried 3 times\)"):
        post_to_slack(webhook, "x", backoff=0.01)
    assert len(_Hook.received) == 3


def test_post_does_not_retry_a_refusal(webhook: str) -> None:
    _Hook.status = 404
    with pytest.raises(LogsleuthError, match="404"):
        post_to_slack(webhook, "x", backoff=0.01)
    assert len(_Hook.received) == 1


def test_post_retries_a_refused_connection() -> None:
    """A port on 127.0.0.1 that nothing listens on: refused three times, then one error line."""
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with pytest.raises(LogsleuthError, match=r"cannot post to 127\.0\.0\.1: .*\(tried 3 times\)"):
        post_to_slack(f"http://127.0.0.1:{port}/services/T/B/X", "x", backoff=0.01)


def test_cli_posts_to_the_webhook_in_the_environment(
    webhook: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    log = tmp_path / "server.log"
    log.write_text(LOG)
    monkeypatch.setenv("LOGSLEUTH_SLACK_WEBHOOK", webhook)
    assert main(["diagnose", str(log), "--format", "json"]) == 1
    assert _Hook.received == [], "the variable alone never posts"
    assert main(["diagnose", str(log), "--format", "json", "--post-to-slack"]) == 1
    assert len(_Hook.received) == 1 and _Hook.received[0]["text"].startswith("*logsleuth:*")
    assert "posted the report to Slack" in capsys.readouterr().err


def test_post_refuses_plain_http_to_other_hosts() -> None:
    with pytest.raises(LogsleuthError, match="https"):
        post_to_slack("http://hooks.slack.com/services/x", "x")


LOG = """[2026-11-20 10:00:00] server_args=ServerArgs(model_path='/m', api_key='s3cret-posted-key')
Traceback (most recent call last):
  File "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py", line 32, in <module>
    main()
RuntimeError: failed in <frozen importlib._bootstrap> & <!channel> api_key='s3cret-posted-key'
"""


def test_cli_posts_the_slack_report(webhook: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    log.write_text(LOG)
    status = main(["diagnose", str(log), "--format", "text", "--slack-webhook", webhook])
    captured = capsys.readouterr()
    assert status == 1
    assert "RuntimeError" in captured.out and "posted the report to Slack" in captured.err
    (payload,) = _Hook.received
    text = payload["text"]
    assert text.startswith("*logsleuth:*") and "```" in text
    assert "&lt;frozen importlib._bootstrap&gt; &amp;" in text
    assert "<" not in text and ">" not in text
    assert "s3cret-posted-key" not in text
    assert len(text) <= 3500  # counted after the API escaping


def test_the_api_budget_counts_the_escapes() -> None:
    from logsleuth.render.options import RenderOptions
    from logsleuth.render.safety import escape_slack_api
    from logsleuth.render.slack import render_slack_for_api

    report = unknown_failure()
    group = report.failures[0]
    context = tuple("<module> -> <lambda> & <frozen>" * 3 for _ in range(5))
    group = dataclasses.replace(group, failure=dataclasses.replace(group.failure, context=context))
    report = dataclasses.replace(report, failures=(group,))
    text = render_slack_for_api(report, RenderOptions(format=OutputFormat.SLACK, max_chars=900))
    assert len(escape_slack_api(text)) <= 900
    assert slack_fences_balanced(text)


def test_a_failed_post_keeps_the_failure_status(webhook: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Slack refusing the post is one stderr line; the report was delivered and its status (1: a failure was
    found) stands, rather than becoming 3 (issue 30, finding 10)."""
    log = tmp_path / "server.log"
    log.write_text(LOG)
    _Hook.status = 400
    status = main(["diagnose", str(log), "--format", "text", "--slack-webhook", webhook])
    captured = capsys.readouterr()
    assert status == 1
    assert "RuntimeError" in captured.out
    errors = captured.err.strip().splitlines()
    assert len(errors) == 1 and "--slack-webhook" in errors[0] and "400" in errors[0]
    assert "posted the report" not in captured.err


def test_a_failed_post_of_a_report_without_failure_exits_3(webhook: str, tmp_path: Path,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    log = tmp_path / "server.log"
    log.write_text("The server is fired up and ready to roll!\n")
    _Hook.status = 400
    status = main(["diagnose", str(log), "--format", "text", "--slack-webhook", webhook])
    assert status == 3  # nothing was found, and nothing reached the channel: a cron job must notice
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
