"""Following a local file (sources/follow_local.py): inotify, the polling fallback, a log that does not exist
yet, --from-start; and how much sooner a crash is reported (the settle rule, on a real file)."""

from __future__ import annotations

import io
import os
import statistics
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions
from logsleuth.render.options import OutputFormat
from logsleuth.sources.base import RESTART
from logsleuth.sources.follow_local import Waiter, follow_local
from logsleuth.watch import watch_spec
from logsleuth.watch_output import EXIT_TIMEOUT, Streams, run_watch
from tests.helpers import append_later
from tests.logs import crash_record, nccl_traceback, noise, scheduler_traceback
from tests.test_watch_launch import launch_pieces

linux_only = pytest.mark.skipif(not Waiter(__file__, 0.1).uses_inotify, reason="inotify: Linux only")


def _first_data(chunks: Iterator[bytes]) -> bytes:
    for chunk in chunks:
        if chunk:
            return chunk
    raise AssertionError("the follower ended")


def _delays(tmp_path: Path, *, use_inotify: bool, writes: int = 15) -> list[float]:
    """Seconds from each append to the follower yielding it (poll 0.1 s, the default)."""
    log = tmp_path / f"delays-{use_inotify}.log"
    log.write_text("")
    chunks = follow_local(str(log), use_inotify=use_inotify)(0)
    delays = []
    for number in range(writes):
        written: list[float] = []

        def write(number: int = number, written: list[float] = written) -> None:
            time.sleep(0.013 * (number % 7) + 0.01)  # writes land anywhere in the poll interval
            with log.open("a") as handle:
                handle.write(f"line {number}\n")
            written.append(time.monotonic())

        writer = threading.Thread(target=write)
        writer.start()
        _first_data(chunks)
        delays.append(time.monotonic() - written[0] if written else 0.0)
        writer.join()
    chunks.close()  # type: ignore[attr-defined]
    return delays


@linux_only
def test_inotify_sees_a_write_at_once(tmp_path: Path) -> None:
    """With a 5 s poll, only inotify can see the write within a fraction of a second."""
    log = tmp_path / "server.log"
    log.write_text("")
    chunks = follow_local(str(log), poll=5.0)(0)
    assert next(chunks) == b""  # nothing yet: the follower is waiting
    writer = append_later(log, ["Load weight begin. avail mem=78.84 GB\n"], 0.2)
    started = time.monotonic()
    assert _first_data(chunks) == b"Load weight begin. avail mem=78.84 GB\n"
    assert time.monotonic() - started < 1.5
    writer.join()


@linux_only
def test_inotify_is_faster_than_polling(tmp_path: Path) -> None:
    """Measured here (2 shared cores): inotify median well under 5 ms, polling every 0.1 s about 50 ms."""
    inotify = statistics.median(_delays(tmp_path, use_inotify=True))
    polling = statistics.median(_delays(tmp_path, use_inotify=False))
    print(f"append -> follower: median {inotify * 1000:.1f} ms with inotify, {polling * 1000:.1f} ms polling")
    assert inotify < polling / 3


