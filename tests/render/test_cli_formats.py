"""The real CLI, in-process: every --format, --output, --no-redact, --anonymize."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logsleuth.__main__ import main

LOG = """[2026-11-20 10:00:00] server_args=ServerArgs(model_path='/m', api_key='s3cret-cli-0001', tp_size=2)
(RayWorkerWrapper pid=12, ip=10.20.30.40) [2026-11-20 10:00:05 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/home/alice/serve/run.py", line 10, in main
    engine.start(token="hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567")
  File "/usr/lib/python3.11/site-packages/torch/x.py", line 5, in start
    raise RuntimeError(msg)
RuntimeError: cannot reach https://alice:pw-0002@mirror.example.com with sk-proj-AbCdEfGhIjKlMnOpQrSt0003
"""
SECRETS = (
    "s3cret-cli-0001",
    "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "pw-0002",
    "sk-proj-AbCdEfGhIjKlMnOpQrSt0003",
)


@pytest.fixture()
def log(tmp_path: Path) -> Path:
    path = tmp_path / "server.log"
    path.write_text(LOG)
    return path


@pytest.mark.parametrize("fmt", ["rich", "text", "markdown", "slack", "json"])
def test_every_format_redacts_by_default(fmt: str, log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagnose", str(log), "--format", fmt]) == 1
    out = capsys.readouterr().out
    assert "RuntimeError" in out
    assert not [s for s in SECRETS if s in out]
    if fmt == "json":
        json.loads(out)


@pytest.mark.parametrize("fmt", ["text", "markdown", "slack", "json"])
def test_no_redact_shows_the_log_as_it_is(fmt: str, log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["diagnose", str(log), "--format", fmt, "--no-redact"])
    out = capsys.readouterr().out
    assert "sk-proj-AbCdEfGhIjKlMnOpQrSt0003" in out and "pw-0002" in out


def test_anonymize(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["diagnose", str(log), "--format", "text", "--anonymize"])
    out = capsys.readouterr().out
    assert "10.20.30.40" not in out and "alice" not in out
    assert "ip-1" in out and "user-1" in out


def test_output_file_gets_the_same_report(
    log: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "report.md"
    main(["diagnose", str(log), "--format", "markdown", "--output", str(target)])
    assert capsys.readouterr().out == ""
    assert target.read_text().startswith("### logsleuth: RuntimeError")


def test_width_applies_to_text(log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    main(["diagnose", str(log), "--format", "rich", "--width", "60"])
    out = capsys.readouterr().out
    # Colour is on for --format rich on stdout; measure the visible text.
    import re

    lines = re.sub(r"\x1b\[[0-9;]*m", "", out).splitlines()
    # The exact text to search for is printed whole, on a line of its own, so that it copies in one piece.
    # So is a command the report's ending offers (`logsleuth case PATH`).
    wrapped = [
        line
        for before, line in zip(["", *lines], lines, strict=False)
        if before.strip() != "Search for:" and not line.strip().startswith(("logsleuth case ", "logsleuth diagnose "))
    ]
    assert max(len(line) for line in wrapped) <= 60
