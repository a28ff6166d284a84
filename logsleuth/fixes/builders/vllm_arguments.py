"""Builders for vLLM's own wordings of argument errors: 0.11.2's "Value X cannot be converted", on/off flags
given `=false`, and the values vLLM's pydantic config dataclasses reject (bounds, lists of valid values).

Each fix is proven on the real `vllm serve` of 0.11.2 and 0.33.0 by scripts/oracle_vllm/verify_fixes.py.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import regex

from logsleuth.facts.engine_drivers import plugin_of_flag
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import cross_engine, rejected_flags
from logsleuth.fixes.builders.arguments import (
    MODEL_FAMILY_FLAGS,
    family_choice_fix,
    fitting_choice,
    magnitude_hint,
    number_meant,
    plugins_shown,
    suggest_flag,
    unrecognized_arguments,
)
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp


def as_vllm(ctx: FixContext) -> FixContext:
    """The context of a vLLM argument error: these patterns are vLLM's, so when the log alone did not say
    which engine ran (no `vllm serve` line), it is vLLM, and the flags are checked against vLLM's catalog."""
    if ctx.launch.engine == "vllm" and ctx.catalog is not None and ctx.catalog.engine == "vllm":
        return ctx
    told = ctx.launch.engine_version if ctx.launch.engine == "vllm" else None
    launch = replace(ctx.launch, engine="vllm", engine_version=told,
                     engine_version_source=ctx.launch.engine_version_source if told else None)
    return replace(ctx, launch=launch, catalog=catalogs.load("vllm", told))


_FALSE_WORDS = frozenset({"false", "0", "no", "off"})


