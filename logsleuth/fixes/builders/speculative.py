"""Builders for speculative-decoding failures: the EAGLE/EAGLE3 sizes (steps, top-k, draft tokens)."""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from logsleuth.fixes.context import FixContext
from logsleuth.models import Fix, FlagOp

SPECULATIVE_FLAGS = (
    "--speculative-algorithm",
    "--speculative-draft-model-path",
    "--speculative-num-steps",
    "--speculative-eagle-topk",
    "--speculative-num-draft-tokens",
)
TOPK = "--speculative-eagle-topk"
DRAFT = "--speculative-num-draft-tokens"
STEPS = "--speculative-num-steps"


def _steps_for(topk: int | None, draft_tokens: int | None) -> int:
    """A --speculative-num-steps that SGLang accepts with that top-k and draft-token count.

    With top-k 1 the draft tree is a chain, and SGLang requires draft tokens = steps + 1.
    With a wider tree the tokens spread over the steps.
    """
    if draft_tokens is None:
        return 3
    if topk in (None, 1):
        return max(1, draft_tokens - 1)
    return max(1, math.ceil((draft_tokens - 1) / topk))


def eagle_partial_spec_args(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """SGLang asserts that top-k and draft tokens are both unset when num-steps is unset."""
    cmd = ctx.command
    if cmd is None:
        # The assert tells only that --speculative-num-steps was not given.  Adding it alone leads into a
        # TypeError when top-k was not given either: what works for every command is to remove the two
        # (SGLang then chooses all three) or to give all three.
        return Fix(
            summary=(
                f"Remove {TOPK} and {DRAFT}, whichever you gave: without {STEPS}, SGLang chooses all three sizes "
                f"itself. Adding only {STEPS} is not enough when {TOPK} was not given (that fails with a TypeError)."
            ),
            flags=(FlagOp("remove", TOPK), FlagOp("remove", DRAFT)),
            alternatives=(_all_three("Or give all three sizes together"),),
        )
    has_topk = cmd.has(TOPK) if cmd else True
    has_draft = cmd.has(DRAFT) if cmd else True
    topk = cmd.int_value(TOPK) if cmd else None
    draft = cmd.int_value(DRAFT) if cmd else None
    remove_all = Fix(
        summary="Or drop the speculative size flags you gave and let SGLang choose steps, top-k and draft tokens itself.",
        flags=tuple(FlagOp("remove", flag) for flag, given in ((TOPK, has_topk), (DRAFT, has_draft)) if given),
    )
    if has_topk and has_draft:
        steps = _steps_for(topk, draft)
        how = f"{STEPS} {steps}" if cmd else f"{STEPS} N (N = draft tokens - 1 when top-k is 1)"
        return Fix(
            summary=(
                f"Give all three speculative sizes: add {how} next to {TOPK} and {DRAFT}. "
                "Removing only the top-k flag still crashes."
            ),
            flags=(FlagOp("add", STEPS, str(steps) if cmd else None),),
            alternatives=(remove_all,),
        )
    if has_draft:  # draft tokens alone
        steps = _steps_for(1, draft)
        return Fix(
            summary=f"Remove {DRAFT} (SGLang then chooses all three), or give all three sizes.",
            flags=(FlagOp("remove", DRAFT),),
            alternatives=(
                Fix(
                    summary=f"Or give all three: {STEPS} {steps} {TOPK} 1 {DRAFT} {draft}.",
                    flags=(FlagOp("add", STEPS, str(steps)), FlagOp("add", TOPK, "1")),
                ),
            ),
        )
    steps = _steps_for(topk, None)
    # Run on 0.4.10.post2 / 0.5.9 / 0.5.23: top-k and steps without draft tokens pass; with top-k 1 SGLang
    # sets draft tokens = steps + 1 itself, with a wider tree it leaves them unset.
    derived = f" (SGLang then sets {DRAFT} to {steps + 1})" if topk == 1 else ""
    return Fix(
        summary=f"Add {STEPS} {steps} next to {TOPK}{derived}, or remove {TOPK}.",
        flags=(FlagOp("add", STEPS, str(steps)),),
        alternatives=(remove_all,),
    )


def _all_three(lead: str) -> Fix:
    """Steps, top-k and draft tokens that pass SGLang's checks together, whatever else the command holds."""
    return Fix(
        summary=f"{lead}: {STEPS} 3 {TOPK} 1 {DRAFT} 4 (with top-k 1, the draft tokens must be steps + 1).",
        flags=(FlagOp("set", STEPS, "3"), FlagOp("set", TOPK, "1"), FlagOp("set", DRAFT, "4")),
    )


def eagle_missing_topk(ctx: FixContext, data: dict[str, Any]) -> Fix:
    cmd = ctx.command
    if cmd is None:
        # The TypeError tells that --speculative-num-steps was given and top-k was not; the draft tokens are
        # unknown, so a top-k alone could still contradict them.
        return replace(
            _all_three("Give all three speculative sizes together"),
            alternatives=(
                Fix(
                    summary=f"Or remove {STEPS} and {DRAFT}, whichever you gave, and let SGLang choose all three.",
                    flags=(FlagOp("remove", STEPS), FlagOp("remove", DRAFT)),
                ),
            ),
        )
    steps = cmd.int_value(STEPS) if cmd else None
    draft = cmd.int_value(DRAFT) if cmd else None
    # top-k 1 is valid whenever draft tokens = steps + 1; otherwise keep the tree small.
    topk = 1 if steps is None or draft is None or draft == steps + 1 else max(1, math.ceil((draft - 1) / steps))
    return Fix(
        summary=f"Add {TOPK} {topk}: with {STEPS} given, SGLang needs top-k too.",
        flags=(FlagOp("add", TOPK, str(topk)),),
        alternatives=(
            Fix(
                summary=f"Or remove {STEPS} and {DRAFT} and let SGLang choose all three.",
                flags=tuple(FlagOp("remove", f) for f in (STEPS, DRAFT) if cmd is None or cmd.has(f)),
            ),
        ),
    )


def multi_layer_draft_tokens(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Multi-layer EAGLE drafts one token per step: draft tokens must be steps + 1.  The assert names both."""
    steps, draft = _int(ctx.captures.get("steps")), _int(ctx.captures.get("draft"))
    if steps is None:
        return Fix(summary=f"Set {DRAFT} to {STEPS} + 1.", flags=(FlagOp("set", DRAFT),))
    alternatives: tuple[Fix, ...] = ()
    if draft is not None and draft >= 2:
        alternatives = (
            Fix(summary=f"Or keep {draft} draft tokens and set {STEPS} to {draft - 1}.", flags=(FlagOp("set", STEPS, str(draft - 1)),)),
        )
    return Fix(
        summary=f"Set {DRAFT} to {steps + 1} ({STEPS} {steps} + 1).",
        flags=(FlagOp("set", DRAFT, str(steps + 1)),),
        alternatives=alternatives,
    )


def _int(text: str | None) -> int | None:
    try:
        return int(text) if text else None
    except ValueError:
        return None


def eagle_chain(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Draft a chain instead of a tree (top-k 1, which some settings require): keep the steps the user gave,
    with draft tokens = steps + 1; all three sizes given so that no check about partial sizes fires."""
    steps = ctx.command.int_value(STEPS) if ctx.command else None
    steps = steps if steps and steps > 0 else 3
    lead = str(data.get("summary", "Draft a chain"))
    return Fix(
        summary=f"{lead}: {STEPS} {steps} {TOPK} 1 {DRAFT} {steps + 1} (with top-k 1, draft tokens = steps + 1).",
        flags=(FlagOp("set", STEPS, str(steps)), FlagOp("set", TOPK, "1"), FlagOp("set", DRAFT, str(steps + 1))),
        alternatives=ctx.alternatives(data),
    )
