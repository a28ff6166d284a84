"""Fix builder: turn a matched pattern into flag operations and a corrected command.

A pattern's `[fix]` is either static data (flags, env, steps, with `{capture}`
placeholders) or names a builder here (`builder = "..."`) when the right change
depends on the command that was run: which flags were given, their values, and the
flags that exist in that engine version.
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

import regex

from logsleuth import catalog as catalogs
from logsleuth.command import CommandLine
from logsleuth.models import Failure, Fix, FlagOp, LaunchInfo


@dataclass(frozen=True)
class FixContext:
    failure: Failure
    captures: dict[str, str]
    launch: LaunchInfo
    command: CommandLine | None
    catalog: catalogs.Catalog | None


Builder = Callable[[FixContext, dict[str, Any]], Fix | None]
_BUILDERS: dict[str, Builder] = {}


def has_builder(name: str) -> bool:
    return name in _BUILDERS


def builder(name: str) -> Callable[[Builder], Builder]:
    def register(function: Builder) -> Builder:
        _BUILDERS[name] = function
        return function

    return register


class _Captures(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def interpolate(template: str, captures: dict[str, str]) -> str:
    try:
        return template.format_map(_Captures(captures))
    except (ValueError, IndexError):
        return template


class _CommandValues(dict[str, str]):
    """`{cmd[--tp-size]}` in a pattern's fix: that flag's value in the launch command."""

    def __init__(self, command: CommandLine | None) -> None:
        super().__init__()
        self.command = command

    def __missing__(self, flag: str) -> str:
        value = self.command.value(flag) if self.command else None
        if value is None:
            raise KeyError(flag)
        return value


def static_fix(data: dict[str, Any], captures: dict[str, Any]) -> Fix:
    """A `[fix]` table as data: flags, env and steps with `{capture}` / `{cmd[--flag]}` placeholders."""

    def value(raw: Any) -> str | None:
        if raw is None:
            return None
        try:
            text = str(raw).format_map(_Captures(captures))
        except (KeyError, ValueError, IndexError):
            return None  # a value that depends on a flag the command does not have
        return None if "{" in text else text

    return Fix(
        summary=interpolate(str(data.get("summary", "")), captures),
        flags=tuple(
            FlagOp(op=f["op"], flag=f["flag"], value=value(f.get("value")), to=value(f.get("to")))
            for f in data.get("flags", ())
        ),
        env=tuple((k, interpolate(str(v), captures)) for k, v in (data.get("env") or {}).items()),
        steps=tuple(interpolate(str(step), captures) for step in data.get("steps", ())),
        alternatives=tuple(static_fix(alt, captures) for alt in data.get("alternatives", ())),
    )


def build_fix(fix_data: dict[str, Any], failure: Failure, captures: dict[str, str], launch: LaunchInfo) -> Fix | None:
    if not fix_data:
        return None
    engine = launch.engine or "sglang"
    catalog = catalogs.load(engine, launch.engine_version)
    command = None
    if launch.command:
        try:
            # Parsed without knowing which flags are switches: a stray `true` after a switch
            # then stays attached to it, where a fix can clear it.
            command = CommandLine.parse(launch.command, trusted=launch.command_source == "user")
        except ValueError:
            command = None  # unbalanced quotes: no corrected command, the flag ops still stand
    context = FixContext(failure, captures, launch, command, catalog)
    name = fix_data.get("builder")
    fix = _BUILDERS[name](context, fix_data) if name else static_fix(fix_data, {**captures, "cmd": _CommandValues(command)})
    if fix is None:
        return None
    return with_commands(fix, command)


def needs_input(fix: Fix) -> tuple[str, ...]:
    """Flags the fix adds without a value logsleuth can know (e.g. which model to serve)."""
    return tuple(op.flag for op in fix.flags if op.op == "add" and op.value is None and op.flag in _VALUE_FLAGS)


# Flags whose value only the user knows; an `add` of one without a value cannot be rendered.
_VALUE_FLAGS = frozenset({"--model-path", "--tokenizer-path", "--speculative-draft-model-path", "--lora-paths"})


def with_commands(fix: Fix, command: CommandLine | None) -> Fix:
    """Fill in the corrected command of the fix and of each alternative.  A fix that needs
    a value only the user knows gets no command: a half-filled command would not run."""
    if command is None:
        return fix
    alternatives = tuple(with_commands(alt, command) for alt in fix.alternatives)
    if needs_input(fix):
        return replace(fix, alternatives=alternatives)
    rendered = None
    if fix.flags:
        try:
            # Every name and value is quoted by the command: env values can hold log text (captures).
            rendered = command.apply(fix.flags).with_env(fix.env).render()
        except ValueError:
            rendered = None  # an env name that is not a variable name: no command rather than a wrong one
    return replace(fix, command=rendered, alternatives=alternatives)


# -- speculative decoding -----------------------------------------------------------

_TOPK = "--speculative-eagle-topk"
_DRAFT = "--speculative-num-draft-tokens"
_STEPS = "--speculative-num-steps"


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


@builder("eagle_partial_spec_args")
def _eagle_partial(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """SGLang asserts that top-k and draft tokens are both unset when num-steps is unset."""
    cmd = ctx.command
    has_topk = cmd.has(_TOPK) if cmd else True
    has_draft = cmd.has(_DRAFT) if cmd else True
    topk = cmd.int_value(_TOPK) if cmd else None
    draft = cmd.int_value(_DRAFT) if cmd else None
    remove_all = Fix(
        summary="Or drop the speculative size flags you gave and let SGLang choose steps, top-k and draft tokens itself.",
        flags=tuple(FlagOp("remove", flag) for flag, given in ((_TOPK, has_topk), (_DRAFT, has_draft)) if given),
    )
    if has_topk and has_draft:
        steps = _steps_for(topk, draft)
        how = f"{_STEPS} {steps}" if cmd else f"{_STEPS} N (N = draft tokens - 1 when top-k is 1)"
        return Fix(
            summary=(
                f"Give all three speculative sizes: add {how} next to {_TOPK} and {_DRAFT}. "
                "Removing only the top-k flag still crashes."
            ),
            flags=(FlagOp("add", _STEPS, str(steps) if cmd else None),),
            alternatives=(remove_all,),
        )
    if has_draft:  # draft tokens alone
        steps = _steps_for(1, draft)
        return Fix(
            summary=f"Remove {_DRAFT} (SGLang then chooses all three), or give all three sizes.",
            flags=(FlagOp("remove", _DRAFT),),
            alternatives=(
                Fix(
                    summary=f"Or give all three: {_STEPS} {steps} {_TOPK} 1 {_DRAFT} {draft}.",
                    flags=(FlagOp("add", _STEPS, str(steps)), FlagOp("add", _TOPK, "1")),
                ),
            ),
        )
    steps = _steps_for(topk, None)
    return Fix(
        summary=f"Add {_STEPS} {steps} next to {_TOPK} (SGLang then derives the draft tokens), or remove {_TOPK}.",
        flags=(FlagOp("add", _STEPS, str(steps)),),
        alternatives=(remove_all,),
    )


@builder("eagle_missing_topk")
def _eagle_missing_topk(ctx: FixContext, data: dict[str, Any]) -> Fix:
    cmd = ctx.command
    steps = cmd.int_value(_STEPS) if cmd else None
    draft = cmd.int_value(_DRAFT) if cmd else None
    # top-k 1 is valid whenever draft tokens = steps + 1; otherwise keep the tree small.
    topk = 1 if steps is None or draft is None or draft == steps + 1 else max(1, math.ceil((draft - 1) / steps))
    return Fix(
        summary=f"Add {_TOPK} {topk}: with {_STEPS} given, SGLang needs top-k too.",
        flags=(FlagOp("add", _TOPK, str(topk)),),
        alternatives=(
            Fix(
                summary=f"Or remove {_STEPS} and {_DRAFT} and let SGLang choose all three.",
                flags=tuple(FlagOp("remove", f) for f in (_STEPS, _DRAFT) if cmd is None or cmd.has(f)),
            ),
        ),
    )


# -- argparse errors ------------------------------------------------------------------

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


@builder("unrecognized_arguments")
def _unrecognized(ctx: FixContext, data: dict[str, Any]) -> Fix:
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
                        FlagOp("add", _STEPS, str(steps)),
                        FlagOp("add", _TOPK, "1"),
                        FlagOp("add", _DRAFT, str(steps + 1)),
                    )
                )
                notes.append(f"SGLang sizes speculation with {_STEPS}/{_TOPK}/{_DRAFT} instead of {flag}")
            else:
                notes.append(
                    f"SGLang has no {flag}: speculative decoding is set with --speculative-algorithm, "
                    f"--speculative-draft-model-path and {_STEPS}/{_TOPK}/{_DRAFT}"
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


@builder("invalid_choice")
def _invalid_choice(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
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


@builder("invalid_value")
def _invalid_value(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
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


@builder("store_true_with_value")
def _store_true(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    m = _EXPLICIT.search(ctx.failure.final.message)
    if not m:
        return None
    false = m["value"].lower() in ("false", "0", "no", "off")
    if false:
        return Fix(summary=f"{m['flag']} is a switch and takes no value; to turn it off, leave it out.",
                   flags=(FlagOp("remove", m["flag"]),))
    return Fix(summary=f"{m['flag']} is a switch and takes no value: write it alone.",
               flags=(FlagOp("set", m["flag"], ""),))


@builder("missing_required")
def _missing_required(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
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


# -- parallelism ----------------------------------------------------------------------


@builder("divisible_sizes")
def _divisible(ctx: FixContext, data: dict[str, Any]) -> Fix:
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


@builder("replace_in_value")
def _replace_in_value(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """A value with a forbidden character: the same value with it replaced."""
    flag, old, new = data["flag"], data["old"], data["new"]
    given = ctx.captures.get("value") or (ctx.command.value(flag) if ctx.command else None)
    value = given.replace(old, new) if given else None
    return Fix(summary=f"Use {flag} {value or 'NAME'} (no '{old}').", flags=(FlagOp("set", flag, value),))


@builder("nearest_choice_for_flag")
def _nearest_choice_for_flag(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """A bad value reported by the engine itself (not argparse): choices come from the catalog."""
    flag = data["flag"]
    value = ctx.captures.get("value", "")
    info = ctx.catalog.find(flag) if ctx.catalog else None
    choices = list(info.choices) if info and info.choices else [str(c) for c in data.get("choices", ())]
    best = nearest_choice(value, choices) if choices else None
    summary = f"{flag} does not accept '{value}'" + (f": use {best}." if best else f"; valid: {', '.join(choices)}.")
    return Fix(summary=summary, flags=(FlagOp("set", flag, best),))


# Builders for runtime failures live in their own module; importing it registers them.
from logsleuth import fix_builders_runtime  # noqa: E402,F401  (registration side effect)
