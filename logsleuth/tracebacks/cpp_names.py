"""A C++ type's name as `typeid(e).name()` prints it (the Itanium ABI's mangling, GCC and Clang on Linux), read back
into the name a person writes: Ray's terminate handler prints the type of the exception that ended a process that way
(`St12system_error`, `N5boost10wrapexceptINS_6system12system_errorEEE`).  Only what such names hold is read: `std::`
(`St`), nested names (`N…E`), template arguments (`I…E`) and substitutions (`S_`, `S0_`, …); any other name is left
as printed."""

from __future__ import annotations

import re

_LENGTH = re.compile(r"\d+")


class _Unreadable(Exception):
    """A mangled name using more of the ABI than this reader knows."""


def demangled(name: str) -> str:
    """`std::system_error` for `St12system_error`; the name unchanged when it is not one this reader knows."""
    if not name or not (name[0].isdigit() or name.startswith(("St", "N"))):
        return name
    try:
        text, end = _Reader(name).type_at(0)
    except (_Unreadable, IndexError):
        return name
    return text if end == len(name) else name


class _Reader:
    def __init__(self, name: str) -> None:
        self.name = name
        self.substitutions: list[str] = []

    def type_at(self, at: int) -> tuple[str, int]:
        name = self.name
        if name.startswith("N", at):
            return self._nested(at + 1)
        if name.startswith("St", at):
            text, at = self._source_name(at + 2)
            text = "std::" + text
            self.substitutions.append(text)
            return self._with_template_args(text, at)
        if name.startswith("S", at):
            return self._substitution(at)
        text, at = self._source_name(at)
        self.substitutions.append(text)
        return self._with_template_args(text, at)

    def _nested(self, at: int) -> tuple[str, int]:
        parts: list[str] = []
        name = self.name
        while not name.startswith("E", at):
            if name.startswith("St", at) and not parts:
                parts.append("std")
                at += 2
                continue
            if name.startswith("I", at):
                args, at = self._template_args(at + 1)
                parts[-1] += args
            elif name.startswith("S", at):
                text, at = self._substitution(at)
                parts.append(text)
                continue
            else:
                text, at = self._source_name(at)
                parts.append(text)
            self.substitutions.append("::".join(parts))
        if not parts:
            raise _Unreadable
        return "::".join(parts), at + 1

    def _with_template_args(self, text: str, at: int) -> tuple[str, int]:
        if self.name.startswith("I", at):
            args, at = self._template_args(at + 1)
            text += args
            self.substitutions.append(text)
        return text, at

    def _template_args(self, at: int) -> tuple[str, int]:
        args: list[str] = []
        while not self.name.startswith("E", at):
            text, at = self.type_at(at)
            args.append(text)
        return "<" + ", ".join(args) + ">", at + 1

    def _substitution(self, at: int) -> tuple[str, int]:
        end = self.name.index("_", at)
        code = self.name[at + 1 : end]
        # `S_` is the first; then `S0_`, `S1_`, … in base 36 (digits, then upper-case letters)
        index = 0 if code == "" else int(code, 36) + 1 if code.isalnum() and code == code.upper() else -1
        if not 0 <= index < len(self.substitutions):
            raise _Unreadable
        return self.substitutions[index], end + 1

    def _source_name(self, at: int) -> tuple[str, int]:
        m = _LENGTH.match(self.name, at)
        if m is None:
            raise _Unreadable
        length = int(m.group())
        start = m.end()
        if length == 0 or start + length > len(self.name):
            raise _Unreadable
        return self.name[start : start + length], start + length
