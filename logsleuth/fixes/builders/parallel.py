"""Builders for parallel layouts: sizes that must divide each other, pipeline parallelism's incompatibilities."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from logsleuth.fixes.builders.speculative import SPECULATIVE_FLAGS
from logsleuth.fixes.context import FixContext, interpolate
from logsleuth.models import Fix, FlagOp


def divisible_sizes(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """`a % b == 0` asserts: make `b` a divisor of `a`, or `a` a multiple of `b`.
    `prefer = "outer"` puts the second first (e.g. round a chunk size up to the page size)."""
    outer, inner = data["outer"], data["inner"]  # e.g. --tp-size, --dp-size
    cmd = ctx.command
    a = cmd.int_value(outer) if cmd else None
    b = cmd.int_value(inner) if cmd else None
    new_b = max((d for d in range(1, (a or 1) + 1) if a and a % d == 0 and d <= (b or a)), default=None) if a else None
    new_a = (math.ceil(a / b) * b if a and b else None)
    change_inner = Fix(
        summary=interpolate(str(data.get("summary", f"Set {inner} to a divisor of {outer}.")), ctx.captures),
        flags=(FlagOp("set", inner, str(new_b) if new_b else None),),
    )
    change_outer = Fix(
        summary=f"Set {outer} to a multiple of {inner}.", flags=(FlagOp("set", outer, str(new_a) if new_a else None),)
    )
    first, second = (change_outer, change_inner) if data.get("prefer") == "outer" else (change_inner, change_outer)
    return replace(first, alternatives=(replace(second, summary="Or: " + second.summary[0].lower() + second.summary[1:]),))


def pp_incompatible(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Pipeline parallelism (0.4.x-0.5.9) needs the overlap scheduler off, no speculative
    decoding and no mixed chunked prefill."""
    cmd = ctx.command
    ops: list[FlagOp] = []
    if cmd is None or not cmd.has("--disable-overlap-schedule"):
        ops.append(FlagOp("add", "--disable-overlap-schedule"))
    if data.get("remove_speculative", True):
        ops.extend(FlagOp("remove", flag) for flag in SPECULATIVE_FLAGS if cmd is None or cmd.has(flag))
    if cmd is None or cmd.has("--enable-mixed-chunk"):
        ops.append(FlagOp("remove", "--enable-mixed-chunk"))
    summary = str(data.get("summary", "")) or (
        "Pipeline parallelism runs without the overlap scheduler, speculative decoding and mixed chunked "
        "prefill: add --disable-overlap-schedule and drop the others."
    )
    pp_flag = "--pp-size" if cmd is None or cmd.has("--pp-size") else "--pipeline-parallel-size"
    return Fix(
        summary=interpolate(summary, ctx.captures),
        flags=tuple(ops),
        alternatives=(
            Fix(
                summary="Or keep speculative decoding and drop pipeline parallelism (use --tp-size for the GPUs).",
                flags=(FlagOp("remove", pp_flag),),
            ),
        ),
    )
