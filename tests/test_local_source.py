"""Local sources that are not plain files at rest: truncated while read, FIFOs, devices, closed stdin."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from logsleuth.errors import SourceError
from logsleuth.reading import reader
from logsleuth.sources.anchors import find_anchors
from logsleuth.sources.local import LocalFileSource
from logsleuth.sources.pread import FileShrank
from tests.helpers import run_cli, run_cli_subprocess
from tests.logs import crash_record, dense_log, launch_line, noise, scheduler_traceback


class ShrinksAfterSize(LocalFileSource):
    """A real file that logrotate's copytruncate empties right after its size was taken."""

    def size(self) -> int:
        size = super().size()
        os.truncate(self.path, size // 3)
        return size


def _crash_log(tmp_path: Path, noise_lines: int = 20_000) -> Path:
    path = tmp_path / "server.log"
    path.write_text(launch_line() + noise(noise_lines) + crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback()))
    return path


@pytest.mark.parametrize("read", [reader.read_all, reader.read_latest], ids=["all", "latest"])
def test_file_that_shrinks_under_the_reader(tmp_path: Path, read) -> None:  # type: ignore[no-untyped-def]
    path = _crash_log(tmp_path)
    with pytest.raises(SourceError, match=r"server\.log: changed while being read$"):
        read(ShrinksAfterSize(str(path)))


def test_dense_read_of_a_file_that_shrinks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "server.log"
    path.write_text(dense_log(3000, 5))
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    with pytest.raises(SourceError, match=r"changed while being read$"):
        reader.read_all(ShrinksAfterSize(str(path)))


def test_anchor_search_past_the_end_reports_a_shrunk_file(tmp_path: Path) -> None:
    """It used to map the file: touching a page past a truncated end killed the process (SIGBUS)."""
    path = tmp_path / "x.log"
    path.write_bytes(b"Traceback\n" * 1000)
    fd = os.open(path, os.O_RDONLY)
    try:
        assert len(find_anchors(fd, 10_000, (b"Traceback",)) or []) == 1000
        with pytest.raises(FileShrank):
            find_anchors(fd, 10_000 + 4096 * 8, (b"Traceback",))
    finally:
        os.close(fd)


def _process_tree_read_bytes(pid: int) -> int:
    """Bytes read so far by `pid` and its children (the forked helpers do the reading)."""
    total = 0
    pending = [pid]
    while pending:
        current = pending.pop()
        try:
            for line in Path(f"/proc/{current}/io").read_text().splitlines():
                if line.startswith("rchar:"):
                    total += int(line.split()[1])
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return total


@pytest.mark.skipif(not Path("/proc/self/io").exists(), reason="needs /proc/PID/io to see the reading start")
def test_truncated_while_diagnose_all_reads_it(tmp_path: Path) -> None:
    """copytruncate while `diagnose --all` reads a large log (two forked helpers): one line, exit 3."""
    path = tmp_path / "big.log"
    block = dense_log(2000, 40).encode()
    with path.open("wb") as handle:
        for _ in range(max(1, (160 << 20) // len(block))):
            handle.write(block)
    proc = subprocess.Popen(
        [sys.executable, "-m", "logsleuth", "diagnose", "--all", "--format", "json", "--no-user-patterns", str(path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    deadline = time.monotonic() + 60
    while _process_tree_read_bytes(proc.pid) < (24 << 20) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.002)
    os.truncate(path, 1 << 20)  # what logrotate's copytruncate does (to 0; 1 MiB keeps some text)
    _, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 3, stderr
    assert stderr.decode().strip() == f"logsleuth: {path}: changed while being read"


def _mkfifo(tmp_path: Path) -> Path:
    fifo = tmp_path / "pipe.log"
    os.mkfifo(fifo)
    return fifo


def test_fifo_with_a_writer_is_read_as_a_stream(tmp_path: Path) -> None:
    fifo = _mkfifo(tmp_path)
    log = (launch_line() + noise(5000) + crash_record("2026-11-29 10:00:00", "TP3", scheduler_traceback())).encode()

    def write() -> None:
        with fifo.open("wb") as handle:  # blocks until logsleuth opens the FIFO
            for start in range(0, len(log), 65536):
                handle.write(log[start : start + 65536])
                time.sleep(0.001)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    result = run_cli_subprocess("diagnose", str(fifo), "--format", "json", "--no-user-patterns")
    writer.join(timeout=10)
    assert result.exit_code == 1, result.stderr
    assert result.json()["failures"][0]["ranks"] == ["TP3"]


def test_fifo_without_a_writer_is_an_empty_log(tmp_path: Path) -> None:
    fifo = _mkfifo(tmp_path)
    result = run_cli_subprocess("diagnose", str(fifo), "--format", "json", "--no-user-patterns")  # 120 s timeout
    assert result.exit_code == 3, result.stderr  # an empty log is nothing to judge, not an all-clear
    assert result.json()["failures"] == []
    assert result.stderr == f"logsleuth: nothing to judge: {fifo} is empty\n"


@pytest.mark.skipif(not Path("/dev/zero").exists(), reason="needs /dev/zero")
def test_endless_device_is_refused() -> None:
    result = run_cli_subprocess("diagnose", "/dev/zero", "--format", "text")
    assert result.exit_code == 3
    assert result.stderr.strip() == "logsleuth: /dev/zero: not a regular file"


def test_closed_stdin_is_one_line_exit_3() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "diagnose", "-", "--format", "text"],
        capture_output=True,
        text=True,
        timeout=120,
        preexec_fn=lambda: os.close(0),  # `logsleuth diagnose - <&-`
    )
    assert proc.returncode == 3, proc.stderr
    assert proc.stderr.strip() == "logsleuth: stdin: not open (nothing to read)"


def test_stdin_is_still_spooled(tmp_path: Path) -> None:
    log = _crash_log(tmp_path, noise_lines=50).read_bytes()
    result = run_cli("diagnose", "-", "--format", "json", "--no-user-patterns", "--all", stdin=log)
    assert result.exit_code == 1, result.stderr
    assert result.json()["failures"][0]["exceptions"][-1]["type"] == "AssertionError"


def test_unreadable_source_named_once_in_the_report(tmp_path: Path) -> None:
    missing = tmp_path / "missing.log"
    result = run_cli("diagnose", str(missing), str(_crash_log(tmp_path, 10)), "--format", "slack")
    assert result.exit_code == 1
    # Slack keeps the error (it is pasted where stderr is not seen), in its line of the sources' outcomes.
    assert "unreadable" in result.stdout and "missing.log: no such file" in result.stdout
    assert result.stdout.count("missing.log") == 1  # by its file name: Slack gets no local directories
    assert result.stderr.count(str(missing)) == 1
