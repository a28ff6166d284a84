"""`make bench`'s watch rows: how soon `logsleuth watch 127.0.0.1:LOG` shows a launch and reports its crash,
over the private test sshd (bench_ssh.py starts it and installs logsleuth from a wheel).

1. Single-rank crash: the watch follows a launch log (its first `stage` JSON line has arrived), then the crash
   (SGLang's "Scheduler hit an exception" record with a real CPython traceback) is appended in one write, and
   the time from that write to the `failure` JSON line on logsleuth's stdout is taken.
2. TP4 crash: `server_args` declares tp_size=4; three ranks' tracebacks are appended 50 ms apart, the fourth
   0.2 s later (all within the default 1 s settle, as ranks of one crash fail), and the time is taken from the
   fourth's write.  The launcher's sigquit line is not written: the crash is the last thing in the log.
3. Start-up: from starting `logsleuth watch 127.0.0.1:LOG` (no --format, stderr a pipe: the one-line-per-event
   output, `logsleuth: 127.0.0.1:LOG: arguments parsed`) to its first stage line, against
   `ssh 127.0.0.1 tail -n 1 LOG` run to its end; the two alternate which goes first, as the other paired rows.

Each output line is timestamped by a reader thread as it arrives on the pipe.  Rows 1 and 2 alternate too.
Every row has WATCH_RUNS runs after one untimed run of each command, and shows p50 and p95: the latency
goals are on the p50 of the delays, the start-up goal on the p50 of the per-round ratios.  A run counts only if
it did its job (the failure names the crash, and for TP4 all four ranks; exit 1 after a crash, 130 after
Ctrl-C; no process of the watch's group left); otherwise its row says ERROR and why.

The launch text comes from scripts/replay_launch.py (SGLang's wording, written there, not copied from a log).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import queue
import signal
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING

from bench_local import real_traceback
from measure import Check, _end_leftovers, measure
from table import Sample, markdown_row, markdown_table, run_rounds

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "scripts"))
from replay_launch import loading, oom_while_loading, records, server_args  # noqa: E402

if TYPE_CHECKING:
    from bench_ssh import Bench

WATCH_RUNS = 20  # per row: enough for a p95 that is not just the slowest run
CRASH_GOAL = 0.150  # seconds, p50 of the delay from the crash's last write to the diagnosis
START_GOAL = 1.2  # p50 of watch's first stage / `ssh host tail -n 1 LOG`
EARLIER_RANK_GAP = 0.05  # seconds between the first three ranks' tracebacks
LAST_RANK_GAP = 0.2  # seconds before the last rank's traceback
WAIT = 30.0  # seconds without the awaited line: the run is an error, not a hang
LAUNCH_START = datetime(2026, 11, 29, 10, 0, 0)
FIRST_STAGE = "arguments parsed"  # the label of the `args` stage: server_args is every launch log's first line


# -- the launches ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Launch:
    """A launch log up to its crash: the text the watch finds, the crash records written before the last one,
    the last one (timed from its write), and what the `failure` event must say."""

    name: str
    before: str
    earlier: tuple[str, ...]
    last: str
    check: Callable[[dict[str, object]], str | None]


def _texts(tp: int, steps: list[tuple[float, str, str]]) -> list[str]:
    return [text for _delay, text in records(tp, steps, LAUNCH_START)]


def _launch_steps(tp: int) -> list[tuple[float, str, str]]:
    """server_args, then the stages up to loading weights (with the checkpoint shards' bar at 0 %)."""
    return [(0.0, "", server_args(tp)), *loading(tp)[:6]]


def _exceptions_of(failure: dict[str, object]) -> tuple[dict[str, object], list[str]]:
    """The first failure of a `failure` event's report, and the types of its exceptions."""
    report = failure.get("report")
    failures = report.get("failures") if isinstance(report, dict) else None
    if not failures:
        return {}, []
    first = failures[0]
    return first, [str(exception.get("type")) for exception in first.get("exceptions") or []]


def names_the_assertion(failure: dict[str, object]) -> str | None:
    _first, types = _exceptions_of(failure)
    return None if types[-1:] == ["AssertionError"] else f"the failure names {types}, not the AssertionError"


def names_four_oom_ranks(failure: dict[str, object]) -> str | None:
    first, types = _exceptions_of(failure)
    ranks = sorted(str(rank) for rank in first.get("ranks") or [])
    if not types or not types[-1].endswith("OutOfMemoryError"):
        return f"the failure names {types}, not the OutOfMemoryError"
    return None if ranks == ["TP0", "TP1", "TP2", "TP3"] else f"the failure has ranks {ranks}, not TP0-TP3"


def single_rank_launch() -> Launch:
    steps = [*_launch_steps(1), (0.9, "TP0", "Scheduler hit an exception: " + real_traceback().rstrip("\n"))]
    *before, crash = _texts(1, steps)
    return Launch("single-rank", "".join(before), (), crash, names_the_assertion)


def tp4_launch() -> Launch:
    """scripts/replay_launch.py's tp4-crash: the four ranks run out of memory while loading weights."""
    crashes = [(0.9, f"TP{rank}", oom_while_loading(rank)) for rank in (2, 0, 3, 1)]
    texts = _texts(4, [*_launch_steps(4), *crashes])
    before, crash_records = texts[: -len(crashes)], texts[-len(crashes):]
    return Launch("tp4", "".join(before), tuple(crash_records[:-1]), crash_records[-1], names_four_oom_ranks)


# -- one watch process -------------------------------------------------------------------------------------

Line = tuple[float, bytes]  # (perf_counter when it was read, the line)


def _read_lines(stream: IO[bytes], into: queue.Queue[Line | None]) -> None:
    for line in iter(stream.readline, b""):
        into.put((time.perf_counter(), line))
    into.put(None)


class WatchProcess:
    """`logsleuth watch` in a process group of its own, each line of its stdout and stderr timestamped by a
    reader thread as it arrives."""

    def __init__(self, argv: Sequence[str], env: dict[str, str]) -> None:
        self.argv = list(argv)
        self.started = time.perf_counter()
        self.process = subprocess.Popen(self.argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, env=env, process_group=0)
        self.stdout: queue.Queue[Line | None] = queue.Queue()
        self.stderr: queue.Queue[Line | None] = queue.Queue()
        self.stderr_seen: list[bytes] = []
        self._readers = [
            threading.Thread(target=_read_lines, args=(stream, lines), daemon=True)
            for stream, lines in ((self.process.stdout, self.stdout), (self.process.stderr, self.stderr))
        ]
        for reader in self._readers:
            reader.start()

    def wait_for(self, lines: queue.Queue[Line | None], wanted: Callable[[bytes], bool]) -> Line | None:
        """The first line of `lines` that is `wanted`; None at the end of the stream or after WAIT seconds."""
        deadline = time.monotonic() + WAIT
        while (left := deadline - time.monotonic()) > 0:
            try:
                item = lines.get(timeout=left)
            except queue.Empty:
                return None
            if item is None:
                return None
            if lines is self.stderr:
                self.stderr_seen.append(item[1])
            if wanted(item[1]):
                return item
        return None

    def finish(self, expected_status: int, *, interrupt: bool = False) -> str | None:
        """Wait for the watch to end (after Ctrl-C's SIGINT to its group with `interrupt`, as a terminal sends
        it); what went wrong, if anything.  A watch that does not end is killed, with its group."""
        if interrupt:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGINT)
        try:
            status = self.process.wait(timeout=WAIT)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
            return f"still running {WAIT:g} s later: killed"
        leftovers = _end_leftovers(self.process.pid)
        for reader in self._readers:
            reader.join(timeout=WAIT)
        self._drain_stderr()
        if leftovers:
            return f"{len(leftovers)} process(es) of its group outlived it: {leftovers}"
        return None if status == expected_status else f"exit status {status}, expected {expected_status}"

    def _drain_stderr(self) -> None:
        while True:
            try:
                item = self.stderr.get_nowait()
            except queue.Empty:
                return
            if item is not None:
                self.stderr_seen.append(item[1])

    def describe(self, problem: str) -> str:
        last = b"".join(self.stderr_seen).decode(errors="replace").strip().splitlines()[-1:]
        return f"{' '.join(self.argv)[:120]}: {problem}" + (f" ({last[0][:200]})" if last else "")


