"""Where the engine's code raised a failure whose paste shows no frame that says so: the module the raise site
index files the failure's message template under (facts/engine_messages.py raising_modules), read as the raising
frame would be (reasoning/category_score.py: the category rows' `frames`, `raise_frames` and `cut_frames` cues).

Many pastes are the error line alone, or a traceback cut above the engine's innermost frame (a wrapper's frames, the
call into the engine, then the exception line).  The message's words and type are then the only evidence, and
often name no category; but the engine's own message was raised by one check of its code, and that check's module
(vllm/model_executor/model_loader/weight_utils.py, sglang/srt/layers/quantization/fp8.py) is the subsystem a
traceback's innermost frame would have shown.  Only when the message's template is raised in one module, or in
modules every category row places alike: a message several subsystems raise tells none.
"""

from __future__ import annotations

from logsleuth.facts.categories import ENGINES, CategoryRow, table
from logsleuth.facts.engine_messages import raising_modules
from logsleuth.models import ENGINE_NAMES, Failure, Frame
from logsleuth.pydantic_display import checked_as
from logsleuth.reasoning.call_frames import shows_no_frame


def raising_frame(failure: Failure, engine: str | None, types: set[str]) -> Frame | None:
    """The module the engine's code raises the failure's message from, as a frame (its package path and function,
    no line), when the paste shows no frame (or its innermost frame is not that module: a traceback cut above it)
    and every module that raises the message's template is placed in the same categories by the rows' frame cues;
    else None.  `engine`: the decided engine, whose code alone is read (the other engine's module is not where this
    launch raised it); with none decided, only a message one engine's code alone raises, so that the module named
    is never a guess between two engines.  `types`: the failure's exception types as the rows name them
    (category_score.type_names)."""
    type_name, message = checked_as(failure.final)  # a pydantic ValidationError: its validator's ValueError
    message = message.strip()
    if not message:
        return None
    found = raising_modules(type_name or None, message, (engine,) if engine in ENGINE_NAMES else ENGINES)
    if len(found) != 1:
        return None  # no engine's code raises it, or both do and the launch decided neither
    modules = sorted(next(iter(found.values())))
    if not modules or (not shows_no_frame(failure) and _frames_say_where(failure, modules)):
        return None
    placements = {placing_categories(file, function, types) for file, function in modules}
    if len(placements) != 1 or not next(iter(placements)):
        return None  # raised in several subsystems, or in none a row names
    file, function = modules[0]
    return Frame(file=file, line=None, function=function.rsplit(".", 1)[-1])


def _frames_say_where(failure: Failure, modules: list[tuple[str, str]]) -> bool:
    """The traceback itself says where it was raised: its innermost frame is one of the modules, or its line is a
    raising statement (`raise …`, `assert …`: the code shown raised it, whoever's code it is).  Only a traceback whose
    innermost frame is a call the exception came out of (a worker's re-raise, an extension raising from C) lost the
    frame that raised it."""
    frames = failure.final.frames
    if not frames:
        return False
    innermost = frames[-1]
    source = (innermost.source or "").lstrip()
    return innermost.module_path in {file for file, _ in modules} or source.startswith(("raise ", "raise(", "assert "))


def placing_categories(file: str, function: str, types: set[str]) -> frozenset[str]:
    """The categories whose rows' frame cues place a raising frame in `file`, function `function`."""
    frame = Frame(file=file, line=None, function=function.rsplit(".", 1)[-1])
    return frozenset(row.category for row in table().rows if site_cue(row, frame, types) is not None)


def site_cue(row: CategoryRow, frame: Frame, types: set[str]) -> str | None:
    """What of the raising module `frame` puts it in `row`'s subsystem: a path fragment of its `raise_frames`, or,
    for a row marked `raising_module` (a check raised in its subsystem is a failure of its category: not the broad
    paths a call only goes through, `distributed/`, `sampling/`), of its `frames` (those only with one of its
    `frames_need` types, when given) or its `cut_frames` reading the module and function; None when nothing does."""
    fragment = (next((f for f in row.raise_frames if f in frame.file), None)
                if not row.raise_functions or frame.function in row.raise_functions else None)
    if fragment is None and not row.raising_module:
        return None
    if fragment is None and (not row.frames_need or any(t in types for t in row.frames_need)):
        fragment = next((f for f in row.frames if f in frame.file), None)
    if fragment is not None:
        return fragment.rstrip("/")
    where = f"{frame.file} {frame.function}()\n"
    said = next((m for pattern in row.cut_frames if (m := pattern.search(where))), None)
    return said[0].strip() if said is not None else None


def site_reason(frame: Frame) -> str:
    return f"raised in {frame.file}, per the engine's code (its message's template in the raise site index)"
