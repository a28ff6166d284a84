"""`logsleuth watch HOST:PATH`: follows a remote log through the private sshd while it grows."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd_server import SSHD

from logsleuth.sources.base import ALIVE
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from tests.helpers import append_later, lines_until

RESTART = b"\x00LOGSLEUTH-RESTART\x00"  # what logsleuth.watch.follow.follow_local yields on truncation or rotation

STAGES = [
    b"[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1)\n",
    b"[2026-11-29 10:00:02] Load weight begin. avail mem=78.84 GB\n",
    b"[2026-11-29 10:00:09] Load weight end. type=LlamaForCausalLM, avail mem=60.1 GB\n",
    b"[2026-11-29 10:00:10] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB\n",
    b"[2026-11-29 10:00:22] The server is fired up and ready to roll!\n",
]
CRASH = (
    b"[2026-11-29 10:00:03 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2316, in run\n'
    b"    scheduler.event_loop()\n"
    b'  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 690, in event_loop\n'
    b"    assert self.req_to_token_pool.available_size() > 0\n"
    b"AssertionError\n"
)


def _watch_argv(sshd: SSHD, log: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "logsleuth", "watch", f"logsleuth-alias:{log}", "--ssh-config", str(sshd.config),
            "--timeout", "60", *extra]


def _without_agent() -> dict[str, str]:
    """This environment without the user's ssh agent: only the test's own key may log in."""
    return {name: value for name, value in os.environ.items() if name != "SSH_AUTH_SOCK"}


def _watch(sshd: SSHD, log: Path, writer: threading.Thread, *extra: str) -> subprocess.CompletedProcess[str]:
    """`logsleuth watch` on the log while `writer` writes it; the log is removed after."""
    try:
        return subprocess.run(_watch_argv(sshd, log, *extra), capture_output=True, text=True, env=_without_agent(),
                              timeout=90)
    finally:
        writer.join()
        log.unlink()


@pytest.mark.ssh
def test_remote_watch_until_ready(sshd: SSHD) -> None:
    log = sshd.logs / "watch-ready.log"
    log.write_bytes(STAGES[0])
    result = _watch(sshd, log, append_later(log, STAGES[1:], 0.3))
    assert result.returncode == 0, result.stderr
    assert "loading weights" in result.stderr and "KV cache allocated" in result.stderr
    assert result.stdout.strip().endswith("the server is ready")


@pytest.mark.ssh
def test_remote_watch_diagnoses_a_crash(sshd: SSHD) -> None:
    log = sshd.logs / "watch-crash.log"
    log.write_bytes(STAGES[0])
    result = _watch(sshd, log, append_later(log, [STAGES[1], CRASH], 0.3), "--format", "json")
    assert result.returncode == 1, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]  # JSON lines, one per event
    failure = events[-1]
    assert failure["event"] == "failure"
    assert failure["report"]["failures"][0]["exceptions"][-1]["type"] == "AssertionError"
    assert failure["report"]["failures"][0]["hosts"] == ["logsleuth-alias"]


def _take(chunks: Iterator[bytes], size: int, seconds: float = 20.0) -> list[bytes]:
    """Chunks (idle ticks left out) until `size` bytes came, or the time is up."""
    taken: list[bytes] = []
    deadline = time.monotonic() + seconds
    for chunk in chunks:
        if chunk and chunk != ALIVE:  # ALIVE: the heartbeat's confirmation, not the log's bytes
            taken.append(chunk)
        if sum(len(c) for c in taken if c != RESTART) >= size or time.monotonic() > deadline:
            break
    return taken


@pytest.mark.ssh
@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
@pytest.mark.parametrize("event", ["truncated", "replaced"])
def test_remote_follow_turns_truncation_and_rotation_into_a_restart(sshd: SSHD, event: str, backend: str) -> None:
    """tail -F announces these on stderr; follow() yields the restart sentinel between the old file's bytes and
    the new file's, which follow from its first byte, in order, none lost or repeated (over either backend)."""
    log = sshd.logs / f"follow-{event}-{backend}.log"
    old = b"".join(b"old launch line %d\n" % n for n in range(200))
    new = b"".join(b"new launch %d\n" % n for n in range(50))  # shorter than old: tail sees the size shrink
    log.write_bytes(old)
    options = SSHOptions(config_file=str(sshd.config), backend=backend)  # type: ignore[arg-type]
    (source,) = open_sources(f"logsleuth-alias:{log}", options)
    chunks = source.follow(0)  # type: ignore[attr-defined]
    try:
        assert b"".join(_take(chunks, len(old))) == old
        if event == "truncated":
            with log.open("r+b") as handle:  # copytruncate, then the new launch writes at once
                handle.truncate(0)
                handle.write(new)
        else:
            log.rename(log.with_suffix(".log.1"))
            log.write_bytes(new)
        taken = _take(chunks, len(new))
        assert taken[0] == RESTART and taken.count(RESTART) == 1, taken[:3]
        assert b"".join(taken[1:]) == new
        with log.open("ab") as handle:
            handle.write(b"and later\n")
        assert b"".join(_take(chunks, len(b"and later\n"))) == b"and later\n"
    finally:
        chunks.close()
        source.close()
        log.unlink()
        log.with_suffix(".log.1").unlink(missing_ok=True)


