"""Builders for a checkpoint's quantization tensors the model has no parameter for (KeyError 'qweight',
'weight_scale', ... in load_weights).

The two causes want opposite advice: a --quantization that overrides the checkpoint's own method is dropped; with
no such flag the engine already took the method from the checkpoint's config.json, and this release does not load
that method's tensors for this architecture.  A fix never removes or changes a flag the launch does not give
(issue 28, the blind split of stop 38): the launch's command or settings dump decides which advice is given, and
with neither the advice stays conditional."""

from __future__ import annotations

from typing import Any

from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Fix

QUANTIZATION_FLAGS = ("--quantization", "-q")
# The checkpoint's method where the log prints it: config.json's quantization_config ('quant_method': 'awq'), or
# vLLM's engine config line, which shows the method it resolved (quantization=awq).
_QUANT_METHOD = compile_lazily(r"""['"]?quant_method['"]?\s*[:=]\s*['"]?(?P<method>[\w-]+)""")
_RESOLVED = compile_lazily(r"with config:.*?\bquantization=(?P<method>[\w-]+)")


def _given_quantization(ctx: FixContext) -> tuple[bool | None, str | None]:
    """Whether the launch gives a quantization method, and which: None when neither its command nor its settings
    dump is in the log."""
    if ctx.command is not None:
        flag = next((flag for flag in QUANTIZATION_FLAGS if ctx.command.has(flag)), None)
        return (flag is not None, ctx.command.value(flag) if flag else None)
    dumped = dict(ctx.launch.server_args).get("quantization")
    if dumped is not None:
        value = dumped.strip("'\"")
        return (value not in ("None", ""), value if value not in ("None", "") else None)
    return None, None


def _checkpoint_method(ctx: FixContext) -> str | None:
    for line in ctx.failure.context:
        found = _QUANT_METHOD.search(line) or _RESOLVED.search(line)
        if found is not None and found["method"] != "None":
            return found["method"]
    return None


def checkpoint_quantization(ctx: FixContext, data: dict[str, Any]) -> Fix:
    engine = ENGINE_NAMES.get(ctx.launch.engine or "", "the engine")
    given, value = _given_quantization(ctx)
    method = _checkpoint_method(ctx)
    if given:
        return Fix(
            summary=(f"The launch's --quantization {value or ''} overrides the checkpoint's own method: launch without "
                     f"it, so that {engine} reads the method from the checkpoint's config.json "
                     "(quantization_config.quant_method)."),
            steps=("if config.json's quant_method is the same method, this release does not load it for this "
                   f"architecture: a newer {engine} release, or a checkpoint in another format",),
        )
    named = f" ({method}, as the log shows)" if method else ""
    if given is False:
        return Fix(
            summary=(f"The launch gives no --quantization, so {engine} took the method from the checkpoint's "
                     f"config.json{named}; this release builds no parameter for the tensor the checkpoint holds under "
                     "that method for this architecture. Nothing to remove from the command."),
            steps=(
                "read quantization_config.quant_method in the checkpoint's config.json (and its other fields: bits, "
                "group size, the format of its scales)",
                f"check that {engine}'s release supports that method for this model's architecture (its list of "
                "supported quantization methods); a newer release, or the same model in another format, may load it",
            ),
            needs_input=() if method else ("the checkpoint's quantization method (config.json: quantization_config.quant_method)",),
        )
    return Fix(
        summary=(f"Let {engine} take the quantization method from the checkpoint's config.json{named}: if the launch "
                 "gives a --quantization that names another method, launch without it; if it gives none, this release "
                 "does not load that method's tensors for this architecture."),
        steps=tuple(data.get("steps", ())),
        needs_input=() if method else ("the checkpoint's quantization method (config.json: quantization_config.quant_method)",),
    )
