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

import functools
import importlib
import json
import re
from pathlib import Path
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
    """`re.compile(pattern, flags)`, done at the first use.  A reasoning rule's pattern (read once per failure, not on
    every line) has its literals in facts/regex_literals.json and is gated as a table's regex is (compile_gated)."""
    if table_literals().get(pattern):
        return compile_gated(pattern, flags)
    return _LazyPattern("re", pattern, flags)  # type: ignore[return-value]  # see the module docstring


def compile_lazily_regex(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """`regex.compile(pattern, flags)`, done at the first use (`regex`, ~10 ms to import, is imported then).  With its
    literals in facts/regex_literals.json, gated as a table's regex is (compile_gated): compiling one costs ~0.5-2 ms in
    `regex`'s pure-Python parser, and most of them read one kind of failure's message only."""
    if table_literals().get(pattern):
        return compile_gated(pattern, flags, engine="regex")  # type: ignore[return-value,unused-ignore]  # as above
    return _LazyPattern("regex", pattern, flags)  # type: ignore[return-value,unused-ignore]  # as above


# The flags under which a pattern's literals are what prefilter.py's scanner read (the same values in `re` and `regex`).
_IGNORECASE = int(re.IGNORECASE)
_LITERAL_FLAGS = int(re.IGNORECASE | re.MULTILINE | re.DOTALL | re.ASCII | re.UNICODE)


class _GatedPattern:
    """A facts table's regex (facts/*.toml) or a reasoning rule's, which says "no match" without compiling when the
    text lacks every literal one of which each match holds (facts/regex_literals.json, read from the pattern by
    diagnosis/prefilter.py when a pattern changes: `make regex-literals`).  A search, match or list of matches of a
    text that may hold one, and any other use, compiles it and is the compiled pattern's own."""

    __slots__ = ("pattern", "flags", "_engine", "_literals", "_folded", "_compiled")

    def __init__(self, engine: str, pattern: str, flags: int, literals: tuple[str, ...] | None) -> None:
        self.pattern, self.flags, self._engine = pattern, flags, engine
        # Under IGNORECASE the literals are compared lower-cased, and only on ASCII text: the regex engines fold a
        # few other characters onto ASCII letters (the Kelvin sign onto k), which lower() does not.
        self._folded = bool(int(flags) & _IGNORECASE)  # as ints: RegexFlag's operators are Python code
        if int(flags) & ~_LITERAL_FLAGS:
            literals = None  # VERBOSE, regex's V1 sets...: the pattern's text may not read as the scanner read it
        elif literals is not None and self._folded:
            literals = tuple(literal.lower() for literal in literals) if all(map(str.isascii, literals)) else None
        self._literals = literals
        self._compiled: Any = None

    def _may_match(self, text: str) -> bool:
        literals = self._literals
        if literals is None:
            return True
        if self._folded:
            if not text.isascii():
                return True
            text = text.lower()
        return any(literal in text for literal in literals)

    def _compile(self) -> Any:
        if self._compiled is None:
            self._compiled = importlib.import_module(self._engine).compile(self.pattern, self.flags)
        return self._compiled

    # A text that holds none of the literals holds no match anywhere: no search, match or list of matches finds one.
    def search(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return self._compile().search(text, *args, **kwargs) if self._may_match(text) else None

    def match(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return self._compile().match(text, *args, **kwargs) if self._may_match(text) else None

    def fullmatch(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return self._compile().fullmatch(text, *args, **kwargs) if self._may_match(text) else None

    def finditer(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return self._compile().finditer(text, *args, **kwargs) if self._may_match(text) else iter(())

    def findall(self, text: str, *args: Any, **kwargs: Any) -> Any:
        return self._compile().findall(text, *args, **kwargs) if self._may_match(text) else []

    def __getattr__(self, name: str) -> Any:  # sub, groups, groupindex...: the compiled pattern's, ungated
        if name.startswith("_"):  # a slot not set yet (a copy made without __init__): never a pattern's attribute
            raise AttributeError(name)
        return getattr(self._compile(), name)

    def __repr__(self) -> str:
        return f"compile_gated({self.pattern!r})"


@functools.cache
def table_literals() -> dict[str, list[str] | None]:
    """facts/regex_literals.json: pattern text -> the literals one of which every match holds (None: unreadable), for
    the facts tables' regexes and the module-level `compile_lazily_regex` patterns."""
    path = Path(__file__).resolve().parent / "facts" / "regex_literals.json"
    try:
        found = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found if isinstance(found, dict) else {}


def compile_gated(pattern: str, flags: int = 0, *, engine: str = "re") -> re.Pattern[str]:
    """`re.compile(pattern, flags)` (`engine="regex"`: `regex.compile`) for a facts table's regex, done at the first
    search whose text may hold a match.  A pattern the literals file does not hold (a table edited since `make
    regex-literals`) is simply compiled at its first search: the file can make a run slower, never wrong."""
    found = table_literals().get(pattern)
    literals = tuple(found) if isinstance(found, list) and found else None
    return _GatedPattern(engine, pattern, flags, literals)  # type: ignore[return-value]  # see the module docstring


def compile_gated_regex(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """compile_gated for a table regex written for `regex` (its syntax, its per-call timeout)."""
    return compile_gated(pattern, flags, engine="regex")  # type: ignore[return-value,unused-ignore]  # as above


def is_gated(value: object) -> bool:
    """Whether `value` is a pattern compile_gated made (what the tests count and compare with a real compile)."""
    return isinstance(value, _GatedPattern)


def gated_engine(value: object) -> str:
    """The module a gated pattern compiles with ("re" or "regex"), for the tests that compile it for real."""
    assert isinstance(value, _GatedPattern)
    return value._engine


def gated_patterns(value: object) -> list[str]:
    """The text of every gated pattern held in `value` (a table row, or tuples, lists and dicts of them): what
    scripts/facts/regex_literals.py reads the literals of."""
    if isinstance(value, _GatedPattern):
        return [value.pattern]
    if isinstance(value, dict):
        value = list(value.values())
    elif hasattr(value, "__dataclass_fields__"):
        value = [getattr(value, name) for name in value.__dataclass_fields__]
    if isinstance(value, list | tuple):
        return [pattern for item in value for pattern in gated_patterns(item)]
    return []


def lazy_patterns(module: object, engine: str) -> list[str]:
    """The text of each module-level lazy pattern of `module` for `engine` ("re": compile_lazily, "regex":
    compile_lazily_regex), gated or not (what scripts/facts/regex_literals.py reads the literals of)."""
    return [value._source[1] if isinstance(value, _LazyPattern) else value.pattern
            for value in vars(module).values()
            if (isinstance(value, _LazyPattern) and value._source[0] == engine)
            or (isinstance(value, _GatedPattern) and value._engine == engine)]
