"""The bench's logs, and its rows that need no SSH: `diagnose --all` vs `grep -c`, start-up and a small local
diagnose vs `python -c pass`, and `diagnose --all` of many failure groups in many logs vs one of those logs.

The logs are SGLang serving logs with a real CPython traceback: an earlier failure every 4 MiB (for --all to
find), a launch line, then 4 MiB later the crash at the end.  A log can be sparse: only its last `real_tail`
bytes are text, the rest a hole that reads as zeros (a 10 GiB log costs 64 MiB of disk).

`make bench` runs these rows inside bench_ssh.py's one table.  Alone, this prints the local rows only:

    python bench/bench_local.py [--rounds 7] [--logsleuth PATH]
"""

from __future__ import annotations

import argparse
import functools
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from many_tracebacks import write_interleaved_logs
from measure import Check, Command, command, exit_status_in, measure_rounds
from table import Goal, Row, pairs_of, render_table

MiB = 1 << 20
GiB = 1 << 30

CRASH_SOURCE = """
def event_loop(cfg):
    assert cfg["speculative_eagle_topk"] is None and cfg["speculative_num_draft_tokens"] is None

def run_scheduler_process():
    event_loop({"speculative_eagle_topk": 1, "speculative_num_draft_tokens": 16})

run_scheduler_process()
"""
CRASH_END = b"Received sigquit from a child process. It usually means the child failed.\n"


@functools.cache  # one per run: every log of the bench ends in the same crash
def real_traceback() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "site-packages" / "sglang" / "srt" / "managers" / "scheduler.py"
        path.parent.mkdir(parents=True)
        path.write_text(CRASH_SOURCE)
        proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
        return proc.stderr.replace(tmp, "/usr/local/lib/python3.11")


@functools.cache
def noise_block(size: int) -> bytes:
    lines = []
    total = 0
    i = 0
    while total < size:
        line = (
            f"[2026-11-29 10:{i // 60 % 60:02d}:{i % 60:02d} TP{i % 8}] Decode batch. #running-req: {i % 64}, "
            f"#token: {i * 7 % 90000}, token usage: 0.{i % 100:02d}, gen throughput (token/s): {i % 5000}.12, "
            "#queue-req: 0,\n"
        )
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines).encode()


def write_log(path: Path, size: int, *, real_tail: int | None = None) -> None:
    """About `size` bytes of log ending in the crash; with `real_tail`, a hole before the last real_tail bytes."""
    traceback = real_traceback()
    block = noise_block(4 * MiB)
    earlier = ("[2026-11-29 09:00:00 TP3] Scheduler hit an exception: " + traceback).encode()
    crash = ("[2026-11-29 11:00:00 TP0] Scheduler hit an exception: " + traceback).encode()
    launch = b"+ python -m sglang.launch_server --model-path /models/llama --tp-size 8\n"
    text_from = 0 if real_tail is None else size - real_tail
    with path.open("wb") as handle:
        handle.truncate(text_from)
        handle.seek(text_from)
        written = text_from
        while written < size - 8 * MiB:
            handle.write(block)
            handle.write(earlier)
            written += len(block) + len(earlier)
        handle.write(launch)
        handle.write(block)
        handle.write(crash)
        handle.write(b"[2026-11-29 11:00:01] " + CRASH_END)


def failure_found(status: int, stdout: bytes) -> str | None:
    """logsleuth's check: exit status 1 and a crash in the report."""
    if status != 1:
        return f"exit status {status}, expected 1 (failure found)"
    return None if b"AssertionError" in stdout else "the report does not name the AssertionError"


def all_and_grep(logsleuth: Sequence[str], log: Path, label: str) -> dict[str, Command]:
    return {
        f"--all {label}": command([*logsleuth, "diagnose", "--format", "json", "--all", str(log)], failure_found),
        f"grep -c {label}": command(["grep", "-c", "Traceback", str(log)], exit_status_in(0)),
    }


def all_rows(logsleuth: Sequence[str], one: Path, ten: Path, rounds: int) -> list[Row]:
    """Row 4: `--all` against `grep -c` on 1 GiB, then on 10 GiB, with the peak RSS of logsleuth's tree."""
    one_gib, ten_gib = all_and_grep(logsleuth, one, "1 GiB"), all_and_grep(logsleuth, ten, "10 GiB")
    one_runs = measure_rounds(one_gib, rounds, sample=True, allowance=45)
    # 10 GiB: half a minute a run before the --all speed-up, so one or two rounds and no warm-up (the page
    # cache holds nothing of a hole).  grep skips the hole (SEEK_HOLE): there only the RSS has a goal.
    ten_runs = measure_rounds(ten_gib, min(rounds, 2), sample=True, warm=False, least=1, allowance=60)
    return [
        Row("`diagnose --all` 1 GiB vs `grep -c Traceback LOG` (local)", "wall",
            (Goal("ratio", 1.2), Goal("rss", 100)), pairs_of(one_runs, *one_gib), show_rss=True),
        Row("`diagnose --all` 10 GiB (sparse) vs `grep -c Traceback LOG` (local)", "wall", (Goal("rss", 100),),
            pairs_of(ten_runs, *ten_gib), show_rss=True),
    ]


