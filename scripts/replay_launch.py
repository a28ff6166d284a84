"""Replay a realistic SGLang launch log into a file, line by line with the launch's own timing, for trying
`logsleuth watch` (and its tests) without a GPU.

    python scripts/replay_launch.py ready /tmp/server.log --speed 20
    python scripts/replay_launch.py tp4-crash - | ssh gpu7 'cat >/tmp/server.log'     # on a remote host

Scenarios: `ready` (stages, then ready), `tp4-crash` (a TP4 launch whose four ranks run out of memory while
loading weights), `stall` (a TP4 launch stuck in NCCL init: nothing more for --stall seconds), `crash-after-ready`
(ready, some traffic, then a runtime crash).  The text follows SGLang's own wording (0.4.x to 0.5.x: the log
record header, the stage lines, tqdm's bars for checkpoint shards and CUDA graph capture, uvicorn's lines,
the scheduler's "Scheduler hit an exception" and the launcher's sigquit line); it is written here, not copied
from a log.  Timestamps start at --start and follow the launch's timing; --speed only shortens the waits.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import IO

SITE = "/usr/local/lib/python3.10/dist-packages/sglang/srt"
MODEL = "/models/Llama-3.1-70B-Instruct"

# A step is (seconds since the previous step, ranks, text).  ranks: "" for the launcher's own lines, "TP" for
# one line per rank (TP0…TPn-1), "TP0" for rank 0 only, "raw" for a line without the record header (tqdm, uvicorn's
# access log as SGLang prints it).
Step = tuple[float, str, str]


def server_args(tp: int) -> str:
    return (
        f"server_args=ServerArgs(model_path='{MODEL}', tokenizer_path='{MODEL}', tokenizer_mode='auto', "
        f"load_format='auto', trust_remote_code=False, dtype='auto', kv_cache_dtype='auto', host='0.0.0.0', "
        f"port=30000, mem_fraction_static=0.85, max_running_requests=None, chunked_prefill_size=8192, "
        f"tp_size={tp}, pp_size=1, dp_size=1, stream_interval=1, random_seed=42, log_level='info', "
        f"attention_backend=None, sampling_backend='flashinfer', cuda_graph_max_bs=160, disable_cuda_graph=False)"
    )


def _bar(desc: str, done: int, total: int, elapsed: int, tqdm_style: bool) -> str:
    percent = 100 * done // total
    if tqdm_style:  # tqdm's default format (the CUDA graph runner)
        filled = "█" * (10 * done // total)
        return f"{desc}: {percent:3d}%|{filled:<10}| {done}/{total} [00:{elapsed:02d}<00:00, 1.71it/s]"
    return f"{desc}: {percent:3.0f}% Completed | {done}/{total} [00:{elapsed:02d}<00:00,  1.40s/it]"  # SGLang's


def loading(tp: int) -> list[Step]:
    shards = 8
    steps: list[Step] = [
        (1.5, "TP", "Attention backend not explicitly specified. Use flashinfer backend by default."),
        (0.2, "TP", "Init torch distributed begin."),
        (2.0, "TP", "Init torch distributed ends. mem usage=0.62 GB"),
        (0.3, "TP", "Load weight begin. avail mem=78.21 GB"),
        (0.5, "raw", _bar("Loading safetensors checkpoint shards", 0, shards, 0, tqdm_style=False)),
    ]
    steps += [
        (1.4, "raw", _bar("Loading safetensors checkpoint shards", done, shards, 2 * done, tqdm_style=False))
        for done in range(1, shards + 1)
    ]
    return steps


def serving(tp: int) -> list[Step]:
    batches = 23
    steps: list[Step] = [
        (0.3, "TP", f"Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem={78.21 - 140 / tp:.2f} "
                    f"GB, mem usage={140 / tp:.2f} GB."),
        (0.4, "TP", "KV Cache is allocated. #tokens: 1104563, K size: 16.85 GB, V size: 16.85 GB"),
        (0.1, "TP", "Memory pool end. avail mem=8.55 GB"),
        (0.2, "TP", "Capture cuda graph begin. This can take up to several minutes. avail mem=8.05 GB"),
    ]
    steps += [
        (0.5, "raw", _bar(f"Capturing batches (bs={160 - 7 * done} avail_mem={7.93 - done / 100:.2f} GB)", done,
                          batches, done // 2, tqdm_style=True))
        for done in range(1, batches + 1)
    ]
    steps += [
        (0.2, "TP", "Capture cuda graph end. Time elapsed: 12.51 s. mem usage=0.61 GB. avail mem=7.44 GB."),
        (0.1, "TP0", "max_total_num_tokens=1104563, chunked_prefill_size=8192, max_prefill_tokens=16384, "
                     "max_running_requests=4096, context_len=131072, available_gpu_mem=7.44 GB"),
        (0.6, "", "INFO:     Started server process [48213]"),
        (0.0, "", "INFO:     Waiting for application startup."),
        (0.0, "", "INFO:     Application startup complete."),
        (0.0, "", "INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"),
        (0.8, "", 'INFO:     127.0.0.1:45678 - "GET /get_model_info HTTP/1.1" 200 OK'),
        (0.1, "TP0", "Prefill batch. #new-seq: 1, #new-token: 7, #cached-token: 0, token usage: 0.00, "
                     "#running-req: 0, #queue-req: 0,"),
        (1.2, "", 'INFO:     127.0.0.1:45690 - "POST /generate HTTP/1.1" 200 OK'),
        (0.0, "", "The server is fired up and ready to roll!"),
    ]
    return steps


def _traceback(frames: list[tuple[str, int, str, str]], error: str) -> str:
    lines = ["Traceback (most recent call last):"]
    for path, line, function, code in frames:
        lines += [f'  File "{SITE}/{path}", line {line}, in {function}', f"    {code}"]
    return "\n".join([*lines, error])


def oom_while_loading(rank: int) -> str:
    return "Scheduler hit an exception: " + _traceback(
        [
            ("managers/scheduler.py", 2536, "run_scheduler_process",
             "scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)"),
            ("managers/scheduler.py", 313, "__init__", "self.tp_worker = TpWorkerClass("),
            ("managers/tp_worker.py", 84, "__init__", "self.model_runner = ModelRunner("),
            ("model_executor/model_runner.py", 242, "__init__", "self.initialize(min_per_gpu_memory)"),
            ("model_executor/model_runner.py", 285, "initialize", "self.load_model()"),
            ("model_executor/model_runner.py", 640, "load_model", "self.model = get_model("),
            ("model_loader/loader.py", 498, "load_model", "self.load_weights_and_postprocess("),
            ("models/llama.py", 561, "load_weights", "weight_loader(param, loaded_weight)"),
        ],
        f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 896.00 MiB. GPU {rank} has a total "
        f"capacity of 79.19 GiB of which 512.00 MiB is free. Including non-PyTorch memory, this process has "
        f"78.68 GiB memory in use. Of the allocated memory 77.90 GiB is allocated by PyTorch, and 203.45 MiB is "
        f"reserved by PyTorch but unallocated.",
    )


def illegal_memory_access() -> str:
    return "Scheduler hit an exception: " + _traceback(
        [
            ("managers/scheduler.py", 2556, "run_scheduler_process", "scheduler.event_loop_overlap()"),
            ("managers/scheduler.py", 768, "event_loop_overlap", "self.process_batch_result(tmp_batch, tmp_result)"),
            ("managers/scheduler_output_processor_mixin.py", 210, "process_batch_result_decode",
             "next_token_ids = next_token_ids.tolist()"),
        ],
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might "
        "be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1",
    )


SIGQUIT = "Received sigquit from a child process. It usually means the child failed."


def traffic(batches: int) -> list[Step]:
    return [
        (0.5, "TP0", f"Decode batch. #running-req: {8 + n}, #token: {4096 + 512 * n}, token usage: 0.0{n % 10}, "
                     f"cuda graph: True, gen throughput (token/s): {812.4 + n:.2f}, #queue-req: 0,")
        for n in range(batches)
    ]


def scenario(name: str, stall: float) -> tuple[int, list[Step]]:
    """(tp, steps) of a scenario."""
    if name == "ready":
        return 1, [(0.0, "", server_args(1)), *loading(1), *serving(1)]
    if name == "tp4-crash":
        crash = [(0.9, f"TP{rank}", oom_while_loading(rank)) for rank in (2, 0, 3, 1)]
        return 4, [(0.0, "", server_args(4)), *loading(4)[:6], *crash, (0.3, "", SIGQUIT)]
    if name == "stall":  # NCCL init never completes (a rank that never joined): then nothing more
        return 4, [(0.0, "", server_args(4)), *loading(4)[:2], (stall, "wait", "")]
    if name == "crash-after-ready":
        return 1, [(0.0, "", server_args(1)), *loading(1), *serving(1), *traffic(6), (0.4, "TP0", illegal_memory_access()),
                   (0.2, "", SIGQUIT)]
    raise ValueError(name)


SCENARIOS = ("ready", "tp4-crash", "stall", "crash-after-ready")


def records(tp: int, steps: list[Step], start: datetime) -> Iterator[tuple[float, str]]:
    """(seconds to wait before, text) for each write: a step's lines, with SGLang's record header."""
    now = start
    for delay, ranks, text in steps:
        now += timedelta(seconds=delay)
        stamp = now.strftime("%Y-%m-%d %H:%M:%S")
        if ranks == "wait":
            yield delay, ""
        elif ranks == "raw":
            yield delay, text + "\n"
        elif ranks == "TP":
            yield delay, "".join(f"[{stamp} TP{rank}] {text}\n" for rank in range(tp))
        else:
            yield delay, f"[{stamp}{' ' + ranks if ranks else ''}] {text}\n"


def replay(name: str, out: IO[str], *, speed: float = 1.0, stall: float = 600.0, start: datetime | None = None) -> None:
    tp, steps = scenario(name, stall)
    for delay, text in records(tp, steps, start or datetime(2026, 11, 29, 10, 0, 0)):
        time.sleep(delay / speed)
        if text:
            out.write(text)
            out.flush()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("scenario", choices=SCENARIOS)
    parser.add_argument("log", help="the file to write (truncated first unless --append); - for stdout")
    parser.add_argument("--speed", type=float, default=1.0, help="replay this many times faster (default 1)")
    parser.add_argument("--stall", type=float, default=600.0, help="seconds the stall scenario stays silent")
    parser.add_argument("--append", action="store_true", help="append to the log instead of starting it afresh")
    args = parser.parse_args(argv)
    if not args.speed > 0:
        parser.error("--speed must be more than 0")
    if args.log == "-":
        replay(args.scenario, sys.stdout, speed=args.speed, stall=args.stall)
        return 0
    with open(args.log, "a" if args.append else "w", encoding="utf-8") as out:
        replay(args.scenario, out, speed=args.speed, stall=args.stall)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
