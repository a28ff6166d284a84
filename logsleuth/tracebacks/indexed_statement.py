"""The exception of a traceback cut before its exception line, read from the check the raise site index holds at its
last frame's line (issue 28, stop 41's blind split: "exception line missing").

When the paste shows the last frame's raising statement, that names the type (raising_statement.py).  When it does
not (a traceback printed without source lines, the file not readable where it ran; a statement whose first line is
not the one shown, `f"… {x}"` inside a multi-line `raise ValueError(`), the frame's file and line still place it: the
raise site index (facts/raise_sites.py, read from the released wheels) says which statement of that file stands at
that line in the detected release, or, for a release it did not read, at that line in most releases.  Only a
statement that raises counts (a `raise` of a named class, an `assert`): a frame whose line is a call the error came
through places no check, and says nothing.  The type is inferred, never shown as printed (the block is marked as read
from the raising statement); the message is the check's when its template has no holes, else unknown.
"""

from __future__ import annotations

from dataclasses import replace

from logsleuth.facts.message_templates import HOLE
from logsleuth.facts.raise_sites import (
    ENGINE_PACKAGES,
    INDEXED_PACKAGES,
    RaiseSite,
    engine_file,
    find,
    site_entries,
)
from logsleuth.models import ExceptionBlock, Failure, LaunchInfo


def with_type_from_index(failure: Failure, launch: LaunchInfo) -> Failure:
    """`failure` with its last exception typed from the indexed check at its innermost frame's line, when the paste
    lost the exception line and only such a check stands there; else `failure` itself."""
    final = failure.final
    if failure.kind != "traceback" or final.type or not final.frames:
        return failure
    site = _check_at(final, launch)
    if site is None:
        return failure
    type_name = "AssertionError" if site.kind == "assert" else site.raised
    message = site.message if site.message and HOLE not in site.message else ""
    typed = replace(final, type=type_name, message=message, truncated=True, typed_from_statement=True)
    return replace(failure, exceptions=(*failure.exceptions[:-1], typed))


def _check_at(block: ExceptionBlock, launch: LaunchInfo) -> RaiseSite | None:
    """The indexed statement that raises at the innermost frame, if that frame is in an indexed package's code."""
    frame = block.frames[-1]
    package = next((name for name in INDEXED_PACKAGES if engine_file(frame.file, name) is not None), None)
    if package is None or frame.line is None:
        return None
    if package in ENGINE_PACKAGES and launch.engine not in (None, package):
        return None  # the other engine's code this one runs: the index holds that engine's releases, not this launch's
    version = launch.engine_version if package == launch.engine else None
    site = find(package, frame.file, frame.function, frame.line, frame.source, version)
    if site is None or site.kind not in ("assert", "raise") or (site.kind == "raise" and not site.raised[:1].isupper()):
        return None  # a log call, an exception built elsewhere, `raise self._error(…)`: no class the statement names
    if not site.framed:
        return None  # placed by a source text alone, in no release at the frame's line: not shown to be this one
    if frame.source and not _holds(site, frame.source):
        return None  # the line the paste shows is not that statement's (a patched or other release's file)
    named = version if launch.engine_version_source in ("log", "user") else None
    if named in site.indexed and named not in site.framed:
        return None  # the release the log names has no such statement at that line (another release's check stood there)
    return site


def _holds(site: RaiseSite, source: str) -> bool:
    """Whether the indexed statement's text (any release's) holds the source line the paste shows."""
    shown = source.strip()
    return any(shown in line for entry in site_entries(site.engine, f"{site.file}.json")
               if entry["function"] == site.function and any(run[2] == site.line for run in entry["lines"])
               for line in entry["text"])
