"""A launch command written for the other engine: every flag translated (fixes/cross_engine.py), none dropped
silently.  Flags that cannot be carried over exactly are listed by name with the reason."""

from __future__ import annotations

from typing import Any

from logsleuth.command_line import CommandLine
from logsleuth.fixes import cross_engine
from logsleuth.fixes.context import FixContext
from logsleuth.models import ENGINE_NAMES, Fix, FlagOp


def command_from_message(message: str) -> CommandLine | None:
    """The flags argparse listed as unrecognized, as a command with no entry point (the log has no command)."""
    listed = message.split(":", 1)[-1].strip()
    try:
        return CommandLine.parse("serve " + listed)
    except ValueError:
        return None


def _renamed(item: cross_engine.FlagTranslation) -> str:
    if item.value is not None and item.given:
        return f"{item.flag} {item.given[0]} becomes {item.target} {item.value}"  # converted: numbers and names only
    return f"{item.flag} becomes {item.target}"


def _left_out(item: cross_engine.FlagTranslation, target: str) -> str:
    if item.reason == "near":
        return f"{item.flag} ({ENGINE_NAMES[target]}'s nearest, {item.target}, is not the same setting: {item.note})"
    return f"{item.flag} ({item.note})"


def describe(translation: cross_engine.Translation) -> str:
    """The fix text: what became of every flag of the command, in sentences by outcome."""
    target = ENGINE_NAMES[translation.target]
    sentences = []
    renamed = [_renamed(item) for item in translation.renamed]
    if translation.model is not None and translation.model_flag:
        renamed.append(f"the model is given with {translation.model_flag}")
    if renamed:
        sentences.append(f"Written for {target}: " + ", ".join(renamed))
    left_out = [_left_out(item, translation.target) for item in translation.left_out]
    if left_out:
        sentences.append("Left out: " + "; ".join(left_out))
    cautions = [f"{item.flag} ({item.note})" for item in (*translation.kept, *translation.renamed) if item.note]
    if cautions:
        sentences.append("Check " + "; ".join(cautions))
    kept = [item.flag for item in translation.kept]
    if kept:
        sentences.append(f"Kept as written ({target} has them too): " + ", ".join(kept))
    return ". ".join(sentences) + "."


def command_for_other_engine(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """The launch command with every flag of the other engine translated for the engine that ran it."""
    # The engine that ran: the log says, else the pattern (a pasted usage error may carry no command).
    target = cross_engine.engine_of(ctx.launch.engine or data.get("runs_on"))
    command = ctx.command or command_from_message(ctx.failure.final.message)
    if command is None:
        return None
    catalog = ctx.catalog
    if catalog is None or catalog.engine != target:  # the engine was not known when the catalog was chosen
        catalog = cross_engine.catalog_for(target)
    translation = cross_engine.translate(command, target, catalog)
    if not translation.foreign:
        return ctx.build({"builder": "unrecognized_arguments"})  # --cmd gave a command of this engine after all
    translated = Fix(summary=describe(translation), flags=translation.ops())
    near = [str(item.target) for item in translation.near]
    # A whole command carried over: the translation that runs as it is comes first.
    return with_nearest_chosen(translated, near, ENGINE_NAMES[target], chosen_first=False) if near else translated


def with_nearest_chosen(left_out: Fix, nearest: list[str], engine: str, chosen_first: bool) -> Fix:
    """Flags of the other engine whose nearest counterparts here measure something else (the same number would
    mean another amount here).  Two fixes: add those counterparts with a value only the user can choose
    (needs_input: no number is made up), or leave them to the engine's default (runs as it is).
    `chosen_first`: a single setting carried over was what the user meant to set, so keeping it comes first;
    for a whole command, the translation that runs comes first."""
    names = ", ".join(nearest)
    chosen = Fix(
        summary=f"{left_out.summary} Set {names} to a value you choose for {engine}.",
        flags=(*left_out.flags, *(FlagOp("add", name, None) for name in nearest)),
        needs_input=tuple(nearest),
    )
    if chosen_first:
        default = Fix(summary=f"Or leave {names} to {engine}: without the flag, it chooses the value itself.", flags=left_out.flags)
        return Fix(chosen.summary, chosen.flags, needs_input=chosen.needs_input, alternatives=(default,))
    keep_limit = Fix(summary=f"Or set {names} to a value you choose for {engine}.", flags=chosen.flags, needs_input=chosen.needs_input)
    return Fix(left_out.summary, left_out.flags, alternatives=(keep_limit,))
