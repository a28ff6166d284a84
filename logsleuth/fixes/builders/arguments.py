"""Builders for argparse errors: unknown flags, bad choices and values, switches given a value, missing flags."""

from __future__ import annotations

import difflib
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import replace
from functools import lru_cache
from typing import Any

import regex

from logsleuth.command_line import Word, split_words
from logsleuth.facts.engine_drivers import LISTED_BY_ENGINE, drivers_shown, plugin_of_flag, plugins_named
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import cross_engine, rejected_flags
from logsleuth.fixes.builders.other_engine import command_for_other_engine, with_nearest_chosen
from logsleuth.fixes.builders.speculative import DRAFT, STEPS, TOPK
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENGINE_NAMES, Fix, FlagOp


class _VllmNames(Mapping[str, "str | None"]):
    """vLLM flag names people carry over to SGLang, each with the SGLang flag it is (or the nearest one, for a
    setting measured differently: cross_engine.toml says which), when every shipped SGLang release has it.
    --num-speculative-tokens maps to three flags: handled apart.  Read from the table on first use (not at
    import: most runs never ask); check/ reads it too."""

    def _names(self) -> dict[str, str | None]:
        return _vllm_names()

    def __getitem__(self, key: str) -> str | None:
        return self._names()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._names())

    def __len__(self) -> int:
        return len(self._names())


@lru_cache(maxsize=1)
def _vllm_names() -> dict[str, str | None]:
    releases = [catalogs.load("sglang", version) for engine, version in catalogs.available() if engine == "sglang"]
    names: dict[str, str | None] = {
        name: to
        for name, to in cross_engine.mapping("vllm", "sglang").items()
        if to is not None and to != name and all(release is not None and release.find(to) for release in releases)
    }
    return {**names, "--num-speculative-tokens": None}


VLLM_TO_SGLANG: Mapping[str, str | None] = _VllmNames()


__all__ = ["VLLM_TO_SGLANG", "command_for_other_engine"]  # the other-engine builder is registered through here


def _display(ctx: FixContext) -> str:
    return ENGINE_NAMES.get(ctx.launch.engine or "sglang", "SGLang")


def _foreign(flag: str, value: str | None, ctx: FixContext) -> cross_engine.FlagTranslation | None:
    """What `flag`, a flag of the other engine, is in the engine that ran (None: not the other engine's flag)."""
    engine = cross_engine.engine_of(ctx.launch.engine)
    source = cross_engine.other(engine)
    name = cross_engine.normalized(flag, source)
    row = cross_engine.row_for(name, source, engine)
    if row is None or (row.kind == "none" and name in row.names[engine]):
        return None  # a flag both engines spell alike: this engine's own (an older or newer release's) first
    words = (Word(value, value),) if value is not None else ()
    return cross_engine.translate_flag(flag, words, engine, ctx.catalog)


def _split_unrecognized(message: str) -> list[tuple[str, str | None]]:
    """`unrecognized arguments: --a 1 --b /x` -> [("--a", "1"), ("--b", "/x")]."""
    tokens = message.split(":", 1)[-1].split()
    pairs: list[tuple[str, str | None]] = []
    for token in tokens:
        open_value = pairs[-1][1] if pairs else None
        # (a flag after it ends the value, and a value past 8 KiB is not joined on: review 3 L1 of stop 49)
        # Inside one of the value's JSON strings every word is the value's: a flag's JSON value holding ` -- ` or
        # `--x` in a string (split 13: its pieces were read as stray arguments and their removal given as the fix).
        joins = open_value is not None and len(open_value) < 8192 and (
            _in_a_string(open_value) or not (_is_flag(token) and not _BRACE.search(token)))
        if joins and open_value is not None and _unbalanced(open_value):
            # argparse prints a JSON value given as one word with its spaces: its pieces are that flag's value until
            # its braces close (review 2 of stop 49: a misspelled flag's JSON cut to its first piece)
            pairs[-1] = (pairs[-1][0], f"{open_value} {token}")
        elif _is_flag(token):  # `--max-model-len`, and vLLM's short `-tp`
            name, eq, value = token.partition("=")
            pairs.append((name, value if eq else None))
        elif pairs and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], token)
        else:
            pairs.append((token, None))  # a stray positional
    return pairs


