"""The fix for an FP8 E4M3 (Triton's fp8e4nv) kernel compiled for a GPU without native FP8 (common-fp8-unsupported-gpu).

Which answer leads is chosen from what the log shows, since the readings want opposite advice:
- the launch asks for FP8 itself (--kv-cache-dtype fp8*, --quantization fp8, in the command or `server_args=`): drop
  that flag; nothing else makes an FP8 KV cache run without native FP8;
- a GPU the log shows below compute capability 8.0: no weight-only (Marlin) FP8 path runs there, so serve another
  checkpoint or use an 8.9+ GPU;
- SGLang's fused-MoE kernel (`def fused_moe_kernel(`): no SGLang release logsleuth has read runs FP8 experts weight-only
  (Fp8MoEMethod has no Marlin FP8 path in 0.5.9 or 0.5.23);
- vLLM's block-FP8 weight GEMM (`_w8a8_triton_block_scaled_mm`, `w8a8_block_fp8_matmul`) on 8.0-8.8 or a GPU the log
  does not show: vLLM 0.11.2 and 0.33.0 run FP8 checkpoints weight-only through Marlin below 8.9 (Fp8LinearMethod
  use_marlin, MarlinFP8ScaledMMLinearKernel), so this build chose a kernel it had no need of (vllm#39610: a nightly
  did so where v0.19.0 loaded the same models): pin the release that ran it, report the regression;
- otherwise the general answer: a checkpoint without FP8, or an 8.9+ GPU."""

from __future__ import annotations

from typing import Any

from logsleuth.facts.gpus import Capability, gpus_in, show
from logsleuth.fixes.builders.memory import server_arg
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp

# The kernel Triton compiled, as its CompilationError prints it (`def NAME(`) or a frame names it.
_MOE_KERNEL = compile_lazily_regex(r"\bfused_moe_kernel\b")
_WEIGHT_GEMM = compile_lazily_regex(r"\b(?:_w8a8_triton_block_scaled_mm|w8a8_block_fp8_matmul)\b")
_FLAGS = (("--kv-cache-dtype", "kv_cache_dtype"), ("--quantization", "quantization"))
_MARLIN_FROM: Capability = (8, 0)
_ANY_MARLIN: Capability = (7, 5)
_NATIVE_FROM: Capability = (8, 9)
_GENERAL = ("Serve this model on this GPU without FP8: a BF16/FP16 or INT4/INT8 (AWQ, GPTQ) checkpoint, or run the "
            "FP8 checkpoint on a GPU with compute capability 8.9+.")


def _texts(ctx: FixContext) -> list[str]:
    texts = [block.message for block in ctx.failure.exceptions]
    texts += [f"{frame.function or ''} {frame.source or ''}" for block in ctx.failure.exceptions for frame in block.frames]
    return texts + list(ctx.lines)


def _asked_for_fp8(ctx: FixContext) -> list[str]:
    """The launch's own flags that ask for FP8, from its command or its `server_args=` line."""
    asked = []
    for flag, arg in _FLAGS:
        value = (ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg)
        if value and "fp8" in value.lower():
            asked.append(flag)
    return asked


def _oldest_capability(ctx: FixContext, texts: list[str]) -> Capability | None:
    lines = [line for text in texts for line in text.splitlines()]
    found = [gpu.capability for gpu in gpus_in([*lines, *ctx.failure.context, *ctx.launch.gpu_lines]) if gpu.capability]
    return min(found) if found else None


def fp8_unsupported_gpu(ctx: FixContext, data: dict[str, Any]) -> Fix:
    steps = tuple(data.get("steps", ()))
    texts = _texts(ctx)
    asked = _asked_for_fp8(ctx)
    if asked:
        return Fix(
            summary=(f"The launch asks for FP8 itself ({' and '.join(asked)}): launch without it on this GPU. The FP8 "
                     "kernel it chose needs native FP8 (compute capability 8.9+), which this GPU lacks."),
            flags=tuple(FlagOp(op="remove", flag=flag) for flag in asked),
            steps=steps,
        )
    capability = _oldest_capability(ctx, texts)
    if capability is not None and capability < _MARLIN_FROM:
        # (vLLM 0.33.0's MarlinFP8ScaledMMLinearKernel takes 7.5+ for linear layers: said only below that)
        below = (f" A GPU of compute capability {show(capability)} has no weight-only (Marlin) FP8 path either."
                 if capability < _ANY_MARLIN else "")
        return Fix(summary=_GENERAL + below, steps=steps)
    joined = "\n".join(texts)
    if ctx.launch.engine == "sglang" and _MOE_KERNEL.search(joined):
        return Fix(
            summary=("SGLang's FP8 MoE experts (its fused_moe_kernel) need native FP8: no SGLang release logsleuth has "
                     "read runs them weight-only. Serve a BF16/FP16 or INT4/INT8 (AWQ, GPTQ) checkpoint of this model, "
                     "or use a GPU with compute capability 8.9+."),
            steps=(*steps, "vLLM 0.11.2 and 0.33.0 run FP8 MoE experts weight-only through Marlin from compute "
                   "capability 8.0, if serving this model with vLLM is an option"),
        )
    if (ctx.launch.engine == "vllm" and _WEIGHT_GEMM.search(joined)
            and (capability is None or _MARLIN_FROM <= capability < _NATIVE_FROM)):
        return Fix(
            summary=("vLLM runs FP8 checkpoints weight-only through Marlin on this GPU (0.11.2, 0.33.0), so this "
                     "build sent the checkpoint's weights to an FP8-compute kernel it did not need: if the same model "
                     "loaded on an earlier release or build, pin that one and report the regression; otherwise serve "
                     "a BF16/FP16 or INT4/INT8 (AWQ, GPTQ) checkpoint, or use a GPU with compute capability 8.9+."),
            steps=steps,
        )
    return Fix(summary=_GENERAL, steps=steps)
