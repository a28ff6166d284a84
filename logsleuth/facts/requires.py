"""What each SGLang and vLLM release pins: Requires-Dist read from its real wheel (requires.json).

The data is written by scripts/facts/requires_dist.py (`make facts`), never by hand; its module docstring says
what is kept of each release.  A release is looked up exactly as the log names it: the pins of 0.5.9 say
nothing about 0.5.9.post1, so an unknown release gets None and `known_releases` says which ones are known."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from logsleuth import versions

DATA = Path(__file__).with_name("requires.json")  # package data beside this module


@dataclass(frozen=True, slots=True)
class Pin:
    """One distribution as one release declares it."""

    distribution: str  # normalized (PEP 503): "flashinfer-python"
    specifier: str  # "==0.2.9rc2", "<5,>=4.56.0"; "" when declared without a version
    extras: tuple[str, ...] = ()  # the extras that declare it ("srt", ...); () when a plain install needs it
    markers: tuple[str, ...] = ()  # "spec; marker" when it holds only on some platforms or Pythons
    included_by: tuple[str, ...] = ()  # the extras that include one of those (srt includes runtime-common)

    @property
    def requirement(self) -> str:
        """As pip takes it: "transformers==4.54.1"."""
        return f"{self.distribution}{self.specifier}"

    @property
    def is_pinned(self) -> bool:
        return bool(self.specifier)


def normalize(name: str) -> str:
    """PEP 503: `Flashinfer_Python` -> `flashinfer-python`."""
    return re.sub(r"[-_.]+", "-", name).lower()


@lru_cache(maxsize=1)
def _releases() -> dict[str, dict[str, dict[str, Any]]]:
    engines: dict[str, dict[str, dict[str, Any]]] = json.loads(DATA.read_text(encoding="utf-8"))["engines"]
    return engines


def known_releases(engine: str) -> tuple[str, ...]:
    """The releases of `engine` whose wheels were read, oldest first."""
    return tuple(_releases().get(engine, {}))


def is_known(engine: str | None, version: str | None) -> bool:
    return engine is not None and version is not None and version in _releases().get(engine, {})


def releases_with_extra(engine: str, extra: str) -> tuple[str, ...]:
    """The known releases of `engine` whose metadata declares the extra (`sglang[diffusion]`), oldest first."""
    return tuple(version for version, release in _releases().get(engine, {}).items() if extra in release.get("extras", {}))


def declares(engine: str, distribution: str) -> bool:
    """Whether any known release of `engine` declares `distribution`."""
    name = normalize(distribution)
    return any(_find(release, name) is not None for release in _releases().get(engine, {}).values())


def pin(engine: str, version: str | None, distribution: str) -> Pin | None:
    """How `engine` `version` declares `distribution`, or None when the release is unknown or declares none.

    A plain install's requirement wins; else the extras that declare it, the first that pins it giving the
    specifier, and the extras that include those (SGLang 0.4's transformers pin sits in runtime-common, which
    srt includes)."""
    release = _releases().get(engine, {}).get(version or "")
    return None if release is None else _find(release, normalize(distribution))


def pinned_requirement(engine: str, version: str | None, distribution: str) -> str | None:
    """The requirement `engine` `version` declares on `distribution` (e.g. "transformers==4.51.1"), or None when
    the release is unknown or declares none."""
    found = pin(engine, version, distribution)
    return found.requirement if found is not None else None


def pins_across(engine: str, distribution: str) -> list[tuple[str, str, str]]:
    """The specifier each known release of `engine` declares on `distribution`, as runs of releases that agree:
    [(first release, last release, specifier)], oldest first; releases that do not declare it end a run."""
    runs: list[tuple[str, str, str]] = []
    name = normalize(distribution)
    previous: str | None = None
    for version, release in _releases().get(engine, {}).items():
        found = _find(release, name)
        specifier = found.specifier if found is not None else None
        if specifier is not None and runs and specifier == previous:
            runs[-1] = (runs[-1][0], version, specifier)
        elif specifier is not None:
            runs.append((version, version, specifier))
        previous = specifier
    return runs


def pinned_by_some_release(engine: str, distribution: str, version: str) -> bool:
    """Whether some known release of `engine` pins `distribution` to a set of versions holding `version`: an exact
    pin or a range with an upper bound (`==0.6.7.dev2`, `>=0.6.4.post1,<=0.7.2`), not an open floor (`>=0.2.5`),
    which admits nearly every version."""
    return any(("==" in specifier or "<" in specifier) and versions.matches((specifier,), version)
               for _first, _last, specifier in pins_across(engine, distribution))


def newest_release(engine: str) -> str | None:
    known = [v for v in known_releases(engine) if versions.version_key(v) is not None]
    return max(known, key=lambda v: versions.version_key(v) or ((0,), (0,), 0.0, 0.0)) if known else None


def _find(release: dict[str, Any], name: str) -> Pin | None:
    markers = tuple(release.get("markers", {}).get(name, ()))
    if name in release["requires"]:
        return Pin(name, release["requires"][name], (), markers)
    declaring = [extra for extra, table in release["extras"].items() if name in table]
    if not declaring:
        return None
    includes: dict[str, list[str]] = release.get("includes", {})
    including = [extra for extra, named in includes.items() if set(named) & set(declaring) and extra not in declaring]
    specifier = next((release["extras"][x][name] for x in declaring if release["extras"][x][name]), "")
    return Pin(name, specifier, tuple(declaring), markers, tuple(including))