def startup_row(logsleuth: Sequence[str], python: str, rounds: int) -> Row:
    """The cheapest real command against the interpreter's own start (issue 30's goal: at most 3x)."""
    commands = {
        "--version": command([*logsleuth, "--version"], exit_status_in(0)),
        "python -c pass": command([python, "-c", "pass"], exit_status_in(0)),
    }
    runs = measure_rounds(commands, rounds, allowance=10)
    return Row("start-up: `logsleuth --version` vs `python -c pass`", "wall", (Goal("ratio", 3),),
               pairs_of(runs, *commands))


def write_small_log(path: Path) -> None:
    """About 1 MiB of a launch's log ending in its crash: the common case, a log that is read whole."""
    launch = b"+ python -m sglang.launch_server --model-path /models/llama --tp-size 8\n"
    crash = ("[2026-11-29 11:00:00 TP0] Scheduler hit an exception: " + real_traceback()).encode()
    path.write_bytes(launch + noise_block(MiB) + crash + b"[2026-11-29 11:00:01] " + CRASH_END)


def small_diagnose_row(logsleuth: Sequence[str], python: str, log: Path, rounds: int) -> Row:
    """A whole local diagnose of a 1 MiB log, start to exit, against `python -c pass` (issue 30's goal: at most
    0.15 s wall)."""
    commands = {
        "diagnose 1 MiB": command([*logsleuth, "diagnose", "--format", "json", str(log)], failure_found),
        "python -c pass": command([python, "-c", "pass"], exit_status_in(0)),
    }
    runs = measure_rounds(commands, rounds, allowance=10)
    return Row("local `diagnose` of a 1 MiB log vs `python -c pass`", "wall", (Goal("a", 0.15),),
               pairs_of(runs, *commands))


GROUP_LOGS = 50  # two failures a log: 100 groups, the most a report keeps (grouping.MAX_GROUPS)


def groups_found(count: int) -> Check:
    """logsleuth's check: exit status 1 and `count` failure groups in the JSON report."""
    def check(status: int, stdout: bytes) -> str | None:
        if status != 1:
            return f"exit status {status}, expected 1 (failure found)"
        found = len(json.loads(stdout)["failures"])
        return None if found == count else f"{found} failure groups in the report, expected {count}"

    return check


def many_groups_row(logsleuth: Sequence[str], directory: Path, rounds: int) -> Row:
    """What a report of many failure groups costs beyond a log's own: `--all` over GROUP_LOGS logs, each with two
    distinct tracebacks, every log's first printed before any log's second (bench/many_tracebacks.py), so that the
    failure each group's log printed next lies past the other logs' groups; against one of those logs."""
    directory.mkdir(parents=True, exist_ok=True)
    logs = [str(path) for path in write_interleaved_logs(directory, GROUP_LOGS)]
    commands = {
        "many": command([*logsleuth, "diagnose", "--format", "json", "--all", *logs], groups_found(2 * GROUP_LOGS)),
        "one": command([*logsleuth, "diagnose", "--format", "json", "--all", logs[0]], groups_found(2)),
    }
    runs = measure_rounds(commands, rounds, allowance=30)
    return Row(f"`diagnose --all` of {GROUP_LOGS} logs, {2 * GROUP_LOGS} distinct failure groups interleaved in time, "
               "vs one of those logs (local)", "wall", (), pairs_of(runs, *commands))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    beside_python = Path(sys.executable).parent / "logsleuth"  # this venv's console script
    parser.add_argument("--logsleuth", default=str(beside_python) if beside_python.exists() else "logsleuth")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="logsleuth-bench-") as tmp:
        one, ten = Path(tmp) / "1GiB.log", Path(tmp) / "10GiB.log"
        write_log(one, GiB)
        write_log(ten, 10 * GiB, real_tail=64 * MiB)
        small = Path(tmp) / "1MiB.log"
        write_small_log(small)
        logsleuth = [args.logsleuth]
        rows = [
            *all_rows(logsleuth, one, ten, args.rounds), startup_row(logsleuth, sys.executable, args.rounds),
            small_diagnose_row(logsleuth, sys.executable, small, args.rounds),
            many_groups_row(logsleuth, Path(tmp) / "groups", args.rounds),
        ]
    print(render_table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
