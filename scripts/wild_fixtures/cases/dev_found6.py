"""Stop 39's dev split for the shapes a second fresh blind split still missed (branch h-found6): a traceback cut inside
its raising statement, or whose frames lost their `File "…", line N, in f` wording, with no exception line; an
engine's bare message right after the launch command; a GPU compiler's error diagnostic after normal loading lines; a
short fragment whose only frame is in a kernel package one engine ships.  And look-alikes that stay no failure: a
compiler's `warning:` and a raising statement quoted in prose.

Facts were mined from even-numbered threads (the engine's check, the message wording, the releases); what a thread did
not show is ours, and each `facts` says which.  The cuts are paste transforms (paste.cut_after, paste.file_wording_lost)
applied to what real CPython printed."""

from __future__ import annotations

from functools import partial

from .. import paste
from ..blocks import plain
from ..corpus import Expect, Run, Text, WildCase
from ..vllm_blocks import uncaught
from .dev_detect import top
from .vllm import COMMAND_R_MESSAGE, HEADS_FIX, derived_len, heads_not_divisible

VLLM = "vllm"

# vLLM 0.13's model registry refusing an architecture it has no class for (vllm/model_executor/models/registry.py
# _raise_for_unsupported; vllm-project/vllm#32338: LLaVA-Video-7B-Qwen2's LlavaQwenForCausalLM on 0.13.0).
UNSUPPORTED_32338 = ("Model architectures ['LlavaQwenForCausalLM'] are not supported for now. Supported architectures: "
                     "dict_keys(['ApertusForCausalLM', 'AquilaModel', 'AquilaForCausalLM', 'ArceeForCausalLM', ...])")
COMMAND_THEN_MESSAGE_32338 = Text(
    "$ vllm serve /data/models/LLaVA-Video-7B-Qwen2 --trust-remote-code --max-model-len 8192 --gpu-memory-utilization 0.6\n"
    f"{UNSUPPORTED_32338}\n"
    "$ \n", primary=True)

# ptxas (the one Triton bundles) refusing a GPU newer than it knows (gpustack/gpustack#4372: vLLM on a DGX Spark,
# sm_121a, inductor compiling a kernel; vllm-project/vllm PR#31338 documents the same line for sm_110a).  The records
# before it are vLLM's start-up (the format of its 0.14 engine core), the paste kept ptxas's own stderr line.
PTXAS_4372 = Text(
    "(EngineCore_DP0 pid=73) INFO 01-28 17:36:58 [gpu_model_runner.py:3562] Model loading took 15.2 GiB memory and 48.1 seconds\n"
    "(EngineCore_DP0 pid=73) INFO 01-28 17:37:21 [backends.py:631] Using cache directory: /root/.cache/vllm/torch_compile_cache/9d1c2e "
    "for vLLM's torch.compile\n"
    "(EngineCore_DP0 pid=73) INFO 01-28 17:37:21 [backends.py:647] Dynamo bytecode transform time: 12.84 s\n"
    "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'\n", primary=True)

# LLVM's AMDGPU backend rejecting a kernel whose private stack exceeds the target's limit, reported before its location
# (iree-org/iree#19180, #21252 on gfx942: `error: <unknown>:0:0: stack frame size (N) exceeds limit (131056) in
# function '…'`); here a Triton MoE kernel of an SGLang start on an MI300X, after the weights loaded (ours).
STACK_FRAME_19180 = Text(
    "[2025-06-02 09:14:10 TP0] Load weight end. type=Qwen3MoeForCausalLM, dtype=torch.bfloat16, avail mem=139.22 GB, mem usage=56.87 GB.\n"
    "[2025-06-02 09:14:11 TP0] KV Cache is allocated. #tokens: 1254912, K size: 46.12 GB, V size: 46.12 GB\n"
    "[2025-06-02 09:14:12 TP0] Capture cuda graph begin. This can take up to several minutes. avail mem=45.03 GB\n"
    "error: <unknown>:0:0: stack frame size (294916) exceeds limit (131056) in function 'fused_moe_kernel'\n", primary=True)

