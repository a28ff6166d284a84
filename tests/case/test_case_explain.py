"""What `diagnose --explain` sends is the case file, fitted to the explain limit and redacted (issue 28, item 6).

The OpenAI-compatible server is the local stand-in of tests/explain (127.0.0.1); it records every request."""

from __future__ import annotations

import json
from pathlib import Path

from logsleuth.case import CASE_LIMIT
from logsleuth.explain import EXPLAIN_CASE_LIMIT
from tests.case.test_case_evidence import C10D_TIMEOUT, _long_log
from tests.case.test_case_secrets import PIECES, _planted
from tests.explain.llm_standin import Behaviour, answer, standin_server
from tests.hostile.checks import run_cli_bytes


def _sent_case(log: Path) -> str:
    behaviour = Behaviour(content=answer())
    with standin_server(behaviour) as url:
        result = run_cli_bytes("diagnose", str(log), "--format", "json", "--explain", "--llm-url", url)
    assert result.exit_code == 1, result.errors
    posts = [json.loads(request.body) for request in behaviour.requests if request.method == "POST"]
    assert posts, result.errors
    messages = posts[0]["messages"]
    assert [message["role"] for message in messages] == ["system", "user"]
    return str(messages[1]["content"])


def test_explain_sends_the_log_evidence_within_its_limit(tmp_path: Path) -> None:
    assert EXPLAIN_CASE_LIMIT <= CASE_LIMIT
    log = _long_log(tmp_path / "server.log", after=600)
    sent = _sent_case(log)
    assert len(sent) <= EXPLAIN_CASE_LIMIT
    assert "#### The failure, as the log printed it" in sent
    assert "RuntimeError: CUDA out of memory" in sent
    assert C10D_TIMEOUT in sent  # the error-looking lines
    assert "follow-up line 599" in sent  # the log's last lines


def test_explain_sends_no_planted_secret(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(_planted(1500), encoding="utf-8")
    sent = _sent_case(log)
    assert "after the crash" in sent
    assert [piece for piece in PIECES if piece in sent] == []