def json_event(kind: str) -> Callable[[bytes], bool]:
    def wanted(line: bytes) -> bool:
        try:
            return json.loads(line).get("event") == kind
        except (ValueError, AttributeError):
            return False

    return wanted


def append(log: Path, text: str) -> float:
    """Append `text` in one write(2); perf_counter once it returned."""
    descriptor = os.open(log, os.O_WRONLY | os.O_APPEND)
    try:
        os.write(descriptor, text.encode())
        return time.perf_counter()
    finally:
        os.close(descriptor)


# -- the runs ----------------------------------------------------------------------------------------------

class WatchRuns:
    """The watch rows' commands against the bench's sshd, spelled once."""

    def __init__(self, bench: Bench) -> None:
        self.bench = bench
        self._numbers = itertools.count(1)

    def watch(self, log: Path, *options: str) -> list[str]:
        bench = self.bench
        return [*bench.logsleuth, "watch", "--ssh-config", str(bench.config), "--timeout", "120", *options,
                f"127.0.0.1:{log}"]

    def new_log(self, name: str, text: str) -> Path:
        log = self.bench.logs / f"watch-{name}-{next(self._numbers)}.log"
        log.write_text(text)
        return log

    def crash_delay(self, launch: Launch) -> Sample:
        """Row 1 or 2: seconds from the last crash record's write to the `failure` JSON line."""
        log = self.new_log(launch.name, launch.before)
        run = WatchProcess(self.watch(log, "--format", "json"), self.bench.env)
        delay: float | None = None
        try:
            delay, problem = _crash(run, log, launch)
        finally:
            # a watch that has not reported by now will not: Ctrl-C it rather than wait for its --timeout
            ended = run.finish(1) if delay is not None else run.finish(130, interrupt=True)
            log.unlink()
        problem = problem or ended
        return Sample(delay or 0.0, 0.0, error=run.describe(problem) if problem else None)

    def start_to_first_stage(self, log: Path) -> Sample:
        """Row 3's A: seconds from starting the watch to its first stage line on stderr; then Ctrl-C."""
        run = WatchProcess(self.watch(log), self.bench.env)
        first = run.wait_for(run.stderr, lambda line: line.rstrip().endswith(f": {FIRST_STAGE}".encode()))
        problem = run.finish(130, interrupt=True)
        if first is None:
            problem = f"no '{FIRST_STAGE}' line on stderr" + (f"; {problem}" if problem else "")
        seconds = first[0] - run.started if first is not None else 0.0
        return Sample(seconds, 0.0, error=run.describe(problem) if problem else None)


