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
from logsleuth.cli.watch_output import EXIT_TIMEOUT, Streams, run_watch
from logsleuth.render.options import OutputFormat
from logsleuth.sources.base import RESTART
from logsleuth.sources.follow_local import LOOK_ANYWAY_TICKS, Waiter, follow_local
from logsleuth.watch.follow import watch_spec
from tests.helpers import append_later
from tests.logs import crash_record, nccl_traceback, noise, scheduler_traceback
from tests.test_watch_launch import launch_pieces

linux_only = pytest.mark.skipif(not Waiter(__file__, 0.1).uses_inotify, reason="inotify: Linux only")


def _first_data(chunks: Iterator[bytes]) -> bytes:
    return _data_and_wakeups(chunks)[0]


def _data_and_wakeups(chunks: Iterator[bytes]) -> tuple[bytes, int]:
    """The next data chunk, and how many idle wake-ups (b"") the follower yielded before it: a count of polls,
    which a loaded machine does not change (unlike a measured time)."""
    for idle, chunk in enumerate(chunks):
        if chunk:
            return chunk, idle
    raise AssertionError("the follower ended")


def _follow_writes(log: Path, chunks: Iterator[bytes], writes: int = 15) -> None:
    """`writes` appends, each made by a thread while the follower waits, each seen by the follower."""
    for number in range(writes):
        writer = append_later(log, [f"line {number}\n"], 0.013 * (number % 7) + 0.01)  # anywhere in a poll
        assert _first_data(chunks) == f"line {number}\n".encode()
        writer.join()


# A poll so long that a follower that saw a write before it could end was woken by inotify.  The bound below
# is that poll, not a measure of speed: it fails only when the follower waited it out (a test that fails
# takes a minute).  The time inotify saves (median well under 5 ms; polling every 0.1 s, about 50 ms) is
# for make bench to measure, not for a test on a busy machine.
LONG_POLL = 60.0


@linux_only
def test_inotify_sees_a_write_at_once(tmp_path: Path) -> None:
    """With a 60 s poll, only inotify can see the write before the poll is over."""
    log = tmp_path / "server.log"
    log.write_text("")
    chunks = follow_local(str(log), poll=LONG_POLL)(0)
    assert next(chunks) == b""  # nothing yet: the follower is waiting
    writer = append_later(log, ["Load weight begin. avail mem=78.84 GB\n"], 0.2)
    started = time.monotonic()
    assert _first_data(chunks) == b"Load weight begin. avail mem=78.84 GB\n"
    assert time.monotonic() - started < LONG_POLL  # woken by the write, not by the end of the poll
    writer.join()


@linux_only
def test_inotify_wakes_on_each_write_and_polling_sees_each_at_its_poll(tmp_path: Path) -> None:
    log = tmp_path / "inotify.log"
    log.write_text("")
    chunks = follow_local(str(log), poll=LONG_POLL)(0)
    started = time.monotonic()
    _follow_writes(log, chunks)
    assert time.monotonic() - started < LONG_POLL  # every write woke it: not one poll ran out
    chunks.close()  # type: ignore[attr-defined]
    polled = tmp_path / "polling.log"
    polled.write_text("")
    chunks = follow_local(str(polled), poll=0.1, use_inotify=False)(0)
    _follow_writes(polled, chunks)
    chunks.close()  # type: ignore[attr-defined]


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
    # Counted in the follower's idle wake-ups (one per poll), not in seconds: a loaded machine changes neither.
    # The follower has read everything; a full look's worth of idle polls lets it take the events of the
    # re-pointing still queued (one would wake it, and a write it then finds counts as announced).
    assert [next(chunks) for _ in range(LOOK_ANYWAY_TICKS + 2)] == [b""] * (LOOK_ANYWAY_TICKS + 2)
    append_later(second / "run2.log", ["more\n"], 0.05).join()
    data, polls = _data_and_wakeups(chunks)
    assert data == b"more\n" and polls <= LOOK_ANYWAY_TICKS  # found by the next look, not lost
    assert next(chunks) == b""
    append_later(second / "run2.log", ["again\n"], 0.05).join()
    assert _data_and_wakeups(chunks) == (b"again\n", 0)  # polling now: the next poll, not the next look


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
    from logsleuth.watch.follow import WatchTimeout

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
    # A settle far beyond the timeout: a failure reported at all was reported without settling (a watch that
    # waited would end in WatchTimeout).  The delays are printed; make bench measures them.
    for event in watch_spec(str(log), DiagnoseOptions(), timeout=120, settle=3600.0):
        if event.kind == "failure":
            reported = time.monotonic()
            break
    writer.join()
    return reported - appended[0]


def test_a_single_rank_crash_is_reported_without_settling(tmp_path: Path) -> None:
    delays = [_crash_delay(tmp_path, f"single{n}", [crash_record("2026-11-29 10:00:05", "", scheduler_traceback())], 1)
              for n in range(5)]
    print(f"single rank: crash -> diagnosis p50 {statistics.median(delays) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms")
    assert len(delays) == 5  # each reported without the settle: no sibling rank (goal: 150 ms)


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_a_tp4_crash_is_reported_once_every_rank_failed(tmp_path: Path) -> None:
    records = [crash_record("2026-11-29 10:00:05", "TP0", scheduler_traceback())] + [
        crash_record("2026-11-29 10:00:06", f"TP{rank}", nccl_traceback()) for rank in (1, 2, 3)]
    delays = [_crash_delay(tmp_path, f"tp4-{n}", records, 4) for n in range(5)]
    print(f"TP4: last traceback -> diagnosis p50 {statistics.median(delays) * 1000:.0f} ms, max {max(delays) * 1000:.0f} ms")
    assert len(delays) == 5  # each reported without the settle: all four declared ranks failed
