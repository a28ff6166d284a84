"""Watch several logs at once: the nodes of one multi-node launch, or the replicas of a fleet.

Each log is followed by the single-log watch (watch/follow.py) in a thread of its own; this module only merges what
they see.  The outcome is the fleet's:
- every log reached ready: `ready`;
- a log failed: the others get `settle` seconds more to fail too (when one node dies, the others follow it
  with NCCL timeouts), then one report across all the failed logs, so that the grouping across hosts can
  name the earliest failure as the root and the rest as its cascade;
- a log could not be read: it is shown at once and the others go on, but the fleet is never `ready` (a
  script that runs `logsleuth watch … && start_benchmark` must not go on with a node it could not see);
- `--timeout` passed for some logs and every other one is ready: `timeout` (an unreadable log wins over it).
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

from logsleuth.api import DiagnoseOptions, SourceResult, build_report, load_library
from logsleuth.diagnosis.library import PatternSet
from logsleuth.errors import SourceError
from logsleuth.models import Report, SourceInfo
from logsleuth.watch.follow import SETTLE_SECONDS, WatchEvent, WatchTimeout, watch_spec

FleetEventKind = Literal["stage", "restarted", "error", "ready", "failure", "unreadable", "timeout"]
_POLL = 0.1  # seconds between looks at the clock while no log has news (Ctrl-C and settle need them)
_STOP_GRACE = 2.0  # seconds the watchers get to close their sources (and remote tails) when the watch ends


@dataclass(frozen=True)
class FleetEvent:
    """`source` is the spec an event is about; None for the fleet's outcome (`ready`, `failure`,
    `unreadable`, `timeout`: some logs were not ready in time, and every other log was).  `text` is a stage label, a note or a one-line error."""

    kind: FleetEventKind
    source: str | None = None
    text: str | None = None
    report: Report | None = None


_Done = object()  # a watcher's last message: its log reached an outcome or an error


def watch_fleet(
    specs: Sequence[str],
    options: DiagnoseOptions,
    *,
    timeout: float | None = None,
    settle: float = SETTLE_SECONDS,
) -> Iterator[FleetEvent]:
    """Follow every spec at once; yield each log's stages as they come, then the fleet's outcome."""
    patterns = load_library(options)
    inbox: queue.Queue[tuple[str, object]] = queue.Queue()
    stopping = threading.Event()
    watchers = [
        threading.Thread(target=_follow_one, args=(spec, options, timeout, settle, stopping, inbox), daemon=True)
        for spec in specs
    ]
    for watcher in watchers:
        watcher.start()
    try:
        yield from _merge(list(specs), inbox, options, patterns, settle)
    finally:
        stopping.set()
        ends = time.monotonic() + _STOP_GRACE
        for watcher in watchers:
            watcher.join(max(0.0, ends - time.monotonic()))


def _follow_one(
    spec: str,
    options: DiagnoseOptions,
    timeout: float | None,
    settle: float,
    stopping: threading.Event,
    inbox: queue.Queue[tuple[str, object]],
) -> None:
    try:
        for event in watch_spec(spec, options, timeout=timeout, settle=settle, stop=stopping.is_set):
            inbox.put((spec, event))
    except SourceError as exc:
        inbox.put((spec, exc))
    except Exception as exc:  # noqa: BLE001 - a bug in one watcher must not hang the others' outcome
        inbox.put((spec, SourceError(f"{spec}: internal error while watching ({type(exc).__name__}: {exc})")))
    finally:
        inbox.put((spec, _Done))


def _merge(
    specs: list[str],
    inbox: queue.Queue[tuple[str, object]],
    options: DiagnoseOptions,
    patterns: PatternSet,
    settle: float,
) -> Iterator[FleetEvent]:
    open_specs = set(specs)
    ready: set[str] = set()
    errors: dict[str, str] = {}
    timed_out: set[str] = set()
    failed: dict[str, SourceResult] = {}
    last_failure_at: float | None = None
    while open_specs:
        if last_failure_at is not None and time.monotonic() - last_failure_at >= settle:
            break  # the others had their time to fail too
        try:
            spec, message = inbox.get(timeout=_POLL)
        except queue.Empty:
            continue
        if message is _Done:
            open_specs.discard(spec)
        elif isinstance(message, SourceError):
            errors[spec] = str(message)
            if isinstance(message, WatchTimeout):
                timed_out.add(spec)
            yield FleetEvent("error", spec, str(message))
        elif isinstance(message, WatchEvent):
            if message.kind == "ready":
                ready.add(spec)
                yield FleetEvent("stage", spec, message.stage.label if message.stage else "ready")
            elif message.kind == "failure" and message.read is not None:
                failed[spec] = message.read
                last_failure_at = time.monotonic()
                if message.source_lost is not None:  # reported as far as it arrived; the host is lost all the same
                    errors[spec] = message.source_lost
                    yield FleetEvent("error", spec, message.source_lost)
            else:
                label = message.stage.label if message.stage else (message.text or "")
                yield FleetEvent(message.kind if message.kind == "restarted" else "stage", spec, label)
    if failed:
        yield FleetEvent("failure", report=_fleet_report(specs, failed, errors, options, patterns))
    elif errors and set(errors) == timed_out:
        yield FleetEvent("timeout", text=f"{len(timed_out)} of {len(specs)} servers were not ready in time")
    elif errors:
        yield FleetEvent("unreadable", text=f"{len(errors)} of {len(specs)} logs could not be read")
    else:
        yield FleetEvent("ready", text=f"all {len(ready)} servers are ready")


def _fleet_report(
    specs: list[str],
    failed: dict[str, SourceResult],
    errors: dict[str, str],
    options: DiagnoseOptions,
    patterns: PatternSet,
) -> Report:
    """One report across the logs that failed (in the order the user named them), with the unreadable
    ones listed by their error."""
    results: list[SourceResult] = []
    for spec in specs:
        if spec in failed:
            results.append(failed[spec])
        elif spec in errors:
            results.append((SourceInfo(spec, 0, None, error=errors[spec]), None))
    return build_report(results, options, patterns)
