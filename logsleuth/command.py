"""A launch command as flags, and the flag operations a fix applies to it.

Only ever parsed and rewritten, never run.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from logsleuth.models import FlagOp

_ENTRYPOINT_ENDS = ("sglang.launch_server", "api_server", "serve")


def _is_flag(token: str) -> bool:
    # `-1` and `-0.5` are values, not flags.
    return token.startswith("-") and len(token) > 1 and not token[1:2].isdigit() and token[1:2] != "."


@dataclass(frozen=True)
class CommandLine:
    prefix: tuple[str, ...]  # everything up to the entry point: env vars, python, -m module
    positional: tuple[str, ...]  # positional arguments right after the entry point (a vLLM-style model)
    options: tuple[tuple[str, tuple[str, ...]], ...]  # (flag, values) in order

    @classmethod
    def parse(cls, command: str, boolean_flags: frozenset[str] = frozenset()) -> CommandLine:
        tokens = shlex.split(command)
        split = 0
        for index, token in enumerate(tokens):
            if token.endswith(_ENTRYPOINT_ENDS) or (token == "serve" and index > 0):
                split = index + 1
                break
        prefix, rest = tokens[:split], tokens[split:]
        positional: list[str] = []
        while rest and not _is_flag(rest[0]):
            positional.append(rest.pop(0))
        options: list[tuple[str, tuple[str, ...]]] = []
        while rest:
            flag = rest.pop(0)
            if "=" in flag and flag.startswith("--"):
                name, _, value = flag.partition("=")
                options.append((name, (value,)))
                continue
            values: list[str] = []
            if flag not in boolean_flags:
                while rest and not _is_flag(rest[0]):
                    values.append(rest.pop(0))
            options.append((flag, tuple(values)))
        return cls(tuple(prefix), tuple(positional), tuple(options))

    def has(self, flag: str) -> bool:
        return any(name == flag for name, _ in self.options)

    def value(self, flag: str) -> str | None:
        for name, values in self.options:
            if name == flag:
                return values[0] if values else ""
        return None

    def int_value(self, flag: str) -> int | None:
        raw = self.value(flag)
        try:
            return int(raw) if raw not in (None, "") else None
        except ValueError:
            return None

    def apply(self, ops: tuple[FlagOp, ...]) -> CommandLine:
        options = list(self.options)
        positional = list(self.positional)
        for op in ops:
            index = next((i for i, (name, _) in enumerate(options) if name == op.flag), None)
            if op.op == "remove":
                if not _is_flag(op.flag):  # a stray positional argument
                    if op.flag in positional:
                        positional.remove(op.flag)
                    else:  # parsed as an extra value of the flag before it: keep that flag's own value
                        options = [(n, values[:1] + tuple(v for v in values[1:] if v != op.flag)) for n, values in options]
                    continue
                options = [(n, v) for n, v in options if n != op.flag]
            elif op.op == "rename":
                if index is not None and op.to:
                    values = (op.value,) if op.value is not None else options[index][1]
                    options[index] = (op.to, values)
            elif op.op in ("add", "set"):
                values = (op.value,) if op.value not in (None, "") else ()
                if op.op == "set" and op.value is None and index is not None and options[index][1]:
                    # "choose a value" with nothing to choose: drop the flag so the engine default applies
                    options.pop(index)
                    continue
                if op.value is not None and op.value in positional:
                    positional.remove(op.value)  # a positional model becomes --model-path MODEL
                if index is None:
                    options.append((op.flag, values))
                else:
                    options[index] = (op.flag, values)
        return CommandLine(self.prefix, tuple(positional), tuple(options))

    def render(self) -> str:
        tokens = [*self.prefix, *self.positional]
        for name, values in self.options:
            tokens.append(name)
            tokens.extend(values)
        return shlex.join(tokens)
