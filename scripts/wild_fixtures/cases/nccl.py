"""NCCL and torch.distributed: SGLang's pynccl communicator failing to initialise, a collective timing
out under the NCCL watchdog, and the ranks that lose the c10d store afterwards.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.mirror import (
    MODEL_RUNNER,
    SCHEDULER,
    TP_WORKER,
    frame_at,
    pynccl_init_rank,
    scheduler_entry,
)

from .. import composed, paste
from ..blocks import crash, records
from ..corpus import Expect, Run, Text, Weave, WildCase

PARALLEL_STATE = "sglang/srt/distributed/parallel_state.py"
PYNCCL = "sglang/srt/distributed/device_communicators/pynccl.py"

# -- sglang#4289: the tensor-parallel group's PyNccl communicator cannot initialise (~0.4.3) -------------------------

PYNCCL_FRAMES = (
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 1796, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank, dp_rank=dp_rank, nccl_port=port_args.nccl_port)", 218),
    frame_at("sglang/srt/managers/tp_worker_overlap_thread.py", "__init__", "self.worker = TpModelWorker(server_args, gpu_id, tp_rank, dp_rank, nccl_port)", 63),
    frame_at(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank, tp_size=server_args.tp_size, nccl_port=nccl_port, server_args=server_args, is_draft_worker=is_draft_worker)", 68),
    frame_at(MODEL_RUNNER, "__init__", "min_per_gpu_memory = self.init_torch_distributed()", 187),
    frame_at(MODEL_RUNNER, "init_torch_distributed", "initialize_model_parallel(tensor_model_parallel_size=self.tp_size)", 281),
    frame_at(PARALLEL_STATE, "initialize_model_parallel", "_TP = init_model_parallel_group(group_ranks, get_world_group().local_rank, backend, use_message_queue_broadcaster=True, group_name=\"tp\")", 1100),
    frame_at(PARALLEL_STATE, "init_model_parallel_group", "return GroupCoordinator(group_ranks=group_ranks, local_rank=local_rank, torch_distributed_backend=backend, use_pynccl=not is_npu(), use_custom_allreduce=use_custom_allreduce, use_message_queue_broadcaster=use_message_queue_broadcaster, group_name=group_name)", 927),
    frame_at(PARALLEL_STATE, "__init__", "self.pynccl_comm = PyNcclCommunicator(group=self.cpu_group, device=self.device)", 255),
    frame_at(PYNCCL, "__init__", "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(self.world_size, self.unique_id, self.rank)", 108, env=(("self", "HOP:ncclCommInitRank"),)),
    *pynccl_init_rank(350, 329, result=2),
)
PYNCCL_CASE = crash(PYNCCL_FRAMES, ranks="TP1", before=("Init torch distributed begin.",), stamp="2025-03-11 02:41:16")
PYNCCL_MESSAGE = "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"
NCCL_DEBUG = Text(composed.nccl_info("gpu-node-1", 48211, 48211, 1, (
    "Bootstrap : Using eth0:10.0.3.17<0>", "NET/Plugin: No plugin found (libnccl-net.so)", "NET/Plugin: Using internal network plugin.",
    "cudaDriverVersion 12020", "NCCL version 2.21.5+cuda12.4")))
PYNCCL_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/4289", kind="nccl-init-pynccl", engine_version="0.4.3",
    resolution="Not visible (closed). Usual causes: a too small /dev/shm in docker, the wrong NCCL_SOCKET_IFNAME, no host network.",
)

# -- sglang#3424: an all-gather times out on one of two 8xH100 nodes after hours of serving ---------------------------

SERVING = Run(records(
    "Prefill batch. #new-seq: 1, #new-token: 1870, #cached-token: 0, cache hit rate: 0.00%, token usage: 0.01, #running-req: 0, #queue-req: 0",
    "Decode batch. #running-req: 1, #token: 1903, token usage: 0.01, gen throughput (token/s): 0.63, #queue-req: 0",
    "Decode batch. #running-req: 1, #token: 1943, token usage: 0.01, gen throughput (token/s): 24.31, #queue-req: 0",
    ranks="TP0", stamp="2025-02-09 10:14:04"))
ACCESS = Run(records('INFO:     10.0.4.21:50812 - "POST /v1/chat/completions HTTP/1.1" 200 OK', ranks="", stamp="2025-02-09 11:06:02"))
ALLGATHER = Text(composed.nccl_timeout_abort(1, "210 02:06:33.347835395", "PG ID 2 PG GUID 3", 1522789, "_ALLGATHER_BASE", (917504, 14680064), 600086),
                 primary=True)
ALLGATHER_MESSAGE = composed.watchdog_terminated("PG ID 2 PG GUID 3", 1, composed.collective_timeout(1, 1522789, "_ALLGATHER_BASE", (917504, 14680064), 600086))
TIMEOUT_THREAD = dict(
    thread="https://github.com/sgl-project/sglang/issues/3424", kind="nccl-watchdog-timeout", engine_version="",
    resolution="Not visible (closed). A huge SeqNum: it died mid-serving, a peer rank hung or died.",
)

# -- sglang#20859: TP=16 with HiCache on Kubernetes; a timeout, then the survivors lose the store ---------------------

POD = "sglang-dsv3-{}-0.sglang-dsv3.default.svc.cluster.local"
HICACHE_TIMEOUT = composed.nccl_timeout_abort(9, "318 10:00:40.102913377", "PG ID 0 PG GUID 0(default_pg)", 48213, "ALLREDUCE", (1, 1), 600012)
HICACHE_MESSAGE = composed.watchdog_terminated("PG ID 0 PG GUID 0(default_pg)", 9, composed.collective_timeout(9, 48213, "ALLREDUCE", (1, 1), 600012))

CASES = (
    WildCase(**PYNCCL_THREAD, style="sigquit-cut", parts=(Run(PYNCCL_CASE, primary=True),),
             expect=Expect("nccl", "RuntimeError", PYNCCL_MESSAGE, frame="NCCL_CHECK"),
             facts="frames and line numbers (parallel_state 1100/927/255 -> pynccl 108 -> pynccl_wrapper 350 -> NCCL_CHECK 329), message, the SIGQUIT line cut mid-word, paste style",
             paste=(partial(paste.truncate_end, count=5), paste.fenced)),
    WildCase(**PYNCCL_THREAD, style="nccl-debug-inline", parts=(NCCL_DEBUG, Run(PYNCCL_CASE, primary=True)),
             expect=Expect("nccl", "RuntimeError", PYNCCL_MESSAGE, frame="NCCL_CHECK"),
             facts="NCCL INFO lines (no timestamps, cudaDriverVersion 12020 next to NCCL 2.21.5+cuda12.4) in single backticks, the traceback as above",
             paste=(paste.inline_span, partial(paste.prose, before="With NCCL_DEBUG=INFO:"))),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/2945", kind="nccl-init-pynccl", style="title-line",
             parts=(Run(PYNCCL_CASE, primary=True), Text(f"RuntimeError: [address=0.0.0.0:41227, pid=1893] {PYNCCL_MESSAGE}\n")),
             expect=Expect("nccl", "RuntimeError", PYNCCL_MESSAGE, fix=((),)),
             facts="pynccl wording under Xinference (the [address=..., pid=...] prefix xoscar puts on messages), the title is the paste; frames ours",
             resolution="A maintainer: start the container with a larger /dev/shm (docker run --shm-size=128g); a later user said it helped.",
             paste=(partial(paste.exception_only, marker="RuntimeError: [address"),)),

    WildCase(**TIMEOUT_THREAD, style="hard-wrap-120", parts=(SERVING, ACCESS, ALLGATHER),
             expect=Expect("nccl", "c10::DistBackendError", ALLGATHER_MESSAGE),
             facts="the watchdog wording (_ALLGATHER_BASE, SeqNum 1522789, Timeout(ms)=600000), glog prefix E210 on rank1 vs the engine's 2025-02-09 stamps, C++ frames, the lost '[' and the mid-token wrap",
             paste=(partial(paste.hard_wrap, width=120), paste.lose_first_bracket, paste.fenced)),
    WildCase(**TIMEOUT_THREAD, style="crlf", parts=(SERVING, ACCESS, ALLGATHER),
             expect=Expect("nccl", "c10::DistBackendError", ALLGATHER_MESSAGE),
             facts="the watchdog wording and records as above; paste style ours (Windows line ends)",
             paste=(paste.crlf,)),

    WildCase(thread="https://github.com/sgl-project/sglang/issues/20859", kind="tcpstore-connection-reset", style="kubectl-timestamps",
             parts=(Text(HICACHE_TIMEOUT, primary=True),
                    Weave((Text(composed.tcpstore_reset(8, "318 10:00:41.929037914", POD.format(1), POD.format(0))),
                           Text(composed.tcpstore_reset(12, "318 10:00:41.915284135", POD.format(1), POD.format(0)))))),
             expect=Expect("nccl", "c10::DistBackendError", HICACHE_MESSAGE),
             facts="TCPStore wordings (recvValue ... Connection reset by peer, the should-dump flag), Kubernetes DNS names, port 20000, heartbeat-monitor frames, ranks 8/12 interleaved; the rank-9 timeout is the title's 'NCCL timeout', its text ours",
             resolution="None visible (open). TCPStore resets are secondary: the store's process on node 0 went down after the collective timeout.",
             paste=(paste.kubectl_timestamps, paste.fenced)),
)
