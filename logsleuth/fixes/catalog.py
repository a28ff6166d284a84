"""Flag catalogs: every launch flag of each engine release.

Two kinds, both shipped in `logsleuth/fixes/catalogs/`: the real argument parsers' catalogs of a few releases
(scripts/oracle/dump_flags.py, one JSON file each; `source` "parser"), and static catalogs of every other release
from SGLang 0.3.0 and vLLM 0.6.0 on, read from each release's source (static_catalogs.py; `source` "static": they
prove that a flag exists, not that a value passes the engine's validation).  Used to suggest flags ("did you
mean"), valid choices and renames for the version in use, and never to offer a flag that release lacks.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from logsleuth import versions
from logsleuth.fixes import static_catalogs


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
    # False in a static catalog where the source computed the default (then `default` is None) or the choices
    # (then `choices` is empty): "not known", never "none".
    default_known: bool = True
    choices_known: bool = True


@dataclass(frozen=True)
class Catalog:
    """The flags one engine version accepts."""

    engine: str
    version: str
    flags: tuple[FlagInfo, ...]
    # "parser": dumped from the release's real argument parser; "static": read from its source, which proves a
    # flag exists in the release but not that a value passes its validation.
    source: str = "parser"

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
    """The catalog of that release: its real parser's when one is shipped, else its static one.  A release with
    neither (older than the static catalogs, newer than the newest, a dev build) gets None: no nearest-release
    guess, whose flags could be missing from it.  An unknown version (None) gets the newest real catalog, as
    before: the callers say the version is unknown."""
    if version is None or versions.version_key(version) is None:
        return _parser_catalog(engine, versions.newest_at_or_below([v for e, v in available() if e == engine], None))
    wanted = versions.version_key(version)
    real = next((v for e, v in available() if e == engine and versions.version_key(v) == wanted), None)
    if real is not None:
        return _parser_catalog(engine, real)
    release = static_catalogs.release_named(engine, version)
    records = static_catalogs.flag_records(engine, release) if release else None
    if release is None or records is None:
        return None
    return Catalog(engine, release, tuple(_static_flag(record) for record in records), source="static")


def _parser_catalog(engine: str, chosen: str | None) -> Catalog | None:
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


_VALUELESS_ACTIONS = ("store_true", "store_false", "store_const", "count", "boolean_optional",
                      "DeprecatedStoreTrueAction")


def _static_flag(record: dict[str, Any]) -> FlagInfo:
    """One flag of a static catalog; its `--no-x` negations are aliases, as in the SGLang parser catalogs."""
    choices, default = record.get("choices"), record.get("default")
    return FlagInfo(
        name=record["name"],
        aliases=tuple((record["name"], *record.get("aliases", ()), *record.get("negations", ()))),
        dest=record.get("dest"),
        type=None,
        choices=() if choices in (None, static_catalogs.UNKNOWN) else tuple(choices),
        default=None if default == static_catalogs.UNKNOWN else default,
        takes_value=record.get("nargs") != 0 and record.get("action") not in _VALUELESS_ACTIONS,
        deprecated=bool(record.get("deprecated")),
        renamed_to=None,
        nargs=record.get("nargs"),
        default_known=default != static_catalogs.UNKNOWN,
        choices_known=choices != static_catalogs.UNKNOWN,
    )


def versions_with(engine: str, flag: str) -> tuple[str, ...]:
    """The shipped catalog versions that have `flag`, oldest first: tells a flag of another release (newer
    or removed) from a typo."""
    ordered = sorted((key, v) for e, v in available() if e == engine and (key := versions.version_key(v)) is not None)
    return tuple(version for _, version in ordered if (catalog := load(engine, version)) is not None and catalog.find(flag))
