"""`logsleuth watch`: follows a real file while a writer appends to it."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions
from logsleuth.errors import SourceError
from logsleuth.ingest.stages import stage_of
from logsleuth.sources.local import LocalFileSource
from logsleuth.sources.memory import MemorySource
from logsleuth.watch.follow import RESTART, Follow, follow_local, watch, watch_spec
from tests.helpers import append_later
from tests.logs import crash_record, launch_line, nccl_traceback, scheduler_traceback

STAGE_LINES = [
    "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1)",
    "[2026-11-29 10:00:01] Init torch distributed begin.",
    "[2026-11-29 10:00:02] Load weight begin. avail mem=78.84 GB",
    "[2026-11-29 10:00:09] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.1 GB",
    "[2026-11-29 10:00:10] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB",
    "[2026-11-29 10:00:11] Capture cuda graph begin. This can take up to several minutes. avail mem=10.1 GB",
    "[2026-11-29 10:00:20] Capture cuda graph end. Time elapsed: 9.00 s.",
    "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-11-29 10:00:22] The server is fired up and ready to roll!",
]


def test_stages_then_ready(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    writer = append_later(log, [line + "\n" for line in STAGE_LINES], 0.02)
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=20))
    writer.join()
    assert [e.stage.key for e in events if e.stage] == [
        "args", "distributed", "weights", "weights-loaded", "kv-cache", "cuda-graph", "cuda-graph-done", "http", "ready",
    ]
    assert events[-1].kind == "ready"


def test_crash_is_diagnosed_within_a_moment(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(launch_line())
    pieces = [line + "\n" for line in STAGE_LINES[:3]] + [crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback())]
    writer = append_later(log, pieces, 0.02)
    started = time.monotonic()
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=120))
    writer.join()
    elapsed = time.monotonic() - started
    assert events[-1].kind == "failure"
    report = events[-1].report
    assert report is not None and report.failures[0].failure.final.type == "AssertionError"
    assert [e.stage.key for e in events if e.stage] == ["args", "distributed", "weights"]
    assert elapsed < 60  # the 1 s settle, not the 120 s timeout: a bound only a hang fails


def test_rotation_is_followed(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("[2026-11-29 09:00:00] old launch\n" * 10)
    following = threading.Event()
    real_follow = follow_local(str(log), poll=0.01)

    def follow_then_signal(offset: int) -> Iterator[bytes]:
        # Rotate only once the watch has read the backlog and waits at its end: a rotation
        # before that is a plain new log, not a restart (a busy CI machine got there first).
        for chunk in real_follow(offset):
            if chunk == b"":
                following.set()
            yield chunk

    def rotate() -> None:
        assert following.wait(20)
        log.rename(tmp_path / "server.log.1")
        log.write_text("\n".join(STAGE_LINES) + "\n")

    thread = threading.Thread(target=rotate, daemon=True)
    thread.start()
    events = list(watch(LocalFileSource(str(log)), follow_then_signal, DiagnoseOptions(), timeout=20))
    thread.join()
    assert events[0].kind == "restarted"
    assert events[-1].kind == "ready"


def test_cli_watch_exit_codes(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(STAGE_LINES[0] + "\n")
    watcher = subprocess.Popen(
        [sys.executable, "-m", "logsleuth", "watch", str(log), "--timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    assert watcher.stderr is not None
    first = watcher.stderr.readline()  # the backlog's stage: the watch is running
    assert first.rstrip().endswith("arguments parsed")
    writer = append_later(log, [line + "\n" for line in STAGE_LINES[1:]], 0.05)
    stdout, stderr = watcher.communicate(timeout=90)
    writer.join()
    assert watcher.returncode == 0, stderr
    assert "loading weights" in stderr
    assert stdout.strip().endswith("the server is ready")

    crashed = tmp_path / "crashed.log"
    crashed.write_text(launch_line())
    writer = append_later(crashed, [crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback())], 0.3)
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", str(crashed), "--format", "json", "--timeout", "60"],
        capture_output=True, text=True, timeout=90,
    )
    writer.join()
    assert proc.returncode == 1, proc.stderr
    assert '"AssertionError"' in proc.stdout


def test_cli_watch_timeout_exit_124(tmp_path: Path) -> None:
    """--timeout is not an unreadable source: 124, as timeout(1).  (Passes once cli/app.py's watch calls run_watch.)"""
    log = tmp_path / "server.log"
    log.write_text(STAGE_LINES[0] + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", str(log), "--timeout", "1"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 124
    assert proc.stderr.strip().splitlines()[-1].startswith(f"logsleuth: {log}: not ready after 1 s")


# -- hardening: the backlog, truncation, streams ------------------------------------------------------------


def _scripted(chunks: list[bytes]) -> Follow:
    """The bytes a follower hands to `watch`, in order, then silence (b"" forever).  Paired with a fake clock so
    that timing rules (settle, idle flush, grace) are checked without sleeping."""

    def follow(offset: int) -> Iterator[bytes]:
        yield from chunks
        while True:
            yield b""

    return follow


class FakeClock:
    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def test_ready_of_an_earlier_launch_in_the_backlog_is_not_ready(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    second_launch = [STAGE_LINES[0].replace("10:00:00", "11:00:00"), STAGE_LINES[2].replace("10:00:02", "11:00:02")]
    log.write_text("\n".join([*STAGE_LINES, *second_launch]) + "\n")
    events = []
    with pytest.raises(SourceError, match="not ready after 1 s \\(last stage: loading weights\\)"):
        for event in watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=1):
            events.append(event)
    assert [e.stage.key for e in events if e.stage] == ["args", "weights"]  # the later launch's stages only


def test_a_backlog_that_ends_ready_is_ready_at_once(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("\n".join(STAGE_LINES) + "\n")
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=5))
    assert events[-1].kind == "ready" and [e.kind for e in events].count("ready") == 1


def test_truncation_drops_everything_of_the_old_log(tmp_path: Path) -> None:
    """An old crash in the backlog, then the log is truncated and a new launch starts: the old crash is never
    reported, and the timeout names the new launch's stage."""
    old = (launch_line() + crash_record("2026-11-29 09:00:03", "TP0", scheduler_traceback())).encode()
    new = (STAGE_LINES[0] + "\n").encode()
    source = MemorySource(old)
    with pytest.raises(SourceError, match="last stage: arguments parsed"):
        events = []
        for event in watch(source, _scripted([old, RESTART, new]), DiagnoseOptions(), timeout=30, clock=FakeClock(0.2)):
            events.append(event)
    assert "failure" not in [e.kind for e in events]
    assert "restarted" in [e.kind for e in events]


def test_a_traceback_written_in_two_parts_is_reported_whole() -> None:
    record = crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback()).encode()
    cut = record.index(b"AssertionError")
    pauses = [b""] * 10  # two seconds of silence between the two writes (0.2 s per clock tick)
    follow = _scripted([launch_line().encode(), record[:cut], *pauses, record[cut:]])
    events = list(watch(MemorySource(b""), follow, DiagnoseOptions(), timeout=60, clock=FakeClock(0.2)))
    report = events[-1].report
    assert events[-1].kind == "failure" and report is not None
    assert report.failures[0].failure.final.type == "AssertionError"


