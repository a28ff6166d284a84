"""The dev split of issue 28's category work (branch h-cat): failures whose category is their root cause, not the
symptom a pattern or the honest category reads first.  Each case is one thread's facts, rebuilt: a crash or kill
after the error that caused it, a distributed-layer timeout, a partition size a kernel's tile does not divide, an
index error in the engine's own code, a package with no build for the user's platform, a capture wrapping a
distributed error.  None of these threads is cited elsewhere in the project.
"""

from __future__ import annotations

from pattern_fixtures.mirror import SCHEDULER, TP_WORKER, failing_at, frame_at, scheduler_entry

from ..blocks import c_property, crash, records
from ..corpus import DOCKER, IMAGE, Expect, Run, Text, WildCase

SCHEDULE_BATCH = "sglang/srt/managers/schedule_batch.py"
MARLIN_UTILS = "vllm/model_executor/layers/quantization/utils/marlin_utils.py"

# -- sgl-project/sglang#1189: IndexError in ScheduleBatch.check_for_jump_forward (decode step, ~0.2.13) -----------------

JUMP_FORWARD = crash((
    scheduler_entry("tp_server.exposed_step()", 120, (("tp_server", "HOP:exposed_step"),)),
    frame_at(TP_WORKER, "exposed_step", "self.forward_step()", 218, env=(("self", "HOP:forward_step"),)),
    frame_at(TP_WORKER, "forward_step", "self.forward_decode_batch(running_batch)", 247,
             env=(("self", "HOP:forward_decode_batch"), ("running_batch", "None"))),
    frame_at(TP_WORKER, "forward_decode_batch", "jump_forward_reqs = batch.check_for_jump_forward(self.model_runner)", 595,
             env=(("batch", "HOP:check_for_jump_forward"), ("self", "NS(model_runner=None)"))),
    failing_at(SCHEDULE_BATCH, "check_for_jump_forward", """
        jump_forward_reqs = []
        filter_indices = [i for i in range(len(self.reqs))]
        req = self.reqs[filter_indices[-1] + 1]
        """, 640, env=(("self", "NS(reqs=[None, None])"),), marker="req ="),
), ranks="TP0", stamp="2024-08-23 09:12:40")

# -- sgl-project/sglang#6229: IndexError in Scheduler.move_ready_grammar_requests under load (0.4.6.post3) -------------

GRAMMAR_QUEUE = crash((
    scheduler_entry("scheduler.event_loop_overlap()", 2236, (("scheduler", "HOP:event_loop_overlap"),)),
    frame_at(SCHEDULER, "event_loop_overlap", "batch = self.get_next_batch_to_run()", 650, env=(("self", "HOP:get_next_batch_to_run"),)),
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.move_ready_grammar_requests()", 1290, env=(("self", "HOP:move_ready_grammar_requests"),)),
    failing_at(SCHEDULER, "move_ready_grammar_requests", """
        for i in range(num_ready_reqs):
            self.grammar_queue[i].grammar = self.grammar_queue[i].grammar.result()
        """, 1761, env=(("self", "NS(grammar_queue=[])"), ("num_ready_reqs", "1")), marker="self.grammar_queue"),
), ranks="TP1", stamp="2025-05-12 03:20:11")

# -- sgl-project/sglang#507, verl-project/verl#4373: the c10d store's timeout while the ranks gather (tp 4, tp 16) ---------


