"""Fixes that change the dtype a model runs in, for a GPU that lacks one (bfloat16 before compute capability 8.0).

float16 runs on the GPUs the engine supports; a GPU below what the engine's build runs on at all (vLLM: 7.0, and 7.5
from 0.31.0 by its docs: facts/gpus.toml `vllm-cuda`, `vllm-cuda-0.31.0`) fails again in another kernel whatever the
dtype.  The message may name several GPUs
(one per rank or per run, in mixed hosts): the oldest decides."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from logsleuth.facts.gpus import CHECK_GPU, Capability, feature, parse_capability, show
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix
from logsleuth.versions import version_key

# vLLM's check_if_supports_dtype: "… Your Tesla P40 GPU has compute capability 6.1."
_STATED = compile_lazily_regex(r"Your (?P<gpu>.+?) GPU has compute capability (?P<cc>\d+\.\d+)")


def _oldest_gpu(ctx: FixContext) -> tuple[str, Capability] | None:
    texts = [*(block.message for block in ctx.failure.exceptions), *ctx.lines]  # a grouped rank's GPU is in the lines
    stated = [(found["gpu"], cap) for text in texts for found in _STATED.finditer(text)
              if (cap := parse_capability(found["cc"])) is not None]
    return min(stated, key=lambda item: item[1]) if stated else None


def _floors() -> tuple[Capability, Capability, str]:
    """vLLM's documented floors (facts/gpus.toml): every release's, the later one, and the release it starts at."""
    lower, recent = feature("vllm-cuda"), feature("vllm-cuda-0.31.0")
    assert lower is not None and lower.minimum is not None and recent is not None and recent.minimum is not None
    return lower.minimum, recent.minimum, recent.key.rsplit("-", 1)[-1]


def _release_from(version: str | None, since: str) -> bool | None:
    """Whether `version` is `since` or later; None when the release is not known."""
    key, since_key = version_key(version or ""), version_key(since)
    return None if key is None or since_key is None else key >= since_key


def vllm_half_precision(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """The pattern's float16 fix, unless a GPU the message names is below what the vLLM release runs on at all (the
    later floor from its release on; the release unknown, or between the two documented ones, the lower one)."""
    oldest = _oldest_gpu(ctx)
    lower, recent, since = _floors()
    version = ctx.launch.named_version
    from_since = _release_from(version, since)
    floor = recent if from_since else lower
    if oldest is None or oldest[1] >= floor:
        fix = ctx.build({key: value for key, value in data.items() if key != "builder"})
        if fix is not None and oldest is not None and oldest[1] < recent and from_since is None:
            # The release not known to be older than the one whose docs raise the floor above this GPU: say so.
            fix = replace(fix, steps=(*fix.steps, f"vLLM's docs require compute capability {show(recent)} from "
                                                  f"{since}: on such a release the {oldest[0]} ({show(oldest[1])}) is "
                                                  "below the floor whatever the dtype"))
        return fix
    said = (f"the {show(recent)} vLLM {version} requires" if from_since
            else f"the {show(lower)} every vLLM release requires (its docs say {show(recent)} from {since})")
    gpu, capability = oldest
    return Fix(
        summary=(f"The {gpu} GPU has compute capability {show(capability)}, below {said}: no --dtype makes vLLM run "
                 f"on it, float16 only moves the failure to another kernel. Serve from GPUs of compute capability "
                 f"{show(floor)} or newer (CUDA_VISIBLE_DEVICES can leave this one out), with --dtype half on those "
                 "older than 8.0."),
        steps=(f"{CHECK_GPU} lists each GPU's compute capability",),
    )
