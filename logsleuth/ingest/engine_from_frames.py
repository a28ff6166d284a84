"""The engine from a traceback fragment's shortened frames (issue 28: a fragment with no engine path named no engine),
weak evidence read only when the log shows no other and the failures' messages name no engine.

CPython prints a frame's whole path (a script's too, from 3.9); a paste that shortened it to `scheduler.py` or
`managers/scheduler.py` kept the file's name and the function.  A file and function that only one engine's indexed
code has (facts/engine_functions.py), where a check raises, name that engine: `server_args.py, in
_handle_speculative_decoding` is SGLang's.  A name any program's frames have (a dunder, `wrapper`, `forward`) tells
nothing; a frame both engines' code has decides nothing, nor do frames that name both engines.

A path the paste cut at its start with an ellipsis (`.../srt/managers/scheduler.py`, `…/model_executor/layers/
quantization/fp8.py`: the user hid their directories, the package's name with them) keeps the engine's own module path
below the package.  When those parts (two directories and the file at least) are a module of one engine's indexed
releases and of no release of the other (facts/engine_modules.py, the engine module index), the frame was that
engine's code, whatever its function; `layers/linear.py` is both engines' and many programs'."""

from __future__ import annotations

from collections.abc import Iterable

from logsleuth.facts.engine_modules import MIN_TAIL_PARTS, engines_with_module_tail
from logsleuth.models import Frame

MAX_FRAMES = 16
# Functions any program has: decorators' inner functions, torch's module call, entry points.
_GENERIC_FUNCTIONS = frozenset({"wrapper", "inner", "wrapped", "func", "main", "run", "forward", "decorate_context",
                                "_call_impl", "_wrapped_call_impl", "new_func", "_fn", "fn"})


# How a paste marks the directories it cut from a path: `.../`, `…/`.
_ELISIONS = (".../", "…/")


def shortened(frame: Frame) -> tuple[str, str] | None:
    """(path, function) of a frame whose path the paste shortened (no directory above the package: neither absolute
    nor `~`, `.`-relative or a pseudo-file; or cut with an ellipsis, then the part after it) with a function worth
    looking up or directories enough to name a module; else None."""
    path, function = _after_elision(frame.file), frame.function or ""
    if not path.endswith(".py") or path.startswith(("/", "~", "<", ".", "\\")) or ":" in path[:3]:
        return None
    return (path, function) if _worth_looking_up(function) or path.count("/") >= MIN_TAIL_PARTS - 1 else None


def _after_elision(path: str) -> str:
    """The part of a path after the last ellipsis that cut it (`.../srt/managers/scheduler.py` ->
    `srt/managers/scheduler.py`), else the path as it is."""
    cut = max(path.rfind(elision) + len(elision) if elision in path else -1 for elision in _ELISIONS)
    return path[cut:] if cut > 0 else path


def _worth_looking_up(function: str) -> bool:
    """A function name that can tell one engine's code from another's: not a dunder or a name any program has."""
    return function.isidentifier() and not function.startswith("__") and function not in _GENERIC_FUNCTIONS


def engine_of_frames(frames: Iterable[tuple[str, str]]) -> str | None:
    """The one engine whose indexed code has these frames' modules, or their functions in those files, else None."""
    # Imported here: only a fragment that shows nothing else reads the raise site index.
    from logsleuth.facts.engine_functions import engines_with_function

    engines: set[str] = set()
    for path, function in list(frames)[:MAX_FRAMES]:
        # The module the path names, when only one engine has it; else the file's function.
        having = engines_with_module_tail(path)
        if len(having) == 1:
            engines |= having
        elif _worth_looking_up(function):
            engines |= engines_with_function(path, function)
    return next(iter(engines)) if len(engines) == 1 else None
