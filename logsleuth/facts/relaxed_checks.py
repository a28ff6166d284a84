"""The checks a later engine release relaxed (relaxed_checks.toml): which indexed check, from which release the
same launch passes, what changed and where that is recorded.  Loading only; reasoning/relaxed_check.py uses it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows


@dataclass(frozen=True)
class RelaxedCheck:
    """One row of relaxed_checks.toml (its header says what each field is and how a row is proven)."""

    engine: str
    file: str
    function: str
    guard: str
    last: str
    relaxed_in: str
    change: str
    source: str
    failing: str
    proof: str


@cache
def relaxed_checks() -> tuple[RelaxedCheck, ...]:
    return tuple(RelaxedCheck(**row) for row in table_rows("relaxed_checks.toml", "check"))