def _crash(run: WatchProcess, log: Path, launch: Launch) -> tuple[float | None, str | None]:
    """Wait until the watch follows (its first stage event), write the crash, wait for the failure event:
    (the delay, what went wrong)."""
    if run.wait_for(run.stdout, json_event("stage")) is None:
        return None, "no stage event"
    for record in launch.earlier:
        append(log, record)
        time.sleep(EARLIER_RANK_GAP)
    if launch.earlier:
        time.sleep(LAST_RANK_GAP - EARLIER_RANK_GAP)
    written = append(log, launch.last)
    failure = run.wait_for(run.stdout, json_event("failure"))
    if failure is None:
        return None, "no failure event"
    seen, line = failure
    if seen < written:
        return None, "the failure was reported before the crash's last record was written"
    return seen - written, launch.check(json.loads(line))


def prints_exactly(expected: bytes) -> Check:
    """`ssh host tail -n 1 LOG`'s check: exit 0 and the log's last line, nothing else."""

    def check(status: int, stdout: bytes) -> str | None:
        if status != 0:
            return f"exit status {status}, expected 0"
        return None if stdout == expected else f"printed {stdout[:80]!r}, expected {expected[:80]!r}"

    return check


# -- the rows ----------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Percentiles:
    p50: float
    p95: float


def percentiles(values: Sequence[float]) -> Percentiles:
    """p50 and p95 by linear interpolation between the closest ranks (statistics' "inclusive" method, numpy's
    default): of 20 runs, p95 lies between the 19th and the 20th fastest."""
    if not values:
        raise ValueError("no values")
    if len(values) == 1:
        return Percentiles(values[0], values[0])
    cuts = statistics.quantiles(values, n=100, method="inclusive")
    return Percentiles(cuts[49], cuts[94])


@dataclass(frozen=True)
class WatchRow:
    """A row of the watch table: A's seconds per run and, for a paired row, B's from the same rounds (then the
    goal is on the per-round ratios A/B, else on A's seconds).  The goal is an upper bound on the p50."""

    label: str
    a: list[Sample]
    bound: float
    b: list[Sample] = field(default_factory=list)

    @property
    def errors(self) -> list[str]:
        return sorted({sample.error for sample in (*self.a, *self.b) if sample.error})

    @property
    def ratios(self) -> list[float]:
        return [a.wall / max(b.wall, 1e-9) for a, b in zip(self.a, self.b, strict=True)]

    def judged(self) -> Percentiles:
        return percentiles(self.ratios if self.b else [sample.wall for sample in self.a])

    def goal(self) -> str:
        return f"A/B p50 ≤ {self.bound:g}×" if self.b else f"p50 ≤ {self.bound * 1000:.0f} ms"

    def verdict(self) -> str:
        """"pass", "FAIL", or "ERROR" (a run did not do what it should: its time means nothing)."""
        if self.errors or not self.a:
            return "ERROR"
        return "pass" if self.judged().p50 <= self.bound else "FAIL"


