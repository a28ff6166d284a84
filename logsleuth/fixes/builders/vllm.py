"""Builders for vLLM's runtime failures: memory (KV cache vs --max-model-len, free memory vs
--gpu-memory-utilization, OOM while profiling, loading or capturing CUDA graphs).

Values come from the numbers in vLLM's own message, or from the launch command when the message has none; a
value neither gives is left to the user (needs_input), never guessed.  Every corrected command these builders
print for the pattern fixtures is run through the real `vllm serve` validation of 0.11.2 and 0.33.0
(tests/vllm_oracle/test_runtime_fixes_pass.py).
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from logsleuth.facts.gpus import shows_cpu_platform
from logsleuth.fixes.builders.memory import past_tried, tried_shares
from logsleuth.fixes.builders.parallel import flag_as_given
from logsleuth.fixes.context import FixContext, interpolate
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp

_UTIL = "--gpu-memory-utilization"
_MAX_LEN = "--max-model-len"
_MAX_SEQS = "--max-num-seqs"
_BATCHED = "--max-num-batched-tokens"
_KV_DTYPE = "--kv-cache-dtype"
_TP = "--tensor-parallel-size"
_EAGER = "--enforce-eager"

DEFAULT_UTILIZATION = 0.9  # vLLM's default --gpu-memory-utilization (0.6 to 0.33)
# Above this vLLM leaves too little for what it does not count (the CUDA context, NCCL buffers); its docs and
# issues keep serving launches at or below it.
UTILIZATION_CEILING = 0.95
UTILIZATION_FLOOR = 0.5
# vLLM's V1 worker logs the GPU's size before sizing the KV cache (gpu_worker.py determine_available_memory,
# a DEBUG record in 0.8 to 0.11): `total_gpu_memory=23.58GiB`.
_TOTAL_MEMORY = compile_lazily_regex(r"total_gpu_memory=(?P<total>\d+(?:\.\d+)?)\s*GiB")


def command_number(ctx: FixContext, flag: str) -> float | None:
    """The launch command's value of `flag` (any spelling), as a number; None when not given or not literal."""
    if ctx.command is None:
        return None
    raw = ctx.command.value(flag_as_given(ctx, flag))
    try:
        return float(raw) if raw not in (None, "") else None
    except ValueError:
        return None  # `$UTIL`, a typo: another pattern's business


def _number(ctx: FixContext, capture: str) -> float | None:
    raw = ctx.captures.get(capture)
    try:
        return float(raw) if raw else None
    except ValueError:
        return None


def _fraction(value: float) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".")


def _summary(data: dict[str, Any], ctx: FixContext, **values: str | None) -> str:
    """The pattern's summary with the builder's values; a value it could not know leaves its placeholder out."""
    return interpolate(str(data.get("summary", "")), {**ctx.captures, **{k: v for k, v in values.items() if v}})


def _steps(data: dict[str, Any], ctx: FixContext, **values: str | None) -> tuple[str, ...]:
    known = {**ctx.captures, **{k: v for k, v in values.items() if v}}
    return tuple(interpolate(str(step), known) for step in data.get("steps", ()))


def _current_utilization(ctx: FixContext) -> float:
    return command_number(ctx, _UTIL) or _number(ctx, "util") or DEFAULT_UTILIZATION


def _total_gpu_memory(ctx: FixContext) -> float | None:
    for line in reversed(ctx.failure.context):
        if "total_gpu_memory=" in line and (m := _TOTAL_MEMORY.search(line)):
            return float(m["total"])
    return None


# -- max_model_len vs the KV cache ---------------------------------------------------------------------------


