"""Warnings that state the run cannot do what it was asked (incapacity_warnings.toml, each row with its code site):
a GPU the installed torch has no kernels for, a CUDA that did not initialize, a request vLLM's scheduler dropped for
its length, a vLLM that found no platform.  tracebacks/warned_failures.py decides when such a line is a paste's
failure."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows

# Characters of a line read on each side of a row's literal: the regexes run on this window, not on the whole line,
# so a 64 KiB line costs what a short one does.
WINDOW = 640


@dataclass(frozen=True)
class IncapacityWarning:
    """One row: the warning's text, what the failure is called, and where it comes from."""

    literal: str
    pattern: re.Pattern[str]
    then: re.Pattern[str] | None
    type: str
    category: str
    source: str
    threads: tuple[str, ...]


@cache
def incapacity_warnings() -> tuple[IncapacityWarning, ...]:
    return tuple(
        IncapacityWarning(
            literal=row["literal"],
            pattern=re.compile(row["pattern"]),
            then=re.compile(row["then"]) if row.get("then") else None,
            type=row["type"],
            category=row["category"],
            source=row["source"],
            threads=tuple(row.get("threads", ())),
        )
        for row in table_rows("incapacity_warnings.toml", "warning")
    )


@cache
def literals() -> tuple[str, ...]:
    return tuple(row.literal for row in incapacity_warnings())


def incapacity_warning(text: str) -> tuple[IncapacityWarning, str] | None:
    """The row a line states and the message it gives, else None."""
    if not any(literal in text for literal in literals()):
        return None  # most lines: one substring test per row
    for row in incapacity_warnings():
        if (at := text.find(row.literal)) == -1:
            continue
        start = max(0, at - WINDOW)
        if (m := row.pattern.search(text[start : at + len(row.literal) + WINDOW])) is not None:
            return row, m["msg"].strip()
    return None


def continuation(row: IncapacityWarning, text: str) -> str | None:
    """The warning's next line when it is the one the row expects (`then`), its text; else None."""
    if row.then is None or len(text) > 2 * WINDOW:
        return None
    m = row.then.match(text)
    return m["msg"] if m else None
