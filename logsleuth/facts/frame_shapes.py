"""The shapes of a cut traceback's innermost frames that say what failed (frame_shapes.toml).  Loading only;
reasoning/frame_shapes.py uses it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows
from logsleuth.lazyre import compile_lazily


@dataclass(frozen=True)
class FrameShape:
    """One row of frame_shapes.toml (its header says what each field is)."""

    shape: str
    category: str
    title: str
    reading: str
    innermost: int
    every: bool
    functions: frozenset[str]
    paths: tuple[str, ...]
    files: tuple[str, ...]
    innermost_functions: frozenset[str]
    sources: tuple[re.Pattern[str], ...]
    unless_sources: tuple[re.Pattern[str], ...]
    # when given: the innermost frame fits only with no source shown or one of these (a check's raise or assert, or
    # its call of another check): at any other statement the callee failed, not the check
    when_sources: tuple[re.Pattern[str], ...]
    checks: tuple[str, ...]
    kind: str = "shape"  # "check": one of the engines' known check functions, named in the reading
    # True: only when a frame imports the module by name at run time (reasoning/frame_shapes.on_demand_importer);
    # False: only when none does; None: either
    imported_by_name: bool | None = None


@cache
def frame_shapes() -> tuple[FrameShape, ...]:
    return tuple(
        FrameShape(shape=row["shape"], category=row["category"], title=row.get("title", ""), reading=row["reading"],
                   innermost=int(row.get("innermost", 1)), every=bool(row.get("every", False)),
                   functions=frozenset(row.get("functions", ())), paths=tuple(row.get("paths", ())),
                   files=tuple(row.get("files", ())), innermost_functions=frozenset(row.get("innermost_functions", ())),
                   sources=tuple(compile_lazily(pattern) for pattern in row.get("sources", ())),
                   unless_sources=tuple(compile_lazily(pattern) for pattern in row.get("unless_sources", ())),
                   when_sources=tuple(compile_lazily(pattern) for pattern in row.get("when_sources", ())),
                   checks=tuple(row.get("checks", ())), kind=row.get("kind", "shape"),
                   imported_by_name=row.get("imported_by_name"))
        for row in table_rows("frame_shapes.toml", "shape"))
