"""A launch command written for the other engine: every flag translated (fixes/cross_engine.py), none dropped
silently.  Flags that cannot be carried over exactly are listed by name with the reason."""

from __future__ import annotations

from typing import Any

from logsleuth.fixes import cross_engine
from logsleuth.fixes.command import CommandLine
from logsleuth.fixes.context import FixContext
from logsleuth.models import Fix, FlagOp

_DISPLAY = cross_engine.DISPLAY


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
        return f"{item.flag} ({_DISPLAY[target]}'s nearest, {item.target}, is not the same setting: {item.note})"
    return f"{item.flag} ({item.note})"


def describe(translation: cross_engine.Translation) -> str:
    """The fix text: what became of every flag of the command, in sentences by outcome."""
    target = _DISPLAY[translation.target]
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
    ops = translation.ops()
    alternatives: tuple[Fix, ...] = ()
    near = translation.near
    if near:
        names = ", ".join(str(item.target) for item in near)
        chosen = tuple(FlagOp("set", str(item.target), None) for item in near)
        alternatives = (
            Fix(
                summary=f"Or set {names} yourself: {_DISPLAY[target]} measures {'them' if len(near) > 1 else 'it'} "
                "differently, so only you can choose the value (without it, the engine's default applies).",
                flags=ops + chosen,
            ),
        )
    return Fix(summary=describe(translation), flags=ops, alternatives=alternatives)
