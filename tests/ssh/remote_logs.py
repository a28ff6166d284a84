"""Log lines the SSH tests write on the remote side."""

from __future__ import annotations

LINE = b"[2025-11-06 02:10:00 TP0] Decode batch. #running-req: 12, #token: 40960, gen throughput (token/s): 812.4\n"
FAILURE = (
    b"[2025-11-06 02:10:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2316, in run_scheduler_process\n'
    b"    scheduler.event_loop_overlap()\n"
    b"AssertionError: req_to_token_pool is full\n"
)
