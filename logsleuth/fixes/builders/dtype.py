"""Fixes that change the dtype a model runs in, for a GPU that lacks one (bfloat16 before compute capability 8.0).

float16 runs on the GPUs the engine supports; a GPU below what the engine's build runs on at all (vLLM: 7.0,
facts/gpus.toml `vllm-cuda`) fails again in another kernel whatever the dtype.  The message may name several GPUs
(one per rank or per run, in mixed hosts): the oldest decides."""

from __future__ import annotations

from typing import Any

from logsleuth.facts.gpus import Capability, feature, parse_capability, show
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix

# vLLM's check_if_supports_dtype: "… Your Tesla P40 GPU has compute capability 6.1."
_STATED = compile_lazily_regex(r"Your (?P<gpu>.+?) GPU has compute capability (?P<cc>\d+\.\d+)")


def _oldest_gpu(ctx: FixContext) -> tuple[str, Capability] | None:
    texts = [*(block.message for block in ctx.failure.exceptions), *ctx.lines]  # a grouped rank's GPU is in the lines
    stated = [(found["gpu"], cap) for text in texts for found in _STATED.finditer(text)
              if (cap := parse_capability(found["cc"])) is not None]
    return min(stated, key=lambda item: item[1]) if stated else None


def vllm_half_precision(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """The pattern's float16 fix, unless a GPU the message names is below what vLLM runs on at all."""
    floor = feature("vllm-cuda")
    oldest = _oldest_gpu(ctx)
    if floor is None or floor.minimum is None or oldest is None or oldest[1] >= floor.minimum:
        return ctx.build({key: value for key, value in data.items() if key != "builder"})
    gpu, capability = oldest
    return Fix(
        summary=(f"The {gpu} GPU has compute capability {show(capability)}, below the {show(floor.minimum)} every "
                 "vLLM release requires (recent releases document 7.5): no --dtype makes vLLM run on it, "
                 "float16 only moves the failure to another kernel. Serve from GPUs of compute capability 7.0 or "
                 "newer (CUDA_VISIBLE_DEVICES can leave this one out), with --dtype half on those older than 8.0."),
        steps=("nvidia-smi --query-gpu=index,name,compute_cap --format=csv lists each GPU's compute capability",),
    )