def store_timeout(seconds: int, joined: int, world: int, stamp: str, ranks: str) -> Run:
    """The TCPStore of torch's rendezvous giving up on its workers: DistStoreError raised in C++."""
    case = crash((
        scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 1100, (("Scheduler", "NEXT"),)),
        frame_at("sglang/srt/model_executor/model_runner.py", "init_torch_distributed",
                 "init_distributed_environment(backend=backend, world_size=self.tp_size, rank=self.tp_rank, local_rank=self.gpu_id, distributed_init_method=dist_init_method)", 302,
                 env=(("init_distributed_environment", "NEXT"), ("self", "NS(tp_size=4, tp_rank=0, gpu_id=0)"), ("backend", "'nccl'"), ("dist_init_method", "''"))),
        frame_at("sglang/srt/distributed/parallel_state.py", "init_distributed_environment",
                 "dist.init_process_group(backend=backend, init_method=distributed_init_method, world_size=world_size, rank=rank, timeout=timeout)", 1049,
                 env=(("dist", "HOP:init_process_group"), ("backend", "'nccl'"), ("distributed_init_method", "''"),
                      ("world_size", "4"), ("rank", "0"), ("timeout", "None"))),
        frame_at("torch/distributed/rendezvous.py", "init_process_group", "return TCPStore(host_name=hostname, port=port, world_size=world_size, is_master=start_daemon, timeout=timeout, multi_tenant=True, use_libuv=use_libuv)", 189,
                 env=(("TCPStore", c_property("__call__")), ("hostname", "''"), ("port", "0"), ("world_size", "4"), ("start_daemon", "True"),
                      ("timeout", "None"), ("use_libuv", "True"))),
    ), ranks=ranks, before=("Init torch distributed begin.",), stamp=stamp,
        torch_error=("torch.distributed.DistStoreError", f"Timed out after {seconds} seconds waiting for clients. {joined}/{world} clients joined."))
    return Run(case, primary=True)


# -- vllm-project/llm-compressor#57: a w8a16 Qwen2-72B split over 4 GPUs, 29568 / 4 = 7392 rows per GPU for Marlin ------

def marlin_shape(part: int, axis: str, tile: int, stamp: str) -> Text:
    """vLLM V0's worker log of verify_marlin_supports_shape's ValueError (vllm 0.5.x; the record header repeated
    on each line, as multiproc_worker_utils logs it)."""
    head = f"(VllmWorkerProcess pid=14679) ERROR {stamp} multiproc_worker_utils.py:226] "
    lines = [
        "Exception in worker VllmWorkerProcess while processing method load_model.",
        "Traceback (most recent call last):",
        f'  File "/usr/local/lib/python3.10/dist-packages/{MARLIN_UTILS}", line 133, in verify_marlin_supports_shape',
        "    raise ValueError(f\"Weight input_size_per_partition = \"",
        f"ValueError: Weight input_size_per_partition = {part} is not divisible by {axis} = {tile}. "
        "Consider reducing tensor_parallel_size or running with --quantization gptq.",
    ]
    return Text("".join(head + line + "\n" for line in lines), primary=True)


# vllm-project/vllm#9913's launch: one GPU (no tensor-parallel size), the AWQ checkpoint through Marlin
CODER_LITE_COMMAND = Text(
    "$ python -m vllm.entrypoints.openai.api_server --port 10086 --model TechxGenus/DeepSeek-Coder-V2-Lite-Instruct-AWQ "
    "--dtype float16 --gpu-memory-utilization 0.8 --max-model-len 8192 --enable-prefix-caching --disable-log-requests "
    "--trust-remote-code --enforce-eager\n")

# -- sgl-project/sglang#5642: `pip install -e "python[all]"` on Windows, Python 3.13: no sgl-kernel wheel at all -------

WINDOWS_PIP = Text(
    "Collecting aiohttp (from sglang==0.4.5.post3)\n"
    "  Using cached aiohttp-3.11.18-cp313-cp313-win_amd64.whl.metadata (8.0 kB)\n"
    "INFO: pip is looking at multiple versions of sglang[srt] to determine which version is compatible with other requirements. This could take a while.\n"
    "ERROR: Could not find a version that satisfies the requirement sgl-kernel==0.0.9.post2; extra == \"srt\" (from sglang[srt]) (from versions: none)\n"
    "ERROR: No matching distribution found for sgl-kernel==0.0.9.post2; extra == \"srt\"\n",
    primary=True)

# -- sgl-project/sglang#3837: an NCCL proxy thread segfaults (UCX's backtrace of nccl frames), then faulthandler ---------

