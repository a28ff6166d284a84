"""What a fix builder is given, and how `{capture}` placeholders are filled."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from logsleuth.fixes.catalog import Catalog
from logsleuth.fixes.command import CommandLine
from logsleuth.models import Failure, Fix, LaunchInfo


@dataclass(frozen=True)
class FixContext:
    failure: Failure
    captures: dict[str, str]
    launch: LaunchInfo
    command: CommandLine | None  # the failure's own launch command, when known
    catalog: Catalog | None  # the flags of the engine version in use


# A builder turns a pattern's `[fix]` table into a Fix for this failure and command (None: no fix).
Builder = Callable[[FixContext, dict[str, Any]], Fix | None]


class _Captures(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def interpolate(template: str, captures: dict[str, str]) -> str:
    try:
        return template.format_map(_Captures(captures))
    except (ValueError, IndexError):
        return template
