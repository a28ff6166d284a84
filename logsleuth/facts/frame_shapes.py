"""The shapes of a cut traceback's innermost frames that say what failed (frame_shapes.toml).  Loading only;
reasoning/frame_shapes.py uses it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import parsed_toml, table_rows
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
    # "check": one of the engines' known check functions, named in the reading; "step": the engine's serving step,
    # its checks filled in for the launch (reasoning/serving_step.py); "shape": any other
    kind: str = "shape"
    # True: only when a frame imports the module by name at run time (reasoning/frame_shapes.on_demand_importer);
    # False: only when none does; None: either
    imported_by_name: bool | None = None
    # a guess from where the process was (a step whose failures are mostly of one kind): its reading says so
    guess: bool = False
    # when given: the shape holds only when a line of the paste matches one (reasoning/general.py reads the paste)
    when_lines: tuple[re.Pattern[str], ...] = ()
    # functions of any outer frame that rule the shape out (the toml's start_up_functions for a row with
    # `unless_start_up`: a step run at start-up, not while serving)
    unless_outer_functions: frozenset[str] = frozenset()
    # when given: the frame that imports a module by name must be one of these (file fragment, function)
    importers: tuple[tuple[str, str], ...] = ()
    # when given: a frame fits by its function, its source or its callee only when its file holds one of these (the
    # engine's own modules: a user's function of the same name is not the engine's step)
    function_files: tuple[str, ...] = ()


@cache
def frame_shapes() -> tuple[FrameShape, ...]:
    start_up = frozenset(parsed_toml("frame_shapes.toml").get("start_up_functions", ()))
    return tuple(
        FrameShape(shape=row["shape"], category=row["category"], title=row.get("title", ""), reading=row["reading"],
                   innermost=int(row.get("innermost", 1)), every=bool(row.get("every", False)),
                   functions=frozenset(row.get("functions", ())), paths=tuple(row.get("paths", ())),
                   files=tuple(row.get("files", ())), innermost_functions=frozenset(row.get("innermost_functions", ())),
                   sources=tuple(compile_lazily(pattern) for pattern in row.get("sources", ())),
                   unless_sources=tuple(compile_lazily(pattern) for pattern in row.get("unless_sources", ())),
                   when_sources=tuple(compile_lazily(pattern) for pattern in row.get("when_sources", ())),
                   checks=tuple(row.get("checks", ())), kind=row.get("kind", "shape"),
                   imported_by_name=row.get("imported_by_name"), guess=bool(row.get("guess", False)),
                   when_lines=tuple(compile_lazily(pattern) for pattern in row.get("when_lines", ())),
                   unless_outer_functions=start_up if row.get("unless_start_up") else frozenset(),
                   importers=tuple((site["file"], site["function"]) for site in row.get("importers", ())),
                   function_files=tuple(row.get("function_files", ())))
        for row in table_rows("frame_shapes.toml", "shape"))
