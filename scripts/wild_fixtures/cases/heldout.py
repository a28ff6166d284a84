"""Held-out threads: failures of kinds logsleuth already has patterns for, mined after the patterns
were written (other versions, wordings and paste styles), to measure how far the patterns generalise.
"""

from __future__ import annotations

import re
from dataclasses import replace
from functools import partial

from pattern_fixtures.cases.runtime_env import CONFIGURATION_AUTO, UNRECOGNIZED_MODEL_TYPE
from pattern_fixtures.mirror import SCHEDULE_BATCH, SCHEDULER, failing_at, frame_at, scheduler_entry

from .. import composed, paste
from ..blocks import c_attr, c_property, crash, failing_import, no_grad, plain, records, with_env
from ..corpus import DOCKER, Expect, Install, Run, Text, Weave, WildCase
from .dependencies import XINFERENCE, XOSCAR_PREFIX, critical, critical_launch, so
from .hangs import EXPECT as WATCHDOG_EXPECT
from .hangs import WATCHDOG
from .kernels import IMA, OVERLAP, cuda

# -- paste transforms only these threads showed ------------------------------------------------------------------------


def from_last(text: str, marker: str) -> str:
    """Everything from the last line starting with `marker` (an exception whose message has blank lines)."""
    lines = text.splitlines(keepends=True)
    start = max(index for index, line in enumerate(lines) if line.startswith(marker))
    return "".join(lines[start:])


def markdown_bullets(text: str) -> str:
    """GitHub rendered `- item` lines as bullets and the commenter quoted the rendering: `* item`."""
    return re.sub(r"^- ", "* ", text, flags=re.M)


def xinference_ui_error(text: str) -> str:
    """Xinference's web UI: only the exception's message, after `Server error: 500 - ` (no type)."""
    last = text.rstrip("\n").splitlines()[-1]
    return "Server error: 500 - " + last.partition(": ")[2] + "\n"


def cut_line_start(text: str, marker: str, keep: int) -> str:
    """A line whose start another writer's output swallowed: only its last `keep` characters remain."""
    return "".join(line[-keep - 1:] if line.startswith(marker) else line for line in text.splitlines(keepends=True))


# -- sglang#3752: every rank's scheduler watchdog fires (0.4.3 era), the parent's sigquit notice, `Killed`, then `top` -----

WATCHDOG_RANKS = tuple(
    Run(records(WATCHDOG, ranks=f"TP{rank}", stamp=f"2025-03-09 00:57:{stamp}"), primary=index == 0)
    for index, (rank, stamp) in enumerate(((4, 15), (6, 15), (1, 15), (2, 15), (5, 15), (7, 15), (3, 16), (0, 16)))
)
SIGQUIT_0_4_3 = Text("[2025-03-09 00:57:20] Received sigquit from a child proces. It usually means the child failed.\nKilled\n")
TOP = Text("\ntop - 08:58:41 up  7:52,  2 users,  load average: 19.84, 18.62, 12.70\n"
           "Tasks: 3012 total,   9 running, 3003 sleeping,   0 stopped,   0 zombie\n"
           "  PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND\n"
           "31417 root      20   0  124.8g   4.0g   1.3g R 299.7   0.2 251:40.19 sglang::schedul\n"
           "31413 root      20   0  124.9g   4.1g   1.3g R 299.3   0.2 287:12.06 sglang::schedul\n")

# -- sglang#3836: an all-reduce times out on one of two 8xH100 nodes, NCCL INFO lines of another process mixed in -------------

NCCL_PEER = Text(composed.nccl_info("gpu-h100-b", 192, 3199, 4, (
    "comm 0x55d3a1f07c40 rank 4 nranks 16 cudaDev 4 nvmlDev 4 busId 61000 commId 0x9b17e2c04d5a3f86 - Init COMPLETE",
    "Channel 15/0 : 4[4] -> 5[5] via P2P/IPC", "Channel 04/0 : 13[5] -> 4[4] [receive] via NET/IBext_v8/4/GDRDMA",
    "Channel 12/0 : 13[5] -> 4[4] [receive] via NET/IBext_v8/4/GDRDMA", "Channel 05/0 : 4[4] -> 13[5] [send] via NET/IBext_v8/5/GDRDMA",
    "Channel 13/0 : 4[4] -> 13[5] [send] via NET/IBext_v8/5/GDRDMA", "Connected all trees",
    "threadThresholds 8/8/64 | 128/8/64 | 512 | 512")))
