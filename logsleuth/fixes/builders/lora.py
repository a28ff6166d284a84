"""Builders for LoRA settings: one fix per LoRA assert of check_lora_server_args (0.4.10.post2 - 0.5.23)."""

from __future__ import annotations

from typing import Any

from logsleuth.fixes.builders.speculative import SPECULATIVE_FLAGS
from logsleuth.fixes.context import FixContext
from logsleuth.models import Fix, FlagOp


def lora_config(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """One fix per LoRA assert in check_lora_server_args (0.4.10.post2 - 0.5.23)."""
    detail = ctx.captures.get("detail", "")
    cmd = ctx.command
    if detail.startswith("When no initial --lora-paths"):
        ops = tuple(
            FlagOp("add", flag, value)
            for flag, value in (("--max-lora-rank", "64"), ("--lora-target-modules", "all"))
            if cmd is None or not cmd.has(flag)
        )
        return Fix(
            summary="Without --lora-paths at launch, give the largest adapter rank you will load and the modules "
            "adapters may target (or load an adapter at launch with --lora-paths NAME=PATH).",
            flags=ops,
        )
    if detail.startswith("max_loaded_loras should be"):
        per_batch, loaded = ctx.captures.get("per_batch"), ctx.captures.get("loaded")
        return Fix(
            summary=f"Raise --max-loaded-loras to {per_batch}: every adapter of a batch must be loaded at once.",
            flags=(FlagOp("set", "--max-loaded-loras", per_batch),),
            alternatives=(
                Fix(summary=f"Or lower --max-loras-per-batch to {loaded}.", flags=(FlagOp("set", "--max-loras-per-batch", loaded),)),
            ),
        )
    if detail.startswith("The number of LoRA paths"):
        paths = ctx.captures.get("paths")
        return Fix(
            summary=f"Raise --max-loaded-loras to {paths} (the number of --lora-paths given).",
            flags=(FlagOp("set", "--max-loaded-loras", paths),),
        )
    if detail.startswith("If 'all'"):
        return Fix(
            summary="Give --lora-target-modules either 'all' alone or a list of module names.",
            flags=(FlagOp("set", "--lora-target-modules", "all"),),
        )
    if detail.startswith("Currently LoRA is only compatible with NGRAM"):
        return Fix(
            summary="LoRA works only with NGRAM speculative decoding in this version: drop the speculative "
            "flags (or serve the adapters without speculative decoding).",
            flags=tuple(
                FlagOp("remove", flag)
                for flag in SPECULATIVE_FLAGS
                if cmd is None or cmd.has(flag)
            ),
            alternatives=(Fix(summary="Or keep speculative decoding and drop LoRA.", flags=(FlagOp("remove", "--enable-lora"),)),),
        )
    if detail.startswith("compatibility of lora and radix"):
        given = cmd.int_value("--max-loras-per-batch") if cmd else None
        if given is not None and given <= 0:  # 0.4.x checks both in one assert
            return Fix(summary="--max-loras-per-batch must be at least 1.", flags=(FlagOp("set", "--max-loras-per-batch", "8"),))
        return Fix(
            summary="This SGLang version cannot combine LoRA with the radix cache: add --disable-radix-cache.",
            flags=(FlagOp("add", "--disable-radix-cache"),),
        )
    return Fix(
        summary="--max-loras-per-batch must be at least 1.",
        flags=(FlagOp("set", "--max-loras-per-batch", "8"),),
    )
