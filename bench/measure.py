"""Run one command and measure it: wall seconds, CPU seconds of its whole process tree, peak tree RSS.

CPU is the change of getrusage(RUSAGE_CHILDREN) across the run: the kernel adds a process's user + sys time
(its own and that of every descendant it reaped) to its parent when the parent reaps it.  So the helper that
logsleuth forks and the ssh processes it starts are counted once logsleuth reaps them, and not at all if it
leaves them behind.  A sampled run checks that: a thread reads /proc/PID/stat of every process of the
command's process group every 10 ms, keeps each one's last CPU time and sums their resident sizes at the same
moment (stat's rss field is the counter /proc/PID/status shows as VmRSS).  If the sampled CPU exceeds the
rusage delta, or a process of the group is still alive after the command ended, the run is marked.

Sampling costs the machine a little CPU (a few per cent of a core), so only the runs that need RSS or the
reaping check are sampled, and in a paired row both sides are.

Output goes to real files, not /dev/null: GNU grep stops at the first match when its output is /dev/null.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from table import Sample, run_rounds

TICK = os.sysconf("SC_CLK_TCK")
PAGE_KIB = os.sysconf("SC_PAGE_SIZE") // 1024
SAMPLE_EVERY = 0.01  # seconds
FULL_SCAN_EVERY = 10  # samples: look for group members the child walk cannot see (reparented orphans)

# (exit status, stdout bytes) -> what is wrong with the run, or None
Check = Callable[[int, bytes], "str | None"]


def exit_status_in(*allowed: int) -> Check:
    def check(status: int, _stdout: bytes) -> str | None:
        return None if status in allowed else f"exit status {status}, expected {' or '.join(map(str, allowed))}"

    return check


@dataclass
class ProcStat:
    pgrp: int
    cpu_ticks: int  # utime + stime
    rss_kib: int


def read_stat(pid: int) -> ProcStat | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            fields = handle.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    # after the command name: state(0) ppid(1) pgrp(2) ... utime(11) stime(12) ... rss(21), in stat(5) terms
    return ProcStat(int(fields[2]), int(fields[11]) + int(fields[12]), int(fields[21]) * PAGE_KIB)


def group_members(pgrp: int) -> list[int]:
    """Every live process of the process group (a full scan of /proc: ~3 ms, so done sparingly)."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            stat = read_stat(int(name))
            if stat is not None and stat.pgrp == pgrp:
                found.append(int(name))
    return found


def descendants(root: int) -> set[int]:
    found, pending = set(), [root]
    while pending:
        pid = pending.pop()
        found.add(pid)
        try:
            for task in os.listdir(f"/proc/{pid}/task"):
                with open(f"/proc/{pid}/task/{task}/children") as handle:
                    pending.extend(int(child) for child in handle.read().split())
        except OSError:
            continue
    return found


@dataclass
class TreeSampler:
    """Samples the process group led by `root` until stopped (see the module docstring)."""

    root: int
    peak_rss_kib: int = 0
    last_cpu_ticks: dict[int, int] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()

    @property
    def sampled_cpu(self) -> float:
        return sum(self.last_cpu_ticks.values()) / TICK

    @property
    def processes_seen(self) -> int:
        return len(self.last_cpu_ticks)

    def _run(self) -> None:
        known: set[int] = {self.root}
        count = 0
        while not self._stop.is_set():
            known |= descendants(self.root)
            if count % FULL_SCAN_EVERY == 0:
                known |= set(group_members(self.root))
            total = 0
            for pid in list(known):
                stat = read_stat(pid)
                if stat is None or stat.pgrp != self.root:
                    known.discard(pid)
                    continue
                total += stat.rss_kib
                self.last_cpu_ticks[pid] = stat.cpu_ticks
            self.peak_rss_kib = max(self.peak_rss_kib, total)
            count += 1
            self._stop.wait(SAMPLE_EVERY)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _end_leftovers(pgrp: int) -> list[int]:
    """Processes of the run's group still alive after it ended (started by this run, so ours to end)."""
    leftovers = [pid for pid in group_members(pgrp) if pid != pgrp]
    for pid in leftovers:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    return leftovers


def measure(
    command: Sequence[str],
    check: Check,
    *,
    env: dict[str, str] | None = None,
    sample: bool = False,
) -> Sample:
    """One run of `command` in a process group of its own (see the module docstring)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        cpu_before = _children_cpu()
        started = time.perf_counter()
        process = subprocess.Popen(
            list(command), stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=env, process_group=0
        )
        sampler = TreeSampler(process.pid)
        if sample:
            sampler.start()
        _pid, wait_status, _usage = os.wait4(process.pid, 0)
        wall = time.perf_counter() - started
        cpu = _children_cpu() - cpu_before
        sampler.stop()
        process.returncode = status = os.waitstatus_to_exitcode(wait_status)
        out.seek(0)
        error = check(status, out.read())
        if error is not None:
            err.seek(0)
            last = err.read().decode(errors="replace").strip().splitlines()[-1:]
            error = f"{' '.join(command)[:120]}: {error}" + (f" ({last[0][:200]})" if last else "")
    if sample:
        error = error or _reaping_error(process.pid, cpu, sampler)
    return Sample(wall, cpu, sampler.peak_rss_kib, error, sampler.processes_seen)


def _reaping_error(pgrp: int, cpu: float, sampler: TreeSampler) -> str | None:
    leftovers = _end_leftovers(pgrp)
    if leftovers:
        return f"{len(leftovers)} process(es) of the tree outlived it (their CPU is not counted): {leftovers}"
    if sampler.sampled_cpu > cpu + 2 / TICK:  # stat's ticks and rusage round differently: 2 ticks of slack
        return f"sampled CPU {sampler.sampled_cpu:.3f} s > rusage {cpu:.3f} s: a process was not reaped"
    return None


@dataclass(frozen=True)
class Command:
    argv: tuple[str, ...]
    check: Check


def command(argv: Sequence[str], check: Check) -> Command:
    return Command(tuple(argv), check)


_warmed: set[tuple[str, ...]] = set()


def measure_rounds(
    commands: dict[str, Command],
    rounds: int,
    *,
    env: dict[str, str] | None = None,
    sample: bool = False,
    warm: bool = True,
    least: int = 3,
    allowance: float | None = None,
) -> list[dict[str, Sample]]:
    """Interleaved rounds of the commands (table.run_rounds: at most `rounds`, fewer if `allowance` seconds
    run out after `least`), after one untimed run of each command not run before when `warm`: it fills the
    page cache, writes logsleuth's caches and starts the server's processes warm."""
    print(f"{time.strftime('%H:%M:%S')}  {', '.join(commands)}: up to {rounds} rounds…", file=sys.stderr, flush=True)
    for each in commands.values():
        if warm and each.argv not in _warmed:
            measure(each.argv, each.check, env=env)
            _warmed.add(each.argv)
    runs = {name: functools.partial(measure, each.argv, each.check, env=env, sample=sample)
            for name, each in commands.items()}
    return run_rounds(runs, rounds, least=least, allowance=allowance)