ALLREDUCE_PG = "PG ID 0 PG GUID 0(default_pg)"
ALLREDUCE = Text(composed.nccl_timeout_abort(4, "226 11:16:37.104512039", ALLREDUCE_PG, 5653, "ALLREDUCE", (58720256, 58720256), 600011), primary=True)
ALLREDUCE_MESSAGE = composed.watchdog_terminated(ALLREDUCE_PG, 4, composed.collective_timeout(4, 5653, "ALLREDUCE", (58720256, 58720256), 600011))

# -- sglang#3784: a collective times out on a 4-node A100 DeepSeek-R1 launch, after the model loaded ------------------------

LOADED = tuple(
    Run(records("Load weight begin. avail mem=78.38 GB", ranks=f"TP{rank}", stamp="2025-02-22 08:19:45")) for rank in (26, 29, 27, 25)
) + (Text("Cache shape torch.Size([163840, 64])\n" * 4),) + tuple(
    Run(records("Load weight end. type=DeepseekV3ForCausalLM, dtype=torch.bfloat16, avail mem=37.21 GB, mem usage=41.17 GB.",
                ranks=f"TP{rank}", stamp="2025-02-22 08:21:43")) for rank in (26, 29, 25, 27)
)
BROADCAST_PG = "PG ID 2 PG GUID 3"
BROADCAST = Text(composed.nccl_timeout_abort(26, "222 08:31:44.511278903", BROADCAST_PG, 2, "BROADCAST", (129761280, 129761280), 600052), primary=True)
BROADCAST_MESSAGE = composed.watchdog_terminated(BROADCAST_PG, 26, composed.collective_timeout(26, 2, "BROADCAST", (129761280, 129761280), 600052))

# -- verl#2965: multi-turn GRPO rollout; the scheduler's IMA while preparing a decode batch, under Ray (0.4.9.post6) -------------

ROLLOUT_IMA = Run(crash((
    scheduler_entry(OVERLAP[0], 3000, OVERLAP[1]), no_grad(116),
    frame_at(SCHEDULER, "event_loop_overlap", "batch = self.get_next_batch_to_run()", 839),
    frame_at(SCHEDULER, "get_next_batch_to_run", "self.running_batch = self.update_running_batch(self.running_batch)", 1683),
    frame_at(SCHEDULER, "update_running_batch", "batch.prepare_for_decode()", 1836, env=(("batch", "HOP:prepare_for_decode"),)),
    frame_at(SCHEDULE_BATCH, "prepare_for_decode", "self.seq_lens.add_(1)", 1609, env=(("self", c_attr("add_")),)),
), ranks="", torch_error=cuda(IMA), stamp="2025-08-15 00:16:56"), primary=True, reformat=partial(paste.ray, pid=9238))
RAYLET = Text("(raylet) A worker died or was killed while executing a task by an unexpected system error. To troubleshoot the problem, "
              "check the logs for the dead worker. RayTask ID: ffffffffffffffff3c5e8d1a0b7f2e4c9d6a1b3801000000 "
              "Worker ID: 5b0e7c2d9f4a1e3b6c8d0f2a4b6c8e0a1c3e5f7a9b1d3f5e7a9c1b3d Node ID: 9d8c7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c3b2a "
              "Worker IP address: 10.0.7.21 Worker port: 41677 Worker PID: 9238 Worker exit type: SYSTEM_ERROR\n")

# -- sglang#13198: DGX Spark (compute capability 121), the sm100 build's common_ops needs CUDA 12's nvrtc ----------------------

SPARK_SITE = "/home/dev/.conda/envs/sglang_env/lib/python3.11/site-packages"


