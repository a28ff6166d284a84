"""File names that are not UTF-8 and terminals that are not UTF-8: the report is still written, and the JSON
report is always strict UTF-8 (real processes: the file name reaches argv as bytes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.hostile.corpora import INCIDENT_LOG

FORMATS = ("rich", "text", "markdown", "slack", "json")


def run(*args: bytes | str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "logsleuth", *args], capture_output=True, timeout=120, env={**os.environ, **(env or {})}
    )


@pytest.fixture
def latin1_named_log(tmp_path: Path) -> bytes:
    """A log whose name is Latin-1 (`caf\\xe9.log`), as old tools and mounted shares leave them."""
    name = os.fsencode(tmp_path) + b"/caf\xe9-\xff.log"
    with open(name, "wb") as handle:
        handle.write(INCIDENT_LOG.read_bytes())
    return name


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_non_utf8_file_name_gives_a_valid_utf8_report(latin1_named_log: bytes, fmt: str) -> None:
    missing = latin1_named_log.replace(b".log", b"-missing.log")
    result = run("diagnose", latin1_named_log, missing, "--format", fmt)
    assert result.returncode == 1, result.stderr
    report = result.stdout.decode("utf-8")  # strict
    result.stderr.decode("utf-8")
    if fmt == "json":
        names = [source["name"] for source in json.loads(report)["sources"]]
        assert names[0].endswith("/caf\\xe9-\\xff.log")  # each undecodable byte is shown as \xNN
        assert names[1].endswith("/caf\\xe9-\\xff-missing.log")
    else:
        assert "caf\\xe9-\\xff" in report + result.stderr.decode("utf-8")


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_ascii_terminal_gets_the_report(fmt: str, tmp_path: Path) -> None:
    """PYTHONIOENCODING=ascii: the report holds `›`, `…` and `café`.  Text formats are written with backslash
    escapes for what ASCII lacks; JSON, which is UTF-8 by definition (RFC 8259), is written as UTF-8."""
    log = tmp_path / "server.log"
    log.write_text(INCIDENT_LOG.read_text().replace("Traceback", "warning: café … naïve\nTraceback", 1))
    result = run("diagnose", str(log), "--format", fmt, env={"PYTHONIOENCODING": "ascii"})
    assert result.returncode == 1, result.stderr
    assert result.stderr == b""
    if fmt == "json":
        assert "warning: café … naïve" in json.loads(result.stdout.decode("utf-8"))["failures"][0]["context"]
    else:
        text = result.stdout.decode("ascii")  # strict: nothing but ASCII reached the stream
        assert "AssertionError" in text
