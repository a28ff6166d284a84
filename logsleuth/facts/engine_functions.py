"""Which engine's indexed code has a function in a file of a given name (issue 28: a traceback fragment whose paths
the paste shortened to `scheduler.py` or `managers/scheduler.py` named no engine).  The raise site index
(raise_sites-<engine>.zip) holds one member per source file, and each site the function it stands in; a frame's
file and function found in one engine's index and not in the other's was that engine's code, as the frame's line is
where a check raised.  Only the functions that hold a site are known: a frame elsewhere tells nothing."""

from __future__ import annotations

from functools import lru_cache

from logsleuth.facts.raise_sites import member_names, site_entries

ENGINES = ("sglang", "vllm")
MEMBER_SUFFIX = ".json"


@lru_cache(maxsize=len(ENGINES))
def _members_by_name(engine: str) -> dict[str, tuple[str, ...]]:
    """The engine's indexed source files by their file name: {"scheduler.py": ("sglang/srt/managers/scheduler.py",)}."""
    found: dict[str, list[str]] = {}
    for member in member_names(engine):
        if member.endswith(".py" + MEMBER_SUFFIX) and "/" in member:
            source = member.removesuffix(MEMBER_SUFFIX)
            found.setdefault(source.rsplit("/", 1)[-1], []).append(source)
    return {name: tuple(sources) for name, sources in found.items()}


def engines_with_function(path: str, function: str) -> set[str]:
    """The engines whose indexed code has `function` (a method's own name counts) in a file whose path ends with
    `path` (`scheduler.py`, `managers/scheduler.py`), at a site of some indexed release."""
    name = path.rsplit("/", 1)[-1]
    found = set()
    for engine in ENGINES:
        sources = [source for source in _members_by_name(engine).get(name, ()) if source == path or source.endswith("/" + path)]
        if any(entry["function"] == function or entry["function"].endswith("." + function)
               for source in sources for entry in site_entries(engine, source + MEMBER_SUFFIX)):
            found.add(engine)
    return found
