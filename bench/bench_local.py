"""Local reading cost: `logsleuth diagnose` vs `tail -c`, `--all` vs `grep -c`, peak RSS.

Generates SGLang-like logs of 100 MiB and 1 GiB under bench/data/ (a real CPython
traceback every few MiB, the crash at the end) and prints, per size, median whole-process
wall times of the commands side by side and logsleuth's peak RSS.

    python bench/bench_local.py [--sizes 100M,1G] [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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


def timed(command: list[str]) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run of `command`.

    Output goes to a real file, not /dev/null: GNU grep stops at the first match when it
    sees its output is /dev/null, which would make the baseline meaningless."""
    with tempfile.TemporaryFile() as sink:
        start = time.perf_counter()
        proc = subprocess.Popen(command, stdout=sink, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(proc.pid, 0)
        elapsed = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    return elapsed, usage.ru_maxrss


def median_run(command: list[str], repeat: int) -> tuple[float, int]:
    timed(command)  # warm the page cache and the interpreter's imports
    runs = [timed(command) for _ in range(repeat)]
    return statistics.median(t for t, _ in runs), max(r for _, r in runs)


def parse_size(text: str) -> int:
    text = text.strip().upper()
    factor = {"M": MiB, "G": 1 << 30}[text[-1]]
    return int(float(text[:-1]) * factor)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="100M,1G")
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    logsleuth = [sys.executable, "-m", "logsleuth", "diagnose", "--format", "json", "--no-user-patterns"]
    rows = []
    for label in args.sizes.split(","):
        log = DATA / f"sglang-{label}.log"
        make_log(log, parse_size(label))
        diagnose_t, diagnose_rss = median_run([*logsleuth, str(log)], args.repeat)
        tail_t, _ = median_run(["tail", "-c", "1000000", str(log)], args.repeat)
        all_t, all_rss = median_run([*logsleuth, "--all", str(log)], args.repeat)
        grep_t, _ = median_run(["grep", "-c", "Traceback", str(log)], args.repeat)
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
    return 0


if __name__ == "__main__":
    sys.exit(main())
