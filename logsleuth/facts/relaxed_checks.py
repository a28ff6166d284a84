"""The checks a later engine release relaxed (relaxed_checks.toml): which indexed check, from which release the
same launch passes, what changed and where that is recorded.  Loading only; reasoning/relaxed_check.py uses it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Any

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
    # What the launch must show for the later release to take it (the check was relaxed for these launches only):
    # flag -> the values it may have (none listed: given with any value, a switch too), and the flags it must not
    # set.  A row with any launch condition is offered only when the launch is known (a command line, or a whole
    # `server_args=` dump).
    launch_has: tuple[tuple[str, tuple[str, ...]], ...] = ()
    launch_lacks: tuple[str, ...] = ()
    # Flags that must have one value between them, each given as its spellings (["--tp-size", "--tp"]).
    launch_same: tuple[tuple[str, ...], ...] = ()

    @property
    def upgrade_release(self) -> str:
        return self.upgrade_to or self.relaxed_in


@cache
def relaxed_checks() -> tuple[RelaxedCheck, ...]:
    return tuple(_row(row) for row in table_rows("relaxed_checks.toml", "check"))


def _row(row: dict[str, Any]) -> RelaxedCheck:
    plain = {key: value for key, value in row.items() if key not in ("launch_has", "launch_lacks", "launch_same")}
    has = tuple((flag, tuple(values)) for flag, values in row.get("launch_has", {}).items())
    same = tuple(tuple(spellings) for spellings in row.get("launch_same", ()))
    return RelaxedCheck(**plain, launch_has=has, launch_lacks=tuple(row.get("launch_lacks", ())), launch_same=same)