def critical_sectioned(site: str, variant: str, capability: int, expected: str, inner: str) -> str:
    """sgl-kernel's loader message after PR #12119: the same text with a blank line before each section."""
    return re.sub(r"\n(?=Attempted locations:|GPU Info:|Please ensure|Error details)", "\n\n", critical(site, variant, capability, expected, inner))


SPARK_MESSAGE = critical_sectioned(SPARK_SITE, "sm100", 121, "SM121 (precise math for compatibility)",
                                   "libnvrtc.so.12: cannot open shared object file: No such file or directory")

# -- xorbitsai/inference#3657: Xinference 1.7.0.post1 launching an SGLang model, sgl-kernel built for another torch ---------------

LIST_TYPE = so("/usr/local/lib/python3.11/dist-packages",
               "_ZN3c108ListType3getERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEENS_4Type24SingletonOrSharedTypePtrIS9_EE")


def xinference_symbol() -> Run:
    first, helper = failing_import(XINFERENCE[0], "sgl_kernel", LIST_TYPE)
    logging_setup = ("_log", "__import__('logging').basicConfig(format='%(message)s', stream=__import__('sys').stdout)")
    return Run(plain((with_env(first, logging_setup), *XINFERENCE[1:]), extra_modules=(helper,)), primary=True)


# -- sglang#322: SGLang 0.1.13, Mistral-7B: no room left for the KV cache, the router's traceback printed by the launcher -------

ROUTER = "sglang/srt/managers/router"
NO_KV_ROOM = Run(plain((
    failing_at(f"{ROUTER}/manager.py", "start_router_process", """
        try:
            model_client = ModelRpcClient(server_args, port_args)
        except Exception:
            pipe_writer.send(get_exception_traceback())
        """, 68, env=(("ModelRpcClient", "NEXT"), ("server_args", "None"), ("port_args", "None"),
                      ("pipe_writer", "NS(send=lambda state: print(f'router init state: {state}', flush=True))")), marker="model_client"),
    frame_at(f"{ROUTER}/model_rpc.py", "__init__", "self.model_server.exposed_init_model(0, server_args, port_args)", 612,
             env=(("self", "HOP:exposed_init_model"),)),
    frame_at(f"{ROUTER}/model_rpc.py", "exposed_init_model", "self.model_runner = ModelRunner(self.model_config, server_args.mem_fraction_static, tp_rank, server_args.tp_size, port_args.nccl_port)", 62,
             env=(("ModelRunner", "NEXT"),)),
    frame_at(f"{ROUTER}/model_runner.py", "__init__", "self.init_memory_pool(total_gpu_memory)", 276, env=(("self", "HOP:init_memory_pool"),)),
    failing_at(f"{ROUTER}/model_runner.py", "init_memory_pool", """
        if self.max_total_num_token <= 0:
            raise RuntimeError(
                "Not enough memory. Please try to increase --mem-fraction-static."
            )
        """, 327, env=(("self", "NS(max_total_num_token=-2048)"),)),
)), primary=True)
NO_KV_ROOM_EXPECT = Expect("kv-cache-memory", "RuntimeError", "Not enough memory. Please try to increase --mem-fraction-static.",
                           fix=(("set --mem-fraction-static",),))

# -- sglang#4547: a 1.5B model on an 80 GB A100 dies with `CUDA error: out of memory` in the overlap thread (vLLM's patched set_stream) --