def vllm_invalid_value(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """A flag that needs a number: the number inside the value when there is one (`1234x` -> 1234), else the
    user's to give (needs_input); a number with a magnitude (`32k`) is the user's too, with both readings said."""
    ctx = as_vllm(ctx)
    flag, value, kind = ctx.captures.get("flag"), ctx.captures.get("value", ""), ctx.captures.get("type", "")
    if not flag:
        return None
    number = number_meant(value, kind)
    needs = f"{flag} needs a{'n' if kind[:1] in 'aeiou' else ''} {kind}, not '{value}'"
    if number is not None:
        return Fix(summary=f"{needs}: use {number}.", flags=(FlagOp("set", flag, number),))
    default = Fix(summary=f"Or leave {flag} out to use vLLM's default.", flags=(FlagOp("remove", flag),))
    hint = magnitude_hint(value) or "give the number you meant"
    return Fix(summary=f"{needs}: {hint}.", flags=(FlagOp("set", flag, None),), alternatives=(default,))


def vllm_switch_given_value(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """`--enable-prefix-caching=false`: the negative form argparse named; `--trust-remote-code=True`: the flag
    alone."""
    ctx = as_vllm(ctx)
    flag, value = ctx.captures.get("flag"), ctx.captures.get("value", "")
    if not flag:
        return None
    if value.lower() in _FALSE_WORDS:
        negation = ctx.captures.get("negation")  # argparse names it: `--x/--no-x`, 0.33's `--enable-x/--disable-x`
        if negation:
            # remove + add (a switch: empty value), not rename: a rename would carry the `=false` over
            return Fix(summary=f"{flag} takes no value; to turn it off, write {negation}.",
                       flags=(FlagOp("remove", flag), FlagOp("add", negation, "")))
        return Fix(summary=f"{flag} takes no value; to turn it off, leave it out.", flags=(FlagOp("remove", flag),))
    return Fix(summary=f"{flag} is an on/off flag and takes no value: write it alone.", flags=(FlagOp("set", flag, ""),))


def _flag_for_field(field: str, ctx: FixContext) -> str:
    info = ctx.catalog.by_field(field) if ctx.catalog is not None else None
    return info.name if info is not None else "--" + field.replace("_", "-")


# The config field a message names -> the flag (kv_cache_dtype is CacheConfig.cache_dtype's flag).
_SETTING_FLAGS = {"kv_cache_dtype": "--kv-cache-dtype", "quantization": "--quantization"}


def vllm_config_choice(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """A value vLLM's config rejected with its list of valid values: the nearest valid one."""
    ctx = as_vllm(ctx)
    setting, value = ctx.captures.get("setting", ""), ctx.captures.get("value", "")
    choices = regex.findall(r"'([^']*)'", ctx.captures.get("choices", ""))
    if not setting or not choices:
        return None
    flag = _SETTING_FLAGS.get(setting) or _flag_for_field(setting, ctx)
    best = fitting_choice(flag, value, choices)
    if best is None and flag in MODEL_FAMILY_FLAGS:
        return family_choice_fix(flag, value, choices)
    if best is None:
        return Fix(summary=f"{flag} does not accept '{value}': choose one of {', '.join(choices)}.",
                   flags=(FlagOp("set", flag, None),))
    return Fix(summary=f"{flag} does not accept '{value}': use {best}.", flags=(FlagOp("set", flag, best),))


_BOUND_ERROR = compile_lazily_regex(
    r"^(?:\(\w+ pid=\d+\) )?(?P<field>[a-z_][a-z0-9_]*)\n(?:\(\w+ pid=\d+\) )?\s*Input should be (?P<bound>[a-z ]+ -?[\d.]+) "
    r"\[type=\w+, input_value=(?P<value>[^,]+),",
    regex.MULTILINE,
)


def vllm_config_out_of_range(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """Values outside config fields' bounds: leave those flags out (vLLM's defaults are in range).

    pydantic lists every field that failed, and some are derived, not given: 0.11.2 derives
    max_num_batched_tokens and max_num_seqs of 0 from `--tensor-parallel-size 0`. A field's flag that is not
    in the command is then no use; a flag the command gives the same rejected value is the one to leave out.
    """
    ctx = as_vllm(ctx)
    errors = [(m["field"], m["bound"], m["value"].strip()) for m in _BOUND_ERROR.finditer(ctx.failure.final.message)]
    if not errors:
        return None
    flags = [_flag_for_field(name, ctx) for name, _, _ in errors]
    cmd = ctx.command
    if cmd is not None:
        given = [flag for flag in flags if cmd.has(flag)]
        if not given:
            rejected = {value for _, _, value in errors}
            given = [name for name, values in cmd.options if values and values[0] in rejected]
        flags = given or flags
    flags = list(dict.fromkeys(flags))
    bounds = "; ".join(f"{name} must be {bound}, not {value}" for name, bound, value in errors)
    chosen = ", ".join(flags)
    alternative = Fix(summary=f"Or set {chosen} to a value in range.", flags=tuple(FlagOp("set", f, None) for f in flags))
    return Fix(summary=f"vLLM's config: {bounds}. Leave {chosen} out to use vLLM's default.",
               flags=tuple(FlagOp("remove", f) for f in flags), alternatives=(alternative,))


def _off_switch(flag: str, ctx: FixContext) -> str | None:
    """This version's way to turn off what `flag` turns off (`--disable-prefix-caching` on 0.11.2, which only
    has `--no-enable-prefix-caching`); None when `flag` is not an off-switch of one of this version's switches."""
    if ctx.catalog is None:
        return None
    for prefix, positive_prefix in (("--disable-", "--enable-"), ("--no-", "--")):
        if flag.startswith(prefix):
            positive = positive_prefix + flag[len(prefix):]
            offs = [off for off, on in cross_engine.negations("vllm", ctx.catalog.version).items()
                    if on == positive and off != flag]
            if offs and ctx.catalog.find(positive) is not None:
                return sorted(offs, key=lambda off: not off.startswith("--no-"))[0]  # --no-X: every release
    return None


def _renamed_in_release(flag: str, ctx: FixContext) -> str | None:
    """The flag a vLLM release's catalog names as `flag`'s replacement, when this version has it."""
    if ctx.catalog is None:
        return None
    for version in catalogs.versions_with("vllm", flag):
        info = catalogs.load("vllm", version)
        entry = info.find(flag) if info is not None else None
        if entry is not None and entry.renamed_to and ctx.catalog.find(entry.renamed_to) is not None:
            return entry.renamed_to
    return None


def _only_look_alike(flag: str, ctx: FixContext) -> str | None:
    """A name the generic builder would only guess by spelling (`--num-scheduler-steps` is not
    `--max-num-scheduled-tokens`): not an SGLang name, in no vLLM release, not a prefix of the suggestion."""
    if flag in cross_engine.mapping("sglang", "vllm") or rejected_flags.releases_having("vllm", flag):
        return None
    suggestion = suggest_flag(flag, ctx)
    if suggestion is None or suggestion.startswith(flag) or flag.startswith(suggestion):
        return None
    if suggestion == "--" + flag.lstrip("-").replace("_", "-"):
        return None
    return suggestion


def vllm_unrecognized_arguments(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Unknown `vllm serve` flags: the generic builder, except for three cases it would get wrong on vLLM:
    an off-switch of the other release (renamed to this release's off-switch, never to the on-switch it looks
    like), a flag a release renamed (all its values carried over), and a spelling-only guess (left out)."""
    ctx = as_vllm(ctx)
    tokens = ctx.failure.final.message.split(":", 1)[-1].split()
    own_ops: list[FlagOp] = []
    notes: list[str] = []
    rest: list[str] = []
    taking_values = False
    plugins = plugins_shown(ctx)
    for token in tokens:
        if not token.startswith("-"):
            if not taking_values:
                rest.append(token)
            continue
        taking_values = False
        flag = token.partition("=")[0]
        if off := _off_switch(flag, ctx):
            own_ops.append(FlagOp("rename", flag, None, to=off))
            notes.append(f"{flag} is {off} in this vLLM")
        elif renamed := _renamed_in_release(flag, ctx):
            own_ops.append(FlagOp("rename", flag, None, to=renamed))
            notes.append(f"{flag} was renamed {renamed} (its values carry over)")
            taking_values = True
        elif plugins or plugin_of_flag(flag):
            rest.append(token)  # a plugin's flag, perhaps: the generic builder keeps it and says so
        elif guess := _only_look_alike(flag, ctx):
            own_ops.append(FlagOp("remove", flag))
            notes.append(f"vLLM has no {flag}; {guess} only looks alike, so it is left out")
            taking_values = True
        else:
            rest.append(token)
    generic: Fix | None = None
    if rest:
        final = replace(ctx.failure.final, message="unrecognized arguments: " + " ".join(rest))
        failure = replace(ctx.failure, exceptions=(*ctx.failure.exceptions[:-1], final))
        generic = unrecognized_arguments(replace(ctx, failure=failure), data)
    if not own_ops and generic is not None:
        return generic
    summary = "; ".join(notes)
    if generic is not None:
        summary += "; " + generic.summary[:1].lower() + generic.summary[1:].rstrip(".")
    sentence = summary if summary.startswith("vLLM") else summary[:1].upper() + summary[1:]
    return Fix(summary=sentence + ".",
               flags=(*own_ops, *(generic.flags if generic else ())),
               alternatives=generic.alternatives if generic else ())
