"""`logsleuth diff GOOD BAD`: what changed between a launch that worked and one that did not (docs/diff.md).

    diff_launches(good, bad, ssh) -> DiffReport    two sources (or one, with two launch numbers)

extract.py reads a source's launches, flags.py a launch's flags by its release's catalog, compare.py compares two
launches section by section, model.py is what the renderers (render/diff.py) are given.  Imports neither typer
nor rich.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.diff.compare import (
    env_changes,
    failure_changes,
    flag_changes,
    furthest,
    gpu_changes,
    model_changes,
    stage_changes,
    version_changes,
    version_of,
)
from logsleuth.diff.extract import Launch, pick, read_launches
from logsleuth.diff.model import DiffReport, FailureSummary, LaunchSummary
from logsleuth.errors import SourceError, UsageError
from logsleuth.ingest.stages import STAGES
from logsleuth.redact import redact_command, redact_secrets
from logsleuth.render.safety import clean
from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions

__all__ = ["DiffReport", "LaunchChoice", "diff_launches"]

LATEST, PREVIOUS = -1, -2
_LABELS = {stage.key: stage.label for stage in STAGES}


@dataclass(frozen=True)
class LaunchChoice:
    """One side: a source spec and the launch in it (1 = first, -1 = latest)."""

    spec: str
    number: int = LATEST


class _Slice:
    """Bytes [start, end) of a source as a source of their own: one launch, for the diagnosis."""

    def __init__(self, source: Source, start: int, end: int) -> None:
        self.name, self.host = source.name, source.host
        self._source, self._start, self._end = source, start, end

    def size(self) -> int:
        return self._end - self._start

    def read_range(self, start: int, end: int):  # type: ignore[no-untyped-def]
        return self._source.read_range(self._start + start, self._start + min(end, self.size()))

    def close(self) -> None:
        pass


def _open(spec: str, ssh: SSHOptions, stdin: bytes | None) -> Source:
    from logsleuth.sources.memory import MemorySource
    from logsleuth.sources.open import open_sources

    if spec == "-":
        return MemorySource(stdin or b"", name="<stdin>")
    sources = open_sources(spec, ssh)
    if len(sources) != 1:
        for source in sources:
            source.close()
        raise UsageError(f"{spec} names {len(sources)} logs: give one log per side")
    return sources[0]


def _failure(source: Source, launch: Launch) -> FailureSummary | None:
    """The launch's failure as `diagnose` names it: its bytes read by the api's reader and report."""
    from logsleuth.api import DiagnoseOptions, build_report, load_library
    from logsleuth.models import SourceInfo
    from logsleuth.reading.reader import read_latest

    options = DiagnoseOptions()
    piece = _Slice(source, launch.start, launch.end)
    result = read_latest(piece, max_bytes=options.max_bytes)
    info = SourceInfo(piece.name, result.bytes_read, result.size, capped=result.capped, host=piece.host)
    report = build_report([(info, result)], options, load_library(options))
    group = report.primary
    if group is None:
        return None
    if group.diagnosis is not None:
        cause = group.diagnosis.root_cause.strip().split("\n")[0]
        return FailureSummary(group.diagnosis.pattern, clean(redact_secrets(group.diagnosis.title)),
                              clean(redact_secrets(cause.split(". ")[0].rstrip(".") + ".")))
    block = group.failure.exceptions[-1] if group.failure.exceptions else None
    title = f"{block.type}" if block is not None and block.type else group.failure.kind
    # Redacted whole, then its first line taken: a token the log wrapped at that line's end goes on in the next
    message = redact_secrets(block.message).split("\n")[0] if block is not None and block.message else ""
    return FailureSummary(None, clean(redact_secrets(title)), clean(message))


def _summary(choice: LaunchChoice, launch: Launch, count: int, failure: FailureSummary | None) -> LaunchSummary:
    started = min(launch.stage_times.values(), default=None)
    last = furthest(launch)
    return LaunchSummary(
        source=clean(redact_secrets(choice.spec)), launch=launch.number, launches=count, engine=launch.engine or "sglang",
        version=version_of(launch), command=clean(redact_command(launch.command), 2000) if launch.command else None,
        started=started.strftime("%Y-%m-%d %H:%M:%S") if started else None, reached=_LABELS[last] if last else None,
        failure=failure,
    )


def _side(choice: LaunchChoice, side: str, ssh: SSHOptions, stdin: bytes | None) -> tuple[LaunchSummary, Launch]:
    source = _open(choice.spec, ssh, stdin)
    try:
        launches = read_launches(source).launches
        launch = pick(launches, choice.number, side, choice.spec)
        return _summary(choice, launch, len(launches), _failure(source, launch)), launch
    finally:
        source.close()


def diff_launches(good: LaunchChoice, bad: LaunchChoice, ssh: SSHOptions | None = None,
                  stdin: bytes | None = None) -> DiffReport:
    """GOOD against BAD.  Raises UsageError (a launch number out of range, a source without a launch) and
    SourceError (a source that cannot be read).  `stdin`: the bytes `-` stands for."""
    ssh = ssh or SSHOptions()
    try:
        good_summary, good_launch = _side(good, "GOOD", ssh, stdin)
        bad_summary, bad_launch = _side(bad, "BAD", ssh, stdin)
    except OSError as exc:
        raise SourceError(f"cannot read: {exc}") from None
    changes = [
        *version_changes(good_launch, bad_launch),
        *failure_changes(good_summary.failure, bad_summary.failure),
        *flag_changes(good_launch, bad_launch),
        *env_changes(good_launch, bad_launch),
        *model_changes(good_launch, bad_launch),
        *gpu_changes(good_launch, bad_launch),
        *stage_changes(good_launch, bad_launch),
    ]
    return DiffReport(good_summary, bad_summary, tuple(changes), _notes(good_launch, bad_launch))


def _notes(good: Launch, bad: Launch) -> tuple[str, ...]:
    notes = []
    for side, launch in (("GOOD", good), ("BAD", bad)):
        if launch.command is None and launch.server_args is not None:
            notes.append(f"{side} logged no launch command: its flags are the server_args fields that differ from "
                         "the release's defaults, values SGLang derived itself included")
        elif launch.command is None:
            notes.append(f"{side} logged neither a launch command nor server_args: its flags are unknown")
        if version_of(launch) is None:
            notes.append(f"{side} does not name its SGLang version: its flags were read with the newest catalog")
    return tuple(notes)
