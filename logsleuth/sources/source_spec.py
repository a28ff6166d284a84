"""A source as the user named it, with its kind decided once.

`gpu7:/var/log/x.log` is a remote log, `docker:web` a container, `-` stdin, anything else a local path; a local
file of that name wins over a remote or runtime spelling (as in scp).  That decision used to be made again by
every module a spec went through.  Now the command line's sources are classified where they are expanded
(sources/fleet.py) and the kind travels with the spec: `SourceSpec` is the string the user wrote (printed,
compared and used as a key as before) with a `kind`.  A plain string handed to the api (a test, a script) is
classified on first use by `source_spec`.
"""

from __future__ import annotations

from typing import Literal

SpecKind = Literal["stdin", "local", "remote", "runtime"]


class SourceSpec(str):
    """A source's spelling and its kind (a `str`: every use of the spelling stays as it was)."""

    kind: SpecKind

    def __new__(cls, text: str, kind: SpecKind | None = None) -> SourceSpec:
        spec = super().__new__(cls, text)
        spec.kind = kind if kind is not None else _kind_of(text)
        return spec


def source_spec(spec: str) -> SourceSpec:
    """`spec` with its kind: as it came when it is one already, else classified now."""
    return spec if isinstance(spec, SourceSpec) else SourceSpec(spec)


def _kind_of(text: str) -> SpecKind:
    if text == "-":
        return "stdin"
    # A runtime spelling first: `gpu7:docker:web` is a container on gpu7, not a file.  Both parsers are pure
    # string work, imported only for a spec with a colon (a local path needs neither).
    if ":" not in text:
        return "local"
    from logsleuth.sources.runtime.spec import looks_runtime
    from logsleuth.sources.spec import looks_remote

    if looks_runtime(text):
        return "runtime"
    return "remote" if looks_remote(text) else "local"