STREAM_CONTEXT = "NS(get_device_module=lambda device: NS(stream=lambda s: type('StreamContext', (), {'__enter__': lambda self: self, '__exit__': _exit})()))"
SET_STREAM_OOM = Run(replace(plain((
    failing_at("sglang/srt/managers/tp_worker_overlap_thread.py", "forward_thread_func", """
        try:
            with torch.get_device_module(self.device).stream(self.forward_stream):
                self.forward_thread_func_()
        except Exception:
            logger.error(f"TpModelWorkerClient hit an exception: {get_exception_traceback()}")
        """, 111, env=(("_exit", "NEXT"), ("torch", STREAM_CONTEXT), ("self", "_Any()"), ("logger", "__import__('logging').getLogger('sglang')")),
        marker="with"),
    frame_at("torch/cuda/__init__.py", "__exit__", "torch.cuda.set_stream(self.src_prev_stream)  # type: ignore[arg-type]", 595),
    frame_at("vllm/utils.py", "_patched_set_stream", "prev_set_stream(stream)", 928),
    frame_at("torch/cuda/__init__.py", "set_stream", "_set_stream_by_id(stream_id=stream.stream_id, device_index=stream.device_index, device_type=stream.device_type)", 636),
    frame_at("torch/cuda/__init__.py", "_set_stream_by_id", "torch._C._cuda_setStream(stream_id=stream_id, device_index=device_index, device_type=device_type)", 618,
             env=(("torch", c_property("_cuda_setStream")),)),
), torch_error=("RuntimeError", composed.cuda_error("out of memory")), stamp="2025-03-18 11:02:33"), ranks="TP0"), primary=True)


# -- xorbitsai/inference#3471: Xinference 1.5.1's image, qwen3_moe unknown to its transformers, the scheduler's chained traceback ---------

# later transformers releases add a paragraph on how to update it to the ValueError the pattern fixtures raise
UPDATE_HINT_BODY = UNRECOGNIZED_MODEL_TYPE[-1].body.replace(
    'is out of date."',
    'is out of date.\\n\\n"\n                "You can update Transformers with the command `pip install --upgrade transformers`. If this "\n'
    '                "does not work, and the checkpoint is very new, then there may not be a release version "\n'
    '                "that supports this model yet. In this case, you can get the most up-to-date code by installing "\n'
    '                "Transformers from source with the command "\n'
    '                "`pip install git+https://github.com/huggingface/transformers.git`"')
UNKNOWN_QWEN3_MOE = ("The checkpoint you are trying to load has model type `qwen3_moe` but Transformers does not recognize this architecture. "
                     "This could be because of an issue with the checkpoint, or because your version of Transformers is out of date.\n\n"
                     "You can update Transformers with the command `pip install --upgrade transformers`. If this does not work, and the "
                     "checkpoint is very new, then there may not be a release version that supports this model yet. In this case, you can "
                     "get the most up-to-date code by installing Transformers from source with the command "
                     "`pip install git+https://github.com/huggingface/transformers.git`")
QWEN3_MOE_CONFIG = Run(crash((
    scheduler_entry("scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)", 2014, (("Scheduler", "NEXT"),)),
    frame_at(SCHEDULER, "__init__", "self.init_tokenizer()", 236, env=(("self", "HOP:init_tokenizer"),)),
    frame_at(SCHEDULER, "init_tokenizer", "self.model_config = ModelConfig(server_args.model_path, trust_remote_code=server_args.trust_remote_code, revision=server_args.revision, context_length=server_args.context_length, model_override_args=server_args.json_model_override_args, is_embedding=server_args.is_embedding, dtype=server_args.dtype, quantization=server_args.quantization)", 433),
    frame_at("sglang/srt/configs/model_config.py", "__init__", "self.hf_config = get_config(model_path, trust_remote_code=trust_remote_code, revision=revision, model_override_args=self.model_override_args, **kwargs)", 54,
             env=(("kwargs", "{}"),)),
    frame_at("sglang/srt/hf_transformers_utils.py", "get_config", "config = AutoConfig.from_pretrained(model, trust_remote_code=trust_remote_code, revision=revision, **kwargs)", 79,
             env=(("kwargs", "{}"),)),
    failing_at(CONFIGURATION_AUTO, "from_pretrained", UPDATE_HINT_BODY, 1113,
               env=(("CONFIG_MAPPING", "type('_LazyConfigMapping', (), {'__getitem__': _target('f6')})()"),
                    ("config_dict", "{'model_type': 'qwen3_moe'}")), marker="config_class"),
    failing_at(CONFIGURATION_AUTO, "__getitem__", """
        if key not in self._mapping:
            raise KeyError(key)
        """, 815, env=(("key", "_args[1]"), ("self", "NS(_mapping={'llama': None, 'qwen2': None, 'qwen2_moe': None})"))),
), stamp="2025-05-19 08:42:10"), primary=True)


