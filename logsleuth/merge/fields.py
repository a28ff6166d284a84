"""Typed access to a JSON object read from a file, whose every mistake is one error naming where it is
(`failures[0].count: expected an integer, not "8"`): a malformed report is named in the merge, never a traceback."""

from __future__ import annotations

from typing import Any


class MalformedReport(ValueError):
    """A report file that is not a logsleuth report, or not a well-formed one: the merge names it and goes on."""


class Fields:
    """One JSON object and its path in the document, for error messages."""

    __slots__ = ("data", "where")

    def __init__(self, data: Any, where: str = "") -> None:
        if not isinstance(data, dict):
            raise MalformedReport(f"{where or 'the report'}: expected an object, not {_kind(data)}")
        self.data = data
        self.where = where

    def _path(self, key: str) -> str:
        return f"{self.where}.{key}" if self.where else key

    def _get(self, key: str, types: tuple[type, ...], default: Any, what: str) -> Any:
        value = self.data.get(key, default)
        if value is None and default is None:
            return None
        if isinstance(value, bool) and bool not in types:  # JSON true is not a number
            raise MalformedReport(f"{self._path(key)}: expected {what}, not {_kind(value)}")
        if not isinstance(value, types):
            raise MalformedReport(f"{self._path(key)}: expected {what}, not {_kind(value)}")
        return value

    def _required(self, key: str, types: tuple[type, ...], default: Any, what: str) -> Any:
        value = self._get(key, types, default, what)
        if value is None:
            raise MalformedReport(f"{self._path(key)}: missing")
        return value

    def text(self, key: str, default: str | None = None) -> str:
        return str(self._required(key, (str,), default, "a string"))

    def optional_text(self, key: str) -> str | None:
        value = self._get(key, (str,), None, "a string or null")
        return None if value is None else str(value)

    def integer(self, key: str, default: int | None = None) -> int:
        return int(self._required(key, (int,), default, "an integer"))

    def optional_integer(self, key: str) -> int | None:
        value = self._get(key, (int,), None, "an integer or null")
        return None if value is None else int(value)

    def optional_number(self, key: str) -> float | None:
        value = self._get(key, (int, float), None, "a number or null")
        return float(value) if value is not None else None

    def flag(self, key: str, default: bool = False) -> bool:
        return bool(self._get(key, (bool,), default, "true or false"))

    def texts(self, key: str) -> tuple[str, ...]:
        values = self._get(key, (list,), [], "a list")
        if not all(isinstance(value, str) for value in values):
            raise MalformedReport(f"{self._path(key)}: expected a list of strings")
        return tuple(values)

    def counts(self, key: str) -> tuple[tuple[str, int], ...]:
        """An object of name -> count, in its order."""
        values = self._get(key, (dict,), {}, "an object")
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in values.values()):
            raise MalformedReport(f"{self._path(key)}: expected counts (integers)")
        return tuple(values.items())

    def pairs(self, key: str) -> tuple[tuple[str, str], ...]:
        values = self._get(key, (dict,), {}, "an object")
        if not all(isinstance(v, str) for v in values.values()):
            raise MalformedReport(f"{self._path(key)}: expected an object of strings")
        return tuple(values.items())

    def objects(self, key: str) -> list[Fields]:
        values = self._get(key, (list,), [], "a list")
        return [Fields(value, f"{self._path(key)}[{index}]") for index, value in enumerate(values)]

    def object(self, key: str) -> Fields | None:
        value = self.data.get(key)
        return None if value is None else Fields(value, self._path(key))

    def choice(self, key: str, allowed: tuple[str | None, ...]) -> Any:
        value = self.data.get(key)
        if value not in allowed:
            raise MalformedReport(f"{self._path(key)}: {_kind(value)} is not one of {', '.join(map(str, allowed))}")
        return value


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return repr(value[:40])
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    return f"{type(value).__name__} {value!r}"[:60]