# A healthy start whose build printed a compiler warning (clang's `<file>:L:C: warning: … [-W…]` format,
# ClangBuiltLinux/linux#1710 shows the diagnostic format): no failure.
WARNING_THEN_READY_1710 = Text(
    "$ pip install -e python\n"
    "  csrc/allreduce/custom_all_reduce.cu:212:9: warning: variable 'rank' set but not used [-Wunused-but-set-variable]\n"
    "Successfully installed sglang-0.4.6\n"
    "$ python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000\n"
    "[2025-05-01 10:00:12 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=61.94 GB, mem usage=14.46 GB.\n"
    "[2025-05-01 10:00:20] The server is fired up and ready to roll!\n")

# A raising statement quoted in a question (the check of vllm-project/vllm#4232, named in prose): no failure.
PROSE_4232 = Text(
    "The check in vllm/config.py that I think we hit is\n"
    "    raise ValueError(\n"
    "under `if total_num_attention_heads % tensor_parallel_size != 0:`, but the server started fine with TP 4.\n")

# sgl-kernel's FA3 gate (sgl_kernel/flash_attn.py: `flash_attn at sgl-kernel is only supported on sm90 and above`,
# raised as NotImplementedError when is_fa3_supported() is false; gpustack/gpustack#3326 quotes it, sgl-project/sglang#38980
# discusses the same gate): the fragment keeps only sgl-kernel's frame.
FA3_GATE = "flash_attn at sgl-kernel is only supported on sm90 and above"
SGL_KERNEL_3326 = Run(plain((
    top("sgl_kernel/flash_attn.py", "flash_attn_with_kvcache", f"raise NotImplementedError({FA3_GATE!r})", 172),
)), primary=True)


def fenced(**fields: object) -> WildCase:
    """A case pasted in a code fence after its own transforms (`cuts`)."""
    cuts = fields.pop("cuts", ())
    return WildCase(**fields, paste=(*cuts, paste.fenced))  # type: ignore[arg-type]


