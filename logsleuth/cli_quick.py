"""A plain `logsleuth diagnose ...` command line, read without importing typer.

Why: importing typer (and the click it vendors) and building the command from its annotations costs ~40-80 ms
of CPU, a sixth of a remote diagnose (issue 14).  Most command lines are plain: known options with valid
values.  This reader accepts exactly those and gives up (None) on anything else: help, an unknown or
misspelled option, a value click would reject, a value that looks like an option.  Then cli.py's typer
command parses the line, so help, errors and exit statuses are typer's, as before.  The options here are the
ones of `cli.diagnose_command`; tests/test_cli_quick.py checks them against it, and that both parsers give the
same arguments.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from logsleuth.render.options import MIN_WIDTH, OutputFormat
from logsleuth.sources.options import SSH_BACKENDS

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


# Option word -> (the parameter of cli.diagnose_command it sets, how its value is converted).
VALUE_OPTIONS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "--format": ("output_format", _choice(tuple(OutputFormat), OutputFormat)),
    "--output": ("output", Path),
    "--width": ("width", _count(MIN_WIDTH)),
    "--cmd": ("command", str),
    "--engine-version": ("engine_version", str),
    "--patterns": ("patterns", Path),
    "--max-bytes": ("max_bytes", str),
    "--max-chars": ("max_chars", _count()),
    "--slack-webhook": ("slack_webhook", str),
    "--ssh-config": ("ssh_config", Path),
    "--ssh-backend": ("ssh_backend", _choice(SSH_BACKENDS)),
    "--parallel": ("parallel", _count(1)),
    "--hosts-file": ("hosts_file", str),
    "--llm-url": ("llm_url", str),
    "--llm-model": ("llm_model", str),
    "--verify-fix": ("verify_fix", str),
    "--host": ("host", str),
}
SHORT_NAMES = {"-f": "--format", "-o": "--output", "-F": "--ssh-config"}
REPEATABLE = frozenset({"patterns"})
FLAGS = {
    "--all": "all_failures",
    "--no-user-patterns": "no_user_patterns",
    "--no-redact": "no_redact",
    "--anonymize": "anonymize",
    "--post-to-slack": "post_to_slack",
    "--accept-new-host-key": "accept_new_host_key",
    "--all-files": "all_files",
    "--explain": "explain",
}


def defaults() -> dict[str, Any]:
    """The parameters of a `diagnose` given no option (as cli.diagnose_command declares them)."""
    from logsleuth.ingest.reader import DEFAULT_MAX_BYTES

    values: dict[str, Any] = {name: None for name, _ in VALUE_OPTIONS.values()}
    values.update({name: False for name in FLAGS.values()})
    from logsleuth.sources.fanout import DEFAULT_PARALLEL

    values.update(
        sources=None, max_bytes=f"{DEFAULT_MAX_BYTES >> 20}M", max_chars=3500, ssh_backend="auto",
        parallel=DEFAULT_PARALLEL,
    )
    return values


def parse_diagnose(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of program.run_diagnose for `argv` (without the program name), or None when typer
    should parse it (not a plain `diagnose` command line)."""
    if not argv or argv[0] != COMMAND or os.environ.get(COMPLETE_VAR):
        return None
    try:
        return _parse(argv[1:], defaults(), VALUE_OPTIONS, FLAGS)
    except _NotPlain:
        return None


# `logsleuth health` (cli_health.health_command): its options, a subset of diagnose's.
HEALTH_VALUE_OPTIONS = {
    option: VALUE_OPTIONS[option]
    for option in (
        "--format", "--output", "--width", "--cmd", "--engine-version", "--patterns", "--max-chars", "--ssh-config",
        "--ssh-backend", "--parallel", "--hosts-file", "--host",
    )
}
HEALTH_FLAGS = {option: FLAGS[option] for option in ("--no-user-patterns", "--no-redact", "--accept-new-host-key")}


def parse_health(argv: list[str]) -> dict[str, Any] | None:
    """The keyword arguments of health_program.run_health for a plain `health` command line, or None."""
    if not argv or argv[0] != "health" or os.environ.get(COMPLETE_VAR):
        return None
    from logsleuth.sources.fanout import DEFAULT_PARALLEL

    values: dict[str, Any] = {name: None for name, _ in HEALTH_VALUE_OPTIONS.values()}
    values.update({name: False for name in HEALTH_FLAGS.values()})
    values.update(sources=None, max_chars=3500, ssh_backend="auto", parallel=DEFAULT_PARALLEL)
    try:
        return _parse(argv[1:], values, HEALTH_VALUE_OPTIONS, HEALTH_FLAGS)
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
