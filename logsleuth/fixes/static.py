"""A pattern's `[fix]` written as data: flags, env and steps with `{capture}` and `{cmd[--flag]}` placeholders."""

from __future__ import annotations

from typing import Any

from logsleuth.fixes.command import CommandLine
from logsleuth.fixes.context import _Captures, interpolate
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


def static_fix(data: dict[str, Any], captures: dict[str, Any]) -> Fix:
    """A `[fix]` table as data: flags, env and steps with `{capture}` / `{cmd[--flag]}` placeholders."""

    def value(raw: Any) -> str | None:
        if raw is None:
            return None
        try:
            text = str(raw).format_map(_Captures(captures))
        except (KeyError, ValueError, IndexError):
            return None  # a value that depends on a flag the command does not have
        return None if "{" in text else text

    return Fix(
        summary=interpolate(str(data.get("summary", "")), captures),
        flags=tuple(
            FlagOp(op=f["op"], flag=f["flag"], value=value(f.get("value")), to=value(f.get("to")))
            for f in data.get("flags", ())
        ),
        env=tuple((k, interpolate(str(v), captures)) for k, v in (data.get("env") or {}).items()),
        steps=tuple(interpolate(str(step), captures) for step in data.get("steps", ())),
        alternatives=tuple(static_fix(alt, captures) for alt in data.get("alternatives", ())),
    )