def _in_a_string(value: str) -> bool:
    """A JSON value cut inside one of its strings: an odd number of unescaped double quotes so far."""
    return value[:1] in "{[" and (value.count('"') - value.count('\\"')) % 2 == 1


def _unbalanced(value: str) -> bool:
    """A JSON object or list whose braces or brackets are not closed yet (`{"rope_scaling":`)."""
    return value[:1] in "{[" and value.count("{") + value.count("[") > value.count("}") + value.count("]")


def _switch_before(token: str, ctx: FixContext) -> str | None:
    """The on/off flag that a stray value was written after (`--disable-radix-cache true`)."""
    if ctx.command is None or ctx.catalog is None:
        return None
    for name, values in ctx.command.options:
        info = ctx.catalog.find(name)
        if values and values[0] == token and info is not None and not info.takes_value:
            return name
    return None


def _renames(ctx: FixContext) -> dict[str, str]:
    """The other engine's flag names this engine spells differently (cross_engine.toml)."""
    if ctx.launch.engine == "vllm":
        return {name: to for name, to in cross_engine.mapping("sglang", "vllm").items() if to is not None and to != name}
    return {name: to for name, to in VLLM_TO_SGLANG.items() if to is not None}


def suggest_flag(flag: str, ctx: FixContext) -> str | None:
    """The flag the user probably meant, for this engine version."""
    if ctx.launch.engine != "vllm" and flag in VLLM_TO_SGLANG:
        return VLLM_TO_SGLANG[flag]
    renames = _renames(ctx)
    if flag in renames:
        return renames[flag]
    names = ctx.catalog.names() if ctx.catalog else []
    dashed = "--" + flag.lstrip("-").replace("_", "-")
    if dashed in names:
        return dashed
    prefixed = [name for name in names if name.startswith(flag)]
    if len(prefixed) == 1:
        return _own_name(prefixed[0], ctx)
    close = difflib.get_close_matches(flag, names, n=1, cutoff=0.75)
    return _own_name(close[0], ctx) if close else None


def _own_name(spelling: str, ctx: FixContext) -> str:
    """A near spelling that is another spelling of a flag (an alias a later release added, SGLang 0.5.2's
    --speculative-draft-model for --speculative-draft-model-path) is written as the flag's own name, which the
    releases before the alias have too: a guessed spelling must not need a newer release than the user's."""
    info = ctx.catalog.find(spelling) if ctx.catalog else None
    return info.name if info is not None and info.name.startswith("--") else spelling


def _is_flag(token: str) -> bool:
    return token.startswith("-") and len(token) > 1 and not token[1:2].isdigit() and token[1:2] != "."


