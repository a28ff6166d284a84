"""Builders for scheduling settings: priority scheduling and the policies it allows."""

from __future__ import annotations

from typing import Any

from logsleuth.fixes.context import FixContext
from logsleuth.models import Fix, FlagOp

_PRIORITY_POLICIES = ("fcfs", "lof")  # "To use priority scheduling, schedule_policy must be 'fcfs' or 'lof'"


def enable_priority_scheduling(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Turn priority scheduling on, and with it a schedule policy it accepts: adding the flag alone to a launch
    with --schedule-policy lpm would fail on SGLang's next check."""
    policy = ctx.command.value("--schedule-policy") if ctx.command else None
    ops = [FlagOp("add", "--enable-priority-scheduling")]
    if ctx.command is None:
        ops.append(FlagOp("set", "--schedule-policy", "fcfs"))
        note = " with --schedule-policy fcfs (the default; lof works too): priority scheduling accepts no other policy"
    elif policy is not None and policy not in _PRIORITY_POLICIES:
        ops.append(FlagOp("set", "--schedule-policy", "fcfs"))
        note = f", and --schedule-policy fcfs instead of {policy} (priority scheduling accepts only fcfs or lof)"
    else:
        note = ""
    return Fix(
        summary=f"Add --enable-priority-scheduling{note}.",
        flags=tuple(ops),
        alternatives=ctx.alternatives(data),
    )