CASES = (
    fenced(thread="https://github.com/vllm-project/vllm/issues/3676", kind="dev-cut-in-raising-statement", style="cut-in-raise",
           parts=(Run(uncaught(derived_len(COMMAND_R_MESSAGE), "v0", None, 5012, "2024-03-28 10:00:00"), primary=True),),
           engine_version="0.4.0", engine=VLLM,
           cuts=(partial(paste.cut_after, marker="raise ValueError("),),
           expect=Expect("context-length"),  # the exception line not pasted (README: no exception fields)
           facts="c4ai-command-r-v01 with max_model_len 131072 against the derived 8192 (vLLM 0.4.0's _get_and_verify_max_len); the "
                 "paste cut right after the raising statement `raise ValueError(`, its exception line not pasted, ours (paste style "
                 "ours: the blind split's shape)",
           resolution="Fixed in vLLM: the model_max_length in Command-R's config is now read (PR #3727); before, a --max-model-len "
                      "within the derived length starts."),
    fenced(thread="https://github.com/vllm-project/vllm/issues/4232", kind="dev-frames-lost-file-wording", style="paths-and-functions",
           parts=(Run(uncaught(heads_not_divisible(40, 6), "v1", None, 1183, "2024-04-21 08:00:00"), primary=True),),
           engine_version="0.4.1", engine=VLLM,
           cuts=(partial(paste.cut_at_start, marker="File "), partial(paste.cut_after, marker="raise ValueError("),
                 paste.file_wording_lost),
           expect=Expect("parallel-config", fix=HEADS_FIX),  # the exception line not pasted (README: no exception fields)
           facts="Qwen1.5-32B (40 heads) on six GPUs, vLLM's check of the heads against the tensor-parallel size; the frames kept "
                 "only as paths and functions, the header and the exception line not pasted, ours (paste style ours: the blind "
                 "split's shape)",
           resolution="Maintainer: use a tensor-parallel size that divides 40 (2, 4, 8)."),
    fenced(thread="https://github.com/vllm-project/vllm/issues/32338", kind="dev-engine-message-after-command", style="command-then-message",
           parts=(COMMAND_THEN_MESSAGE_32338,), engine_version="0.13.0", engine=VLLM,
           expect=Expect("unsupported-architecture"),  # printed without its exception type (README: no exception fields)
           facts="LLaVA-Video-7B-Qwen2 (architecture LlavaQwenForCausalLM) on vLLM 0.13.0 with trust_remote_code, max_model_len "
                 "8192 and gpu_memory_utilization 0.6, refused by the registry; the serve command instead of the thread's LLM() "
                 "script, the message alone after it and the prompt ours (paste style ours)",
           resolution="vLLM 0.13.0 has no LlavaQwenForCausalLM: the request is open as a feature; serve the model with a stack "
                      "that implements it."),
    fenced(thread="https://github.com/gpustack/gpustack/issues/4372", kind="dev-compiler-error-line", style="ptxas-after-loading",
           parts=(PTXAS_4372,), engine_version="0.14.1", engine=VLLM,
           expect=Expect("gpu-arch-unsupported"),  # a compiler's diagnostic, no Python exception (README: no exception fields)
           facts="vLLM's engine core on a DGX Spark (sm_121a) compiling a kernel with torch.compile, Triton's bundled ptxas "
                 "refusing the GPU name; the records before it, their figures and the release (0.14.1, of the thread's date) ours, "
                 "the paste keeping only ptxas's line of the traceback (paste style ours)",
           resolution="The ptxas Triton bundles predates the GPU: point TRITON_PTXAS_PATH at the CUDA 13 toolkit's ptxas (triton-lang/"
                      "triton#8539's answer), or run without compilation."),
    fenced(thread="https://github.com/iree-org/iree/issues/19180", kind="dev-compiler-error-line", style="stack-frame-after-loading",
           parts=(STACK_FRAME_19180,), engine_version="0.4.6.post5",
           expect=Expect("gpu-arch-unsupported"),  # a compiler's diagnostic, no Python exception (README: no exception fields)
           facts="LLVM's AMDGPU backend reporting `error: <unknown>:0:0: stack frame size (294916) exceeds limit (131056) in "
                 "function '…'` on gfx942 (the thread's wording and figures); the SGLang start on an MI300X, its records, the "
                 "Triton MoE kernel's name and the release ours",
           resolution="A kernel that needs more private stack than the GPU allows does not compile: another kernel configuration "
                      "or backend for it, or a compiler release that lowers it differently."),
    fenced(thread="https://github.com/ClangBuiltLinux/linux/issues/1710", kind="dev-clean-compiler-warning", style="build-warning-then-ready",
           parts=(WARNING_THEN_READY_1710,), engine_version="0.4.6",
           expect=Expect("none", groups=0),
           facts="clang's diagnostic format `<file>:L:C: <level>: <text> [-W…]` from the thread (there an error); the source build of "
                 "SGLang, its warning, the install and the healthy start ours",
           resolution="No failure: a compiler warning during the build, then the server came up."),
    fenced(thread="https://github.com/vllm-project/vllm/issues/4232", kind="dev-clean-statement-in-prose", style="raise-in-prose",
           parts=(PROSE_4232,), engine_version="0.4.1", engine=VLLM,
           expect=Expect("none", groups=0),
           facts="vLLM's check of the heads against the tensor-parallel size (the thread's subject), named in a sentence with its "
                 "raising statement quoted on a line of its own; the wording ours",
           resolution="No failure: a question about the check, with a start that worked."),
    fenced(thread="https://github.com/gpustack/gpustack/issues/3326", kind="dev-kernel-package-fragment", style="sgl-kernel-frame-only",
           parts=(SGL_KERNEL_3326,), engine_version="0.5.5",
           cuts=(partial(paste.cut_at_start, marker="File "),),
           expect=Expect("gpu-arch-unsupported", "NotImplementedError", FA3_GATE, frame="flash_attn_with_kvcache"),
           facts="sgl-kernel's FA3 gate and its message (`flash_attn at sgl-kernel is only supported on sm90 and above`, the thread "
                 "quoting sgl_kernel/flash_attn.py; sgl-project/sglang#38980 on the same gate); the paste keeping only sgl-kernel's "
                 "frame and the exception, the line number and the release ours",
           resolution="FlashAttention 3 of sgl-kernel needs an sm90 GPU (or a build of it for the GPU): choose another attention "
                      "backend on older GPUs."),
)
