"""Write traceback-dense SGLang-style logs: many tracebacks, some or all of them distinct.

A server that hits an exception on every request writes logs like these: a record header
with the rank, `Scheduler hit an exception: Traceback (most recent call last):`, frames under
/usr/local/lib/python3.11/dist-packages/sglang/..., the exception line, then a few ordinary
records before the next one.  Everything here is made up by this script.

Traceback `i` is variant `i % distinct`: its three innermost SGLang frames are picked from
three lists of 100 made-up (module, function) pairs, so up to 1,000,000 variants have
different in-app frames and therefore different fingerprints.  Timestamps advance and the
counters of the lines between tracebacks change from one traceback to the next, as in a real
log, so no two tracebacks are byte-identical.

Writing is fast (about 1 GB in ~10 s): each variant's frames are rendered once per process
as bytes and glued to a per-occurrence header and trailer.  Files are cached by their
parameters: `log_path()` names them, `make_log()` writes one only if it is missing.

    python bench/many_tracebacks.py --tracebacks 1000000 --distinct 1000 [--out PATH]
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

DIST = "/usr/local/lib/python3.11/dist-packages"
CACHE_DIR = Path(os.environ.get("LOGSLEUTH_BENCH_DIR", "/tmp/logsleuth-bench"))
FORMAT_VERSION = 1  # bump when the text changes, so cached files are rewritten
SLOTS = 100  # choices per varied frame: 100**3 = 1,000,000 distinct variants at most

_VERBS = ("prepare", "run", "dispatch", "gather", "launch", "resolve", "update", "merge", "check", "build")
_NOUNS = ("batch", "forward", "tokens", "kv_cache", "experts", "logits", "graph", "sampler", "radix", "buffers")
_LAYER_MODULES = (
    "layers/attention/flashinfer_backend.py", "layers/moe/fused_moe_triton/layer.py", "layers/linear.py",
    "layers/quantization/fp8.py", "layers/logits_processor.py", "layers/sampler.py", "layers/radix_attention.py",
    "layers/vocab_parallel_embedding.py", "layers/layernorm.py", "layers/rotary_embedding.py",
)
_RUNNER_MODULES = (
    "model_executor/model_runner.py", "model_executor/cuda_graph_runner.py", "model_executor/forward_batch_info.py",
    "managers/tp_worker.py", "managers/schedule_batch.py", "managers/scheduler_output_processor_mixin.py",
    "mem_cache/memory_pool.py", "mem_cache/radix_cache.py", "speculative/eagle_worker.py", "models/llama.py",
)
_EXCEPTIONS = (
    "RuntimeError: CUDA error: an illegal memory access was encountered",
    "AssertionError: req_to_token_pool is full",
    "ValueError: the batch holds a request with no tokens left to decode",
    "IndexError: index 4096 is out of bounds for dimension 0 with size 4096",
    "KeyError: 'rid'",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB",
    "TypeError: unsupported operand type(s) for +: 'NoneType' and 'int'",
)


def _slot_frames(slot: int) -> list[bytes]:
    """The 100 choices of frame `slot` (0 innermost): a File line and its source line each."""
    modules = _LAYER_MODULES if slot == 0 else _RUNNER_MODULES
    frames = []
    for choice in range(SLOTS):
        module = modules[(choice + 3 * slot) % len(modules)]
        function = f"{_VERBS[choice // 10]}_{_NOUNS[choice % 10]}" + ("" if slot == 0 else f"_{'ab'[slot - 1]}")
        line = 100 + 37 * choice + 11 * slot
        frames.append(
            f'  File "{DIST}/sglang/srt/{module}", line {line}, in {function}\n'
            f"    return self.{function}_impl(forward_batch, **kwargs)\n".encode()
        )
    return frames


_OUTER = (
    f'  File "{DIST}/sglang/srt/managers/scheduler.py", line 2573, in run_scheduler_process\n'
    "    scheduler.event_loop_overlap()\n"
    f'  File "{DIST}/torch/utils/_contextlib.py", line 116, in decorate_context\n'
    "    return func(*args, **kwargs)\n"
    "           ^^^^^^^^^^^^^^^^^^^^^\n"
    f'  File "{DIST}/sglang/srt/managers/scheduler.py", line 1012, in event_loop_overlap\n'
    "    result = self.run_batch(batch)\n"
    "             ^^^^^^^^^^^^^^^^^^^^^\n"
).encode()


class Variants:
    """Bytes of each variant's traceback body (the frames and the exception line)."""

    def __init__(self) -> None:
        self._slots = [_slot_frames(slot) for slot in range(3)]
        self._exceptions = [text.encode() + b"\n" for text in _EXCEPTIONS]

    def body(self, variant: int) -> bytes:
        inner, middle, outer = variant % SLOTS, variant // SLOTS % SLOTS, variant // SLOTS**2 % SLOTS
        slots = self._slots
        return b"".join(
            (_OUTER, slots[2][outer], slots[1][middle], slots[0][inner], self._exceptions[variant % len(_EXCEPTIONS)])
        )


