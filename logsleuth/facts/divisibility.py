"""The divisibility checks between parallel degrees and a model's sizes (divisibility.toml, with its sources)."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Literal

from logsleuth.facts.table import table_rows
from logsleuth.lazyre import compile_gated_regex

if TYPE_CHECKING:
    import regex

CheckKind = Literal["split", "kv_split", "block"]


@dataclass(frozen=True)
class DivisibilityCheck:
    """One engine check: the message it raises (`regex`, with the numbers it prints as named groups) and the
    arithmetic behind it (`kind`, see the table's header)."""

    name: str
    kind: CheckKind
    quantity: str  # the model size, in prose ("attention heads")
    degree_name: str  # "tp", "ep" or "moe_tp"
    regex: regex.Pattern[str]
    sources: tuple[str, ...]


@cache
def divisibility_checks() -> tuple[DivisibilityCheck, ...]:
    """The table's rows, in order (a more specific row first)."""
    return tuple(
        DivisibilityCheck(
            name=row["name"],
            kind=row["kind"],
            quantity=row["quantity"],
            degree_name=row["degree_name"],
            regex=compile_gated_regex(row["regex"]),
            sources=tuple(row.get("sources", ())),
        )
        for row in table_rows("divisibility.toml", "check")
    )
