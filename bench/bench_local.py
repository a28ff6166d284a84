"""Local reading cost: `logsleuth diagnose` vs `tail -c`, `--all` vs `grep -c`, peak RSS.

Two tables:
1. Generates SGLang-like logs of 100 MiB and 1 GiB under bench/data/ (a real CPython traceback
   every few MiB, the crash at the end) and prints, per size, median whole-process wall times of
   the commands side by side and logsleuth's peak RSS.
2. Traceback-dense logs (bench/many_tracebacks.py: 1,000,000 tracebacks, ~1.3 GB, 1,000 or
   1,000,000 of them distinct; cached under /tmp/logsleuth-bench): `diagnose` and `diagnose
   --all`, each run paired with `grep -c Traceback` on the same file, in interleaved order, with
   the median of the per-pair ratios.  Goals: --all <= 5x grep, peak RSS of the whole process
   tree <= 200 MB in both modes.

Peak RSS of the process tree (logsleuth forks two helpers for large files): /proc is sampled
every 20 ms; "tree RSS" is the largest sum of the resident sizes of the tree's processes seen at
one time, "bound" the largest sum of the high-water marks (VmHWM) of the processes alive at one
time, which also counts a peak that fell between two samples (and can only overstate).  Both are
at least the ru_maxrss that wait4 returns (the largest single process).

    python bench/bench_local.py [--sizes 100M,1G] [--repeat 5] [--dense-repeat 3] [--skip-sparse]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from many_tracebacks import make_log as make_dense_log  # noqa: E402

HERE = Path(__file__).resolve().parent
DATA = HERE / "data"
MiB = 1 << 20

CRASH = """
def event_loop(cfg):
    assert cfg["speculative_eagle_topk"] is None and cfg["speculative_num_draft_tokens"] is None

def run_scheduler_process():
    event_loop({"speculative_eagle_topk": 1, "speculative_num_draft_tokens": 16})