def test_a_fifo_is_watched_as_a_stream(tmp_path: Path) -> None:
    fifo = tmp_path / "server.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with fifo.open("w") as handle:  # blocks until the watch opens the FIFO
            for line in STAGE_LINES:
                handle.write(line + "\n")
                handle.flush()
                time.sleep(0.01)

    writer = threading.Thread(target=write, daemon=True)
    writer.start()
    events = list(watch_spec(str(fifo), DiagnoseOptions(), timeout=30))
    writer.join(5)
    assert events[-1].kind == "ready"
    assert "weights" in [e.stage.key for e in events if e.stage]


def test_a_fifo_without_a_writer_honours_the_timeout(tmp_path: Path) -> None:
    fifo = tmp_path / "server.fifo"
    os.mkfifo(fifo)
    with pytest.raises(SourceError, match="not ready after 1 s"):  # ended by the 1 s timeout, not by anything else
        list(watch_spec(str(fifo), DiagnoseOptions(), timeout=1))


def test_cli_watch_reads_stdin_and_reports_a_stream_that_ends(tmp_path: Path) -> None:
    ready = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", "-", "--timeout", "60"],
        input="\n".join(STAGE_LINES) + "\n", capture_output=True, text=True, timeout=90,
    )
    assert ready.returncode == 0, ready.stderr
    assert ready.stdout.strip().endswith("the server is ready")
    ended = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", "-", "--timeout", "60"],
        input="\n".join(STAGE_LINES[:3]) + "\n", capture_output=True, text=True, timeout=90,
    )
    assert ended.returncode == 3
    assert ended.stderr.strip().splitlines()[-1] == (
        "logsleuth: -: the log ended before the server was ready (last stage: loading weights)"
    )