def unrecognized_arguments(ctx: FixContext, data: dict[str, Any]) -> Fix:
    split_json = _json_value_split(ctx)
    if split_json is not None:
        return split_json
    refused = [flag for flag, _ in _split_unrecognized(ctx.failure.final.message)]
    if all(_is_flag(flag) for flag in refused) and not plugins_shown(ctx):
        older = rejected_flags.older_install(refused, ctx)
        if older is not None:
            # no corrected command: one that drops the flags would run the old install without what it was asked for;
            # which install ran, and which release was meant, only the user can tell
            return Fix(summary=older + ".", needs_input=("which install ran, and the release these flags were written for",))
    ops: list[FlagOp] = []
    notes: list[str] = []
    nearest: list[str] = []  # flags measured differently in this engine: the user may set them (needs_input)
    plugin_flags: dict[tuple[str, str], list[str]] = {}  # a plugin of vLLM (name, distribution) -> its flags refused
    engine = _display(ctx)
    for flag, value in _split_unrecognized(ctx.failure.final.message):
        if not _is_flag(flag):
            # --model-path is required in every release, so argparse reaching "unrecognized" means it was
            # given: a stray word is a value written after a switch, or the model a second time.
            switch = _switch_before(flag, ctx)
            whole = _path_split_by_a_space(flag, ctx)
            if whole is not None:
                # Nothing to remove or add: the two words are one path; no corrected command is made up.
                notes.append(f"'{whole}' looks like one path with a space in it, which the shell split into two words "
                             f"('{whole.rsplit(' ', 1)[0]}' taken as the value, '{flag}' left over): quote it as "
                             f"{shlex.quote(whole)}, or use a path without spaces")
            elif switch:
                ops.append(FlagOp("set", switch, ""))
                notes.append(f"{switch} is a switch and takes no value: drop the '{flag}' after it")
            else:
                stray_ops, note = stray_positional(flag, value, ctx)
                ops.extend(stray_ops)
                notes.append(note)
            continue
        if flag == "--num-speculative-tokens" and ctx.launch.engine != "vllm":
            ops.extend(_num_speculative_tokens(ctx, value, notes))
            continue
        if (owner := _plugin_flag_owner(flag, ctx)) is not None:
            plugin_flags.setdefault(owner, []).append(flag)  # said once per plugin, below
            continue
        foreign = _foreign(flag, value, ctx)
        if foreign is not None and foreign.outcome == "renamed" and foreign.target:
            ops.append(FlagOp("rename", flag, foreign.value if foreign.value is not None else value, to=foreign.target))
            notes.append(f"{flag} is {foreign.target} in {engine}")
            continue
        if foreign is not None and foreign.outcome == "left-out":
            ops.append(FlagOp("remove", flag))
            if foreign.reason == "near" and foreign.target:
                nearest.append(foreign.target)
                notes.append(f"{flag} is not {engine}'s {foreign.target}, only the nearest setting ({foreign.note}): left out")
            else:
                notes.append(f"{flag}: {foreign.note}")
            continue
        elsewhere = rejected_flags.verdict(flag, value, ctx) if flag not in _renames(ctx) else None
        if elsewhere is not None:
            if elsewhere.remove:
                ops.append(FlagOp("remove", flag))
            notes.append(elsewhere.sentence)
            continue
        suggestion = suggest_flag(flag, ctx)
        look_alike = None
        if suggestion and plugins_shown(ctx) and not _same_name(flag, suggestion):
            # with a plugin in use, a look-alike may be the plugin's own flag: not renamed, but the engine's flag it
            # resembles is said, so a plain misspelling is not blamed on the plugin (review 3 M3 of stop 49)
            look_alike, suggestion = suggestion, None
        if suggestion and suggestion != flag:
            ops.append(FlagOp("rename", flag, value, to=suggestion))
            notes.append(f"{flag} is {suggestion} in {engine}")
        elif plugins := plugins_shown(ctx):
            # A plugin adds its own flags to the engine's parser when it loads: a flag no release of the engine has
            # may be the plugin's, refused because the plugin did not load or was built for another engine release.
            notes.append(f"no catalogued {engine} release has {flag}: it may be a flag of {' or '.join(plugins)}, which the log "
                         f"shows in use; a plugin adds its flags only when its release matches the installed {engine}, "
                         "so check both versions; the flag is kept, since removing it would drop what the plugin was asked for"
                         + (f"; if it is no flag of the plugin, it may be a misspelling of {engine}'s {look_alike}" if look_alike else ""))
        else:
            ops.append(FlagOp("remove", flag))
            notes.append(f"{engine} has no {flag}")
    notes.extend(_plugin_flag_note(flags, owner, ctx) for owner, flags in plugin_flags.items())
    summary = "; ".join(notes)
    # A sentence's first letter in capitals, but an engine's own spelling kept ("vLLM has no …", not "VLLM").
    summary = (summary if summary.startswith("vLLM") else summary[:1].upper() + summary[1:]) + "."
    if nearest:
        return with_nearest_chosen(Fix(summary=summary, flags=tuple(ops)), nearest, engine, chosen_first=True)
    return Fix(summary=summary, flags=tuple(ops))



# A word of a JSON or dict value the shell split at its spaces: an opening or closing brace or bracket, a quoted key or
# value with its colon or comma, a bare `key:` (the shell took the quotes).
_JSON_PIECE = compile_lazily_regex(r'^[{\[]|[}\]],?$|^"[^"]*"[:,]$|^[\w.-]+:$')
_BRACE = compile_lazily_regex(r"[{}\[\]]")


