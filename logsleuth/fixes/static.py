"""A pattern's `[fix]` written as data: flags, env and steps with `{capture}` and `{cmd[--flag]}` placeholders."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from logsleuth.command_line import CommandLine
from logsleuth.fixes.context import StrictValues, interpolate
from logsleuth.models import Fix, FlagOp


class CommandValues(dict[str, str]):
    """`{cmd[--tp-size]}` in a pattern's fix: that flag's value in the launch command."""

    def __init__(self, command: CommandLine | None) -> None:
        super().__init__()
        self.command = command

    def __missing__(self, flag: str) -> str:
        value = self.command.value(flag) if self.command else None
        if value is None:
            raise KeyError(flag)
        return value


def static_fix(
    data: dict[str, Any],
    captures: dict[str, Any],
    build_alternative: Callable[[dict[str, Any]], Fix | None] | None = None,
) -> Fix:
    """A `[fix]` table as data: flags, env and steps with `{capture}` / `{cmd[--flag]}` placeholders.

    A flag value is all or nothing: one with a placeholder nothing fills has no value (the fix then names the
    flag only).  Literal braces, e.g. a JSON value, are written doubled: `'{{"key": false}}'`.
    An alternative may name a builder of its own; `build_alternative` builds those."""

    def value(raw: Any) -> str | None:
        if raw is None:
            return None
        try:
            return str(raw).format_map(StrictValues(captures))
        except (KeyError, ValueError, IndexError, AttributeError):
            return None  # a value that depends on a capture or a flag this failure does not have

    def alternative(alt: dict[str, Any]) -> Fix | None:
        if build_alternative is not None:
            return build_alternative(alt)
        return None if alt.get("builder") else static_fix(alt, captures)

    return Fix(
        summary=interpolate(str(data.get("summary", "")), captures),
        flags=tuple(
            FlagOp(op=f["op"], flag=f["flag"], value=value(f.get("value")), to=value(f.get("to")))
            for f in data.get("flags", ())
        ),
        env=tuple((k, interpolate(str(v), captures)) for k, v in (data.get("env") or {}).items()),
        steps=tuple(interpolate(str(step), captures) for step in data.get("steps", ())),
        needs_input=tuple(str(need) for need in data.get("needs_input", ())),
        alternatives=tuple(fix for alt in data.get("alternatives", ()) if (fix := alternative(alt)) is not None),
    )