@pytest.mark.ssh
def test_remote_watch_follows_a_truncated_log_into_the_next_launch(sshd: SSHD) -> None:
    log = sshd.logs / "watch-truncated.log"
    log.write_bytes(STAGES[0] + STAGES[1])
    watcher = subprocess.Popen(_watch_argv(sshd, log), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env=_without_agent())
    try:
        assert watcher.stderr is not None
        seen = lines_until(watcher.stderr, "loading weights")  # the backlog is read: the watch follows from here
        # Truncate only now: a truncation before the watch read the backlog is just a new log, not a restart
        # (a fixed 1.5 s wait was a guess a loaded CI machine could beat).
        time.sleep(0.5)
        with log.open("r+b") as handle:
            handle.truncate(0)
        for stage in STAGES:
            with log.open("ab") as handle:
                handle.write(stage)
            time.sleep(0.2)
        stdout, rest = watcher.communicate(timeout=90)
    finally:
        if watcher.poll() is None:
            watcher.kill()
            watcher.communicate()
        log.unlink()
    stderr = "".join(seen) + rest
    assert watcher.returncode == 0, stderr
    assert f"logsleuth-alias:{log}: log truncated or rotated; following it from the start" in stderr
    assert stdout.strip().endswith("the server is ready")


def test_tail_output_separates_messages_from_the_files_bytes_at_any_chunk_boundary() -> None:
    """FOLLOW_SCRIPT's merged stream: the program path line, then file bytes and tail's messages in order.  A log
    line that merely looks like a tail message (without the random program path) stays data."""
    from logsleuth.sources.ssh.scripts import TailMessage, TailOutput, new_path_units

    program = f"/usr/bin/{new_path_units()}tail".encode()
    forged = b"tail: /var/log/x.log: file truncated\n"
    stream = (
        program + b"\n"
        + b"old line 1\nold partial"  # no newline before the message: tail writes it mid-line
        + program + b": /var/log/x.log: file truncated\n"
        + b"new line 1\n" + forged
        + program + b": '/var/log/x.log' has become inaccessible: No such file or directory\n"
        + program + b": '/var/log/x.log' has appeared;  following new file\n"
        + b"newest\n"
    )
    expected = [
        b"old line 1\nold partial", "restart", b"new line 1\n" + forged, "other", "restart", b"newest\n"
    ]
    for size in (1, 2, 3, 7, 64, len(stream)):
        output = TailOutput()
        pieces: list[bytes | TailMessage] = []
        for start in range(0, len(stream), size):
            pieces.extend(output.feed(stream[start : start + size]))
        merged: list[bytes | str] = []
        for piece in pieces:
            if isinstance(piece, TailMessage):
                merged.append("restart" if piece.restarts else "other")
            elif merged and isinstance(merged[-1], bytes):
                merged[-1] += piece
            else:
                merged.append(piece)
        assert merged == expected, size


def test_new_path_units_name_the_same_directory(tmp_path: Path) -> None:
    from logsleuth.sources.ssh.scripts import new_path_units

    (tmp_path / "x.log").write_text("here\n")
    units = new_path_units()
    assert len({new_path_units() for _ in range(20)}) == 20  # random
    assert set(units.replace("./", "").replace("/", "")) == set()
    with open(f"{tmp_path}/{units}x.log") as handle:  # as FOLLOW_SCRIPT builds the path (pathlib would tidy it)
        assert handle.read() == "here\n"