CASES = (
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3752", kind="scheduler-watchdog-timeout", style="raw-with-top",
             parts=(*WATCHDOG_RANKS, SIGQUIT_0_4_3, TOP), engine_version="0.4.3",
             expect=WATCHDOG_EXPECT,
             facts="a commenter's paste: every TP rank's 'Watchdog timeout (self.watchdog_timeout=300)' (TP0-TP7, two seconds apart), "
                   "the parent's notice with the 0.4.3 typo 'child proces', bash's Killed, then top's header and sglang::schedul rows; raw, unfenced",
             resolution="Closed as inactive; the reporter's run used --enable-torch-compile on 4 nodes (works without it). No fix confirmed.",
             paste=(partial(paste.prose, before="Same problem on 8xH20, the server goes down after a while:"),)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3836", kind="nccl-watchdog-timeout", style="nccl-info-mixed",
             parts=(Weave((NCCL_PEER, ALLREDUCE), by="line"),), engine_version="lmsysorg/sglang:dev (2025-03-03)",
             expect=Expect("nccl", "c10::DistBackendError", ALLREDUCE_MESSAGE),
             facts="two 8xH100 nodes (--tp 16 --nnodes 2), the rank-4 ProcessGroupNCCL.cpp:616 collective timeout (SeqNum=5653, ALLREDUCE, NumelIn=58720256, ran for 600011 ms) "
                   "in the middle of another process's NCCL INFO lines (IBext_v8 GDRDMA channels; host name ours), one INFO line's start swallowed; the abort block below it ours",
             resolution="Open. Commenters suggest --dist-timeout 3600 and a newer image; no confirmed fix.",
             paste=(partial(cut_line_start, marker="gpu-h100-b:192:3199 [4] NCCL INFO Channel 15/0", keep=22), paste.fenced)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/3784", kind="nccl-watchdog-timeout", style="cache-shape-prints",
             parts=(*LOADED, BROADCAST), engine_version="0.4.3",
             expect=Expect("nccl", "c10::DistBackendError", BROADCAST_MESSAGE),
             facts="4 nodes x 8 A100-80G, TP26-31 load records (avail mem 78.38 -> 37.21 GB), bare 'Cache shape torch.Size([163840, 64])' prints between the records; "
                   "the timeout's SeqNum, op and sizes ours",
             resolution="Closed as inactive; no fix confirmed (multi-node collective stalled after load).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/verl-project/verl/issues/2965", kind="cuda-illegal-memory-access", style="ray-inline-span",
             parts=(ROLLOUT_IMA, RAYLET), engine_version="0.4.9.post6",
             install=Install("/opt/conda/lib/python3.11/site-packages"),
             expect=Expect("illegal-memory-access", *cuda(IMA), frame="prepare_for_decode"),
             facts="verl 0.5.0.dev multi-turn GRPO on 1x8 A100, '(WorkerDict pid=9238) [2025-08-15 00:16:56] Scheduler hit an exception' with no TP rank, "
                   "run_scheduler_process 3000 -> decorate_context 116 -> event_loop_overlap 839 -> get_next_batch_to_run 1683 -> update_running_batch; "
                   "the frames below update_running_batch ours; the whole paste inside one inline-code span; the raylet's worker-died line",
             resolution="Open; no fix confirmed (after 30 normal steps).",
             paste=(paste.inline_span,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/13198", kind="sgl-kernel-common-ops-load-failure", style="quoted-rendered-bullets",
             parts=(critical_launch(SPARK_MESSAGE),), engine_version="0.5.5", install=Install(SPARK_SITE),
             expect=Expect("dependency-version", "ImportError", SPARK_MESSAGE),
             facts="DGX Spark (GB10, compute capability 121, expected variant SM121), only an sm100 build found, inner 'libnvrtc.so.12: cannot open shared object file', "
                   "the sectioned CRITICAL message; quoted with '> ' from the rendered issue, so '- ' items became '* ' bullets; conda env path",
             resolution="Closed as inactive; a CUDA 13 (cu130) torch + sgl-kernel build is the way forward on Spark.",
             paste=(partial(from_last, marker="ImportError"), markdown_bullets, paste.quote)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/3657", kind="sgl-kernel-undefined-symbol", style="web-ui-message",
             parts=(xinference_symbol(),), engine_version="", install=DOCKER,
             expect=Expect("dependency-version", "ImportError", LIST_TYPE, shown_prefix=XOSCAR_PREFIX),
             facts="Xinference 1.7.0.post1 on H100, the web UI's 'Server error: 500 - [address=..., pid=...] <path>/sgl_kernel/common_ops.abi3.so: undefined symbol: "
                   "_ZN3c108ListType3get...' (no exception type shown); the Xinference frames, address and pid ours",
             resolution="Closed; the sgl-kernel wheel did not match the installed torch (an ABI mismatch) after the Xinference upgrade.",
             paste=(xinference_ui_error,)),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/322", kind="startup-oom-kv-cache",
             style="router-init-state-inline", parts=(Text("Process Process-1:\n"), NO_KV_ROOM), engine_version="0.1.13",
             install=Install("/home/user/venv/sglang/lib/python3.11/site-packages"), expect=NO_KV_ROOM_EXPECT,
             facts="sglang 0.1.13 (router/manager.py line 68 start_router_process, 'router init state: Traceback' printed by the launcher), the message in the title; "
                   "'Process Process-1:' first; one inline-code span; the frames below manager.py ours",
             resolution="Closed as inactive. The message means the static pool is too small for the KV cache: raise --mem-fraction-static (the docs' advice to lower it is for OOM while serving).",
             paste=(paste.inline_span, partial(paste.prose, before="**Here is the error:**"))),
    WildCase(thread="https://github.com/sgl-project/sglang/issues/4547", kind="cuda-oom-serving", style="tp-worker-client-fenced",
             parts=(SET_STREAM_OOM,), engine_version="0.4.4", install=Install("/home/user/envs/sglang/lib/python3.11/site-packages"),
             expect=Expect("gpu-oom", *("RuntimeError", composed.cuda_error("out of memory")), frame="_set_stream_by_id"),
             facts="tp_worker_overlap_thread.py 111 forward_thread_func -> torch/cuda/__init__.py 595 __exit__ -> vllm/utils.py 928 _patched_set_stream -> "
                   "torch/cuda 636 set_stream -> 618 _set_stream_by_id, 'RuntimeError: CUDA error: out of memory' (not torch.OutOfMemoryError), Python 3.12 conda env",
             resolution="Closed as inactive; a 1.5B model on an 80 GB A100, so the card was shared or the pool over-sized; no fix confirmed.",
             paste=(partial(paste.fenced, info="bash"),)),
    WildCase(thread="https://github.com/xorbitsai/inference/issues/3471", kind="transformers-unknown-model-type", style="cut-into-chain",
             parts=(QWEN3_MOE_CONFIG,), engine_version="", install=DOCKER,
             expect=Expect("dependency-version", "ValueError", UNKNOWN_QWEN3_MOE, frame="from_pretrained"),
             facts="Xinference v1.5.1 docker image loading qwen3-30B-A3B-GPTQ-Int4 with SGLang: configuration_auto.py 1113 from_pretrained -> 815 __getitem__ KeyError 'qwen3_moe', "
                   "'During handling ...', run_scheduler_process 2014 -> Scheduler.__init__ 236 init_tokenizer -> 433 ModelConfig; the paste starts mid-chain at the "
                   "from_pretrained frame; the ValueError's wording from transformers of that time, the frames below ModelConfig ours",
             resolution="Upgrade transformers in the image (qwen3_moe arrived in transformers 4.51); a maintainer pointed to a newer image.",
             paste=(partial(paste.cut_at_start, marker='  File "/usr/local/lib/python3.11/dist-packages/transformers/models/auto/configuration_auto.py", line 1113'),
                    partial(paste.prose, before="Loading qwen3-30B-A3B-GPTQ-Int4 with the SGLang engine fails:"))),
)
