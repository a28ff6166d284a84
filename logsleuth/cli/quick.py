"""A plain `logsleuth diagnose ...` command line, read without importing typer.

Why: importing typer (and the click it vendors) and building the command from its annotations costs ~40-80 ms
of CPU, a sixth of a remote diagnose (issue 14).  Most command lines are plain: known options with valid
values.  This reader accepts exactly those and gives up (None) on anything else: help, an unknown or
misspelled option, a value click would reject, a value that looks like an option.  Then cli/app.py's typer
command parses the line, so help, errors and exit statuses are typer's, as before.  The options come from the
one option table (cli/option_table.py), as typer's do; tests/test_cli_quick.py checks that both parsers give the
same arguments.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logsleuth.cli.option_table import OPTIONS, Option, options_of
from logsleuth.render.options import OutputFormat

COMMAND = "diagnose"
COMPLETE_VAR = "_LOGSLEUTH_COMPLETE"  # set by the script `logsleuth completion SHELL` prints: typer answers


class _NotPlain(Exception):
    """Not a command line this reader takes: typer parses it."""


def _count(minimum: int | None = None) -> Callable[[str], int]:
    def convert(text: str) -> int:
        if not (text.isascii() and text.isdigit()):  # click takes more (" 12", "+3", "1_000"): typer does those
            raise _NotPlain
        value = int(text)
        if minimum is not None and value < minimum:
            raise _NotPlain  # click's range error, in click's words
        return value

    return convert


def _choice(values: tuple[str, ...], convert: Callable[[str], Any] = str) -> Callable[[str], Any]:
    def check(text: str) -> Any:
        if text not in values:
            raise _NotPlain
        return convert(text)

    return check


def _converter(option: Option) -> Callable[[str], Any]:
    """How the table's option turns its word into the value typer would give (or gives up: _NotPlain)."""
    if option.kind == "count":
        return _count(option.minimum)
    if option.kind == "choice":
        return _choice(option.choices, OutputFormat if option.param == "output_format" else str)
    if option.kind == "path":
        return Path
    if option.kind in ("text", "size"):
        return str
    return _give_up  # seconds: typer's float parsing (watch is never read here)


def _give_up(text: str) -> Any:
    raise _NotPlain


def _value_options(command: str) -> dict[str, tuple[str, Callable[[str], Any]]]:
    """Option word -> (the parameter of the command's function it sets, how its value is converted)."""
    return {option.long: (option.param, _converter(option)) for option in options_of(command) if option.takes_value}


def _flags(command: str) -> dict[str, str]:
    return {option.long: option.param for option in options_of(command) if not option.takes_value}


VALUE_OPTIONS = _value_options(COMMAND)
SHORT_NAMES = {short: option.long for option in OPTIONS.values() for short in option.names[1:]}
REPEATABLE = frozenset(option.param for option in OPTIONS.values() if option.repeatable)
FLAGS = _flags(COMMAND)


def defaults(command: str = COMMAND) -> dict[str, Any]:
    """The parameters of a command given no option: the table's defaults (as typer's command gets them)."""
    return {"sources": None, **{option.param: option.default for option in options_of(command)}}


def parse_diagnose(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of program.run_diagnose for `argv` (without the program name), or None when typer
    should parse it (not a plain `diagnose` command line)."""
    if not argv or argv[0] != COMMAND or os.environ.get(COMPLETE_VAR):
        return None
    try:
        return _parse(argv[1:], defaults(), VALUE_OPTIONS, FLAGS)
    except _NotPlain:
        return None


# `logsleuth health` (cli/health.health_command): its options, a subset of diagnose's.
HEALTH_VALUE_OPTIONS = _value_options("health")
HEALTH_FLAGS = _flags("health")


def parse_health(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of health_program.run_health for a plain `health` command line, or None."""
    if not argv or argv[0] != "health" or os.environ.get(COMPLETE_VAR):
        return None
    try:
        return _parse(argv[1:], defaults("health"), HEALTH_VALUE_OPTIONS, HEALTH_FLAGS)
    except _NotPlain:
        return None


def _parse(
    words: list[str],
    values: dict[str, Any],
    value_options: dict[str, tuple[str, Callable[[str], Any]]],
    flags: dict[str, str],
) -> dict[str, Any]:
    sources: list[str] = []
    repeated: dict[str, list[Any]] = {}
    rest = iter(words)
    for word in rest:
        if word == "--":
            sources.extend(rest)
        elif word == "-" or not word.startswith("-"):
            sources.append(word)
        elif word in flags:
            values[flags[word]] = True
        else:
            option, value = _option_and_value(word, rest, value_options)
            name, convert = value_options[option]
            if name in REPEATABLE:
                repeated.setdefault(name, []).append(convert(value))
            else:
                values[name] = convert(value)  # given twice: the last one counts, as with click
    values.update(repeated)
    values["sources"] = sources or None
    return values


def _option_and_value(word: str, rest: Any, value_options: dict[str, Any]) -> tuple[str, str]:
    """`--width=100`, `--width 100`, `-Fcfg`, `-F cfg` -> (long name, value)."""
    if word.startswith("--"):
        option, equals, value = word.partition("=")
        if not equals:
            value = next(rest, "")
    else:
        option, value = SHORT_NAMES.get(word[:2], ""), word[2:] or next(rest, "")
    if option not in value_options or not value or value.startswith("-"):
        raise _NotPlain  # unknown, missing, or a value click might read otherwise
    return option, value
