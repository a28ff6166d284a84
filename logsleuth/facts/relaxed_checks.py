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
    # The release the upgrade names, when the launch needs more than the relaxing one (a later release is where the
    # same launch also gets past what stood behind the check); relaxed_in when the row leaves it out.
    upgrade_to: str = ""

    @property
    def upgrade_release(self) -> str:
        return self.upgrade_to or self.relaxed_in


@cache
def relaxed_checks() -> tuple[RelaxedCheck, ...]:
    return tuple(RelaxedCheck(**row) for row in table_rows("relaxed_checks.toml", "check"))
