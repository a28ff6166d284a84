"""Build test logs from real CPython tracebacks, wrapped the way SGLang writes them."""

from __future__ import annotations

import random

from tests.helpers import real_traceback

SCHEDULER_ASSERT = """
def event_loop(cfg):
    assert cfg["tp"] % cfg["dp"] == 0, "tp must divide dp"

def run_scheduler_process():
    event_loop({"tp": 2, "dp": 3})

run_scheduler_process()
"""

NCCL_ERROR = """
class DistBackendError(RuntimeError):
    pass

def all_reduce():
    raise DistBackendError("NCCL error in: ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error")

def forward():
    all_reduce()

forward()
"""

KEY_ERROR = """
def load_weights(params):
    return params["model.layers.0.mlp.weight_scale"]

load_weights({})
"""


def scheduler_traceback() -> str:
    return real_traceback(SCHEDULER_ASSERT, "site-packages/sglang/srt/managers/scheduler.py")


def nccl_traceback() -> str:
    return real_traceback(NCCL_ERROR, "site-packages/sglang/srt/distributed/parallel_state.py")


def weights_traceback() -> str:
    return real_traceback(KEY_ERROR, "site-packages/sglang/srt/models/llama.py")


def sglang_record(timestamp: str, ranks: str, text: str) -> str:
    """One SGLang log record: the header goes on the first line only."""
    header = f"[{timestamp}{' ' + ranks if ranks else ''}] "
    return header + text.rstrip("\n") + "\n"


def crash_record(timestamp: str, ranks: str, traceback_text: str) -> str:
    return sglang_record(timestamp, ranks, "Scheduler hit an exception: " + traceback_text)


def noise(count: int, timestamp: str = "2026-11-29 10:00:00", start: int = 0) -> str:
    lines = []
    for i in range(start, start + count):
        lines.append(
            f"[{timestamp} TP0] Decode batch. #running-req: {i % 64}, #token: {i * 7 % 90000}, "
            f"token usage: 0.{i % 100:02d}, gen throughput (token/s): {i % 5000}.12, #queue-req: 0,\n"
        )
    return "".join(lines)


def launch_line(command: str = "python -m sglang.launch_server --model-path /models/llama --tp-size 2") -> str:
    return f"+ {command}\n"


def distinct_tracebacks(count: int) -> list[str]:
    """`count` distinct tracebacks: real ones, with the innermost function renamed per variant (a different
    in-app frame, so a different group)."""
    bases = [scheduler_traceback(), weights_traceback(), nccl_traceback()]
    names = ["event_loop", "load_weights", "all_reduce"]
    return [bases[i % 3].replace(names[i % 3], f"{names[i % 3]}_{i}") for i in range(count)]


def dense_log(tracebacks: int, distinct: int, *, seed: int = 7, extra: str = "") -> str:
    """SGLang-style: a record per traceback on rank TP0-7, ordinary records with changing counters
    between them, timestamps that advance; `extra` records now and then (kill notices, bare errors)."""
    rng = random.Random(seed)
    variants = distinct_tracebacks(distinct)
    parts = [launch_line()]
    for i in range(tracebacks):
        clock = f"2026-11-29 {10 + i // 3600 % 10:02d}:{i // 60 % 60:02d}:{i % 60:02d}"
        parts.append(crash_record(clock, f"TP{rng.randrange(8)}", variants[rng.randrange(distinct)]))
        for _ in range(rng.randrange(3)):
            parts.append(sglang_record(clock, "TP0", f"Decode batch. #running-req: {rng.randrange(64)}, #token: {rng.randrange(90000)}"))
        if extra and i % 97 == 50:
            parts.append(sglang_record(clock, "", extra))
    return "".join(parts)
