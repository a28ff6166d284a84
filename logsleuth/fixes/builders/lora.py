"""Builders for LoRA settings: one fix per LoRA assert of check_lora_server_args (0.4.10.post2 - 0.5.23)."""

from __future__ import annotations

from typing import Any

from logsleuth.command_line import CommandLine
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
        return _lora_and_radix(cmd)
    return Fix(
        summary="--max-loras-per-batch must be at least 1.",
        flags=(FlagOp("set", "--max-loras-per-batch", "8"),),
    )


def _lora_and_radix(cmd: CommandLine | None) -> Fix:
    """0.4.x checks two things in one assert: `max_loras_per_batch > 0 and (lora_paths is None or
    disable_radix_cache)`.  Run on 0.4.10.post2: --lora-paths with --max-loras-per-batch 0 passes only with
    both changes; without --lora-paths only the per-batch value matters."""
    per_batch = cmd.int_value("--max-loras-per-batch") if cmd else None
    radix_needed = cmd is None or (cmd.has("--lora-paths") and not cmd.has("--disable-radix-cache"))
    per_batch_needed = cmd is None or (per_batch is not None and per_batch <= 0)
    if not radix_needed and not per_batch_needed:  # the command says neither (it may not be the whole story)
        radix_needed = True
    ops = []
    if radix_needed:
        ops.append(FlagOp("add", "--disable-radix-cache"))
    if per_batch_needed:
        ops.append(FlagOp("set", "--max-loras-per-batch", "8"))
    if cmd is None:
        summary = (
            "This SGLang version serves LoRA adapters only without the radix cache and with --max-loras-per-batch "
            "at least 1: add --disable-radix-cache, and --max-loras-per-batch 8 (the default) if you gave 0."
        )
    elif radix_needed and per_batch_needed:
        summary = "This SGLang version needs both: --disable-radix-cache with --lora-paths, and --max-loras-per-batch at least 1."
    elif per_batch_needed:
        summary = "--max-loras-per-batch must be at least 1."
    else:
        summary = "This SGLang version cannot combine LoRA with the radix cache: add --disable-radix-cache."
    return Fix(summary=summary, flags=tuple(ops))


# The --max-lora-rank values every vLLM release with LoRA accepts (LoRAConfig's `possible_max_ranks` began as
# these four; later releases added 1, 128, 256, 320 and 512, which their catalogs list as the flag's choices).
_RANKS_EVERY_VLLM = (8, 16, 32, 64)
_MAX_LORA_RANK = "--max-lora-rank"
_WRAPPER_STEP = ("run through a wrapper (LlamaFactory, ms-swift, verl, gpustack): raise the wrapper's own setting "
                 "that it passes to vLLM as max_lora_rank (LLM(max_lora_rank=...) in a script)")


def vllm_lora_rank(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """vLLM refusing an adapter above --max-lora-rank: the smallest value the user's release accepts that holds
    the adapter's rank.  The accepted values are the release's (its catalog's choices); a release the log or the
    user does not name leaves the value to the user (needs_input), since which values exist depends on it."""
    rank = int(ctx.captures.get("rank") or 0)
    release = ctx.launch.named_version
    accepted = _accepted_ranks(ctx) if release else ()
    if release is None or not accepted:
        fitting = next((value for value in _RANKS_EVERY_VLLM if value >= rank), None)
        hint = f" ({fitting} is accepted by every release)" if fitting else ""
        return Fix(
            summary=f"Give {_MAX_LORA_RANK} at least the adapter's rank, {rank}{hint}; the values it accepts depend on "
            "the vLLM release, which the log does not name.",
            steps=(_WRAPPER_STEP,),
            needs_input=(_MAX_LORA_RANK,),
        )
    fitting = next((value for value in accepted if value >= rank), None)
    if fitting is None:
        return Fix(
            summary=f"vLLM {release} accepts {_MAX_LORA_RANK} up to {accepted[-1]}, below this adapter's rank {rank}: "
            "serve an adapter trained at a lower rank, or a vLLM release that accepts a larger --max-lora-rank.",
            needs_input=(_MAX_LORA_RANK,),
        )
    return Fix(
        summary=f"Set {_MAX_LORA_RANK} {fitting}: the smallest value vLLM {release} accepts that holds the adapter's "
        f"rank {rank} (a larger one costs memory and speed for every request).",
        flags=(FlagOp("set", _MAX_LORA_RANK, str(fitting)),),
        steps=(_WRAPPER_STEP,),
    )


def _accepted_ranks(ctx: FixContext) -> tuple[int, ...]:
    """The --max-lora-rank values the release's catalog lists, smallest first; () when it lists none."""
    flag = ctx.catalog.find(_MAX_LORA_RANK) if ctx.catalog else None
    if flag is None:
        return ()
    if flag.choices:
        return tuple(sorted(int(choice) for choice in flag.choices if str(choice).isdigit()))
    # A release whose catalog was read from its source without the choices: the values every release accepts.
    return _RANKS_EVERY_VLLM
