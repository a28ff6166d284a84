"""Reading strategies: the latest launch from the end of a file, and --all."""

from __future__ import annotations

from pathlib import Path

from logsleuth.ingest.normalize import normalize_chunks
from logsleuth.reading.reader import CONTEXT_BYTES, read_all, read_latest
from logsleuth.sources.local import LocalFileSource
from logsleuth.tracebacks.scanner import FailureScanner
from tests.logs import (
    crash_record,
    launch_line,
    nccl_traceback,
    noise,
    scheduler_traceback,
    weights_traceback,
)


def _write(tmp_path: Path, text: str, name: str = "server.log") -> LocalFileSource:
    path = tmp_path / name
    path.write_text(text)
    return LocalFileSource(str(path))


def test_latest_failure_reads_only_the_end(tmp_path: Path) -> None:
    log = noise(200_000) + launch_line() + noise(2000) + crash_record("2026-11-29 11:00:00", "TP0", scheduler_traceback())
    source = _write(tmp_path, log)
    result = read_latest(source)
    assert [f.final.type for f in result.failures] == ["AssertionError"]
    assert result.size > 20 * result.bytes_read / 2  # a small fraction of a ~28 MB file
    assert result.bytes_read <= 4 << 20


def test_only_the_most_recent_launch(tmp_path: Path) -> None:
    first = launch_line() + noise(100) + crash_record("2026-11-29 09:00:00", "TP0", weights_traceback())
    second = launch_line() + noise(100) + crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    source = _write(tmp_path, first + second)
    latest = read_latest(source)
    assert [f.final.type for f in latest.failures] == ["AssertionError"]
    everything = read_all(source)
    assert [f.final.type for f in everything.failures] == ["KeyError", "AssertionError"]


def test_window_grows_past_cascade_spam_to_the_root(tmp_path: Path) -> None:
    """Rank 0 dies, then other ranks print megabytes of NCCL errors: the root is still found."""
    root = crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    spam = "".join(
        crash_record("2026-11-29 10:00:01", f"TP{1 + i % 7}", nccl_traceback()) for i in range(4500)
    )
    source = _write(tmp_path, launch_line() + noise(20_000) + root + spam)
    result = read_latest(source)
    assert result.failures[0].final.type == "AssertionError"
    assert len(spam) > 2 * (1 << 20)


def test_failure_at_window_edge_is_read_whole(tmp_path: Path) -> None:
    """A traceback straddling the first window's start is not reported cut off."""
    record = crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    tail_noise = noise(1)
    padding = (1 << 20) - len(tail_noise) - len(record) // 2
    filler = "z" * 100 + "\n"
    log = noise(30_000) + filler * (padding // len(filler)) + record + tail_noise
    source = _write(tmp_path, log)
    result = read_latest(source)
    assert result.failures and not result.failures[-1].truncated
    assert result.failures[-1].final.frames[-1].function == "event_loop"
    assert result.bytes_read > CONTEXT_BYTES


def test_read_all_finds_what_a_full_scan_finds(tmp_path: Path) -> None:
    parts = [launch_line()]
    tracebacks = [scheduler_traceback(), weights_traceback(), nccl_traceback()]
    for i in range(60):
        parts.append(noise(300 + i * 7, start=i))
        parts.append(crash_record(f"2026-11-29 10:{i:02d}:00", f"TP{i % 4}", tracebacks[i % 3]))
    parts.append("ValueError: a bare final line\n")
    parts.append("launch_server.py: error: unrecognized arguments: --max-model-len 4096\n")
    text = "".join(parts)
    source = _write(tmp_path, text)
    scanner = FailureScanner()
    for line in normalize_chunks([text.encode()]):
        scanner.feed(line)
    full = [(f.offset, f.final.type, f.final.message) for f in scanner.finish()]
    anchored = [(f.offset, f.final.type, f.final.message) for f in read_all(source).failures]
    assert anchored == full
    assert len(full) == 62


def test_launch_facts_merge_with_the_precedence_each_caller_needs() -> None:
    from logsleuth.ingest.launch import LaunchTracker
    from logsleuth.models import LineMeta, LogLine

    def tracker(*lines: str) -> LaunchTracker:
        made = LaunchTracker()
        for offset, text in enumerate(lines):
            made.observe(LogLine(offset + 1, offset * 100, text, LineMeta()))
        return made

    first = ("python -m sglang.launch_server --tp 1",)
    later = ("python -m sglang.launch_server --tp 2", "sglang version 0.5.9")
    region = tracker(*first)
    region.absorb(tracker(*later), later_command_wins=True)  # a later region of one log: a later launch
    hosts = tracker(*first)
    hosts.absorb(tracker(*later), later_command_wins=False)  # another host of the same launch
    for merged in (region, hosts):
        assert (merged.engine, merged.engine_version) == ("sglang", "0.5.9")  # evidence merged, gaps filled
    assert (region.command or "").endswith("--tp 2") and (hosts.command or "").endswith("--tp 1")
    empty = LaunchTracker()
    empty.absorb(tracker(*later), later_command_wins=False)
    assert (empty.command or "").endswith("--tp 2")
    # Two launch commands of different engines: the latest launch's.
    switched = tracker(*first)
    switched.absorb(tracker("vllm serve /models/m --tensor-parallel-size 2"), later_command_wins=True)
    assert switched.engine == "vllm"
