"""Stop 40's dev split of issue 28's category work (branch h-cat6): shapes a blind split left unclassified or filed
under the wrong category although a row stood for their class.  flashinfer's prefill kernels refusing the tile sizes a
head dimension gives, printed alone ('Invalid configuration : NUM_MMA_Q=…': the attention backend, not unclassified),
a wrapper's engine module building vLLM's engine arguments with a keyword the installed release lacks (the
wrapper written for another release: dependency-version, not an unknown flag), and a traceback cut inside the engine
core's call into its workers, before the exception line (the worker family, not unclassified).

Facts were mined from threads with even numbers (the message wording, the frames and records they showed, the
release, the resolution); what a thread did not show is ours, and each `facts` says which.
"""

from __future__ import annotations

from pattern_fixtures.mirror import failing_at, frame_at

from .. import paste
from ..blocks import plain
from ..corpus import Expect, Run, Text, WildCase
from .dev_cat4 import cut_before_last_frame
from .dev_detect import top

# -- flashinfer-ai/flashinfer#1048: SGLang 0.4.6's flashinfer backend on a BERT encoder whose head size is 32 -----------

# flashinfer's C++ error print alone, as the thread pasted it (no Python frame): the launch line before it is ours.
FLASHINFER_CONFIG = (
    "Error: Invalid configuration : NUM_MMA_Q=2 NUM_MMA_D_QK=2 NUM_MMA_D_VO=2 NUM_MMA_KV=4 NUM_WARPS_Q=4 NUM_WARPS_KV=1 "
    "please create an issue (https://github.com/flashinfer-ai/flashinfer/issues) and report the issue to the developers.\n")
FLASHINFER_PASTE = Text(
    "$ python -m sglang.launch_server --model-path Supabase/gte-small --is-embedding --attention-backend flashinfer\n"
    + FLASHINFER_CONFIG, primary=True)

# -- hiyouga/LlamaFactory#6654: LLaMA-Factory's vLLM engine passing limit_mm_per_prompt to vLLM 0.5.0 -------------------

# vLLM's AsyncEngineArgs is a dataclass: a keyword it has no field for is refused at the wrapper's call, by CPython's
# own __init__ (no frame of its own).  The mirror's AsyncEngineArgs has the fields the wrapper's other keywords name.
ENGINE_ARGS = "__import__('dataclasses').make_dataclass('AsyncEngineArgs', ['model', 'trust_remote_code', 'dtype'])"
ENGINE_KWARGS = "{'model': '/models/Qwen2-VL-7B-Instruct', 'trust_remote_code': True, 'dtype': 'auto', 'limit_mm_per_prompt': {'image': 2}}"
LLAMAFACTORY_CHAT = Run(plain((
    top("llamafactory/chat/chat_model.py", "__init__", "self.engine = VllmEngine(model_args, data_args, finetuning_args, generating_args)", 53,
        env=(("self", "NS()"), ("VllmEngine", "NEXT"), ("model_args", "None"), ("data_args", "None"), ("finetuning_args", "None"),
             ("generating_args", "None"))),
    failing_at("llamafactory/chat/vllm_engine.py", "__init__",
               "self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))\n", 96, marker="self.model",
               env=(("self", "NS()"), ("AsyncLLMEngine", "NS(from_engine_args=lambda args: args)"), ("AsyncEngineArgs", ENGINE_ARGS),
                    ("engine_args", ENGINE_KWARGS))),
)), primary=True)

# -- PrimeIntellect-ai/prime-rl#918: a MoE model under prime-rl's vLLM 0.10.2 server; the workers' profiling run failed ----