def _json_value_split(ctx: FixContext) -> Fix | None:
    """`--speculative-config {"method": "eagle3", …}` written without quotes around the JSON: the shell made words of
    it, argparse took the first as the value and refused the rest.  Removing the words, or the flag, is wrong: the value
    wants quoting (not blind: split 13's "before" grading had the words of a flag's JSON value told to be removed).
    The corrected value is not built: which quoting the user's shell, job file or container spec needs is theirs."""
    words = ctx.failure.final.message.split(":", 1)[-1].split()
    if len(words) < 2 or not any(_BRACE.search(word) for word in words):
        return None
    if any(_is_flag(word) and not _BRACE.search(word) for word in words):
        # A refused flag with its value: argparse prints a quoted JSON value with its spaces too, so the pieces are
        # the value of a flag the release lacks or a misspelled one, which the flag-by-flag reading answers (review 1
        # H1 of stop 49).
        return None
    if sum(bool(_JSON_PIECE.search(word)) for word in words) < 2:
        return None
    flag = _json_flag(ctx.launch.command)
    where = f"the value of {flag}" if flag else "a flag's JSON value"
    return Fix(
        summary=(f"The words argparse refused are pieces of {where}: the shell split the JSON at its spaces because it "
                 "was not quoted. Quote the whole JSON as one word (in a shell, single quotes around it); remove nothing."),
        steps=("in a YAML args list or a container spec, give the JSON as one list item (one string), not split into "
               "several",),
    )


def _json_flag(command: str | None) -> str | None:
    """The flag of the command whose value starts a JSON object or list (`--speculative-config {"method":`)."""
    if not command:
        return None
    found = _JSON_FLAG.search(command)
    return found.group(1) if found else None


_JSON_FLAG = compile_lazily_regex(r"(?<!\S)(--?[\w-]+)[ =]+[\"']?[{\[]")


def _same_name(flag: str, suggestion: str) -> bool:
    """`--enable_metrics` and `--enable-metrics`: the same name spelt otherwise, not a look-alike."""
    return suggestion == "--" + flag.lstrip("-").replace("_", "-")


def plugins_shown(ctx: FixContext) -> list[str]:
    """The plugins of the engine the log shows loaded, installed or in use (facts/engine_drivers.toml: a platform
    plugin's activation line, a package listing, vLLM's plugin list; the plugin's package or name in a frame, a version
    line, an image, the command's program), which may register flags of their own on the engine's parser."""
    if ctx.launch.engine == "sglang":
        # The table's plugins (vllm-ascend, vllm-plugin-FL, vLLM-Omni) are vLLM's: SGLang loads none of them.  SGLang's
        # own plugins (entry points of sglang.srt.platforms / sglang.srt.plugins, 0.5.23's srt/plugins/) show only in its
        # list of the plugins it found, which no table names.
        return [driver.named for driver in drivers_shown(ctx.launch.driver_lines)
                if driver.distribution is None and driver.shown_by == LISTED_BY_ENGINE]
    if ctx.launch.engine != "vllm":
        return []
    shown = [driver.named for driver in drivers_shown(ctx.launch.driver_lines) if driver.kind.endswith("plugin")]
    named = plugins_named([*ctx.launch.plugin_lines, *ctx.launch.driver_lines, *ctx.lines, *ctx.failure.context,
                           *([ctx.launch.command] if ctx.launch.command else [])])
    return shown + [name for name in named if not any(known.startswith(name) for known in shown)]


def _plugin_flag_owner(flag: str, ctx: FixContext) -> tuple[str, str] | None:
    """The plugin of vLLM that adds `flag` to vLLM's command line (its name and distribution), when vLLM refused it."""
    return plugin_of_flag(flag) if ctx.launch.engine in ("vllm", None) else None