def _clock(second: int) -> str:
    day, rest = divmod(second, 86_400)
    return f"2026-11-{1 + day % 28:02d} {rest // 3600:02d}:{rest // 60 % 60:02d}:{rest % 60:02d}"


def _between(i: int, clock: str) -> bytes:
    """The ordinary records between two tracebacks (their counters change every time)."""
    text = (
        f"[{clock} TP0] Decode batch. #running-req: {i % 64}, #token: {40960 + i * 7 % 90000}, "
        f"token usage: 0.{i % 97:02d}, gen throughput (token/s): {800 + i % 300}.{i % 10}, #queue-req: {i % 5}\n"
    )
    if i % 4 == 0:
        text += f'[{clock}] INFO:     127.0.0.1:{40000 + i % 20000} - "POST /generate HTTP/1.1" 200 OK\n'
    return text.encode()


LAUNCH = (
    b"+ python3 -m sglang.launch_server --model-path /models/llama-3-70b --tp-size 8 --port 30000\n"
    b"[2026-11-01 00:00:00] server_args=ServerArgs(model_path='/models/llama-3-70b', tp_size=8, port=30000)\n"
)


def write_log(path: Path, tracebacks: int, distinct: int) -> None:
    variants = Variants()
    temporary = path.with_name(path.name + f".part{os.getpid()}")
    batch: list[bytes] = []
    with temporary.open("wb") as handle:
        handle.write(LAUNCH)
        for i in range(tracebacks):
            clock = _clock(i // 4)
            batch.append(f"[{clock} TP{i % 8}] Scheduler hit an exception: Traceback (most recent call last):\n".encode())
            batch.append(variants.body(i % distinct))
            batch.append(_between(i, clock))
            if len(batch) >= 30_000:
                handle.write(b"".join(batch))
                batch.clear()
        handle.write(b"".join(batch))
    temporary.replace(path)  # atomic: a half-written file is never taken from the cache


def write_interleaved_logs(directory: Path, logs: int, per_log: int = 2) -> list[Path]:
    """`logs` logs of one launch's nodes, each with `per_log` tracebacks of its own (every one a distinct variant),
    the i-th of every log printed before any log's (i+1)-th: read together, a failure's next one in its own log
    comes after those of all the other logs (api._following_lines' worst case)."""
    variants = Variants()
    paths = []
    for log in range(logs):
        chunks = [LAUNCH]
        for turn in range(per_log):
            i = turn * logs + log
            clock = _clock(60 + i)
            chunks += [f"[{clock} TP0] Scheduler hit an exception: Traceback (most recent call last):\n".encode(),
                       variants.body(i * 101), _between(i, clock)]
        path = directory / f"node{log:03d}.log"
        path.write_bytes(b"".join(chunks))
        paths.append(path)
    return paths


def log_path(tracebacks: int, distinct: int, directory: Path = CACHE_DIR) -> Path:
    return directory / f"tracebacks-{tracebacks}-distinct-{distinct}-v{FORMAT_VERSION}.log"


def make_log(tracebacks: int, distinct: int, directory: Path = CACHE_DIR) -> Path:
    """The cached log for these parameters, written first if it is missing."""
    if not 1 <= distinct <= min(tracebacks, SLOTS**3):
        raise ValueError(f"distinct must be between 1 and {min(tracebacks, SLOTS**3)}")
    path = log_path(tracebacks, distinct, directory)
    if not path.exists():
        directory.mkdir(parents=True, exist_ok=True)
        write_log(path, tracebacks, distinct)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tracebacks", type=int, default=1_000_000)
    parser.add_argument("--distinct", type=int, default=1000)
    parser.add_argument("--out", type=Path, help="write here instead of the cache")
    args = parser.parse_args()
    if args.out:
        write_log(args.out, args.tracebacks, args.distinct)
        print(args.out)
    else:
        print(make_log(args.tracebacks, args.distinct))
    return 0


if __name__ == "__main__":
    sys.exit(main())
