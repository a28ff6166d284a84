"""The engine from a traceback fragment's shortened frames (issue 28: a fragment with no engine path named no engine),
weak evidence read only when the log shows no other and the failures' messages name no engine.

CPython prints a frame's whole path (a script's too, from 3.9); a paste that shortened it to `scheduler.py` or
`managers/scheduler.py` kept the file's name and the function.  A file and function that only one engine's indexed
code has (facts/engine_functions.py), where a check raises, name that engine: `server_args.py, in
_handle_speculative_decoding` is SGLang's.  A name any program's frames have (a dunder, `wrapper`, `forward`) tells
nothing; a frame both engines' code has decides nothing, nor do frames that name both engines."""

from __future__ import annotations

from collections.abc import Iterable

from logsleuth.models import Frame

MAX_FRAMES = 16
# Functions any program has: decorators' inner functions, torch's module call, entry points.
_GENERIC_FUNCTIONS = frozenset({"wrapper", "inner", "wrapped", "func", "main", "run", "forward", "decorate_context",
                                "_call_impl", "_wrapped_call_impl", "new_func", "_fn", "fn"})


def shortened(frame: Frame) -> tuple[str, str] | None:
    """(path, function) of a frame whose path the paste shortened (no directory above the package: neither absolute
    nor `~`, `.`-relative or a pseudo-file), with a function worth looking up; else None."""
    path, function = frame.file, frame.function or ""
    if (not path.endswith(".py") or path.startswith(("/", "~", "<", ".", "\\")) or ":" in path[:3]
            or not function.isidentifier() or function.startswith("__") or function in _GENERIC_FUNCTIONS):
        return None
    return path, function


def engine_of_frames(frames: Iterable[tuple[str, str]]) -> str | None:
    """The one engine whose indexed code has these frames' functions in those files, else None."""
    # Imported here: only a fragment that shows nothing else reads the index.
    from logsleuth.facts.engine_functions import engines_with_function

    engines: set[str] = set()
    for path, function in list(frames)[:MAX_FRAMES]:
        engines |= engines_with_function(path, function)
    return next(iter(engines)) if len(engines) == 1 else None
