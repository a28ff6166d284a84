"""Builders for argparse errors: unknown flags, bad choices and values, switches given a value, missing flags."""

from __future__ import annotations

import difflib
from typing import Any

import regex

from logsleuth.fixes.builders.speculative import DRAFT, STEPS, TOPK
from logsleuth.fixes.context import FixContext
from logsleuth.models import Fix, FlagOp

# vLLM flag names people carry over to SGLang.
VLLM_TO_SGLANG: dict[str, str | None] = {
    "--gpu-memory-utilization": "--mem-fraction-static",
    "--max-model-len": "--context-length",
    "--tensor-parallel-size": "--tp-size",
    "--pipeline-parallel-size": "--pp-size",
    "--data-parallel-size": "--dp-size",
    "--max-num-seqs": "--max-running-requests",
    "--max-num-batched-tokens": "--max-prefill-tokens",
    "--served-model-name": "--served-model-name",
    "--enforce-eager": "--disable-cuda-graph",
    "--num-speculative-tokens": None,  # maps to three flags: handled apart
    "--model": "--model-path",
    "--tokenizer": "--tokenizer-path",
}


def _split_unrecognized(message: str) -> list[tuple[str, str | None]]:
    """`unrecognized arguments: --a 1 --b /x` -> [("--a", "1"), ("--b", "/x")]."""
    tokens = message.split(":", 1)[-1].split()
    pairs: list[tuple[str, str | None]] = []
    for token in tokens:
        if token.startswith("--"):
            name, eq, value = token.partition("=")
            pairs.append((name, value if eq else None))
        elif pairs and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], token)
        else:
            pairs.append((token, None))  # a stray positional
    return pairs


def _switch_before(token: str, ctx: FixContext) -> str | None:
    """The on/off flag that a stray value was written after (`--disable-radix-cache true`)."""
    if ctx.command is None or ctx.catalog is None:
        return None
    for name, values in ctx.command.options:
        info = ctx.catalog.find(name)
        if values and values[0] == token and info is not None and not info.takes_value:
            return name
    return None


def suggest_flag(flag: str, ctx: FixContext) -> str | None:
    """The flag the user probably meant, for this engine version."""
    if flag in VLLM_TO_SGLANG:
        return VLLM_TO_SGLANG[flag]
    names = ctx.catalog.names() if ctx.catalog else []
    dashed = "--" + flag.lstrip("-").replace("_", "-")
    if dashed in names:
        return dashed
    prefixed = [name for name in names if name.startswith(flag)]
    if len(prefixed) == 1:
        return prefixed[0]
    close = difflib.get_close_matches(flag, names, n=1, cutoff=0.75)
    return close[0] if close else None


def unrecognized_arguments(ctx: FixContext, data: dict[str, Any]) -> Fix:
    ops: list[FlagOp] = []
    notes: list[str] = []
    for flag, value in _split_unrecognized(ctx.failure.final.message):
        if not flag.startswith("-"):
            switch = _switch_before(flag, ctx)
            if switch:
                ops.append(FlagOp("set", switch, ""))
                notes.append(f"{switch} is a switch and takes no value: drop the '{flag}' after it")
            elif ctx.command is not None and ctx.command.has("--model-path"):
                ops.append(FlagOp("remove", flag))  # a positional: `remove` of a token without dashes
                notes.append(f"remove the stray argument '{flag}' (the model is already given with --model-path)")
            else:
                ops.append(FlagOp("add", "--model-path", flag))
                notes.append(f"pass the model as --model-path {flag}")
            continue
        if flag == "--num-speculative-tokens":
            ops.append(FlagOp("remove", flag))
            cmd = ctx.command
            if cmd is not None and cmd.has("--speculative-algorithm") and value and value.isdigit():
                steps = int(value)
                ops.extend(
                    (
                        FlagOp("add", STEPS, str(steps)),
                        FlagOp("add", TOPK, "1"),
                        FlagOp("add", DRAFT, str(steps + 1)),
                    )
                )
                notes.append(f"SGLang sizes speculation with {STEPS}/{TOPK}/{DRAFT} instead of {flag}")
            else:
                notes.append(
                    f"SGLang has no {flag}: speculative decoding is set with --speculative-algorithm, "
                    f"--speculative-draft-model-path and {STEPS}/{TOPK}/{DRAFT}"
                )
            continue
        suggestion = suggest_flag(flag, ctx)
        if suggestion:
            ops.append(FlagOp("rename", flag, value, to=suggestion))
            notes.append(f"{flag} is {suggestion} in SGLang")
        else:
            ops.append(FlagOp("remove", flag))
            notes.append(f"SGLang has no {flag}")
    return Fix(summary="; ".join(notes).capitalize() + ".", flags=tuple(ops))


