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
    return replace(first, alternatives=(replace(second, summary="Or " + second.summary[0].lower() + second.summary[1:]),))



def divisors_text(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """A size that must divide a number in the message (attention heads by the tensor-parallel size): the fix
    names the divisors, as text only (`{divisors}`, `{below}`: the largest divisor under the size asked for,
    `{above}`: the smallest over it).  `of` and `size` name the captures that hold the two numbers."""
    number, size = ctx.captures.get(str(data["of"]), ""), ctx.captures.get(str(data["size"]), "")
    values = dict(ctx.captures)
    if number.isdigit() and int(number) > 0:
        divisors = [d for d in range(1, int(number) + 1) if int(number) % d == 0]
        asked = int(size) if size.isdigit() else 0
        values["divisors"] = ", ".join(map(str, divisors))
        values.update({k: str(v) for k, v in (("below", max((d for d in divisors if d < asked), default=None)),
                                              ("above", min((d for d in divisors if d > asked), default=None)),
                                              ("power_of_two_below", max((d for d in divisors if d < asked
                                                                          and d & (d - 1) == 0), default=None)))
                       if v})
    # With `flag`, the fix also sets it to `{power_of_two_below}`: fewer GPUs than asked for are there, and a
    # power of two also divides the sizes the message does not show (KV heads, hidden and MoE sizes), where an
    # odd divisor such as 7 of 28 heads fails at load.  A larger size needs GPUs the message does not show.
    flag = data.get("flag")
    return Fix(
        summary=interpolate(str(data.get("summary", "")), values),
        flags=(FlagOp("set", flag_as_given(ctx, str(flag)), values.get("power_of_two_below")),) if flag else (),
        steps=tuple(interpolate(str(step), values) for step in data.get("steps", ())),
    )


def flag_as_given(ctx: FixContext, flag: str) -> str:
    """`flag` as the command spells it (`-tp` for --tensor-parallel-size), so a `set` replaces that word."""
    if ctx.command is None or ctx.command.has(flag):
        return flag
    info = ctx.catalog.find(flag) if ctx.catalog is not None else None
    return next((alias for alias in (info.aliases if info else ()) if ctx.command.has(alias)), flag)


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
