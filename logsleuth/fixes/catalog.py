"""Flag catalogs: every launch flag of each supported engine version.

Generated from the real argument parsers by scripts/oracle/dump_flags.py and shipped
as JSON in `logsleuth/fixes/catalogs/`.  Used to suggest flags ("did you mean"),
valid choices and renames for the version in use.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from logsleuth import versions


@dataclass(frozen=True)
class FlagInfo:
    """One flag of an engine version's argument parser, as its catalog records it."""

    name: str
    aliases: tuple[str, ...]
    dest: str | None
    type: str | None
    choices: tuple[str, ...]
    default: Any
    takes_value: bool
    deprecated: bool
    renamed_to: str | None
    nargs: int | str | None = None  # argparse's nargs: None for one value, or N, "?", "*", "+"


@dataclass(frozen=True)
class Catalog:
    """The flags one engine version accepts."""

    engine: str
    version: str
    flags: tuple[FlagInfo, ...]

    def find(self, flag: str) -> FlagInfo | None:
        for info in self.flags:
            if flag == info.name or flag in info.aliases:
                return info
        return None

    def by_field(self, field: str) -> FlagInfo | None:
        """The flag that sets a `ServerArgs` field.  Usually its argparse dest; some flags
        (`--tp-size`, dest tensor_parallel_size) are renamed when ServerArgs is built."""
        for info in self.flags:
            if info.dest == field:
                return info
        return self.find("--" + field.replace("_", "-"))

    def names(self) -> list[str]:
        return [alias for info in self.flags for alias in (info.name, *info.aliases) if alias.startswith("--")]

    def boolean_flags(self) -> frozenset[str]:
        return frozenset(alias for info in self.flags if not info.takes_value for alias in (info.name, *info.aliases))


# Package data next to this module (a path, not importlib.resources: see paths.bundled_patterns_dir).
_CATALOGS = Path(__file__).resolve().parent / "catalogs"


@lru_cache(maxsize=1)
def available() -> tuple[tuple[str, str], ...]:
    """(engine, version) pairs with a shipped catalog."""
    try:
        names = [entry.name for entry in _CATALOGS.iterdir() if entry.name.endswith(".json")]
    except (FileNotFoundError, NotADirectoryError):
        return ()
    return tuple(sorted(tuple(name[: -len(".json")].partition("-")[::2]) for name in names))  # type: ignore[misc]


@lru_cache(maxsize=8)
def load(engine: str, version: str | None) -> Catalog | None:
    """The catalog for that version, or the nearest older one (the newest when the version is unknown)."""
    chosen = versions.newest_at_or_below([v for e, v in available() if e == engine], version)
    if chosen is None:
        return None
    path = _CATALOGS / f"{engine}-{chosen}.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    flags = tuple(
        FlagInfo(
            name=entry["name"],
            aliases=tuple(entry.get("aliases", ())),
            dest=entry.get("dest"),
            type=entry.get("type"),
            choices=tuple(str(choice) for choice in entry.get("choices") or ()),
            default=entry.get("default"),
            takes_value=entry.get("nargs") != 0
            and entry.get("action") not in ("store_true", "store_false", "store_const", "count", "boolean_optional"),
            deprecated=bool(entry.get("deprecated")),
            renamed_to=entry.get("renamed_to"),
            nargs=entry.get("nargs"),
        )
        for entry in data.get("flags", ())
    )
    return Catalog(engine, data.get("version", chosen), flags)


def versions_with(engine: str, flag: str) -> tuple[str, ...]:
    """The shipped catalog versions that have `flag`, oldest first: tells a flag of another release (newer
    or removed) from a typo."""
    ordered = sorted((key, v) for e, v in available() if e == engine and (key := versions.version_key(v)) is not None)
    return tuple(version for _, version in ordered if (catalog := load(engine, version)) is not None and catalog.find(flag))