def _plugin_flag_note(flags: list[str], owner: tuple[str, str], ctx: FixContext) -> str:
    """A plugin's own flags refused by vLLM's parser: the plugin's command did not handle the launch.  Removing them
    would run a plain vLLM server without what the plugin adds (vllm-project/vllm#34545, vllm-project/vllm-omni#1592)."""
    name, distribution = owner
    named = " and ".join(flags)
    listed = next((d.version for d in drivers_shown(ctx.launch.driver_lines) if d.distribution == distribution), None)
    beside = f" beside vLLM {ctx.launch.named_version}" if ctx.launch.named_version else ""
    versions = f" (the log shows {name} {listed}{beside})" if listed else ""
    return (f"{named} {'is a flag' if len(flags) == 1 else 'are flags'} of {name} ({distribution}), not of vLLM: vLLM's own "
            f"parser refusing {'it' if len(flags) == 1 else 'them'} means the plugin's command did not run. A {name} release "
            f"is made for one vLLM release: most often the two installed do not match{versions}, or vLLM was installed "
            f"after it. Check both versions (pip show vllm {distribution}) and install the {name} release made "
            f"for the installed vLLM, after vLLM. Keep {named}: without {'it' if len(flags) == 1 else 'them'} a plain vLLM "
            "server starts, without what the plugin adds")


def _path_split_by_a_space(token: str, ctx: FixContext) -> str | None:
    """`/data/My Models/m`: the stray word continues the path just before it in the launch command (an unquoted
    path with a space: the shell made two words of it, argparse took the first and rejected the second), else
    None.  Only a path-like word followed directly by a word that is no flag counts."""
    if ctx.launch.command is None or token.startswith("-"):
        return None
    words = [word.value for word in split_words(ctx.launch.command)[0]]
    for before, word in zip(words, words[1:], strict=False):
        if word == token and _PATH_START.match(before) and not before.startswith("-"):
            return f"{before} {token}"
    return None


# The start of a path a command gives: absolute, relative to here or home, or a hub-like `org/name`.
_PATH_START = compile_lazily_regex(r"^(?:/|\./|\.\./|~/)\S*$")


def stray_positional(token: str, following: str | None, ctx: FixContext) -> tuple[list[FlagOp], str]:
    """A word argparse could not place, as the engine that ran takes its arguments.  SGLang takes no positional
    (--model-path is required, so reaching "unrecognized" means it was given).  vLLM's server takes the model once,
    as `vllm serve MODEL` or --model; a second model-looking word is `serve MODEL` given to a program that is the
    server already (the vllm/vllm-openai image runs `-m vllm.entrypoints.openai.api_server`: vllm-project/vllm#27389,
    #22072).  `following`: the word after it, when that is no flag either."""
    remove = [FlagOp("remove", token)]  # a positional: `remove` of a token without dashes
    if ctx.launch.command is None and "/" in token and not _PATH_START.match(token):
        # `Models/m` with no command to look at: a hub id given twice, or the rest of a path with a space that the
        # shell split (`/data/My Models/m`).  Either change would be a guess, and the wrong one leaves the server
        # pointed at half a path: both readings are said, nothing is changed.
        return [], (f"'{token}' was left over: if it is the end of a path with a space in it, which the shell split "
                    "into two words, quote the whole path; if it is the model given a second time, give it once"
                    f"{' (as `vllm serve MODEL` or --model)' if ctx.launch.engine == 'vllm' else ''}")
    if ctx.launch.engine != "vllm":
        return remove, f"remove the stray argument '{token}' (a switch takes no value, and the model is given with --model-path)"
    if token == "serve":
        model = following if following and _MODEL_WORD.match(following) else None
        ops = [*remove, FlagOp("remove", model), FlagOp("add", "--model", model)] if model else remove
        return ops, ("'serve' is the subcommand of the `vllm` command, and the program that parsed this has none: "
                     "the vllm/vllm-openai image and `python -m vllm.entrypoints.openai.api_server` run the server "
                     f"already; leave out `serve` there and give the model as --model {model or 'MODEL'}")
    if _MODEL_WORD.match(token) and token.lower() not in _SWITCH_WORDS:
        return ([*remove, FlagOp("add", "--model", token)],
                f"the parser had no place for the model '{token}': the program that parsed it takes the model with "
                f"--model, or had taken another word as the model (a `serve` given to the vllm/vllm-openai image or to "
                f"`python -m vllm.entrypoints.openai.api_server`, which run the server already). Leave out `serve` "
                f"there and give the model once, as --model {token}")
    return remove, f"remove the stray argument '{token}' (a switch takes no value: write it alone)"