def kv_cache_max_model_len(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """One request of --max-model-len does not fit in the KV cache.  Set --max-model-len to what fits: vLLM's
    own estimate (V1), the KV cache's token count (V0), or the length scaled by available/needed, rounded down
    to a multiple of 16.  Alternatives, each only when the message's numbers show it is enough on its own:
    FP8 KV cache (half the bytes per token), a higher --gpu-memory-utilization (needs the GPU's size)."""
    max_len = _number(ctx, "max_len")
    needed, available = _number(ctx, "needed"), _number(ctx, "available")
    fits = _number(ctx, "estimate") or _number(ctx, "kv_tokens")
    if fits is None and max_len and needed and available:
        fits = math.floor(max_len * available / needed / 16) * 16
    value = str(int(fits)) if fits and fits >= 16 else None
    if _on_cpu_platform(ctx):
        return _cpu_kv_cache_max_model_len(ctx, data, value, needed)
    fix = Fix(
        summary=_summary(data, ctx, value=value),
        flags=(FlagOp("set", _MAX_LEN, value),),
        steps=(*_steps(data, ctx), *(() if ctx.launch.gpu_lines else (_CPU_NOTE,))),
    )
    alternatives: list[Fix] = []
    # FP8 halves the KV cache's bytes per token; it helps alone only when half the need fits (5 % margin for
    # the block rounding).  An FP8 cache already: nothing to halve.
    current_dtype = (ctx.command.value(_KV_DTYPE) if ctx.command else None) or "auto"
    kv_tokens = _number(ctx, "kv_tokens")
    fp8_fits = bool(needed and available and needed / 2 <= available * 0.95) or bool(
        max_len and kv_tokens and max_len <= 2 * kv_tokens * 0.95
    )
    if fp8_fits and not current_dtype.startswith("fp8"):
        alternatives.append(Fix(
            summary="Or store the KV cache in FP8 (half the memory per token; a small accuracy cost, and not "
            "every attention backend supports it on every GPU).",
            flags=(FlagOp("set", _KV_DTYPE, "fp8"),),
        ))
    total = _total_gpu_memory(ctx)
    if needed and available and total:
        current = _current_utilization(ctx)
        wanted = math.ceil((current + (needed - available) / total) * 100 + 1) / 100  # +0.01: rounding margin
        tried = tried_shares(ctx, _UTIL, command_number(ctx, _UTIL) or _number(ctx, "util"))
        # a higher share the paste shows failed too is no alternative (fixes/builders/memory.py past_tried)
        if wanted <= UTILIZATION_CEILING and past_tried(wanted, current, tried, 0.05, UTILIZATION_FLOOR) is not None:
            alternatives.append(Fix(
                summary=f"Or raise {_UTIL} to {_fraction(wanted)} (was {current:g}): {needed - available:.2f} GiB "
                f"more of the {total:g} GiB GPU for the KV cache. Only when no other process uses this GPU.",
                flags=(FlagOp("set", _UTIL, _fraction(wanted)),),
            ))
    return replace(fix, alternatives=tuple(alternatives))


# On vLLM's CPU backend the KV cache's size is VLLM_CPU_KVCACHE_SPACE, in GiB, 4 by default (vllm/platforms/cpu.py
# get_device_total_memory 0.11.2; the "legacy setting" that overrides --kv-cache-memory-bytes in 0.33.0): raising
# --gpu-memory-utilization does not give it more there, and the CPU backend has no FP8 KV cache ("CPU backend
# doesn't support KV cache quantization fallback to auto", 0.11.2).
_CPU_KV_SPACE = "VLLM_CPU_KVCACHE_SPACE"
_CPU_NOTE = (
    f"general guidance: on vLLM's CPU backend the KV cache's size is the environment variable {_CPU_KV_SPACE} "
    "(GiB, 4 by default), not --gpu-memory-utilization"
)


def _on_cpu_platform(ctx: FixContext) -> bool:
    """The log shows vLLM's CPU platform (its start-up lines, kept as device lines, or a line near the failure)."""
    return any(shows_cpu_platform(line) for line in (*ctx.launch.gpu_lines, *ctx.failure.context))


def _cpu_kv_cache_max_model_len(ctx: FixContext, data: dict[str, Any], value: str | None, needed: float | None) -> Fix:
    """The CPU backend's KV cache is too small for one request: lower --max-model-len, or give the cache the GiB
    the message says one request needs (whole GiB, rounded up) when the host has that memory."""
    steps = [_steps(data, ctx)[0]] if data.get("steps") else []
    steps.append(
        f"on vLLM's CPU backend the KV cache's size is {_CPU_KV_SPACE} (GiB of host memory, 4 by default); "
        "--gpu-memory-utilization and an FP8 KV cache do not give it more room there"
    )
    fix = Fix(
        summary=_summary(data, ctx, value=value),
        flags=(FlagOp("set", _MAX_LEN, value),),
        steps=tuple(steps),
    )
    if not needed:
        return fix
    space = math.floor(needed) + 1  # whole GiB, above the need
    return replace(fix, alternatives=(Fix(
        summary=f"Or keep the full length: set {_CPU_KV_SPACE}={space} ({needed:g} GiB needed) in the server's "
        "environment, when the host has that much memory free beside the weights.",
        env=((_CPU_KV_SPACE, str(space)),),
    ),))


# -- free memory vs --gpu-memory-utilization -----------------------------------------------------------------


def utilization_within_free(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """vLLM asks for --gpu-memory-utilization x total and less is free: the largest fraction (two decimals,
    rounded down) whose share is within the free memory the message reports.  Below 0.05 the GPU is as good
    as taken: no value, free it first."""
    free, total = _number(ctx, "free"), _number(ctx, "total")
    value = None
    if free and total and total > 0:
        fraction = math.floor(free / total * 100) / 100
        # The message rounds GiB to two decimals: keep 0.01 GiB of slack so the check passes, not just ties.
        while fraction > 0 and fraction * total > free - 0.01:
            fraction = round(fraction - 0.01, 2)
        value = _fraction(fraction) if fraction >= 0.05 else None
    return Fix(
        summary=_summary(data, ctx, value=value),
        flags=(FlagOp("set", _UTIL, value),),
        steps=_steps(data, ctx, value=value),
    )


# -- OOM at start-up ------------------------------------------------------------------------------------------


def _frames(ctx: FixContext) -> list[tuple[str, str]]:
    return [(frame.file, frame.function or "") for block in ctx.failure.exceptions for frame in block.frames]


def _halved(ctx: FixContext, flag: str, floor: int = 1) -> str | None:
    current = command_number(ctx, flag)
    return str(max(floor, int(current) // 2)) if current and current > floor else None


# gpu_model_runner.py _dummy_sampler_run / _dummy_pooler_run (0.8.5.post1 to 0.33.0): the dummy request count.
_WARMUP = compile_lazily_regex(r"when warming up (?:sampler|pooler)[^\n]*? with (?P<num_reqs>\d+) dummy requests")


def _warmup_requests(ctx: FixContext) -> float | None:
    """The sampler's or pooler's warm-up request count, from any message of the chain (the pattern may have
    matched on the frames, without capturing it)."""
    for block in reversed(ctx.failure.exceptions):
        if "dummy requests" in block.message and (m := _WARMUP.search(block.message)):
            return float(m["num_reqs"])
    return None


def profiling_oom(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """OOM in the profiling run: make the batch it profiles smaller.  The sampler's (pooler's) warm-up names
    its dummy request count, --max-num-seqs: half of it.  Otherwise V1 (frames under vllm/v1/) profiles
    --max-num-batched-tokens tokens; V0 profiles max_num_seqs sequences of up to --max-model-len tokens
    (multimodal models: max_num_seqs images at full size, vllm-project/vllm#10569).  A value comes from the
    message or the command, halved; without either the flag is named for the user to set."""
    warmup = _number(ctx, "num_reqs") or _warmup_requests(ctx)
    frames = _frames(ctx)
    v1 = any("/vllm/v1/" in path for path, _ in frames)
    summary = _summary(data, ctx)
    seqs_value = str(max(1, int(warmup) // 2)) if warmup and warmup > 1 else _halved(ctx, _MAX_SEQS)
    seqs = Fix(
        summary=f"Lower {_MAX_SEQS}" + (f" to {seqs_value}" if seqs_value else "")
        + (f" (the warm-up ran {int(warmup)} dummy requests)." if warmup else ": fewer requests (and images) "
           "in the profiling batch."),
        flags=(FlagOp("set", flag_as_given(ctx, _MAX_SEQS), seqs_value),),
    )
    if v1 and not warmup:
        seqs_now = command_number(ctx, _MAX_SEQS)
        tokens = Fix(
            summary=f"Lower {_BATCHED}: the profiling run's batch is that many tokens.",
            flags=(FlagOp("set", flag_as_given(ctx, _BATCHED), _halved(ctx, _BATCHED, int(seqs_now or 1))),),
        )
        first, rest = tokens, [seqs]
    else:
        length = Fix(
            summary=f"Or lower {_MAX_LEN}: the V0 profiling run's batch is up to that many tokens.",
            flags=(FlagOp("set", _MAX_LEN, _halved(ctx, _MAX_LEN, 16)),),
        )
        first, rest = seqs, ([] if warmup else [length])
    alternatives = tuple(replace(alt, summary=alt.summary if alt.summary.startswith("Or") else
                                 "Or " + alt.summary[0].lower() + alt.summary[1:]) for alt in rest)
    lead = first.summary[:1].lower() + first.summary[1:] if summary else first.summary
    return replace(first, summary=f"{summary} {lead}".strip(), steps=_steps(data, ctx),
                   alternatives=alternatives)


def _visible_gpus(ctx: FixContext) -> int | None:
    """GPUs the launch lets vLLM see: CUDA_VISIBLE_DEVICES=0,1,… in front of the command."""
    for word in ctx.command.prefix if ctx.command else ():
        name, _, value = word.partition("=")
        if name == "CUDA_VISIBLE_DEVICES" and value:
            return len([gpu for gpu in value.split(",") if gpu.strip()])
    return None


def weight_load_oom(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """The weights do not fit on one GPU's share: a larger --tensor-parallel-size.  Doubled only when the
    command shows the GPUs for it (CUDA_VISIBLE_DEVICES); otherwise the user knows how many GPUs there are."""
    current = int(command_number(ctx, _TP) or 1)
    gpus = _visible_gpus(ctx)
    value = str(current * 2) if gpus is not None and gpus >= current * 2 else None
    return Fix(
        summary=_summary(data, ctx, value=value),
        flags=(FlagOp("set", flag_as_given(ctx, _TP), value),),
        steps=_steps(data, ctx),
    )


def cuda_graph_oom(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """OOM while capturing CUDA graphs: run eager (no graphs; vLLM's own advice in V0's capture_model and its
    conserving-memory docs).  When the capture ran after the KV cache was allocated (capture_model, not 0.33's
    profile_cudagraph_memory), a lower --gpu-memory-utilization leaves the graphs more room: 0.05 less."""
    functions = {function for _, function in _frames(ctx)}
    if ctx.command is not None and ctx.command.has(_EAGER):
        return Fix(summary=f"The launch already has {_EAGER}: no CUDA graphs should be captured.",
                   steps=_steps(data, ctx))
    alternatives: list[Fix] = []
    if "capture_model" in functions and "profile_cudagraph_memory" not in functions:
        current = _current_utilization(ctx)
        tried = tried_shares(ctx, _UTIL, command_number(ctx, _UTIL) or _number(ctx, "util"))
        # below a lower share the paste shows failed too (fixes/builders/memory.py past_tried)
        lower = past_tried(max(UTILIZATION_FLOOR, round(current - 0.05, 2)), current, tried, 0.05, UTILIZATION_FLOOR)
        if lower is not None and lower < current:
            alternatives.append(Fix(
                summary=f"Or keep CUDA graphs and lower {_UTIL} to {_fraction(lower)} (was {current:g}): the "
                "graphs are captured in what is left after the KV cache, which gets smaller.",
                flags=(FlagOp("set", _UTIL, _fraction(lower)),),
            ))
    return Fix(
        summary=_summary(data, ctx),
        flags=(FlagOp("add", _EAGER),),
        steps=_steps(data, ctx),
        alternatives=tuple(alternatives),
    )
