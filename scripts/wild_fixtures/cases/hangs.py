"""Hangs: the scheduler stops making progress and its watchdog fires, dumps the batch, tries py-spy
and signals the parent.  (The NCCL collective watchdog is in nccl.py.)
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.mirror import SIGQUIT

from .. import composed, paste
from ..blocks import records
from ..corpus import Expect, Run, Text, WildCase

WATCHDOG = "Watchdog timeout (self.watchdog_timeout=300)"
EXPECT = Expect("hang-timeout", "Watchdog timeout", "self.watchdog_timeout=300")


def access(port: int) -> str:
    return f'INFO:     127.0.0.1:{port} - "POST /v1/completions HTTP/1.1" 200 OK'


def batch_dump(rid: str, prompt: int, available: int, evictable: int) -> str:
    """The watchdog's dump of the running batch (one long line; SGLang's f-string with `=`)."""
    input_ids = ", ".join(str(151644 + (7919 * i) % 4000) for i in range(prompt))
    return (f"self.cur_batch.batch_size()=1, self.cur_batch.reqs=[Req(rid={rid}, input_ids=[{input_ids}], output_ids=[198, 1986, 374]), ], "
            f"self.token_to_kv_pool_allocator.available_size()={available}, self.tree_cache.evictable_size()={evictable}, ")


# -- sglang#7783: the watchdog fires, py-spy is missing from the image, the server exits (~0.4.10) -------------------

STITCHED = (
    Run(records(*(access(52306 + i) for i in range(3)), ranks="", stamp="2025-08-08 19:24:05")),
    Run(records(WATCHDOG, batch_dump("5f0c2b7d1e8a4c6f9b3d2a1e7c4b8f60", 180, 1245184, 52224), ranks="TP3", stamp="2025-08-08 19:24:29"),
        primary=True),
    Run(records("Pyspy failed to dump PID 2231. Error: /bin/dash: 1: py-spy: not found", ranks="TP2", stamp="2025-08-09 06:06:20",
                after=(SIGQUIT,))),
)
WATCHDOG_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/7783", kind="scheduler-watchdog-timeout", engine_version="0.4.10",
    fixed_in="https://github.com/sgl-project/sglang/pull/9649 (py-spy preinstalled in the images; the hang itself is not diagnosed)",
    resolution="Closed as inactive. PR #9649 installs py-spy in the images; what blocked the forward pass is not diagnosed.",
)

# -- sglang#12076: EAGLE + hierarchical cache hang in the verify step, py-spy dumps per rank (docker compose) ----------

HUNG_MAIN = ("_apply (penaltylib/min_new_tokens.py:78)", "apply (penaltylib/orchestrator.py:150)", "apply (penaltylib/orchestrator.py:67)",
             "apply_logits_bias (sampling_batch_info.py:226)", "verify (eagle_info.py:259)", "verify (eagle_worker.py:674)",
             "forward_batch_generation (eagle_worker.py:268)", "run_batch (scheduler.py:2164)", "event_loop_normal (scheduler.py:1032)",
             "decorate_context (torch/utils/_contextlib.py:120)", "run_scheduler_process (scheduler.py:2923)")
WATCHER = ("_communicate (subprocess.py:2115)", "communicate (subprocess.py:1209)", "run (subprocess.py:550)",
           "pyspy_dump_schedulers (utils/common.py:2218)", "watchdog_thread (scheduler.py:2257)", "run (threading.py:1012)",
           "_bootstrap_inner (threading.py:1075)", "_bootstrap (threading.py:1032)")


def dump(rank: int, pid: int) -> Text:
    return Text(composed.pyspy_dump(pid, f"sglang::scheduler_TP{rank}", "v3.12.12 (/usr/bin/python3.12)",
                                    ((pid, "active", "MainThread", HUNG_MAIN), (pid + 408, "idle", "Thread-10 (watchdog_thread)", WATCHER))))


PER_RANK = (
    Run(records("Decode batch. #running-req: 4, #token: 18231, token usage: 0.02, accept len: 2.71, cuda graph: True, gen throughput (token/s): 212.40, #queue-req: 0, ",
                ranks="TP0", stamp="2025-10-24 03:07:35")),
    Run(records(WATCHDOG, ranks="TP3", stamp="2025-10-24 03:12:40"), primary=True),
    Run(records(WATCHDOG, "Pyspy dump for PID 1893:", ranks="TP6", stamp="2025-10-24 03:12:40")),
    dump(6, 1893),
    Run(records("Pyspy dump for PID 1890:", ranks="TP3", stamp="2025-10-24 03:12:42")),
    dump(3, 1890),
    Run(records(ranks="", stamp="2025-10-24 03:12:46", after=(SIGQUIT,))),
)
PER_RANK_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/12076", kind="scheduler-watchdog-timeout", engine_version="",
    resolution="None visible (open). The py-spy dump shows the hang in the sampling penalties during EAGLE verify.",
)

CASES = (
    WildCase(**WATCHDOG_THREAD, style="plain-stitched", parts=STITCHED, expect=EXPECT,
             facts="watchdog and py-spy wordings (/bin/dash), the batch dump's shape, records from two runs stitched (TP3 19:24, TP2 06:06), the hand elision, paste style",
             paste=(partial(paste.elide_in_line, start="input_ids=[151644, ", end="], output_ids"),
                    partial(paste.prose, before="Same here, the server exits after this:"))),
    WildCase(**WATCHDOG_THREAD, style="journald", parts=STITCHED, expect=EXPECT,
             facts="the wordings and records as above; paste style ours (the server under systemd)",
             paste=(partial(paste.journald, unit="sglang-server", pid=2188), paste.fenced)),
    WildCase(**PER_RANK_THREAD, style="docker-compose-pyspy", parts=PER_RANK, expect=EXPECT,
             facts="watchdog wording, py-spy dump format and the hung frames (min_new_tokens _apply <- ... <- eagle_worker verify), process titles, ranks TP3/TP6, Python 3.12.12, paste style",
             paste=(paste.docker_compose, paste.fenced)),
    WildCase(**PER_RANK_THREAD, style="cri", parts=PER_RANK, expect=EXPECT,
             facts="the records and dumps as above; paste style ours (a Kubernetes node's container log)",
             paste=(paste.cri, paste.fenced)),
)