# A model as a command gives it: a hub id (`org/name`) or a path; not a value such as `True` or `8`.
_MODEL_WORD = compile_lazily_regex(r"^(?:[\w.\-]+/[\w.\-/]+|/[\w.\-/]+|\.{1,2}/[\w.\-/]+)$")
_SWITCH_WORDS = frozenset({"true", "false", "yes", "no", "on", "off", "0", "1"})


def _num_speculative_tokens(ctx: FixContext, value: str | None, notes: list[str]) -> list[FlagOp]:
    """vLLM's --num-speculative-tokens N is SGLang's three speculative sizes."""
    flag = "--num-speculative-tokens"
    cmd = ctx.command
    if cmd is not None and cmd.has("--speculative-algorithm") and value and value.isdigit():
        steps = int(value)
        notes.append(f"SGLang sizes speculation with {STEPS}/{TOPK}/{DRAFT} instead of {flag}")
        return [FlagOp("remove", flag), FlagOp("add", STEPS, str(steps)), FlagOp("add", TOPK, "1"), FlagOp("add", DRAFT, str(steps + 1))]
    notes.append(
        f"SGLang has no {flag}: speculative decoding is set with --speculative-algorithm, "
        f"--speculative-draft-model-path and {STEPS}/{TOPK}/{DRAFT}"
    )
    return [FlagOp("remove", flag)]


_CHOICE = compile_lazily_regex(r"argument (?P<flag>--[\w\-]+)(?:/[\w\-/]+)?: invalid choice: '(?P<value>[^']*)' \(choose from (?P<choices>.*)\)")
_INVALID_VALUE = compile_lazily_regex(r"argument (?P<flag>--[\w\-]+)(?:/[\w\-/]+)?: invalid (?P<type>\w+) value: '(?P<value>[^']*)'")
_EXPLICIT = compile_lazily_regex(r"argument (?P<flag>--[\w\-]+)(?:/[\w\-/]+)?: ignored explicit argument '(?P<value>[^']*)'")
_REQUIRED = compile_lazily_regex(r"the following arguments are required: (?P<flags>.+)")
# fp8 is vLLM's name for FP8 E4M3 (a KV-cache dtype SGLang validates on every GPU); the closest spelling,
# mxfp8, needs a Blackwell GPU (0.5.23: "--kv-cache-dtype mxfp8 requires an SM100+ (Blackwell) GPU").
_CHOICE_ALIASES = {"fp16": "float16", "bf16": "bfloat16", "fp32": "float32", "half": "float16", "fp8": "fp8_e4m3"}


def _normalize_choice(text: str) -> str:
    return regex.sub(r"[\W_]+", "", text).lower()


def nearest_choice(value: str, choices: list[str]) -> str | None:
    """The listed choice that is `value` under another spelling: a documented alias (fp16 is float16), or the same
    name in other case or separators (EAGLE-3 is EAGLE3), else None.  Never the nearest letters: a choice one edit
    away is often another thing ('fp4' is not 'fp8_e4m3', 'gptq_marlin_24' is not 'gptq_marlin', 'llama4' is not
    'llama3': stop 39's blind split and the choices sweep of stop 46); the caller then lists the choices and says
    which releases take the value."""
    if value.lower() in _CHOICE_ALIASES and _CHOICE_ALIASES[value.lower()] in choices:
        return _CHOICE_ALIASES[value.lower()]
    normalized = {_normalize_choice(choice): choice for choice in choices}
    return normalized.get(_normalize_choice(value))


# Flags whose value names the model family's format (the tool-call markup, the reasoning tags its chat template
# writes): only the same name written otherwise ('Hermes', 'llama-3-json') is taken, as for every flag; for these the
# choices are listed with the reminder that the parser must be the model's.
MODEL_FAMILY_FLAGS = frozenset({"--tool-call-parser", "--reasoning-parser", "--tool-parser-plugin"})


# A flag's own documented aliases, in the order to try them against the release's list: "fast" is the mode the
# engines' help names for "auto" ("'auto' will use the fast tokenizer if available": SGLang's ServerArgs
# tokenizer_mode, vLLM's ModelConfig.tokenizer_mode up to 0.11) and, in later vLLM, "hf" ('"hf" will use the fast
# tokenizer if available').
_FLAG_CHOICE_ALIASES: dict[str, dict[str, tuple[str, ...]]] = {"--tokenizer-mode": {"fast": ("hf", "auto")}}


