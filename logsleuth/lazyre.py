"""Module-level regular expressions compiled on first use.

Why: a remote diagnose imports ~130 module-level regexes and uses about 40 of them (the rest read other log
shapes, other secrets, other flags); compiling one costs ~0.3 ms with `re` and ~1 ms with `regex`, so the
unused ones were ~30 ms of every run (issue 14).  `compile_lazily` returns a stand-in that compiles on the
first attribute asked of it and then holds the compiled pattern's own bound methods as attributes: after that
first call, `PATTERN.search(line)` costs what it did before (no wrapper call per line on a hot path).

Typed as the pattern it stands for, so callers read as before.  It is not one: `isinstance(x, re.Pattern)`
and `re.sub(PATTERN, ...)` need the real pattern (`PATTERN.search.__self__`); nothing in logsleuth does that.
"""

from __future__ import annotations

import importlib
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import regex

# What a compiled pattern offers; all of it becomes the stand-in's own attributes at the first use.
_ATTRIBUTES = (
    "search", "match", "fullmatch", "sub", "subn", "finditer", "findall", "split", "scanner",
    "pattern", "flags", "groups", "groupindex",
)


class _LazyPattern:
    def __init__(self, engine: str, pattern: str, flags: int) -> None:
        self._source = (engine, pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for an attribute not set yet: the first use
        engine, pattern, flags = self._source
        compiled = importlib.import_module(engine).compile(pattern, flags)
        for attribute in _ATTRIBUTES:
            if hasattr(compiled, attribute):
                setattr(self, attribute, getattr(compiled, attribute))
        return getattr(compiled, name)

    def __repr__(self) -> str:
        return f"compile_lazily({self._source[1]!r})"


def compile_lazily(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """`re.compile(pattern, flags)`, done at the first use."""
    return _LazyPattern("re", pattern, flags)  # type: ignore[return-value]  # see the module docstring


def compile_lazily_regex(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """`regex.compile(pattern, flags)`, done at the first use (`regex`, ~10 ms to import, is imported then)."""
    return _LazyPattern("regex", pattern, flags)  # type: ignore[return-value,unused-ignore]  # as above
