"""Everything the CLI prints besides the report: error, warning, usage and watch lines.  A file name or a
log can put escape sequences and secrets there as easily as in the report, so each line is cleaned and
redacted the same way, in one place."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import append_later
from tests.hostile.checks import CONTROL, run_cli_bytes
from tests.hostile.corpora import ESCAPE_MARKERS, OSC52, TITLE

HOSTILE_NAME = f"evil-{OSC52}{TITLE}\x1b[2J-api_key=SECRETname-\u202e.log"
STAGES = [
    "[2026-11-20 10:00:00] server_args=ServerArgs(model_path='/m', api_key='two SECRETlog words')\n",
    "[2026-11-20 10:00:01 TP0] Load weight begin. avail mem=60.12 GB\n",
    "[2026-11-20 10:00:05 TP0] Capture cuda graph begin. This can take up to several minutes.\n",
    "[2026-11-20 10:00:09] The server is fired up and ready to roll!\n",
]


def assert_inert(text: str) -> None:
    assert not CONTROL.search(text.replace("\n", "")), repr(text)
    assert not [marker for marker in (*ESCAPE_MARKERS, "SECRET") if marker in text], text


@pytest.mark.parametrize("fmt", ["text", "json"])
def test_an_error_line_naming_a_hostile_file_is_cleaned(tmp_path: Path, fmt: str) -> None:
    result = run_cli_bytes("diagnose", str(tmp_path / HOSTILE_NAME), "--format", fmt)
    assert result.exit_code == 3
    (line,) = result.errors.splitlines()
    assert line.startswith("logsleuth: ") and line.endswith(": no such file")
    assert "api_key=REDACTED" in line
    assert_inert(line)


def test_a_usage_error_quoting_a_hostile_option_is_cleaned() -> None:
    """click quotes an unknown option (typer's click already shows its escapes as `\\x1b` text; the CLI
    cleans the message as well, so this holds whatever click does)."""
    result = run_cli_bytes("diagnose", "x.log", f"--{OSC52}{TITLE}")
    assert result.exit_code == 2
    assert "No such option" in result.errors
    assert not CONTROL.search(result.errors.replace("\n", "")), repr(result.errors)


def test_watch_lines_are_cleaned_and_redacted(tmp_path: Path) -> None:
    """Outside a terminal, watch prints one line per stage to stderr and the ready line to stdout."""
    log = tmp_path / HOSTILE_NAME
    log.write_text("")
    writer = append_later(log, STAGES, 0.3)  # written while watched: the backlog is replayed silently
    result = run_cli_bytes("watch", str(log), "--timeout", "20")
    writer.join()
    assert result.exit_code == 0, result.errors
    assert "the server is ready" in result.text
    assert result.errors.count("logsleuth: ") >= 1
    assert_inert(result.errors)
    assert_inert(result.text)


def test_watch_error_line_is_cleaned_and_redacted(tmp_path: Path) -> None:
    result = run_cli_bytes("watch", str(tmp_path / HOSTILE_NAME), "--timeout", "1")
    assert result.exit_code == 124  # waited for the log to appear, as tail -F does, until --timeout
    assert result.errors.startswith("logsleuth: ")
    assert_inert(result.errors)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt package: tmux)")
def test_watch_status_line_in_a_real_terminal(tmp_path: Path) -> None:
    """On a terminal the stage is a rich status line: a hostile name does not change the window title."""
    log = tmp_path / HOSTILE_NAME
    log.write_text("")
    append_later(log, STAGES, 0.5)
    socket = f"logsleuth-hostile-{os.getpid()}"
    script = tmp_path / "run.sh"
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in (sys.executable, "-m", "logsleuth", "watch", str(log)))
    script.write_text(f"{quoted}\necho DONE $?\nsleep 60\n")

    def tmux(*args: str) -> str:
        return subprocess.run(["tmux", "-L", socket, *args], capture_output=True, text=True, timeout=10).stdout

    tmux("new-session", "-d", "-s", "watch", "-x", "120", "-y", "20", f"sh {script}")
    try:
        deadline = time.monotonic() + 30
        while "DONE" not in (screen := tmux("capture-pane", "-p", "-J", "-t", "watch")) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert "DONE 0" in screen, screen
        assert "pwned" not in tmux("display-message", "-p", "-t", "watch", "#{pane_title}")
        assert_inert(screen)
        assert "[1;1H" not in screen  # the cursor sequence did not move the cursor, nor was it printed
    finally:
        tmux("kill-server")
