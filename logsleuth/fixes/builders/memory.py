"""Builders for memory failures: move --mem-fraction-static by a step, within bounds; admit fewer requests."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from logsleuth.fixes.context import FixContext, interpolate
from logsleuth.fixes.static import static_fix
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp

_MEM = "--mem-fraction-static"
_FLOAT = compile_lazily_regex(r"\d*\.\d+|\d+")


def server_arg(ctx: FixContext, name: str) -> str | None:
    for key, value in ctx.launch.server_args:
        if key == name:
            return value.strip("'\"")
    return None


def current_mem_fraction(ctx: FixContext) -> float | None:
    """--mem-fraction-static as launched: the command, the `server_args=` line, or the message."""
    candidates = [
        ctx.command.value(_MEM) if ctx.command else None,
        server_arg(ctx, "mem_fraction_static"),
        ctx.captures.get("current"),
    ]
    for raw in candidates:
        if raw and (m := _FLOAT.search(raw)):
            try:
                return float(m.group(0))
            except ValueError:
                continue
    return None


def tried_shares(ctx: FixContext, flag: str, current: float | None) -> tuple[float, ...]:
    """The values of the memory share `flag` the log names beside the launch's own (`current`): runs the paste shows
    tried (another launch, the user's words), which failed too.  With the launch's value unknown, one value alone is
    that launch's (its settings dump, the user's words about it); several are runs, the failing one among them."""
    seen = tuple(dict.fromkeys(value for name, value in ctx.launch.memory_shares_seen if name == flag))
    if current is None:
        return seen if len(seen) > 1 else ()
    return tuple(value for value in seen if abs(value - current) > 1e-9)


def past_tried(new: float, current: float | None, tried: tuple[float, ...], step: float, floor: float
               ) -> float | None:
    """`new`, kept clear of the values the paste shows failed: lowering goes below the lowest tried value it reaches
    (None under `floor`); raising to or past a higher value that failed is no fix the log supports (None: the value is
    the user's to choose, sgl-project/sglang#4330: 0.84 left no room for the KV cache, 0.85 ran out of CUDA memory)."""
    lowering = current is not None and new < current
    reached = [t for t in tried if (t < current if lowering else t > current)] if current is not None else list(tried)
    if lowering or (current is None and reached and new <= min(reached)):
        below = [t for t in reached if t <= new + 1e-9]
        if not below:
            return new
        moved = round(min(below) - step, 2)
        return moved if moved >= floor else None
    return None if reached else new


def tried_note(flag: str, tried: tuple[float, ...]) -> str:
    values = [f"{value:g}" for value in sorted(tried)]
    listed = values[0] if len(values) == 1 else ", ".join(values[:-1]) + " and " + values[-1]
    return f"The paste shows runs with {flag} {listed} failing too."


def share_needs_input(flag: str, tried: tuple[float, ...], alternatives: tuple[Fix, ...], steps: tuple[str, ...] = ()
                      ) -> Fix:
    """The share's fix when every value this log supports has failed: the flag with no value (needs_input), the
    values tried named, the other fixes kept."""
    return Fix(
        summary=f"{tried_note(flag, tried)} A value past those is no fix this log supports: choose {flag} yourself "
        "(between the launch's value and one that failed, where room is left), or take another fix below.",
        flags=(FlagOp("set", flag, None),),
        steps=steps,
        alternatives=alternatives,
    )


def mem_fraction(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Move --mem-fraction-static down (more room for activations and CUDA graphs) or up
    (more room for the KV cache), by `step`, within [`floor`, `ceiling`]."""
    direction = data.get("direction", "lower")
    step = float(data.get("step", 0.1))
    current = current_mem_fraction(ctx)
    if current is None:
        new = float(data.get("default", 0.8 if direction == "lower" else 0.9))
    elif direction == "lower":
        new = max(float(data.get("floor", 0.5)), current - step)
    else:
        new = min(float(data.get("ceiling", 0.95)), current + step)
    alternatives = ctx.alternatives(data)
    if current is not None and ((direction == "raise" and new <= current) or (direction == "lower" and new >= current)):
        return _already_at_bound(current, direction, alternatives)
    tried = tried_shares(ctx, _MEM, current)
    cleared = past_tried(new, current, tried, step, float(data.get("floor", 0.5))) if tried else new
    if cleared is None:
        return share_needs_input(_MEM, tried, alternatives)
    new = cleared
    value = f"{new:.2f}".rstrip("0").rstrip(".")
    was = f" (was {current:g})" if current is not None else ""
    summary = interpolate(str(data.get("summary", "")), {**ctx.captures, "value": value, "was": was})
    if not summary:
        verb = "Lower" if direction == "lower" else "Raise"
        summary = f"{verb} {_MEM} to {value}{was}."
    return Fix(
        summary=summary,
        flags=(FlagOp("set", _MEM, value),),
        steps=tuple(interpolate(str(s), ctx.captures) for s in data.get("steps", ())),
        alternatives=alternatives,
    )


# Speculative decoding with a draft model: the target sizes its KV cache inside --mem-fraction-static, then the
# draft model, its KV pool (as many tokens as the target's, plus headroom) and its CUDA graphs load in the memory
# left outside it (sglang/srt/model_executor/model_runner.py init_memory_pool, draft_runner_cache_size, 0.4.10.post2;
# server_args.py keeps 2 GiB (EAGLE) or 6 GiB (STANDALONE) more outside the default fraction, 0.4.10.post2 to 0.5.9).
# Raising the fraction squeezes the draft into an out-of-memory: sgl-project/sglang#4330 (0.84 "Not enough memory",
# 0.85 CUDA out of memory), sgl-project/sglang#6876 (the draft's share mis-sized).  NGRAM drafts from the prompt: no
# draft model, the fraction's advice stands.
_SPECULATIVE = "--speculative-algorithm"
_NO_DRAFT_MODEL = frozenset({"NGRAM", "LOOKAHEAD"})


def draft_model_algorithm(ctx: FixContext) -> str | None:
    """The speculative algorithm of the launch when it loads a draft model (the command, else `server_args=`)."""
    raw = (ctx.command.value(_SPECULATIVE) if ctx.command else None) or server_arg(ctx, "speculative_algorithm")
    if not raw or raw == "None" or raw.upper() in _NO_DRAFT_MODEL:
        return None
    return raw


def kv_room_beside_draft(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """No KV-cache room inside --mem-fraction-static: `mem_fraction` raises it, except beside a draft model, where
    a higher fraction leaves the draft no room.  There the first step is a smaller share of the weights per GPU,
    then a launch without speculative decoding; the pattern's flag alternatives (an FP8 KV cache) follow."""
    algorithm = draft_model_algorithm(ctx)
    if algorithm is None:
        return mem_fraction(ctx, data)
    # The pattern's steps-only alternative (a larger --tp-size) is this fix's own first step.
    alternatives = [alt for alt in ctx.alternatives(data) if alt.flags]
    speculative = [flag for flag, _ in ctx.command.options if flag.startswith("--speculative-")] if ctx.command else []
    if speculative:
        alternatives.insert(0, Fix(
            summary="Or launch once without speculative decoding, to see whether the target model alone fits.",
            flags=tuple(FlagOp("remove", flag) for flag in dict.fromkeys(speculative)),
        ))
    return Fix(
        summary=f"Give each GPU a smaller share of the weights (a larger --tp-size, or a quantized checkpoint) rather "
        f"than raising {_MEM}: with speculative decoding ({algorithm}) the memory outside the fraction must also hold "
        "the draft model, its KV cache and its CUDA graphs, and a higher fraction runs out of CUDA memory there.",
        steps=(
            "raise --tp-size (e.g. 1 -> 2) where the GPUs are there, or serve a quantized checkpoint of the model",
            f"SGLang's own default {_MEM} keeps about 2 GiB (EAGLE) or 6 GiB (STANDALONE) more outside the fraction "
            "for the draft; a value set by hand must leave that room too",
        ),
        alternatives=tuple(alternatives),
    )


def _already_at_bound(current: float, direction: str, alternatives: tuple[Fix, ...]) -> Fix:
    """The launch already ran with the fraction at the bound: moving it further is advice the log contradicts.
    The pattern's other fixes come first instead."""
    moved = "raised" if direction == "raise" else "lowered"
    note = f"{_MEM} was already {current:g} and cannot usefully be {moved} further."
    if not alternatives:
        return Fix(summary=note)
    return _first_alternative(note, Fix(summary=note, alternatives=alternatives))


_MAX_RUNNING = "--max-running-requests"


def current_max_running_requests(ctx: FixContext) -> int | None:
    """--max-running-requests as launched (the command, else the `server_args=` line); None when SGLang chose it."""
    raw = (ctx.command.value(_MAX_RUNNING) if ctx.command else None) or server_arg(ctx, "max_running_requests")
    try:
        return int(raw) if raw else None
    except ValueError:
        return None  # `None`, or an expansion such as $MAX_REQS


def fewer_running_requests(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Lower --max-running-requests: to half the launched value when known (a fixed value could raise a small
    one), else to the pattern's `default`."""
    current = current_max_running_requests(ctx)
    base = replace(static_fix({**data, "alternatives": ()}, ctx.captures), alternatives=ctx.alternatives(data))
    if current is not None and current <= 1:
        note = f"{_MAX_RUNNING} was already {current}: fewer requests at once cannot help."
        return replace(base, summary=note, flags=()) if not base.alternatives else _first_alternative(note, base)
    value = str(max(1, current // 2)) if current is not None else str(data.get("default", 32))
    was = f" (was {current})" if current is not None else ""
    summary = interpolate(str(data.get("summary", "")), {**ctx.captures, "value": value, "was": was})
    # the launch's own fraction first: a pool it made small is the likeliest reason it ran out
    return replace(base, summary=summary, flags=(FlagOp("set", _MAX_RUNNING, value),),
                   steps=(*_lowered_fraction(ctx), *base.steps))


def _lowered_fraction(ctx: FixContext) -> tuple[str, ...]:
    """The KV pool is what --mem-fraction-static leaves after the weights: a launch that set the fraction (most often
    lowered, to make room for something else on the GPU) ran out sooner for it, and lowering it further never helps
    a pool that ran out while serving."""
    given = ctx.command.value("--mem-fraction-static") if ctx.command is not None else None
    if given is None or ctx.launch.command_source == "server_args":
        return ()  # a command rebuilt from the settings dump shows the fraction the engine chose, not one the user set
    return (f"the launch sets --mem-fraction-static {given}: the KV pool is what that share of GPU memory leaves after "
            "the weights, so a lower share runs out sooner; raising it back toward the default (where the GPU has the "
            "room) is the other way out, lowering it further is not",)


def _first_alternative(note: str, fix: Fix) -> Fix:
    first, *rest = fix.alternatives
    summary = first.summary.removeprefix("Or, ").removeprefix("Or ")
    return replace(first, summary=f"{note} {summary[:1].upper()}{summary[1:]}", alternatives=tuple(rest))