_CHOICE = regex.compile(r"argument (?P<flag>--[\w\-]+)(?:/[\w\-/]+)?: invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)")
_INVALID_VALUE = regex.compile(r"argument (?P<flag>--[\w\-]+)(?:/[\w\-/]+)?: invalid (?P<type>\w+) value: '(?P<value>[^']*)'")
_EXPLICIT = regex.compile(r"argument (?P<flag>--[\w\-]+)(?:/[\w\-/]+)?: ignored explicit argument '(?P<value>[^']*)'")
_REQUIRED = regex.compile(r"the following arguments are required: (?P<flags>.+)")
_CHOICE_ALIASES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "half": "float16"}


def _normalize_choice(text: str) -> str:
    return regex.sub(r"[\W_]+", "", text).lower()


def nearest_choice(value: str, choices: list[str]) -> str | None:
    if value.lower() in _CHOICE_ALIASES and _CHOICE_ALIASES[value.lower()] in choices:
        return _CHOICE_ALIASES[value.lower()]
    normalized = {_normalize_choice(choice): choice for choice in choices}
    if _normalize_choice(value) in normalized:
        return normalized[_normalize_choice(value)]
    close = difflib.get_close_matches(value, choices, n=1, cutoff=0.5)
    if close:
        return close[0]
    close = difflib.get_close_matches(_normalize_choice(value), list(normalized), n=1, cutoff=0.5)
    return normalized[close[0]] if close else None


def invalid_choice(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    m = _CHOICE.search(ctx.failure.final.message)
    if not m:
        return None
    choices = regex.findall(r"'([^']*)'", m["choices"])
    best = nearest_choice(m["value"], choices)
    summary = (
        f"{m['flag']} takes one of {', '.join(choices)}; '{m['value']}' is not one of them"
        + (f": use {best}." if best else ".")
    )
    return Fix(summary=summary, flags=(FlagOp("set", m["flag"], best),))


def invalid_value(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    m = _INVALID_VALUE.search(ctx.failure.final.message)
    if not m:
        return None
    digits = regex.search(r"-?\d+(?:\.\d+)?", m["value"])
    value = digits.group(0) if digits and m["type"] in ("int", "float") else None
    if value and m["type"] == "int":
        value = str(int(float(value)))
    hint = f"use {value}" if value else "give a number or leave the flag out to use the default"
    return Fix(summary=f"{m['flag']} needs a{'n' if m['type'][0] in 'aeiou' else ''} {m['type']}, not '{m['value']}': {hint}.",
               flags=(FlagOp("set", m["flag"], value),))


def store_true_with_value(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    m = _EXPLICIT.search(ctx.failure.final.message)
    if not m:
        return None
    false = m["value"].lower() in ("false", "0", "no", "off")
    if false:
        return Fix(summary=f"{m['flag']} is a switch and takes no value; to turn it off, leave it out.",
                   flags=(FlagOp("remove", m["flag"]),))
    return Fix(summary=f"{m['flag']} is a switch and takes no value: write it alone.",
               flags=(FlagOp("set", m["flag"], ""),))


def missing_required(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    m = _REQUIRED.search(ctx.failure.final.message)
    if not m:
        return None
    flags = [part.split("/")[0].strip() for part in m["flags"].split(",")]
    cmd = ctx.command
    ops = []
    for flag in flags:
        value = None
        if flag == "--model-path" and cmd is not None and cmd.positional:
            value = cmd.positional[0]  # vLLM-style `serve MODEL`: SGLang wants --model-path MODEL
        ops.append(FlagOp("add", flag, value))
    positional_note = " (SGLang takes no positional model)" if cmd is not None and cmd.positional else ""
    return Fix(summary=f"Add {' and '.join(flags)}{positional_note}.", flags=tuple(ops))


def replace_in_value(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """A value with a forbidden character: the same value with it replaced."""
    flag, old, new = data["flag"], data["old"], data["new"]
    given = ctx.captures.get("value") or (ctx.command.value(flag) if ctx.command else None)
    value = given.replace(old, new) if given else None
    return Fix(summary=f"Use {flag} {value or 'NAME'} (no '{old}').", flags=(FlagOp("set", flag, value),))


def nearest_choice_for_flag(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """A bad value reported by the engine itself (not argparse): choices come from the catalog."""
    flag = data["flag"]
    value = ctx.captures.get("value", "")
    info = ctx.catalog.find(flag) if ctx.catalog else None
    choices = list(info.choices) if info and info.choices else [str(c) for c in data.get("choices", ())]
    best = nearest_choice(value, choices) if choices else None
    summary = f"{flag} does not accept '{value}'" + (f": use {best}." if best else f"; valid: {', '.join(choices)}.")
    return Fix(summary=summary, flags=(FlagOp("set", flag, best),))