NCCL_PROXY_SEGV = Text(
    "ubuntu:191:25036 [5] NCCL INFO ncclCommSplit comm 0x55b6d0b44010 rank 5 nranks 16 cudaDev 5 nvmlDev 5 busId ae000 - Init COMPLETE\n"
    "[2025-02-25 06:55:22] INFO:     100.64.0.127:18498 - \"POST /v1/chat/completions HTTP/1.1\" 200 OK\n"
    "==== backtrace (tid:  25645) ====\n"
    " 0 0x0000000000042520 __sigaction()  ???:0\n"
    " 1 0x000000000006a920 SaveProxy()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/proxy.cc:518\n"
    " 2 0x000000000006ca3a ncclProxySaveOp()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/proxy.cc:546\n"
    " 3 0x0000000000049543 uploadProxyOps()  /dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/enqueue.cc:1145\n"
    "=================================\n"
    "Fatal Python error: Segmentation fault\n\n"
    "Thread 0x00007fbaf7ff7640 (most recent call first):\n"
    '  File "/usr/lib/python3.10/threading.py", line 324 in wait\n\n'
    "Current thread 0x00007fbbc6ffd640 (most recent call first):\n"
    '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1827 in run_scheduler_process\n',
    primary=True)

# -- sgl-project/sglang#865: flashinfer's sampling kernel has no image for the GPU, then the shell's kill notice --------

NO_IMAGE_KILLED = (
    Run(records("Exception in ModelTpServer:", ranks="", stamp="2024-08-01 10:21:07")),
    Text("RuntimeError: TopKTopPSamplingFromProbs failed with error code no kernel image is available for execution on the device\n", primary=True),
    Text("\n已杀死\n"),
)

CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/issues/1189", kind="dev-engine-bug-index", style="scheduler-record",
             parts=(Run(JUMP_FORWARD, primary=True),), engine_version="0.2.13", install=IMAGE,
             expect=Expect("engine-bug", "IndexError", "list index out of range", frame="check_for_jump_forward"),
             facts="the decode step's frames (tp_worker.py 218 exposed_step, 247 forward_step, 595 forward_decode_batch -> schedule_batch.py check_for_jump_forward), IndexError 'list index out of range' in /sgl-workspace paths; paste style ours (the thread printed 'Exception in ModelTpServer:')",
             resolution="A bug of the jump-forward path of that release (closed as inactive); a newer release reworked it."),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/6229", kind="dev-engine-bug-index", style="scheduler-record",
             parts=(Run(GRAMMAR_QUEUE, primary=True),), engine_version="0.4.6.post3", install=IMAGE,
             expect=Expect("engine-bug", "IndexError", "list index out of range", frame="move_ready_grammar_requests"),
             facts="scheduler.py 1761 move_ready_grammar_requests indexing self.grammar_queue[i] under a stress test with a reasoning and a tool-call parser; TP1; the parent's sigquit after it",
             resolution="A bug of the grammar queue in 0.4.6.post3 (closed as inactive); no setting was the cause."),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/507", kind="dev-dist-store-timeout", style="scheduler-record",
             parts=(store_timeout(601, 1, 4, "2024-06-05 11:02:13", "TP0"),), engine_version="0.1.17", install=DOCKER,
             expect=Expect("nccl", "torch.distributed.DistStoreError", "Timed out after 601 seconds waiting for clients. 1/4 clients joined."),
             facts="torch.distributed.DistStoreError 'Timed out after 601 seconds waiting for clients. 1/4 clients joined.' with --tp-size 4 on 4 of 8 A100s; frames ours (init_process_group -> TCPStore)",
             resolution="No fix confirmed: the ranks never joined the rendezvous (the user gave up)."),
    WildCase(thread="https://github.com/verl-project/verl/issues/4373", kind="dev-dist-store-timeout", style="scheduler-record",
             parts=(store_timeout(1800, 8, 16, "2025-12-01 08:14:50", "TP8"),), engine_version="0.5.5", install=IMAGE,
             expect=Expect("nccl", "torch.distributed.DistStoreError", "Timed out after 1800 seconds waiting for clients. 8/16 clients joined."),
             facts="sglang rollout under verl with tensor parallelism 16 across two nodes fails with DistStoreError while TP 8 in one node works; frames and numbers ours",
             resolution="Open: cross-node rendezvous of the rollout's process group (the node's address and port reachable from the other node)."),
    WildCase(thread="https://github.com/vllm-project/llm-compressor/issues/57", kind="dev-marlin-partition", style="v0-worker-records", engine="vllm",
             parts=(marlin_shape(7392, "min_thread_k", 128, "08-05 23:58:29"),), engine_version="0.5.4", install=DOCKER,
             expect=Expect("parallel-config", "ValueError", "Weight input_size_per_partition = 7392 is not divisible by min_thread_k = 128. Consider reducing tensor_parallel_size or running with --quantization gptq."),
             facts="Qwen2-72B w8a16 on 4 GPUs: 29568 / 4 = 7392 per GPU, not a multiple of Marlin's min_thread_k 128 (vLLM 0.5.x, VllmWorkerProcess records)",
             resolution="A tensor-parallel size whose split the kernel tile divides (2 or 8 for 29568), or another kernel."),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/9913", kind="dev-marlin-partition", style="v0-worker-records", engine="vllm",
             parts=(CODER_LITE_COMMAND, marlin_shape(10944, "min_thread_k", 128, "11-01 10:10:02")), engine_version="0.6.3.post1", install=DOCKER,
             expect=Expect("quantization", "ValueError", "Weight input_size_per_partition = 10944 is not divisible by min_thread_k = 128. Consider reducing tensor_parallel_size or running with --quantization gptq."),
             facts="the launch command (api_server, no tensor-parallel size); DeepSeek-Coder-V2-Lite AWQ on ONE GPU: 10944 is the full size (no split), so the kernel's tile, not the parallel degree, rejects it (a counter-example to the parallelism reading)",
             resolution="Run the AWQ checkpoint without the Marlin kernel (--quantization awq) or a kernel with a smaller tile."),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/5642", kind="dev-no-wheel-platform", style="pip-output",
             parts=(WINDOWS_PIP,), engine_version="0.4.5.post3",
             expect=Expect("gpu-arch-unsupported"),  # pip's failure has no exception type of its own
             facts="an editable install from source on Windows with CPython 3.13 (cp313 win_amd64 wheels in pip's output); sgl-kernel has no Windows build",
             resolution="SGLang's kernels are built for Linux only: use Linux (WSL2 or the docker image)."),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3837", kind="dev-nccl-then-segfault", style="backtrace-then-faulthandler",
             parts=(NCCL_PROXY_SEGV,), engine_version="0.4.3.post2", install=IMAGE,
             expect=Expect("nccl", "Fatal Python error", "Segmentation fault"),
             facts="two DeepSeek-R1 servers on one host: NCCL INFO init lines, a served request, then UCX's backtrace of NCCL's proxy (SaveProxy, ncclProxySaveOp, uploadProxyOps) and faulthandler's 'Fatal Python error: Segmentation fault'",
             resolution="NCCL's proxy thread crashed (two servers' NCCL communicators on the same GPUs); NCCL settings/versions, not SGLang."),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/865", kind="dev-no-kernel-image-killed", style="plain-then-killed",
             parts=NO_IMAGE_KILLED, engine_version="0.2.7", install=DOCKER,
             expect=Expect("gpu-arch-unsupported", "RuntimeError", "TopKTopPSamplingFromProbs failed with error code no kernel image is available for execution on the device"),
             facts="flashinfer's TopKTopPSamplingFromProbs 'no kernel image is available for execution on the device', then the shell's kill notice in Chinese (已杀死)",
             resolution="--disable-flash-sampling at the time; later releases fixed the sampling kernels' build."),
)
