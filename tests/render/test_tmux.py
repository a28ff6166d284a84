"""The rich report in a real terminal: run `logsleuth diagnose` under tmux and read the screen."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (apt package: tmux)"
)

EAGLE_LOG = """Max running requests is reset to 48 for speculative decoding.
\x1b]0;pwned-title\x07\x1b]52;c;cm0gLXJmIH4K\x07Overlap scheduler is disabled [bold]literally[/bold]
Traceback (most recent call last):
  File "<frozen runpy>", line 198, in _run_module_as_main
  File "<frozen runpy>", line 88, in _run_code
  File "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py", line 32, in <module>
    server_args = prepare_server_args(sys.argv[1:])
  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/server_args.py", line 5592, in prepare_server_args
    return ServerArgs.from_cli_args(raw_args)
  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/server_args.py", line 5078, in from_cli_args
    return cls(**{attr: getattr(args, attr) for attr in attrs})
  File "<string>", line 331, in __init__
  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/server_args.py", line 767, in __post_init__
    self._handle_speculative_decoding()
  File "/usr/local/lib/python3.11/dist-packages/sglang/srt/server_args.py", line 2425, in _handle_speculative_decoding
    and self.speculative_num_draft_tokens is None
AssertionError
"""
COMMAND = (
    "python -m sglang.launch_server --model-path /m --speculative-algorithm EAGLE3 "
    "--speculative-draft-model-path /d --speculative-num-draft-tokens 16 --speculative-eagle-topk 1"
)
DONE = "__LOGSLEUTH_DONE__"


class Tmux:
    """One private tmux server (its own socket), so the test never touches the user's sessions."""

    def __init__(self, socket: str) -> None:
        self.socket = socket

    def run(self, *args: str) -> str:
        result = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=10
        )
        return result.stdout

    def screen(self) -> str:
        return self.run("capture-pane", "-p", "-J", "-t", "report")  # -J joins lines the terminal wrapped


@pytest.fixture()
def tmux() -> Iterator[Tmux]:
    # A server (socket) of its own per test: `kill-server` returns before the old server is gone, and a
    # next test reusing its socket name could attach to the dying server and lose its session.
    session = Tmux(f"logsleuth-test-{os.getpid()}-{uuid.uuid4().hex[:8]}")
    yield session
    session.run("kill-server")


def run_in_terminal(tmux: Tmux, tmp_path: Path, *args: str, columns: int = 120, rows: int = 80) -> str:
    script = tmp_path / "run.sh"
    quoted = " ".join("'" + a.replace("'", "'\\''") + "'" for a in (sys.executable, "-m", "logsleuth", *args))
    script.write_text(f"unset NO_COLOR COLUMNS\n{quoted}\necho {DONE} $?\nsleep 60\n")
    tmux.run("new-session", "-d", "-s", "report", "-x", str(columns), "-y", str(rows), f"sh {script}")
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        screen = tmux.screen()
        if DONE in screen:
            return screen
        time.sleep(0.2)
    pytest.fail(f"logsleuth did not finish in the terminal:\n{tmux.screen()}")


def test_rich_report_in_a_real_terminal(tmux: Tmux, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(EAGLE_LOG)
    screen = run_in_terminal(tmux, tmp_path, "diagnose", str(log), "--cmd", COMMAND)
    lines = screen.splitlines()
    assert lines[0] == "EAGLE speculative sizes given only in part"
    assert "  › sglang/srt/server_args.py:2425 in _handle_speculative_decoding" in lines
    assert "    … 2 library frames" in lines
    assert "  AssertionError" in lines
    assert "Root cause (spec-decoding-args, pattern sglang-eagle-partial-spec-args):" in lines
    # Answer first: the root cause and the corrected command come before the frames.
    assert lines.index(f"    {COMMAND} --speculative-num-steps 15") < lines.index("  AssertionError")
    # The corrected command is one logical line (joined by -J), ready to copy.
    assert f"    {COMMAND} --speculative-num-steps 15" in lines
    assert f"{DONE} 1" in screen  # exit status 1: failure found
    # The log's escape sequences did nothing: the window title is still ours.
    assert "pwned" not in tmux.run("display-message", "-p", "-t", "report", "#{pane_title}")
    assert "cm0gLXJmIH4K" not in tmux.run("show-buffer")


def test_rich_shows_markup_from_the_log_literally(tmux: Tmux, tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(
        EAGLE_LOG.replace("AssertionError\n", "RuntimeError: [bold]boom[/bold] [link=x]y[/link]\n")
    )
    screen = run_in_terminal(tmux, tmp_path, "diagnose", "--all", str(log))
    assert "RuntimeError: [bold]boom[/bold] [link=x]y[/link]" in screen


@pytest.mark.parametrize("columns", [60, 80])
def test_rich_report_fits_a_narrow_pane(tmux: Tmux, tmp_path: Path, columns: int) -> None:
    """In a 60- or 80-column pane the report wraps itself at the pane's width (rich reads it from the terminal),
    so the terminal wraps nothing but the corrected commands, which stay one logical line to copy."""
    log = tmp_path / "server.log"
    log.write_text(EAGLE_LOG)
    joined = run_in_terminal(tmux, tmp_path, "diagnose", str(log), "--cmd", COMMAND, columns=columns).splitlines()
    assert joined[0] == "EAGLE speculative sizes given only in part"
    too_long = [line for line in joined if len(line) > columns]
    assert too_long and all(line.startswith("    python -m sglang.launch_server") for line in too_long), too_long
    assert f"    {COMMAND} --speculative-num-steps 15" in joined
    root_cause = joined.index("Root cause (spec-decoding-args, pattern sglang-eagle-partial-spec-args):") if columns > 72 else (
        joined.index("Root cause (spec-decoding-args, pattern")
    )
    assert root_cause < 10, "the answer is on the first screen"


def test_a_report_taller_than_the_pane_ends_with_the_recap(tmux: Tmux, tmp_path: Path) -> None:
    """In a 30-row pane the last screen is the end of the report: it ends with the answer in one line."""
    log = tmp_path / "server.log"
    log.write_text(EAGLE_LOG)
    screen = run_in_terminal(tmux, tmp_path, "diagnose", str(log), "--cmd", COMMAND, rows=30)
    lines = [line for line in screen.splitlines() if line.strip()]
    done = next(i for i, line in enumerate(lines) if line.startswith(DONE))
    assert lines[done - 1].startswith("Recap: EAGLE speculative sizes given only in part"), screen
    assert "fix: add --speculative-num-steps 15" in lines[done - 1]
