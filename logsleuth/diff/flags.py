"""The flags a launch set, by the flag catalog of its own release: what `diff` compares.

A launch's flags are what its command line gave (read the way that release's argparse reads them, by
`check.flags.read_flags`), each valued as the `server_args=` dump resolved it when the log has one; a flag given
its default is left out.  Without a command line, every `server_args=` field that differs from the release's
default counts, as `fixes/server_args.py` rebuilds a command (values SGLang derives itself then count too).

Flags are matched across releases by name: BAD's catalog resolves GOOD's flag (its aliases, and the `renamed_to`
of a deprecated flag), so a flag whose ServerArgs field a release renamed is one flag with two field names.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass
from typing import Any

from logsleuth.check.flags import Given, read_flags
from logsleuth.check.words import parse_command_text
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.catalog import Catalog, FlagInfo
from logsleuth.ingest.launch import parse_server_args
from logsleuth.redact import secret_by_name

# Shown in the model section, not among the flags.
MODEL_FIELDS = frozenset({"model_path"})


@dataclass(frozen=True, slots=True)
class FlagValue:
    """A flag a launch set, named by its release's catalog."""
    flag: str  # the flag's name in its release's catalog (`--max-running-requests`), or as written when unknown
    field: str | None  # its ServerArgs field
    value: str  # as shown
    raw: Any  # for comparison


def _literal(text: str) -> Any:
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text


def shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, (dict, list, tuple)):
        try:
            return json.dumps(value)
        except (TypeError, ValueError):
            return repr(value)
    return repr(value) if value is None else str(value)


def _typed(words: tuple[str, ...], info: FlagInfo) -> Any:
    """A command line's value the way argparse converts it (for comparison with the catalog's default)."""
    if not info.takes_value:
        return True
    converted: list[Any] = []
    for word in words:
        try:
            converted.append(int(word) if info.type == "int" else float(word) if info.type == "float" else word)
        except ValueError:
            converted.append(word)
    return converted[0] if len(converted) == 1 and info.nargs in (None, "?") else converted


def catalog_for(version: str | None) -> Catalog | None:
    return catalogs.load("sglang", version)


def _fields_by_flag(dump: dict[str, str], catalog: Catalog) -> dict[str, str]:
    """flag name -> the dump field that holds its value."""
    found: dict[str, str] = {}
    for field in dump:
        info = catalog.by_field(field)
        if info is not None:
            found.setdefault(info.name, field)
    return found


def _dashed_secret(previous: Given, flag: Given) -> bool:
    """`--api-key -Dx`: argparse reads `-Dx` as a flag of its own, but it is the key the user gave (a secret, to
    show redacted under its flag's name, never as a flag name)."""
    return (not previous.values and flag.info is None and not flag.written.startswith("--")
            and secret_by_name(previous.written, flag.written))


def launch_flags(command: str | None, server_args: str | None, catalog: Catalog | None) -> dict[str, FlagValue]:
    """The flags a launch set (defaults left out), by flag name in its own release's catalog."""
    dump = dict(parse_server_args(server_args)) if server_args else {}
    if catalog is None:
        return {}
    holders = _fields_by_flag(dump, catalog)
    flags: dict[str, FlagValue] = {}
    if command is not None:
        parsed = parse_command_text(command)
        _verdicts, given = read_flags(parsed.args, catalog, parsed.engine)
        for previous, flag in zip([None, *given], given, strict=False):
            if previous is not None and _dashed_secret(previous, flag):
                name = previous.info.name if previous.info is not None else previous.written
                flags[name] = FlagValue(name, previous.info.dest if previous.info else None, flag.written, flag.written)
                continue
            if flag.info is None:
                flags[flag.written] = FlagValue(flag.written, None, " ".join(flag.values), tuple(flag.values))
                continue
            field = holders.get(flag.info.name)
            raw = _literal(dump[field]) if field is not None else _typed(flag.values, flag.info)
            if raw != flag.info.default:
                flags[flag.info.name] = FlagValue(flag.info.name, field or flag.info.dest, shown(raw), raw)
        return flags
    for field, text in dump.items():
        info = catalog.by_field(field)
        raw = _literal(text)
        if info is not None and raw != info.default and not (raw is False and not info.takes_value):
            flags[info.name] = FlagValue(info.name, field, shown(raw), raw)
    return flags


def in_other_release(flag: str, mine: Catalog | None, other: Catalog | None) -> str:
    """The name `other`'s catalog gives the flag `flag` of `mine` (itself when neither knows better)."""
    if mine is None or other is None:
        return flag
    info = mine.find(flag)
    for name in (flag, *(info.aliases if info is not None else ())):
        found = other.find(name)
        if found is not None:
            if found.renamed_to and other.find(found.renamed_to) is not None:
                return other.find(found.renamed_to).name  # type: ignore[union-attr]
            return found.name
    return flag