def fitting_choice(flag: str, value: str, choices: list[str]) -> str | None:
    """The choice `value` stands for: an alias (the flag's own, then the general ones) or the same name written with
    other case or separators."""
    for alias in _FLAG_CHOICE_ALIASES.get(flag, {}).get(value.lower(), ()):
        if alias in choices:
            return alias
    return nearest_choice(value, choices)


def _words(text: str) -> list[str]:
    return [word for word in regex.split(r"[\W_]+", text.lower()) if word]


def stem_sharing_choices(value: str, choices: list[str]) -> list[str]:
    """The listed choices whose name begins with the value's words, or whose words the value begins with:
    'triton' and 'triton_attn', 'qwen3' and 'qwen3_coder', 'llama3' and 'llama3_json' (split 15's after grading:
    sgl-project/sglang#10835, --mm-attention-backend naming its Triton choice triton_attn).  Candidates to check,
    never the fix: a suffix often names another thing of the same family."""
    asked = _words(value)
    if not asked or len("".join(asked)) < 3:
        return []
    def shares(choice: str) -> bool:
        listed = _words(choice)
        shorter, longer = sorted((asked, listed), key=len)
        return bool(shorter) and shorter != longer and longer[:len(shorter)] == shorter
    return [choice for choice in choices if shares(choice)]


def _stem_note(value: str, choices: list[str]) -> str:
    sharing = stem_sharing_choices(value, choices)
    if not sharing:
        return ""
    named = ", ".join(f"'{choice}'" for choice in sharing)
    return (f" Listed values that share its name: {named} (check in the release's documentation that one is what "
            f"you mean before setting it).")


def family_choice_fix(flag: str, value: str, choices: list[str], releases: str | None = None) -> Fix:
    """A model family's parser the release does not have under that name: its choices, the user's pick."""
    listed = f"one of {', '.join(choices)}" if choices else "a value this release lists (`--help`)"
    return Fix(
        summary=(f"{flag} takes {listed}; '{value}' is not one of them.{_stem_note(value, choices)} The parser must "
                 f"match the model's family (the format its chat template writes), not the nearest spelling: pick the "
                 f"one made for your model, or a release that has a parser for it" + (f" ({releases})." if releases else ".")),
        flags=(FlagOp("set", flag, None),), needs_input=(flag,),
    )


def unlisted_choice_fix(flag: str, value: str, choices: list[str], releases: str | None) -> Fix:
    """A value no listed choice stands for: the list, what the releases say of the value, and the user's pick."""
    if flag in MODEL_FAMILY_FLAGS:
        return family_choice_fix(flag, value, choices, releases)
    where = f" {releases[:1].upper()}{releases[1:]}." if releases else ""
    elsewhere = f", or use a release that has '{value}'" if releases else ""
    stem = _stem_note(value, choices)
    refused = "is not one of them." if stem else "is not one of them, nor any of them under another spelling."
    return Fix(
        summary=(f"{flag} takes one of {', '.join(choices)}; '{value}' {refused}{stem}{where} Set the one you "
                 f"mean{elsewhere}."),
        flags=(FlagOp("set", flag, None),), needs_input=(flag,),
    )


def refused_choice(message: str) -> tuple[str, str, list[str]] | None:
    """(flag, value, the choices listed) of argparse's `argument --x: invalid choice: 'v' (choose from 'a', 'b')`,
    else None.  The list is the running release's own (api.py narrows a guessed release with it)."""
    m = _CHOICE.search(message)
    return (m["flag"], m["value"], regex.findall(r"'([^']*)'", m["choices"])) if m else None


