"""What the shape of a cut traceback's innermost frames says failed (issue 28, stop 47).

A traceback the paste cut before its `Type: message` line keeps only where the process was.  The subsystem its
innermost frame runs in is a guess at what failed (a graph runner's frame under a failure that was no graph's), but
some shapes of the frames say which kind of step failed whatever the subsystem or the launch's flags: an import chain
(import-time), a JIT compile chain, a layer's constructor allocating weights, the engine's check of its arguments.
facts/frame_shapes.toml holds the shapes, each with the code that has it.  `raised_while_importing` is also read for a
whole traceback: an import-time failure does not depend on a feature's flag (reasoning/feature_code.py)."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.facts.frame_shapes import FrameShape, frame_shapes
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, Frame
from logsleuth.reasoning.category_score import called_by

# a classmethod building its dataclass (`return cls(**{…})`, ServerArgs/EngineArgs.from_cli_args): the generated
# `__init__` below it ran `__post_init__`
_BUILDS_DATACLASS = compile_lazily(r"\bcls\(\*\*")
_RAISES = compile_lazily(r"^\s*(?:raise|assert)\b")


def _frames(failure: Failure) -> list[Frame]:
    """The final exception's frames, CPython's frozen import machinery (`<frozen importlib._bootstrap>`) left out: it
    only carries an import from one statement to the module's body; and a last frame in `<string>` (a dataclass's
    generated `__init__`, which only runs the class's `__post_init__`): the caller's `cls(**…)` is the step."""
    frames = [frame for frame in failure.final.frames if not frame.file.startswith("<frozen")]
    while len(frames) > 1 and frames[-1].file == "<string>":
        frames.pop()
    return frames


def _named(shape: FrameShape, frame: Frame, constructed: bool, importer: Frame | None = None) -> FrameShape:
    """The shape with its reading naming the frame it stopped in (`{function}`, `{file}`), and the code that imported
    a module by name (`{importer}`); `constructed`: a dataclass's generated `__init__` was the last frame, so its
    `__post_init__` ran, called from `frame`."""
    if importer is not None and "{importer}" in shape.reading:
        shape = replace(shape, reading=shape.reading.replace(
            "{importer}", f"{importer.module_path} ({importer.function or '?'})"))
    if "{" not in shape.reading:
        return shape
    function = frame.function or called_by(frame) or "?"
    callee = called_by(frame)
    if constructed and function not in shape.functions and frame.source and _BUILDS_DATACLASS.search(frame.source):
        function = f"__post_init__ (the settings class built in {function})"
    elif (shape.kind == "check" and callee and function not in shape.functions and frame.source
          and not _RAISES.search(frame.source)):
        function = f"{callee}, called from {function}"  # the check the paste was cut calling, not its caller
    return replace(shape, reading=shape.reading.replace("{function}", function).replace("{file}", frame.module_path))


def _fits(shape: FrameShape, frame: Frame, innermost: bool) -> bool:
    if shape.function_files and not any(fragment in frame.file for fragment in shape.function_files):
        return False  # a function of that name outside the engine's modules: the user's own code
    if frame.function in shape.functions or any(fragment in frame.file for fragment in shape.paths):
        return True
    if frame.source and any(pattern.search(frame.source) for pattern in shape.sources):
        return True
    # The innermost frame kept, cut right after its call: the function it calls is the frame the paste lost.
    return innermost and called_by(frame) in shape.functions


def shape_of(failure: Failure) -> FrameShape | None:
    """The first shape of facts/frame_shapes.toml the failure's innermost frames have, or None."""
    frames = _frames(failure)
    if not frames:
        return None
    last = frames[-1]
    importer = on_demand_importer(failure)
    for shape in frame_shapes():
        if shape.files and not any(fragment in last.file for fragment in shape.files):
            continue
        if shape.imported_by_name is not None and shape.imported_by_name != (importer is not None):
            continue
        if shape.innermost_functions and last.function not in shape.innermost_functions:
            continue
        if shape.unless_outer_functions and any(frame.function in shape.unless_outer_functions for frame in frames[:-1]):
            continue  # the step run at start-up (a graph capture, a constructor), not while serving
        if last.source and any(pattern.search(last.source) for pattern in shape.unless_sources):
            continue  # cut while it called a loader: the loader failed, not this shape's step
        if last.source and shape.when_sources and not any(pattern.search(last.source) for pattern in shape.when_sources):
            continue  # a check function cut at a statement that is not its check: the callee failed
        innermost = frames[-shape.innermost:]
        if shape.every and len(innermost) < shape.innermost:
            continue
        fitting = [_fits(shape, frame, frame is last) for frame in innermost]
        if all(fitting) if shape.every else any(fitting):
            # a serving step is named by its innermost engine function, not the library frame the paste was cut in
            anchor = (next((f for f in reversed(frames) if _fits(shape, f, False)), last)
                      if shape.kind == "step" else last)
            return _named(shape, anchor, failure.final.frames[-1].file == "<string>", importer)
    return None


def on_demand_importer(failure: Failure) -> Frame | None:
    """The innermost frame outside the import machinery, when it is code that loads a plugin's or a connector's module
    by name (the `importers` of frame_shapes.toml: vLLM's kv_connector/factory.py `loader`, plugins/__init__.py
    load_plugins_by_group): the import was asked for at run time by that feature, not by the start-up's imports."""
    sites = [site for shape in frame_shapes() for site in shape.importers]
    for frame in reversed(_frames(failure)):
        if "/importlib/" in frame.file or frame.function == "<module>":
            continue  # the import machinery, and the bodies of the modules the import ran: the chain it started
        return frame if any(file in frame.file and function == frame.function for file, function in sites) else None
    return None


def raised_while_importing(failure: Failure) -> bool:
    """The failure was raised while modules were being imported (an import chain of innermost frames), cut or not, and
    not of a module imported by name at run time (the shape plugin-import: the code that asked for it is a feature's)."""
    found = shape_of(failure)
    return found is not None and found.shape == "import"
