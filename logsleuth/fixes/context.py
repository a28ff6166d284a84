"""What a fix builder is given, and how `{capture}` placeholders are filled."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import regex

from logsleuth.command_line import CommandLine
from logsleuth.fixes.catalog import Catalog
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Failure, Fix, LaunchInfo


@dataclass(frozen=True)
class FixContext:
    """What a fix builder knows of the failure it fixes."""

    failure: Failure
    captures: dict[str, str]
    launch: LaunchInfo
    command: CommandLine | None  # the failure's own launch command, when known
    catalog: Catalog | None  # the flags of the engine version in use
    # Builds another `[fix]`-shaped table (static or naming a builder) for this failure: a builder's
    # `alternatives` go through it, so an alternative can be built too.
    build: Callable[[dict[str, Any]], Fix | None] = lambda _data: None
    # Other occurrences' messages grouped with this failure (each rank's own wording), then lines read with it.
    lines: Sequence[str] = ()

    def alternatives(self, data: dict[str, Any]) -> tuple[Fix, ...]:
        """The `alternatives` of a builder's table, each built for this failure."""
        return tuple(fix for alt in data.get("alternatives", ()) if (fix := self.build(alt)) is not None)


# A builder turns a pattern's `[fix]` table into a Fix for this failure and command (None: no fix).
Builder = Callable[[FixContext, dict[str, Any]], Fix | None]


_PLACEHOLDER = compile_lazily_regex(r"\{\{|\}\}|\{[^{}\n]*\}")
_EMPTY_PARENTHESES = compile_lazily_regex(r"\( *\)")
_SPACES = compile_lazily_regex(r" {2,}")
_SPACE_BEFORE_PUNCTUATION = compile_lazily_regex(r" +(?=[.,;:)])")


class StrictValues(dict[str, Any]):
    """Placeholder values where a missing one raises KeyError (str.format_map would otherwise not know)."""

    def __missing__(self, key: str) -> str:
        raise KeyError(key)


def interpolate(template: str, captures: dict[str, Any]) -> str:
    """Prose with `{capture}` placeholders filled.  A placeholder with nothing to fill it is left out (with the
    space around it), never shown as `{what}`: a pattern's sentence must read without it."""
    missing = False

    def fill(match: regex.Match[str]) -> str:
        nonlocal missing
        placeholder = match.group(0)
        if placeholder in ("{{", "}}"):
            return placeholder[0]
        try:
            return placeholder.format_map(StrictValues(captures))
        except (ValueError, IndexError, KeyError, AttributeError, TypeError):
            missing = True
            return ""

    text = _PLACEHOLDER.sub(fill, template)
    if missing:
        text = _SPACE_BEFORE_PUNCTUATION.sub("", _SPACES.sub(" ", _EMPTY_PARENTHESES.sub("", text)))
    return text
