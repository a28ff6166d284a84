"""Stop 41's vLLM dev sweep (branch h-sweep10): shapes the sweep found filed under no category or the wrong one although
their class is plain from the code site.  vllm-ascend refusing an NPU whose SoC its build does not support (a device
capability, not unclassified), FastChat's vLLM worker reaching into an engine object the installed vLLM changed
(the wrapper written for another release, not unclassified), and vLLM V0's worker line 'Error executing method
initialize_cache. This might cause deadlock ...' over a traceback cut before its error (the KV cache's stage, not a
hang).

Facts were mined from threads with even numbers (the message wording, the frames they showed, the release, the
resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.mirror import failing_at, frame_at

from .. import paste
from ..blocks import plain
from ..corpus import DOCKER, Expect, Install, Run, Text, WildCase
from .dev_cat4 import cut_before_last_frame
from .dev_detect import top

# -- vllm-project/vllm-ascend#6796: the engine core's worker refusing the NPU's SoC --------------------------------------

# vllm_ascend/utils.py check_ascend_device_type raises for a SoC outside the build's list; the worker's constructor and
# the executor's frame above it are ours (the thread showed the utils.py frame and the engine core's frames).
ASCEND_SOC = Run(plain((
    top("vllm/v1/executor/multiproc_executor.py", "worker_main", "worker = WorkerProc(*args, **kwargs)", 722,
        env=(("WorkerProc", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    frame_at("vllm_ascend/worker/worker_v1.py", "__init__", "check_ascend_device_type()", 98, env=(("check_ascend_device_type", "NEXT"),)),
    failing_at("vllm_ascend/utils.py", "check_ascend_device_type", 'raise RuntimeError(f"Can not support soc_version: {soc_version}.")\n',
               706, env=(("soc_version", "104"),)),
)), primary=True)

# -- lm-sys/FastChat#3704: FastChat's vllm_worker written for vLLM V0, run on a V1 release --------------------------------

# The worker reads `llm_engine.engine.tokenizer`; V1's AsyncLLM has no `engine`.  The object is a bare class of that
# name (CPython names it in the message); the frame that builds the worker is ours as a function.
FASTCHAT_WORKER = Run(plain((
    top("fastchat/serve/model_worker_main.py", "main", "worker = VLLMWorker()", 291, env=(("VLLMWorker", "NEXT"),)),
    failing_at("fastchat/serve/vllm_worker.py", "__init__", "self.tokenizer = llm_engine.engine.tokenizer\n", 57, marker="self.tokenizer",
               env=(("self", "NS()"), ("llm_engine", "type('AsyncLLM', (), {})()"))),
)), primary=True)

# -- OpenRLHF/OpenRLHF#336: a Ray actor's vLLM 0.4 worker whose KV cache cannot hold one sequence of max_model_len ---------

# vLLM V0's worker_base.py execute_method logs 'Error executing method initialize_cache. This might cause deadlock in
# distributed execution.' and the traceback, each line under its logger's prefix; the paste stops after the
# execute_method frame (worker.py's raise_if_cache_size_invalid and the ValueError below it were not copied).
KV_LOGGER = "ERROR 06-28 06:11:45 worker_base.py:145] "
KV_RECORDS = Text(
    "INFO 06-28 06:11:45 distributed_gpu_executor.py:45] # GPU blocks: 378, # CPU blocks: 1638\n"
    f"{KV_LOGGER}Error executing method initialize_cache. This might cause deadlock in distributed execution.\n")
KV_CHECK = ("raise ValueError(\"The model's max seq len (8192) is larger than the maximum number of tokens that can be stored in "
            "KV cache (6048). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.\")\n")
KV_WORKER = Run(plain((
    top("vllm/worker/worker_base.py", "execute_method", "return executor(*args, **kwargs)", 137,
        env=(("executor", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    failing_at("vllm/worker/worker.py", "initialize_cache", KV_CHECK, 196),
)), primary=True)


def worker_logged(text: str) -> str:
    """vLLM's logger prefix on the traceback's lines, as worker_base.py logs them (the records above keep their own)."""
    return "".join(line if line.startswith(("INFO ", "ERROR ")) else KV_LOGGER + line for line in text.splitlines(keepends=True))


CASES = (
    WildCase(thread="https://github.com/vllm-project/vllm-ascend/issues/6796", kind="dev-sweep10-npu-soc-unsupported", style="plain",
             parts=(ASCEND_SOC,), engine="vllm",
             expect=Expect("gpu-arch-unsupported", "RuntimeError", "Can not support soc_version: 104.", frame="check_ascend_device_type"),
             facts="vllm-ascend's engine core failing to start: vllm_ascend/utils.py line 706 check_ascend_device_type raising "
                   "RuntimeError(f\"Can not support soc_version: {soc_version}.\") with soc_version 104, under the EngineCore_DP0 "
                   "process; the executor and worker frames above it, their line numbers and the unprefixed paste ours",
             resolution="The NPU's SoC is not one this vllm-ascend build has kernels for: run the image or wheel made for that NPU "
                        "family, or a release that lists it (npu-smi info names the NPU).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/lm-sys/FastChat/issues/3704", kind="dev-sweep10-fastchat-worker-engine", style="stderr-logger",
             parts=(FASTCHAT_WORKER,), engine="vllm", install=Install("/p/haicluster/llama/FastChat"),  # run from its checkout
             expect=Expect("dependency-version", "AttributeError", "'AsyncLLM' object has no attribute 'engine'", frame="__init__"),
             facts="FastChat's vllm_worker on vLLM 0.8.2 (V1): fastchat/serve/vllm_worker.py line 57 in __init__ reading "
                   "llm_engine.engine.tokenizer fails with AttributeError: 'AsyncLLM' object has no attribute 'engine', printed "
                   "through FastChat's '<time> | ERROR | stderr | ' logger; the first frame's file and function ours (the thread's "
                   "was the same file's <module> at line 291), the engine object bound to the frame ours",
             resolution="FastChat's worker was written for vLLM's V0 engine: VLLM_USE_V1=0 (the thread), or vLLM 0.7.x, or the "
                        "worker's fix for V1.",
             paste=(paste.stderr_logger, paste.fenced)),
    WildCase(thread="https://github.com/OpenRLHF/OpenRLHF/issues/336", kind="dev-sweep10-worker-initialize-cache-cut",
             style="kubectl-ray-cut", parts=(KV_RECORDS, KV_WORKER), engine="vllm", install=DOCKER,
             expect=Expect("kv-cache-memory"),  # no exception, frame or fix fields: the ValueError and its frame were not pasted
             facts="OpenRLHF's LLMRayActor running vLLM for Llama-3 70B PPO: '# GPU blocks: 378, # CPU blocks: 1638', then "
                   "worker_base.py:145's 'Error executing method initialize_cache. This might cause deadlock in distributed "
                   "execution.' and the traceback's first frame (worker_base.py line 137 execute_method 'return executor(*args, "
                   "**kwargs)'), every line under kubectl's timestamps and Ray's (LLMRayActor pid=20770) prefix; the paste stops "
                   "there; the title's ValueError (max seq len 8192 larger than the KV cache's 6048 tokens) and worker.py's frame "
                   "below the cut are the thread's words, the frame's line number ours",
             resolution="The KV cache cannot hold one sequence of max_model_len: raise vLLM's gpu_memory_utilization or lower "
                        "max_model_len (OpenRLHF then passed both to vLLM).",
             paste=(cut_before_last_frame, worker_logged, partial(paste.ray, actor="LLMRayActor", pid=20770),
                    partial(paste.kubectl_timestamps, start="2024-06-28T06:11:52.685300953"), paste.fenced)),
)