WATCH_COLUMNS = ("watch row", "n", "A p50", "A p95", "B p50", "B p95", "A/B p50 (p95)", "goal", "")


def _ms(value: float) -> str:
    return f"{value * 1000:.0f} ms"


def render_watch_row(number: int, row: WatchRow) -> str:
    cells = [f"{number}. {row.label}", str(len(row.a)), "", "", "", "", "", row.goal(), row.verdict()]
    if row.a:
        a = percentiles([sample.wall for sample in row.a])
        cells[2:4] = [_ms(a.p50), _ms(a.p95)]
    if row.a and row.b:
        b, ratio = percentiles([sample.wall for sample in row.b]), row.judged()
        cells[4:7] = [_ms(b.p50), _ms(b.p95), f"{ratio.p50:.2f}× ({ratio.p95:.2f}×)"]
    return markdown_row(cells)


def render_watch_table(rows: list[WatchRow]) -> str:
    errors = [f"- watch row {number}: {error}" for number, row in enumerate(rows, 1) for error in row.errors]
    return markdown_table(WATCH_COLUMNS, [render_watch_row(number, row) for number, row in enumerate(rows, 1)], errors)


def watch_notes() -> str:
    return (
        f"- Watch rows: {WATCH_RUNS} runs each after one untimed run, p50/p95 by linear interpolation.  Rows 1 and 2 "
        "alternate, as do row 3's A and B.  Rows 1-2: the watch follows the log (`--format json`, its first `stage` "
        "line came), the crash is appended in one write, and the time runs from that write to the `failure` line "
        "on stdout (read by a thread as it arrives); TP4: three ranks' tracebacks 50 ms apart, the last 0.2 s "
        "later, timed from the last.  Row 3: start to the first stage line on stderr as `logsleuth watch HOST:LOG` "
        "prints it without a terminal (then Ctrl-C), against `ssh 127.0.0.1 tail -n 1 LOG` to its end.  A separate "
        "table: its rows have no B side (1, 2) or want p95s that the main table's ≤ 9 rounds cannot give.\n"
    )


def watch_rows(bench: Bench) -> list[WatchRow]:
    """The three watch rows (see the module docstring)."""
    runs = WatchRuns(bench)
    single, tp4 = single_rank_launch(), tp4_launch()
    crashes = {"single-rank": lambda: runs.crash_delay(single), "TP4": lambda: runs.crash_delay(tp4)}
    start_log = runs.new_log("start", single.before)
    ssh_tail = [*bench.ssh, "127.0.0.1", f"tail -n 1 {start_log}"]
    last_line = single.before.splitlines(keepends=True)[-1].encode()
    starts = {
        "watch": lambda: runs.start_to_first_stage(start_log),
        "ssh tail -n 1": lambda: measure(ssh_tail, prints_exactly(last_line), env=bench.env),
    }
    print(f"{time.strftime('%H:%M:%S')}  watch: crash delays, start-up: {WATCH_RUNS} rounds…", file=sys.stderr,
          flush=True)
    for each in (*crashes.values(), *starts.values()):  # untimed: warms the helper, ssh and the sshd
        each()
    crash_runs = run_rounds(crashes, WATCH_RUNS)
    start_runs = run_rounds(starts, WATCH_RUNS)
    start_log.unlink()
    return [
        WatchRow("watch: single-rank crash appended → `failure` JSON line on stdout",
                 [run["single-rank"] for run in crash_runs], CRASH_GOAL),
        WatchRow("watch: TP4 crash, the last of 4 ranks' tracebacks appended → `failure` JSON line",
                 [run["TP4"] for run in crash_runs], CRASH_GOAL),
        WatchRow("watch start → first stage line on stderr vs `ssh 127.0.0.1 tail -n 1 LOG`",
                 [run["watch"] for run in start_runs], START_GOAL, [run["ssh tail -n 1"] for run in start_runs]),
    ]