def test_polling_fallback_follows_truncation(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("first launch\n")
    chunks = follow_local(str(log), poll=0.01, use_inotify=False)(0)
    assert _first_data(chunks) == b"first launch\n"
    log.write_text("")  # truncated
    assert next(chunk for chunk in chunks if chunk == RESTART) == RESTART
    with log.open("a") as handle:
        handle.write("second\n")
    assert _first_data(chunks) == b"second\n"


@linux_only
def test_a_change_inotify_does_not_announce_switches_to_polling(tmp_path: Path) -> None:
    """A log followed through a symbolic link that is then pointed into another directory: inotify watches the
    old target's directory and hears nothing of the new one (as with NFS written from another host).  The
    follower looks anyway every 10 polls, finds the data, and polls from then on."""
    first, second = tmp_path / "a", tmp_path / "b"
    first.mkdir()
    second.mkdir()
    (first / "run1.log").write_text("run 1\n")
    link = tmp_path / "server.log"
    link.symlink_to(first / "run1.log")
    chunks = follow_local(str(link), poll=0.05)(0)
    assert _first_data(chunks) == b"run 1\n"
    (second / "run2.log").write_text("run 2\n")
    os.symlink(second / "run2.log", tmp_path / "tmp.link")
    os.replace(tmp_path / "tmp.link", link)  # the link re-pointed: a new inode under the name
    assert next(chunk for chunk in chunks if chunk == RESTART) == RESTART
    assert _first_data(chunks) == b"run 2\n"
    append_later(second / "run2.log", ["more\n"], 0.05).join()
    started = time.monotonic()
    assert _first_data(chunks) == b"more\n"  # found by the look every 10 polls (0.5 s), not lost
    assert time.monotonic() - started < 3
    append_later(second / "run2.log", ["again\n"], 0.05).join()
    started = time.monotonic()
    assert _first_data(chunks) == b"again\n"
    assert time.monotonic() - started < 0.4  # polling now: within a poll or two, not the 0.5 s look


# -- a log that does not exist yet, --from-start ------------------------------------------------------------


def test_a_log_that_does_not_exist_yet_is_waited_for(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "server.log"  # not even its directory exists yet

    def create() -> None:
        time.sleep(0.3)
        log.parent.mkdir()
        log.write_text("".join(launch_pieces()))

    threading.Thread(target=create, daemon=True).start()
    out, err = io.StringIO(), io.StringIO()
    code = run_watch([str(log)], DiagnoseOptions(), fmt=OutputFormat.TEXT, timeout=30, live=False,
                     streams=Streams(out, err))
    assert code == 0, err.getvalue()
    assert err.getvalue().splitlines()[0] == f"logsleuth: {log}: waiting for {log} to appear"
    assert f"logsleuth: {log}: arguments parsed" in err.getvalue().splitlines()  # read from its first byte


def test_a_log_that_never_appears_times_out_with_124(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    out, err = io.StringIO(), io.StringIO()
    code = run_watch([str(log)], DiagnoseOptions(), fmt=OutputFormat.TEXT, timeout=0.5, live=False,
                     streams=Streams(out, err))
    assert code == EXIT_TIMEOUT
    assert err.getvalue().splitlines()[-1] == f"logsleuth: {log}: not ready after 0.5 s (the log never appeared)"


def test_from_start_reads_what_the_backlog_would_skip(tmp_path: Path) -> None:
    """The stages were logged more than 1 MiB (the backlog) before the end: only --from-start sees them."""
    log = tmp_path / "server.log"
    log.write_text("".join(launch_pieces(until="cuda-graph-done")) + noise(12000))
    assert log.stat().st_size > 1 << 20
    without = [e.stage.key for e in _events_until_timeout(str(log), from_start=False) if e.stage]
    with_start = [e.stage.key for e in _events_until_timeout(str(log), from_start=True) if e.stage]
    assert without == []
    assert with_start == ["args", "distributed", "weights", "weights-loaded", "kv-cache", "cuda-graph", "cuda-graph-done"]


def _events_until_timeout(spec: str, *, from_start: bool) -> list:  # type: ignore[type-arg]
    from logsleuth.watch import WatchTimeout

    events = []
    with pytest.raises(WatchTimeout):
        for event in watch_spec(spec, DiagnoseOptions(), timeout=0.5, from_start=from_start):
            events.append(event)
    return events


# -- report sooner: the delay from the crash's last line to the diagnosis ----------------------------------


def _crash_delay(tmp_path: Path, name: str, records: list[str], tp: int) -> float:
    """Seconds from appending the last traceback to watch yielding the failure (a real file, inotify)."""
    log = tmp_path / f"{name}.log"
    log.write_text("".join(launch_pieces(tp, until="weights")))
    appended: list[float] = []

    def write() -> None:
        for record in records:
            time.sleep(0.15)
            with log.open("a") as handle:
                handle.write(record)
        appended.append(time.monotonic())

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    for event in watch_spec(str(log), DiagnoseOptions(), timeout=30, settle=5.0):
        if event.kind == "failure":
            reported = time.monotonic()
            break
    writer.join()
    return reported - appended[0]


def test_a_single_rank_crash_is_reported_without_settling(tmp_path: Path) -> None:
    delays = [_crash_delay(tmp_path, f"single{n}", [crash_record("2026-11-29 10:00:05", "", scheduler_traceback())], 1)
              for n in range(5)]
    print(f"single rank: crash -> diagnosis p50 {statistics.median(delays) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms")
    assert statistics.median(delays) < 1.0  # the 5 s settle is not waited: no sibling rank (goal: 150 ms)


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_a_tp4_crash_is_reported_once_every_rank_failed(tmp_path: Path) -> None:
    records = [crash_record("2026-11-29 10:00:05", "TP0", scheduler_traceback())] + [
        crash_record("2026-11-29 10:00:06", f"TP{rank}", nccl_traceback()) for rank in (1, 2, 3)]
    delays = [_crash_delay(tmp_path, f"tp4-{n}", records, 4) for n in range(5)]
    print(f"TP4: last traceback -> diagnosis p50 {statistics.median(delays) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms")
    assert statistics.median(delays) < 1.0  # not the 5 s settle: all four declared ranks failed