run_scheduler_process()
"""


def real_traceback() -> str:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "site-packages" / "sglang" / "srt" / "managers" / "scheduler.py"
        path.parent.mkdir(parents=True)
        path.write_text(CRASH)
        proc = subprocess.run([sys.executable, str(path)], capture_output=True, text=True)
        return proc.stderr.replace(tmp, "/usr/local/lib/python3.11")


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


def make_log(path: Path, size: int) -> None:
    if path.exists() and path.stat().st_size >= size:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    traceback = real_traceback()
    block = noise_block(4 * MiB)
    earlier = ("[2026-11-29 09:00:00 TP3] Scheduler hit an exception: " + traceback).encode()
    crash = ("[2026-11-29 11:00:00 TP0] Scheduler hit an exception: " + traceback).encode()
    launch = b"+ python -m sglang.launch_server --model-path /models/llama --tp-size 8\n"
    with path.open("wb") as handle:
        written = 0
        while written < size - 8 * MiB:
            handle.write(block)
            handle.write(earlier)  # an older failure every 4 MiB, for --all to find
            written += len(block) + len(earlier)
        handle.write(launch)
        handle.write(block)
        handle.write(crash)
        handle.write(
            b"[2026-11-29 11:00:01] Received sigquit from a child process. It usually means the child failed.\n"
        )


@dataclass
class Run:
    seconds: float
    tree_kib: int  # largest sum of the tree's resident sizes seen at one time (sampled)
    bound_kib: int  # largest sum, over the processes alive at one time, of each one's own peak so far


def _status_kib(pid: int, field: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(field):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def timed(command: list[str]) -> Run:
    """Wall seconds and peak RSS of one run of `command` and every process it forks.

    Output goes to a real file, not /dev/null: GNU grep stops at the first match when it
    sees its output is /dev/null, which would make the baseline meaningless."""
    peaks: dict[int, int] = {}
    tree_peak = bound = 0
    done = threading.Event()

    def sample(root: int) -> None:
        nonlocal tree_peak, bound
        while not done.is_set():
            total = total_peaks = 0
            for pid in _tree(root):
                total += _status_kib(pid, "VmRSS:")
                peaks[pid] = max(peaks.get(pid, 0), _status_kib(pid, "VmHWM:"))
                total_peaks += peaks[pid]
            tree_peak, bound = max(tree_peak, total), max(bound, total_peaks)
            time.sleep(0.02)  # VmHWM keeps each peak: a coarse sampling misses none

    with tempfile.TemporaryFile() as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        sampler = threading.Thread(target=sample, args=(proc.pid,), daemon=True)
        sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
        done.set()
        sampler.join()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(command)}: exit status {proc.returncode}")
    return Run(elapsed, max(tree_peak, usage.ru_maxrss), max(bound, usage.ru_maxrss))


def median_run(command: list[str], repeat: int) -> tuple[float, int]:
    timed(command)  # warm the page cache and the interpreter's imports
    runs = [timed(command) for _ in range(repeat)]
    return statistics.median(r.seconds for r in runs), max(r.bound_kib for r in runs)


def parse_size(text: str) -> int:
    text = text.strip().upper()
    factor = {"M": MiB, "G": 1 << 30}[text[-1]]
    return int(float(text[:-1]) * factor)


def sparse_table(logsleuth: list[str], sizes: str, repeat: int) -> None:
    rows = []
    for label in sizes.split(","):
        log = DATA / f"sglang-{label}.log"
        make_log(log, parse_size(label))
        diagnose_t, diagnose_rss = median_run([*logsleuth, str(log)], repeat)
        tail_t, _ = median_run(["tail", "-c", "1000000", str(log)], repeat)
        all_t, all_rss = median_run([*logsleuth, "--all", str(log)], repeat)
        grep_t, _ = median_run(["grep", "-c", "Traceback", str(log)], repeat)
        rows.append((label, diagnose_t, tail_t, all_t, grep_t, diagnose_rss, all_rss))
    print(
        f"{'log':>6} | {'diagnose':>9} {'tail -c 1M':>10} {'ratio':>6} | {'--all':>7} {'grep -c':>8} {'ratio':>6} "
        f"| {'RSS diag':>9} {'RSS --all':>9}"
    )
    for label, d, t, a, g, rd, ra in rows:
        print(
            f"{label:>6} | {d:8.3f}s {t:9.3f}s {d / t:5.1f}x | {a:6.3f}s {g:7.3f}s {a / g:5.2f}x "
            f"| {rd / 1024:7.1f}MB {ra / 1024:7.1f}MB"
        )
    if len(rows) > 1:
        print(f"diagnose {rows[-1][0]} vs {rows[0][0]}: {rows[-1][1] / rows[0][1]:.2f}x")


def dense_table(logsleuth: list[str], repeat: int, tracebacks: int) -> bool:
    """Paired, interleaved runs on traceback-dense logs; True when the goals are met."""
    grep_rows: dict[str, list[float]] = {}
    print(
        f"\n{tracebacks:,} tracebacks | {'mode':>8} | {'logsleuth':>9} {'grep -c':>8} {'ratio':>6} "
        f"| {'tree RSS':>9} {'bound':>9}"
    )
    ok = True
    for distinct in (1000, tracebacks):
        log = str(make_dense_log(tracebacks, distinct))
        grep = ["grep", "-c", "Traceback", log]
        commands = {"default": [*logsleuth, log], "--all": [*logsleuth, "--all", log]}
        for command in (grep, *commands.values()):
            timed(command)  # warm the page cache and the imports
        results: dict[str, list[tuple[Run, Run]]] = {mode: [] for mode in commands}
        for i in range(repeat):
            for mode, command in commands.items():
                pair = (timed(grep), timed(command)) if i % 2 == 0 else tuple(reversed((timed(command), timed(grep))))
                results[mode].append(pair)  # type: ignore[arg-type]
        for mode, pairs in results.items():
            ratio = statistics.median(run.seconds / g.seconds for g, run in pairs)
            seconds = statistics.median(run.seconds for _, run in pairs)
            grep_seconds = statistics.median(g.seconds for g, _ in pairs)
            tree = max(run.tree_kib for _, run in pairs) / 1024
            bound = max(run.bound_kib for _, run in pairs) / 1024
            grep_rows.setdefault(mode, []).append(ratio)
            print(
                f"{distinct:>9,} distinct | {mode:>8} | {seconds:8.2f}s {grep_seconds:7.2f}s {ratio:5.2f}x "
                f"| {tree:7.1f}MB {bound:7.1f}MB"
            )
            ok = ok and bound <= 200 and (mode != "--all" or ratio <= 5)
    print("goals (--all <= 5x grep -c, tree RSS bound <= 200 MB):", "met" if ok else "NOT met")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100M,1G")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--dense-repeat", type=int, default=3)
    parser.add_argument("--dense-tracebacks", type=int, default=1_000_000)
    parser.add_argument("--skip-sparse", action="store_true", help="only the traceback-dense table")
    args = parser.parse_args()
    logsleuth = [sys.executable, "-m", "logsleuth", "diagnose", "--format", "json", "--no-user-patterns"]
    if not args.skip_sparse:
        sparse_table(logsleuth, args.sizes, args.repeat)
    dense_table(logsleuth, args.dense_repeat, args.dense_tracebacks)
    return 0


if __name__ == "__main__":
    sys.exit(main())
