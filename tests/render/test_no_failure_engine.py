"""A report that finds no failure still says which engine's log it read (the held-out split: a clean vLLM start
was reported as "No failure found" with no engine, in every format but json), and says nothing of an engine the
log does not show."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import run_cli

# A healthy vLLM start, in the API server's own logger format (the banner line carries the release).
HEALTHY_VLLM = """\
INFO 12-03 10:00:00 [api_server.py:1000] vLLM API server version 0.11.2
INFO 12-03 10:00:05 [launcher.py:40] Available routes are:
INFO:     Application startup complete.
"""


@pytest.mark.parametrize("fmt", ["text", "markdown", "slack"])
def test_a_clean_log_names_its_engine(tmp_path: Path, fmt: str) -> None:
    log = tmp_path / "serve.log"
    log.write_text(HEALTHY_VLLM)
    result = run_cli("diagnose", str(log), "--format", fmt, "--no-user-patterns")
    assert result.exit_code == 0, result.stderr
    assert "No failure found" in result.stdout
    assert "Engine: vllm 0.11.2" in result.stdout


def test_a_clean_log_without_evidence_names_none(tmp_path: Path) -> None:
    log = tmp_path / "plain.log"
    log.write_text("starting\nall good\n")
    result = run_cli("diagnose", str(log), "--no-user-patterns")
    assert result.exit_code == 0, result.stderr
    assert "No failure found" in result.stdout
    assert "Engine:" not in result.stdout
