"""Stop 41's vLLM dev sweep (branch h-sweep10): shapes the sweep found filed under no category or the wrong one although
their class is plain from the code site.  vllm-ascend refusing an NPU whose SoC its build does not support (a device
capability, not unclassified), and FastChat's vLLM worker reaching into an engine object the installed vLLM changed
(the wrapper written for another release, not unclassified).

Facts were mined from threads with even numbers (the message wording, the frames they showed, the release, the
resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import failing_at, frame_at

from .. import paste
from ..blocks import plain
from ..corpus import Expect, Install, Run, WildCase
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
)
