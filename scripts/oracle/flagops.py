"""Apply a logsleuth fix's flag operations to a launch command, the way a user would by hand.

The operations are those of the JSON report (docs/json-report.md, ``fix.flags``): ``add``, ``remove``, ``set``
and ``rename``. verify_fixes.py uses this to check advice given WITHOUT the launch command: logsleuth then
prints only the operations, the user applies them to the command they ran, and the result must pass
SGLang's validation. This is an independent reading of the documented semantics, not logsleuth's own code:

- ``add``/``set`` with a value: the flag takes that value (replacing what it had), or is appended; a
  positional word equal to the value goes (a vLLM-style positional model becomes ``--model-path MODEL``).
  An empty value means a switch: the flag is kept or added without a value.
- ``set`` with value null, and ``rename`` with ``to`` null, mean "a value only the user knows": the fix
  lists the flag in ``needs_input`` and the operation changes nothing here. ``add`` with value null adds
  a switch.
- ``rename``: the flag gets its new name; with a value it also gets that value. Absent flag: nothing.
- ``remove`` of ``--flag`` drops it and its values; ``remove`` of a word without dashes drops that
  positional word (a stray value after a switch is one, as argparse sees it).

The command is split as argparse reads it: each flag takes as many words as the version's flag catalog
says (a switch none, ``nargs='+'`` all up to the next flag, otherwise one), so a stray word after a switch
is a positional, not the switch's value.
"""

from __future__ import annotations

import json
import shlex
from dataclasses import dataclass, field
from typing import Any

from dump_flags import CATALOG_DIR

ENTRY = ("python", "-m", "sglang.launch_server")
MANY = "many"  # a flag that takes every word up to the next flag


@dataclass
class Option:
    flag: str
    values: list[str] = field(default_factory=list)


Item = Option | str  # a str is a positional word


def flag_arity(version: str) -> dict[str, int | str]:
    """flag -> how many words it takes (0, 1, or MANY), from the version's catalog; {} when none is found."""
    path = CATALOG_DIR / f"sglang-{version}.json"
    if not path.exists():
        return {}
    flags = json.loads(path.read_text())["flags"]
    return {alias: _arity(info) for info in flags for alias in info["aliases"]}


def _arity(info: dict[str, Any]) -> int | str:
    nargs = info.get("nargs")
    if nargs == 0:
        return 0
    if nargs in ("+", "*"):
        return MANY
    if isinstance(nargs, int):
        return nargs
    return 1  # None, "?" (a value given or not: a following non-flag word is taken)


def is_flag(word: str) -> bool:
    """`--x`, `-h`; `-1` and `-0.5` are values."""
    return word.startswith("-") and len(word) > 1 and not word[1].isdigit() and word[1] != "."


def parse(command: str, arity: dict[str, int | str]) -> list[Item]:
    """The words after ``python -m sglang.launch_server`` as options and positionals.

    A flag the catalog does not know takes the words up to the next flag (what logsleuth assumes too)."""
    words = shlex.split(command)
    if tuple(words[:3]) != ENTRY:
        raise ValueError(f"not a launch_server command: {command!r}")
    rest = words[3:]
    items: list[Item] = []
    i = 0
    while i < len(rest):
        word = rest[i]
        i += 1
        if not is_flag(word):
            items.append(word)
            continue
        if word.startswith("--") and "=" in word:
            name, _, value = word.partition("=")
            items.append(Option(name, [value]))
            continue
        wanted = arity.get(word, MANY)
        option = Option(word)
        while i < len(rest) and not is_flag(rest[i]) and (wanted == MANY or len(option.values) < int(wanted)):
            option.values.append(rest[i])
            i += 1
        items.append(option)
    return items


def render(items: list[Item]) -> str:
    words = list(ENTRY)
    for item in items:
        words.extend([item] if isinstance(item, str) else [item.flag, *item.values])
    return shlex.join(words)


def apply_ops(items: list[Item], ops: list[dict[str, Any]]) -> list[Item]:
    """The items after the operations, in order (a new list; the input is not changed)."""
    out: list[Item] = [item if isinstance(item, str) else Option(item.flag, list(item.values)) for item in items]
    for op in ops:
        kind, flag, value, to = op["op"], op["flag"], op.get("value"), op.get("to")
        if kind == "remove":
            out = _remove(out, flag)
        elif kind == "rename":
            for item in out:
                if isinstance(item, Option) and item.flag == flag and to:
                    item.flag = to
                    if value is not None:
                        item.values = [value]
        elif kind == "set" and value is None:
            continue  # needs_input: the user chooses the value
        elif kind in ("add", "set"):
            out = _give(out, flag, value)
        else:
            raise ValueError(f"unknown flag operation {kind!r}")
    return out


def _remove(items: list[Item], flag: str) -> list[Item]:
    if is_flag(flag):
        return [item for item in items if isinstance(item, str) or item.flag != flag]
    if flag in items:
        items = list(items)
        items.remove(flag)
    return items


def _give(items: list[Item], flag: str, value: str | None) -> list[Item]:
    new_values = [value] if value else []
    if value:
        items = [item for item in items if item != value]  # a positional model given as --model-path MODEL
    existing = [item for item in items if isinstance(item, Option) and item.flag == flag]
    for item in existing:
        item.values = list(new_values)
    if not existing:
        items.append(Option(flag, new_values))
    return items


def applied_command(command: str, ops: list[dict[str, Any]], version: str) -> str:
    """`command` with the operations applied, as one shell line."""
    arity = flag_arity(version)
    return render(apply_ops(parse(command, arity), ops))
