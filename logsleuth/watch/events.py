"""What a watch reports: its events, as values only (no open source, no connection), so that printers and the
live view (render/launch_view.py) can take them without reaching into the watch."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from logsleuth.ingest.stages import Stage
from logsleuth.models import ProgressReading, Report, SourceInfo
from logsleuth.reading.scan import ReadResult

EventKind = Literal[
    "waiting", "stage", "progress", "line", "ready", "failure", "stall", "warning", "truncated", "restarted"
]


@dataclass(frozen=True)
class WatchEvent:
    """What the watch saw.  `at`: for a stage (and ready), when it began, in seconds on the launch's own
    clock (the log's timestamps when it has them, else the time the line was read): differences between
    stages are their durations.  `memory` and `url`: what the launch has reported so far.  `lines`: with a
    stall, the last lines of the log."""

    kind: EventKind
    stage: Stage | None = None
    text: str | None = None
    report: Report | None = None
    # With a failure: what was read (values, no live source), for a report across several watched logs
    # (watch/fleet.py).
    read: tuple[SourceInfo, ReadResult] | None = None
    progress: ProgressReading | None = None
    at: float | None = None
    memory: tuple[tuple[str, str], ...] = ()
    url: str | None = None  # as a user can open it (stages.openable_url)
    # With ready: from the launch's first stage to ready, by the log's own times (None when the log does not give
    # both, or the watch did not see the launch's first stage).
    launch_seconds: float | None = None
    lines: tuple[str, ...] = ()
    # With a failure: the source was lost for good before the failure was complete (the connection never came
    # back); what arrived is reported, and this says why it may be cut short.  The watch ends as a source error.
    source_lost: str | None = None