def test_offsets_after_a_700_kib_line_stay_exact() -> None:
    """Watch splits lines with the same splitter as diagnose: a line over the per-line cap is cut but its
    bytes are counted, so the crash after it is found at its true offset and bytes_read is exact."""
    huge = b"x" * (700 << 10) + b"\n"
    crash = crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback()).encode()
    data = launch_line().encode() + huge + crash
    halves = [data[: len(data) // 3], data[len(data) // 3 :]]
    events = list(watch(MemorySource(b""), _scripted(halves), DiagnoseOptions(), timeout=60, clock=FakeClock(0.2)))
    report = events[-1].report
    assert events[-1].kind == "failure" and report is not None
    assert report.failures[0].failure.offset == data.index(crash)
    assert report.sources[0].bytes_read == len(data)


# -- the settle rule: report as soon as every rank has failed or gone quiet -----------------------------------

TP4_ARGS = "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=4, dp_size=1, pp_size=1, nnodes=1)\n"


def _reported_at(chunks: list[bytes], settle: float) -> float:
    """The fake clock's time when the failure is yielded (10 ms per look)."""
    clock = FakeClock(0.01)
    for event in watch(MemorySource(b""), _scripted(chunks), DiagnoseOptions(), settle=settle, timeout=600, clock=clock):
        if event.kind == "failure":
            return clock.now
    raise AssertionError("no failure")


def _rank_crash(rank: int) -> bytes:
    text = scheduler_traceback() if rank == 0 else nccl_traceback()
    return crash_record("2026-11-29 10:00:03", f"TP{rank}", text).encode()


def test_a_single_rank_crash_needs_no_settle() -> None:
    """tp_size=1: no sibling to wait for.  Before: 0.5 s of idle flush, then the fixed settle."""
    args = TP4_ARGS.replace("tp_size=4", "tp_size=1").encode()
    crash = crash_record("2026-11-29 10:00:03", "", scheduler_traceback()).encode()
    assert _reported_at([args, crash], settle=30) < 0.2


def test_tp4_waits_for_the_settle_time_while_ranks_have_not_failed() -> None:
    reported = _reported_at([TP4_ARGS.encode(), _rank_crash(0)], settle=5)
    assert 5 <= reported < 5.3


def test_tp4_reports_at_once_when_all_four_ranks_failed() -> None:
    assert _reported_at([TP4_ARGS.encode(), *(_rank_crash(rank) for rank in range(4))], settle=5) < 0.2


def test_without_server_args_the_ranks_seen_so_far_count() -> None:
    seen = "".join(f"[2026-11-29 10:00:01 TP{rank}] Load weight begin. avail mem=78.84 GB\n" for rank in range(2))
    assert 5 <= _reported_at([seen.encode(), _rank_crash(0)], settle=5) < 5.3
    assert _reported_at([seen.encode(), _rank_crash(0), _rank_crash(1)], settle=5) < 0.2


def test_a_rank_that_keeps_logging_is_waited_for() -> None:
    """TP1 goes on printing after TP0 failed: it may still fail, so it must be quiet for the settle time."""
    seen = "".join(f"[2026-11-29 10:00:01 TP{rank}] Load weight begin. avail mem=78.84 GB\n" for rank in range(2))
    chatter = [b"[2026-11-29 10:00:04 TP1] still loading\n", *[b""] * 100, b"[2026-11-29 10:00:05 TP1] still loading\n"]
    reported = _reported_at([seen.encode(), _rank_crash(0), *chatter], settle=2)
    assert reported > 1.0 + 2  # after TP1's last line (about 1 s in) plus the settle time


def test_a_traceback_without_its_exception_line_is_not_reported_early() -> None:
    """The end of the log is inside a traceback: it is complete only once its exception line arrives."""
    record = crash_record("2026-11-29 10:00:03", "", scheduler_traceback()).encode()
    cut = record.index(b"AssertionError")
    clock = FakeClock(0.01)
    follow = _scripted([record[:cut], *[b""] * 300, record[cut:]])
    events = list(watch(MemorySource(b""), follow, DiagnoseOptions(), timeout=600, clock=clock))
    assert events[-1].kind == "failure" and clock.now > 3.0  # waited through the 3 s pause for the rest
    report = events[-1].report
    assert report is not None and not report.failures[0].failure.truncated


def test_sglang_0_5_23_capture_bar_is_the_cuda_graph_stage() -> None:
    # 0.5.23 prints no "Capture cuda graph begin": decode_cuda_graph_runner.py's tqdm bar is all there is.
    bar = "Capturing batches (bs=256 avail_mem=21.40 GB):   4%|▍         | 2/52 [00:01<00:30,  1.62it/s]"
    stage = stage_of(bar, "sglang")
    assert stage is not None and stage.key == "cuda-graph"


# -- a source lost for good while a traceback was being written (the SSH follow gave up reconnecting) ----------


def _lost_after(chunks: list[bytes], message: str) -> Follow:
    """A follower that hands over `chunks`, then raises what the SSH follow raises once reconnecting failed."""

    def follow(offset: int) -> Iterator[bytes]:
        yield from chunks
        raise SourceError(message)

    return follow


def test_a_traceback_cut_by_a_lost_source_is_reported_as_cut_short() -> None:
    record = crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback()).encode()
    half = record[: record.index(b"AssertionError")]
    gone = "gpu7:/x.log: connection lost; gave up after 10 attempts to reconnect (connection refused)"
    events = list(watch(MemorySource(b""), _lost_after([launch_line().encode(), half], gone), DiagnoseOptions(),
                        timeout=60, clock=FakeClock(0.2)))
    outcome = events[-1]
    assert outcome.kind == "failure" and outcome.report is not None
    assert outcome.report.failures[0].failure.truncated
    assert outcome.source_lost == (f"{gone}; the failure above is what arrived before the source was lost, and may "
                                   "be cut short")


def test_a_lost_source_without_a_failure_is_the_error_alone() -> None:
    gone = "gpu7:/x.log: connection lost; gave up after 10 attempts to reconnect (connection refused)"
    with pytest.raises(SourceError) as raised:
        list(watch(MemorySource(b""), _lost_after([launch_line().encode()], gone), DiagnoseOptions(), timeout=60,
                   clock=FakeClock(0.2)))
    assert str(raised.value) == gone


def test_cli_watch_prints_a_cut_short_failure_then_the_error_and_exits_3(monkeypatch: pytest.MonkeyPatch) -> None:
    """run_watch's side: the failure as far as it arrived on stdout, the lost source's line on stderr, exit 3.  The
    watch itself is the real one over a scripted follower (the SSH loss is in tests/ssh/test_watch_faults.py)."""
    import io

    import logsleuth.cli.watch_output as watch_output
    from logsleuth.cli.watch_output import Streams, run_watch
    from logsleuth.render.options import OutputFormat

    record = crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback()).encode()
    half = record[: record.index(b"AssertionError")]
    gone = "gpu7:/x.log: connection lost; gave up after 10 attempts to reconnect (connection refused)"
    follow = _lost_after([launch_line().encode(), half], gone)
    monkeypatch.setattr(watch_output, "watch_spec", lambda spec, options, **_: watch(
        MemorySource(b"", spec), follow, options, timeout=60, clock=FakeClock(0.2)))
    out, err = io.StringIO(), io.StringIO()
    code = run_watch(["gpu7:/x.log"], DiagnoseOptions(), fmt=OutputFormat.TEXT, live=False, streams=Streams(out, err))
    assert code == 3
    assert "traceback incomplete in the log" in out.getvalue()
    assert err.getvalue().splitlines()[-1] == (f"logsleuth: {gone}; the failure above is what arrived before the "
                                               "source was lost, and may be cut short")
