"""The engines' optional features, their modules and the settings that turn them on (feature_code.toml).  Loading
only; reasoning/feature_code.py uses it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows


@dataclass(frozen=True)
class Feature:
    """One row of feature_code.toml (its header says what each field is)."""

    engine: str
    feature: str
    paths: tuple[str, ...]
    flags: tuple[str, ...] = ()
    switches: tuple[str, ...] = ()
    env: tuple[str, ...] = ()
    gate: str = ""


@cache
def features() -> tuple[Feature, ...]:
    return tuple(Feature(engine=row["engine"], feature=row["feature"], paths=tuple(row["paths"]),
                         flags=tuple(row.get("flags", ())), switches=tuple(row.get("switches", ())),
                         env=tuple(row.get("env", ())), gate=row.get("gate", ""))
                 for row in table_rows("feature_code.toml", "feature"))