# The engine core asks its workers for their free memory (collective_rpc) and re-raises the first worker's error; the
# paste here stops at the call, before get_response's raise and its message (the cut is ours).
WORKER_ERROR = "Worker failed with error 'where(): argument 'other' (position 3) must be Tensor, not tuple', please check the stack trace above for the root cause"
RPC_FRAMES = (
    top("vllm/v1/executor/abstract.py", "determine_available_memory", 'self.collective_rpc("determine_available_memory")', 84,
        env=(("self", "NS(collective_rpc=_target('f1'))"),)),
    frame_at("vllm/v1/executor/multiproc_executor.py", "collective_rpc", "result = get_response(None, None)", 259, env=(("get_response", "NEXT"),)),
    failing_at("vllm/v1/executor/multiproc_executor.py", "get_response", f"raise RuntimeError({WORKER_ERROR!r})\n", 243),
)
CORE_RPC = Run(plain(RPC_FRAMES), primary=True)

CASES = (
    WildCase(thread="https://github.com/flashinfer-ai/flashinfer/issues/1048", kind="dev-cat6-attention-kernel-config",
             style="error-print-alone", parts=(FLASHINFER_PASTE,), engine_version="0.4.6",
             expect=Expect("feature-conflict"),  # a C++ print, no Python exception (README)
             facts="SGLang 0.4.6 serving a BERT encoder (head size 32) with the flashinfer attention backend (flashinfer 0.2.5, JIT, "
                   "CUDA 12.4): flashinfer printing 'Error: Invalid configuration : NUM_MMA_Q=2 NUM_MMA_D_QK=2 NUM_MMA_D_VO=2 "
                   "NUM_MMA_KV=4 NUM_WARPS_Q=4 NUM_WARPS_KV=1 please create an issue ...'; the model (Supabase/gte-small) is "
                   "sgl-project/sglang PR#6230's; the launch line ours",
             resolution="flashinfer's ragged prefill kernels have no tile configuration for head size 32: the torch-native or "
                        "Triton attention backend takes it (the thread), and SGLang later padded the head dimension for flashinfer "
                        "(sgl-project/sglang PR#6230).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/hiyouga/LlamaFactory/issues/6654", kind="dev-cat6-wrapper-engine-keyword", style="plain",
             parts=(LLAMAFACTORY_CHAT,), engine="vllm", engine_version="0.5.0",
             expect=Expect("dependency-version", "TypeError",
                           "AsyncEngineArgs.__init__() got an unexpected keyword argument 'limit_mm_per_prompt'", frame="__init__"),
             facts="llamafactory-cli chat with infer_backend vllm on vLLM 0.5.0: LLaMA-Factory's vllm_engine.py building "
                   "AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args)) fails with \"__init__() got an unexpected keyword "
                   "argument 'limit_mm_per_prompt'\" (Python 3.9 names no class; the corpus's CPython 3.11 prints "
                   "AsyncEngineArgs.__init__()); the chat_model.py frame, the line numbers and the engine_args values ours",
             resolution="LLaMA-Factory passes a keyword vLLM added later: the maintainer's answer, vLLM 0.6.4 (the release the wrapper "
                        "was written for).",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/PrimeIntellect-ai/prime-rl/issues/918", kind="dev-cat6-worker-rpc-cut", style="cut",
             parts=(CORE_RPC,), engine="vllm", engine_version="0.10.2",
             # unclassified, not a kill: a paste cut at the call into the workers says nothing of one (stop 44, h-cut2)
             expect=Expect("unclassified"),  # the exception line is cut: no exception fields (README)
             facts="prime-rl's inference server on vLLM 0.10.2 with a MoE model: the engine core's _initialize_kv_caches (left "
                   "out here) -> executor abstract.py determine_available_memory -> multiproc_executor.py collective_rpc -> get_response "
                   "raising \"Worker failed with error 'where(): argument 'other' (position 3) must be Tensor, not tuple', please "
                   "check the stack trace above for the root cause\"; the files, functions and line numbers of the last three "
                   "frames are the thread's; the paste cut before get_response's frame and the one-line "
                   "statements ours",
             resolution="The worker's own error (a torch.where call in the MoE layer given a tuple) is the root: the worker's "
                        "traceback above the re-raise says where; the cut paste shows only that the engine's call into its "
                        "workers failed.",
             paste=(cut_before_last_frame, paste.fenced)),
)
