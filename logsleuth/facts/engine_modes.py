"""Components an engine builds for one engine mode only (engine_modes.toml).  Loading only; reasoning/engine_mode.py
uses it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows


@dataclass(frozen=True)
class ModeComponent:
    """One row of engine_modes.toml (its header says what each field is)."""

    engine: str
    component: str
    v0: tuple[str, ...]
    v1: tuple[str, ...]
    v0_frames: tuple[str, ...]
    v1_frames: tuple[str, ...]
    switch: str
    v1_example: str
    site: str
    threads: tuple[str, ...]


@cache
def mode_components() -> tuple[ModeComponent, ...]:
    return tuple(ModeComponent(engine=row["engine"], component=row["component"], v0=tuple(row["v0"]), v1=tuple(row["v1"]),
                               v0_frames=tuple(row.get("v0_frames", ())), v1_frames=tuple(row.get("v1_frames", ())),
                               switch=row.get("switch", ""), v1_example=row.get("v1_example", ""), site=row["site"],
                               threads=tuple(row.get("threads", ())))
                 for row in table_rows("engine_modes.toml", "component"))
