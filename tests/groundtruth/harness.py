"""Run one shape from `shapes.py` in this interpreter and let it fail for real.

    python harness.py SHAPE

stderr receives what CPython itself prints (the uncaught traceback, a faulthandler
dump, an argparse usage error).  stdout receives one JSON line with the expected
parse, taken from the live objects: `traceback.extract_tb` frames and the
`__cause__` / `__context__` / `ExceptionGroup.exceptions` links, walked the way
`traceback.TracebackException` walks them.
"""

from __future__ import annotations

import json
import sys
import traceback
from types import TracebackType
from typing import Any

RECURSIVE_CUTOFF = 3  # traceback._RECURSIVE_CUTOFF
MAX_GROUP_WIDTH = 15  # TracebackException's default max_group_width


def emit(expected: dict[str, Any]) -> None:
    sys.stdout.write(json.dumps(expected) + "\n")
    sys.stdout.flush()


def type_name(exc: BaseException) -> str:
    cls = type(exc)
    module = cls.__module__
    return cls.__qualname__ if module in ("__main__", "builtins") else f"{module}.{cls.__qualname__}"


def shown_frames(tb: TracebackType | None) -> list[list[Any]]:
    """extract_tb frames as printed: runs of one identical frame beyond the cutoff
    collapse into `[Previous line repeated N more times]` on the last frame shown."""
    frames: list[list[Any]] = []
    run = 0
    for summary in traceback.extract_tb(tb):
        key = [summary.filename, summary.lineno, summary.name]
        if frames and frames[-1][:3] == key:
            run += 1
        else:
            run = 1
        if run > RECURSIVE_CUTOFF:
            frames[-1][3] += 1
            continue
        frames.append([*key, 0])
    return frames


def block(exc: BaseException) -> dict[str, Any]:
    frames = shown_frames(exc.__traceback__)
    if isinstance(exc, SyntaxError):
        message = exc.msg or "<no detail available>"
        if exc.lineno is not None:
            frames.append([exc.filename or "<string>", exc.lineno, None, 0])
    else:
        try:
            message = str(exc)
        except Exception:
            message = "<exception str() failed>"
    members: list[list[dict[str, Any]]] = []
    more = 0
    if isinstance(exc, BaseExceptionGroup):
        members = [chain(member) for member in exc.exceptions[:MAX_GROUP_WIDTH]]
        more = max(0, len(exc.exceptions) - MAX_GROUP_WIDTH)
    # A message that ends in newlines prints trailing blank lines no parser can tell from log spacing.
    return {
        "type": type_name(exc),
        "message": message.rstrip("\n"),
        "relation": None,
        "frames": frames,
        "members": members,
        "more": more,
    }


def chain(exc: BaseException) -> list[dict[str, Any]]:
    """Oldest first; `relation` says how a block leads to the next (newer) one."""
    blocks = [block(exc)]
    seen = {id(exc)}
    current = exc
    while True:
        if current.__cause__ is not None:
            older, relation = current.__cause__, "cause"
        elif current.__context__ is not None and not current.__suppress_context__:
            older, relation = current.__context__, "context"
        else:
            break
        if id(older) in seen:
            break
        seen.add(id(older))
        entry = block(older)
        entry["relation"] = relation
        blocks.append(entry)
        current = older
    blocks.reverse()
    return blocks


def hook(kind: type[BaseException], value: BaseException, tb: TracebackType | None) -> None:
    emit({"kind": "traceback", "exceptions": chain(value)})
    sys.__excepthook__(kind, value, tb)  # the interpreter's own formatting, to stderr


def main() -> None:
    import shapes

    sys.excepthook = hook
    shapes.SHAPES[sys.argv[1]]()


if __name__ == "__main__":
    sys.modules.setdefault("harness", sys.modules["__main__"])
    main()
