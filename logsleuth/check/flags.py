"""Each flag of a command checked against one release's flag catalog, the way that release's argparse reads it.

argparse facts this follows (CPython 3.11, which SGLang's parsers use with their defaults): a flag may be shortened
to any unique beginning (`--mem-frac` is `--mem-fraction-static`), a beginning shared by several is refused
("ambiguous option"); `--flag=value` gives one value; a switch takes none (`--x=1` is "ignored explicit argument", a
word after it is a stray positional, which SGLang has none of: "unrecognized arguments"); `nargs='+'` takes every
word up to the next flag.  Types are converted (`int('4.5')` fails) before choices are compared.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from logsleuth.check import knowledge
from logsleuth.check.model import FlagVerdict
from logsleuth.fixes.catalog import Catalog, FlagInfo
from logsleuth.wording import article

_CONVERTERS: dict[str, Callable[[str], Any]] = {"int": int, "float": float, "loads": json.loads,
                                                "json_list_type": json.loads}
_FALSE_WORDS = ("false", "0", "no", "off")


def is_flag(word: str) -> bool:
    """`--x`, `-h`; `-1` and `-0.5` are values (SGLang's parsers have no flag that looks like a number)."""
    return word.startswith("-") and len(word) > 1 and not word[1].isdigit() and word[1] != "."


@dataclass(frozen=True, slots=True)
class Given:
    """A flag as argparse would take it: the catalog entry it resolves to (None: refused) and its values."""

    written: str
    info: FlagInfo | None
    values: tuple[str, ...]


def read_flags(args: Sequence[str], catalog: Catalog, engine: str, *, prose: bool = False) -> tuple[list[FlagVerdict], list[Given]]:
    """A verdict per flag and stray word, and the flags as given (for the multi-flag checks).  In `prose` (an
    answer's text) words that are no flag's value are sentence words, not stray arguments."""
    verdicts: list[FlagVerdict] = []
    given: list[Given] = []
    words = list(args)
    index = 0
    last_switch: str | None = None
    while index < len(words):
        word = words[index]
        index += 1
        if not is_flag(word):
            if not prose:
                verdicts.append(_stray(word, last_switch, given))
            continue
        name, equals, explicit = word.partition("=") if word.startswith("--") else (word, "", "")
        info, problem = _resolve(name, catalog, engine)
        following = _following(words, index)
        if info is None:
            values = tuple(following) if not prose else tuple(following[:1])
            index += len(values)
            verdicts.append(FlagVerdict(word if not equals else name, ((explicit,) if equals else ()) + values,
                                        False, problem.reason, problem.suggestion))
            given.append(Given(name, None, values))
            last_switch = None
            continue
        values_given, verdict = _take_values(word, name, bool(equals), explicit, following, info, catalog, problem)
        index += 0 if equals else len(values_given)
        verdicts.append(verdict)
        given.append(Given(name, info, tuple([explicit] if equals else values_given)))
        last_switch = name if not info.takes_value else None
    return verdicts, given


def _following(words: list[str], index: int) -> list[str]:
    out = []
    while index < len(words) and not is_flag(words[index]):
        out.append(words[index])
        index += 1
    return out


@dataclass(frozen=True, slots=True)
class _Problem:
    """What is wrong with one flag, and what to write instead when that is known."""
    reason: str
    suggestion: str | None = None


def _resolve(name: str, catalog: Catalog, engine: str) -> tuple[FlagInfo | None, _Problem]:
    """The catalog entry argparse resolves `name` to; else why it refuses it.  For a flag it accepts, the
    problem holds a note (an abbreviation, an alias) or an empty reason."""
    info = catalog.find(name)
    if info is not None:
        sglang_name = knowledge.VLLM_TO_SGLANG.get(name)
        if sglang_name is not None and sglang_name != name:
            return info, _Problem(f"vLLM's name, which SGLang {catalog.version} accepts too (as {sglang_name})")
        return info, _Problem("")
    starting = sorted({alias for entry in catalog.flags for alias in (entry.name, *entry.aliases)
                       if alias.startswith(name) and name.startswith("--")})
    owners = {id(entry) for entry in catalog.flags for alias in (entry.name, *entry.aliases) if alias in starting}
    if len(owners) == 1:
        full = catalog.find(starting[0])
        assert full is not None
        meant = next(alias for alias in starting if alias.startswith("--"))
        return full, _Problem(f"accepted as an abbreviation of {meant}: write it in full (a later release can "
                              "add a flag that makes it ambiguous)", meant)
    if starting:
        return None, _ambiguous(name, starting, catalog, engine)
    return None, _unknown(name, catalog, engine)


def _ambiguous(name: str, starting: list[str], catalog: Catalog, engine: str) -> _Problem:
    meant = knowledge.split_replacement(name) or knowledge.VLLM_TO_SGLANG.get(name)
    older, _newer = knowledge.removed_after(engine, name, catalog)
    history = f"SGLang {catalog.version} no longer has it (SGLang {older} did), and " if older else ""
    shown = ", ".join(starting[:4]) + (", …" if len(starting) > 4 else "")
    reason = f"{history}argparse refuses it as the beginning of several flags: {shown}"
    if meant in starting:
        reason += f"; the one it stands for is {meant}"
    return _Problem(reason, meant if meant in starting else None)


def _unknown(name: str, catalog: Catalog, engine: str) -> _Problem:
    if name in knowledge.VLLM_TO_SGLANG:
        sglang_name = knowledge.VLLM_TO_SGLANG[name]
        if sglang_name is None:
            return _Problem("vLLM's flag; SGLang has none: it sizes speculation with --speculative-num-steps, "
                            "--speculative-eagle-topk and --speculative-num-draft-tokens")
        return _Problem(f"vLLM's flag; SGLang's is {sglang_name}", sglang_name)
    older, newer = knowledge.removed_after(engine, name, catalog)
    if older is not None:
        replacement = knowledge.renamed_in_older(engine, name, older) or knowledge.split_replacement(name)
        instead = f": use {replacement}" if replacement and catalog.find(replacement) else ": leave it out"
        return _Problem(f"removed: SGLang {older} had it, SGLang {catalog.version} does not{instead}",
                        replacement if replacement and catalog.find(replacement) else None)
    if newer is not None:
        return _Problem(f"not in SGLang {catalog.version}: it first appears in SGLang {newer} (upgrade, or leave it out)")
    close = knowledge.close_flag(name, catalog)
    return _Problem(f"SGLang {catalog.version} has no such flag" + (f"; did you mean {close}?" if close else ""), close)


def _take_values(word: str, name: str, equals: bool, explicit: str, following: list[str], info: FlagInfo,
                 catalog: Catalog, note: _Problem) -> tuple[list[str], FlagVerdict]:
    """The words the flag takes, and its verdict: arity, then each value's type and choice."""
    nargs = info.nargs
    shown = word if equals else name
    if not info.takes_value:
        if equals:
            off = explicit.lower() in _FALSE_WORDS
            return [], FlagVerdict(name, (explicit,), False, f"{info.name} is a switch and takes no value"
                                   + ("; to turn it off, leave it out" if off else ": write it alone"),
                                   None if off else name)
        return [], _accepted(shown, (), info, catalog, note)
    if equals:
        values = [explicit]
    elif nargs in ("+", "*"):
        values = list(following)
    elif nargs == "?":
        values = following[:1]
    else:
        values = following[: nargs if isinstance(nargs, int) else 1]
    wanted = 1 if nargs in (None, "+") else nargs if isinstance(nargs, int) else 0
    if len(values) < wanted:
        return values, FlagVerdict(shown, tuple(values), False, f"{info.name} needs a value"
                                   + (f" (one of {', '.join(info.choices)})" if info.choices else f" ({info.type or 'a word'})"))
    for value in values:
        problem = _value_problem(value, info, name)
        if problem is not None:
            return values, FlagVerdict(shown, tuple(values), False, problem.reason, problem.suggestion)
    return values, _accepted(shown, tuple(values), info, catalog, note)


def _value_problem(value: str, info: FlagInfo, written: str) -> _Problem | None:
    converter = _CONVERTERS.get(info.type or "")
    converted: Any = value
    if converter is not None:
        try:
            converted = converter(value)
        except ValueError:
            number = _number_in(value, info.type or "")
            return _Problem(f"{info.name} takes {article(info.type or '')} {info.type}, not '{value}'",
                            f"{written} {number}" if number else None)
    if info.choices and str(converted) not in info.choices:
        best = knowledge.fitting_choice(info.name, value, list(info.choices))  # a parser is never picked by spelling
        return _Problem(f"'{value}' is not a choice of {info.name}: {', '.join(info.choices)}"
                        + (f"; did you mean {best}?" if best else ""), f"{written} {best}" if best else None)
    return None


def _number_in(value: str, kind: str) -> str | None:
    try:
        number = float(value.replace("_", ""))
    except ValueError:
        return None
    return str(int(number)) if kind == "int" and number == int(number) else None



def _accepted(shown: str, values: tuple[str, ...], info: FlagInfo, catalog: Catalog, note: _Problem) -> FlagVerdict:
    if info.deprecated:
        instead = f": use {info.renamed_to}" if info.renamed_to else ""
        return FlagVerdict(shown, values, True, f"deprecated in SGLang {catalog.version}{instead} (still accepted)",
                           info.renamed_to, deprecated=True)
    reason = note.reason or f"flag exists in SGLang {catalog.version}" + (f" ({info.type})" if info.type in _CONVERTERS else "")
    return FlagVerdict(shown, values, True, reason, note.suggestion)


def _stray(word: str, last_switch: str | None, given: list[Given]) -> FlagVerdict:
    if last_switch is not None:
        off = word.lower() in _FALSE_WORDS
        return FlagVerdict(word, (), False, f"{last_switch} is a switch and takes no value, so SGLang rejects "
                           f"'{word}' as an unrecognized argument" + ("; to turn it off, leave the switch out" if off else ""))
    if not given:
        return FlagVerdict(word, (), False, "SGLang takes no positional argument (vLLM does): give the model as "
                           f"--model-path {word}", f"--model-path {word}")
    return FlagVerdict(word, (), False, "a stray word: SGLang rejects it as an unrecognized argument")