def invalid_choice(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    refused = refused_choice(ctx.failure.final.message)
    if refused is None:
        return None
    flag, value, choices = refused
    # What the releases say of the value: which ones list it (zai-org/GLM-4.5#16, #58: 'glm45' on vLLM 0.10.0), or
    # that later ones than the list printed take it from no fixed list (vllm-project/vllm#9312: 'llama3_json').
    best = fitting_choice(flag, value, choices)
    if best is None:
        return unlisted_choice_fix(flag, value, choices, rejected_flags.choice_elsewhere(flag, value, ctx, tuple(choices)))
    # beside a listed choice, only the releases that list the value itself are another way
    releases = rejected_flags.choice_elsewhere(flag, value, ctx, tuple(choices), open_lists=False)
    fix = Fix(summary=f"{flag} takes one of {', '.join(choices)}; '{value}' is not one of them: use {best}.",
              flags=(FlagOp("set", flag, best),))
    if releases is None:
        return fix
    return replace(fix, alternatives=(Fix(summary=f"Or keep '{value}' on a release that has it: {releases}."),))


_MAGNITUDE = compile_lazily_regex(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<suffix>[kKmMgG])\s*$")
_POWERS = {"k": 1, "m": 2, "g": 3}


def number_meant(value: str, kind: str) -> str | None:
    """The number inside a value a numeric flag rejected (`1234x` -> 1234), or None when there is none, or when
    its digits carry a magnitude (`32k`: 32 would be a thousand times too small, and whether k is 1000 or 1024
    only the user knows: magnitude_hint says both)."""
    if kind not in ("int", "float") or _MAGNITUDE.match(value):
        return None
    digits = regex.search(r"-?\d+(?:\.\d+)?", value)
    if digits is None:
        return None
    return str(int(float(digits.group(0)))) if kind == "int" else digits.group(0)


def magnitude_hint(value: str) -> str | None:
    """"write the whole number: 32768 (32 x 1024) or 32000 (32 x 1000)" for `32k`; None for another value."""
    m = _MAGNITUDE.match(value)
    if m is None:
        return None
    power = _POWERS[m["suffix"].lower()]
    binary, decimal = (round(float(m["number"]) * base**power) for base in (1024, 1000))
    return (f"this release reads no '{m['suffix']}' suffix: write the whole number, {binary} "
            f"({m['number']} x 1024{'^' + str(power) if power > 1 else ''}) or {decimal} "
            f"({m['number']} x 1000{'^' + str(power) if power > 1 else ''})")


def invalid_value(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    m = _INVALID_VALUE.search(ctx.failure.final.message)
    if not m:
        return None
    value = number_meant(m["value"], m["type"])
    hint = f"use {value}" if value else magnitude_hint(m["value"]) or "give a number or leave the flag out to use the default"
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
    best = fitting_choice(flag, value, choices) if choices else None
    if best is None and flag in MODEL_FAMILY_FLAGS:
        return family_choice_fix(flag, value, choices)
    summary = f"{flag} does not accept '{value}'" + (f": use {best}." if best else f"; valid: {', '.join(choices)}.")
    return Fix(summary=summary, flags=(FlagOp("set", flag, best),))


_AMBIGUOUS = compile_lazily_regex(r"ambiguous option: (?P<flag>-[^\s=]+)(?:=(?P<value>\S*))? could match (?P<matches>.+)")


def ambiguous_option(ctx: FixContext, data: dict[str, Any]) -> Fix | None:
    """argparse took a flag as the beginning of several: rename it to the one it stands for when that is known
    (a flag a release split, in the pattern's `replacements`; a vLLM name), else the user must choose."""
    m = _AMBIGUOUS.search(ctx.failure.final.message)
    if not m:
        return None
    flag = m["flag"]
    candidates = [name.strip() for name in m["matches"].split(",") if name.strip().startswith("-")]
    known = dict(data.get("replacements", {}))
    meant = known.get(flag) or VLLM_TO_SGLANG.get(flag)
    if meant in candidates:
        why = f"SGLang's name for {flag} is {meant}" if flag in VLLM_TO_SGLANG else f"this release split {flag}; the old flag is {meant}"
        return Fix(summary=f"Write {meant} in full ({why}).", flags=(FlagOp("rename", flag, m["value"] or None, to=meant),))
    return Fix(
        summary=f"Write the full name of the flag you mean: {flag} is the beginning of {', '.join(candidates)}.",
        flags=(FlagOp("rename", flag, to=None),),  # needs_input: only the user knows which one
    )
