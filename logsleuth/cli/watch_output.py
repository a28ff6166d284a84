"""The command-line side of `logsleuth watch`: follow the logs and print what happens, in the format asked for.

Three ways to show a launch, one outcome:
- a terminal (stderr is a TTY, format not json): the launch view (render/launch_view.py), live;
- otherwise: one line per event on stderr (`logsleuth: SOURCE: loading weights`);
- `--format json`: JSON lines on stdout, one per event (schema logsleuth/watch_events.schema.json).

The outcome is on stdout (the diagnosis of a crash, "the server is ready", the stall report) and in the exit
status: 0 ready, 1 crashed (the diagnosis is printed), 3 the log could not be read (or ended before ready; or
its connection was lost for good while a crash was being written: what arrived is printed, then the error),
124 --stall or --timeout passed.  Ctrl-C propagates as KeyboardInterrupt (the entry point makes it 130).
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, TextIO

from logsleuth.api import DiagnoseOptions
from logsleuth.cli.program import terminal_text
from logsleuth.errors import ExitStatus, SourceError, UsageError
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from logsleuth.render.safety import strip_controls
from logsleuth.watch.follow import SETTLE_SECONDS, WatchEvent, WatchTimeout, watch_spec

if TYPE_CHECKING:
    from logsleuth.render.fleet_view import FleetView
    from logsleuth.render.launch_view import LaunchView

EXIT_TIMEOUT = int(ExitStatus.TIMEOUT)  # --timeout or --stall passed: what timeout(1) returns
SCHEMA = "logsleuth.watch/1"
# The SSH follower's notices when its connection dropped (sources/ssh): "reconnecting (attempt 2)…", and once it is
# back, "reconnected (attempt 2)".
_RECONNECT = compile_lazily(r"(?P<kind>reconnecting|reconnected) \(attempt (?P<attempt>\d+)\)")
# Without a terminal, a progress bar is printed at these steps only (a bar moves by 1 % at a time).
TEXT_PROGRESS_STEP = 25


@dataclass(frozen=True)
class WatchSettings:
    """How long to wait for what (the command line's --timeout, --stall, --settle, --then-follow, --from-start)."""

    timeout: float | None = None
    stall: float | None = None
    settle: float = SETTLE_SECONDS
    then_follow: bool = False
    from_start: bool = False

    def check(self) -> None:
        for flag, value in (("--timeout", self.timeout), ("--stall", self.stall)):
            if value is not None and not value > 0:  # `not >`: also NaN
                raise UsageError(f"{flag}: must be more than 0 seconds, not {value:g}")
        if not self.settle >= 0:
            raise UsageError(f"--settle: must be 0 seconds or more, not {self.settle:g}")


@dataclass
class Streams:
    """Where watch writes (the test suite passes StringIO): stdout for outcomes and JSON, stderr for the rest."""

    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)


def run_watch(
    specs: Sequence[str],
    options: DiagnoseOptions,
    *,
    fmt: OutputFormat,
    timeout: float | None = None,
    stall: float | None = None,
    settle: float = SETTLE_SECONDS,
    then_follow: bool = False,
    from_start: bool = False,
    width: int = 80,
    color: bool = False,
    redact: bool = True,
    live: bool | None = None,
    streams: Streams | None = None,
) -> int:
    """Watch SPECS until ready, a crash, a stall or the timeout; print as it goes; return the exit status.

    `live`: draw the launch view (default: when stderr is a terminal and the format is not json).  Raises
    UsageError for bad settings; KeyboardInterrupt passes through."""
    settings = WatchSettings(timeout, stall, settle, then_follow, from_start)
    settings.check()
    streams = streams or Streams()
    if live is None:
        live = fmt is not OutputFormat.JSON and _isatty(streams.stderr)
    render_options = RenderOptions(format=fmt, width=width, color=color and fmt is OutputFormat.RICH)
    printer = _Printer(streams, render_options, redact=redact)
    if not specs:
        raise UsageError("no log given: name a file, '-' or HOST:PATH")
    if any(spec.startswith("k8s:") for spec in specs):  # Kubernetes workloads: each pod is watched
        from logsleuth.sources.runtime.open import with_pods

        try:
            specs = with_pods(specs, keep_unlisted=False)
        except SourceError as exc:  # a workload whose pods cannot be listed
            printer.error(specs[0], "error", str(exc))
            return int(ExitStatus.SOURCE_ERROR)
    if len(specs) > 1:
        # On a terminal, one row per log redrawn in place (render/fleet_view.py); else a line per log per change.
        printer.fleet = _fleet_view(specs) if live else None
        try:
            with _live(printer.fleet, streams.stderr):
                return _run_fleet(list(specs), options, settings, printer)
        finally:
            printer.release()
    (spec,) = specs
    view = _launch_view(spec) if live else None
    printer.view = view
    options = replace(options, ssh=replace(options.ssh, notice=lambda message: printer.notice(spec, message)))
    try:
        with _live(view, streams.stderr):
            return _follow(spec, options, settings, printer)
    except KeyboardInterrupt:
        printer.interrupted(spec)
        raise
    finally:
        printer.release()  # what waited for the view to stop: the diagnosis, the error line


def _follow(spec: str, options: DiagnoseOptions, settings: WatchSettings, printer: _Printer) -> int:
    try:
        for event in watch_spec(spec, options, timeout=settings.timeout, settle=settings.settle, stall=settings.stall,
                                then_follow=settings.then_follow, from_start=settings.from_start, details=True):
            printer.event(spec, event)
            if event.kind == "failure" and event.source_lost is not None:
                printer.error(spec, "error", event.source_lost)
                return int(ExitStatus.SOURCE_ERROR)
            if event.kind == "failure":
                return int(ExitStatus.FAILURE_FOUND)
            if event.kind == "stall":
                return EXIT_TIMEOUT
            if event.kind == "ready" and not settings.then_follow:
                return int(ExitStatus.NO_FAILURE)
    except WatchTimeout as exc:
        printer.error(spec, "timeout", str(exc))
        return EXIT_TIMEOUT
    except SourceError as exc:
        printer.error(spec, "error", str(exc))
        return int(ExitStatus.SOURCE_ERROR)
    return int(ExitStatus.NO_FAILURE)  # --then-follow: ready, and the log ended without a crash


def _run_fleet(specs: list[str], options: DiagnoseOptions, settings: WatchSettings, printer: _Printer) -> int:
    """Several logs: the fleet's outcome (watch/fleet.py), one line per event."""
    if settings.stall is not None or settings.then_follow or settings.from_start:
        raise UsageError(f"--stall, --then-follow and --from-start watch one log, not {len(specs)}")
    from logsleuth.watch.fleet import watch_fleet

    for event in watch_fleet(specs, options, timeout=settings.timeout, settle=settings.settle):
        source = event.source or ""
        if printer.fleet is not None:
            printer.fleet.apply(event.source, event.kind, event.text)
        if event.kind == "failure" and event.report is not None:
            printer.failure(source, event.report)
            return int(ExitStatus.FAILURE_FOUND)
        if event.kind == "ready":
            printer.outcome(source, "ready", event.text or "ready", {"message": event.text})
            return int(ExitStatus.NO_FAILURE)
        if event.kind == "timeout":
            printer.error(source, "timeout", event.text or "")
            return int(ExitStatus.TIMEOUT)
        if event.kind in ("error", "unreadable"):
            printer.error(source, "error", event.text or "")
            if event.kind == "unreadable":
                return int(ExitStatus.SOURCE_ERROR)
        else:
            fields = {"label": event.text or ""} if event.kind == "stage" else {"message": event.text or ""}
            printer.line(source, event.kind, event.text or "", fields)
    return int(ExitStatus.SOURCE_ERROR)


class _Printer:
    """Turns watch events into the lines of the chosen format (and into the launch view when there is one)."""

    def __init__(self, streams: Streams, render_options: RenderOptions, *, redact: bool) -> None:
        self.streams = streams
        self.render_options = render_options
        self.json = render_options.format is OutputFormat.JSON
        self.redact = redact
        self.view: LaunchView | None = None
        self.fleet: FleetView | None = None  # several logs on a terminal: their rows, in place of their lines
        self.started = time.monotonic()
        self._text_progress: dict[str, int] = {}  # bar -> last step printed (no view, no json)
        # While the live view draws on the terminal, other writes would tear it: they wait for it to stop.
        self._held: list[tuple[TextIO, str]] = []

    # -- events ------------------------------------------------------------------------------------------
    def event(self, spec: str, event: WatchEvent) -> None:
        if self.view is not None:
            self.view.apply(event)
        handler = self._HANDLERS.get(event.kind)
        if handler is not None:
            handler(self, spec, event)

    def _stage(self, spec: str, event: WatchEvent) -> None:
        stage = event.stage
        if stage is None:
            return
        self.line(spec, "stage", stage.label, {"stage": stage.key, "label": stage.label, "at": event.at,
                                                "memory": dict(event.memory)})

    def _progress(self, spec: str, event: WatchEvent) -> None:
        reading = event.progress
        if reading is None:
            return
        fields = {"bar": reading.label, "percent": reading.percent, "done": reading.done, "total": reading.total,
                  "detail": reading.detail or None, "stage": event.stage.key if event.stage else None}
        if not self.json and self.view is None:
            step = reading.percent // TEXT_PROGRESS_STEP
            if self._text_progress.get(reading.label) == step:
                return
            self._text_progress[reading.label] = step
        self.line(spec, "progress", f"{reading.label}: {reading.percent}% ({reading.done}/{reading.total})", fields)

    def _ready(self, spec: str, event: WatchEvent) -> None:
        total = event.launch_seconds
        if total is None and self.view is not None:
            total = self.view.total_seconds()
        details = {"url": event.url, "memory": dict(event.memory), "at": event.at,
                   "watched_seconds": round(time.monotonic() - self.started, 3), "launch_seconds": total}
        self.outcome(spec, "ready", f"{spec}: the server is ready", details)

    def _failure(self, spec: str, event: WatchEvent) -> None:
        if event.report is not None:
            self.failure(spec, event.report)

    def _stall(self, spec: str, event: WatchEvent) -> None:
        lines = tuple(self._clean(line) for line in event.lines)
        stage = event.stage
        fields = {"stage": stage.key if stage else None, "label": stage.label if stage else None,
                  "message": self._clean(event.text or ""), "lines": list(lines), "memory": dict(event.memory)}
        if self.json:
            self._json("stall", spec, fields)
            return
        text = [f"{spec}: {self._clean(event.text or '')}"]
        if lines:
            text.append("  last lines:")
            text.extend(f"    {line}" for line in lines)
        self._write(self.streams.stdout, "\n".join(text) + "\n")

    def _note(self, spec: str, event: WatchEvent) -> None:
        self.line(spec, event.kind, event.text or "", {"message": self._clean(event.text or "")})

    _HANDLERS: dict[str, Callable[[_Printer, str, WatchEvent], None]] = {
        "stage": _stage, "progress": _progress, "ready": _ready, "failure": _failure, "stall": _stall,
        "waiting": _note, "restarted": _note, "warning": _note,
    }

    # -- what the handlers share -------------------------------------------------------------------------
    def line(self, spec: str, kind: str, text: str, fields: dict[str, Any]) -> None:
        """An event that is not an outcome: a JSON line, a stderr line, or nothing (the view shows it)."""
        if self.json:
            self._json(kind, spec, fields)
        elif not self._live or kind == "warning":
            prefix = "warning: " if kind == "warning" else ""
            self._stderr_line(f"{spec}: {prefix}{text}" if spec else f"{prefix}{text}")

    def notice(self, spec: str, message: str) -> None:
        """A line from the SSH source ("reconnecting (attempt 2)…", "reconnected (attempt 2)", a host key
        added): a reconnect or reconnected event, or a note.  The follower names its source first, and so does a
        line: there it is said once (JSON keeps the message whole)."""
        found = _RECONNECT.search(message)
        if found is not None:
            text = message.removeprefix(f"{spec}: ")
            if self.view is not None:
                self.view.note(text)
            if self.fleet is not None:
                self.fleet.apply(spec, "note", text)
            kind = "reconnect" if found["kind"] == "reconnecting" else "reconnected"
            self.line(spec, kind, text, {"attempt": int(found["attempt"]), "message": self._clean(message)})
        elif self.json:
            self._json("notice", spec, {"message": self._clean(message)})
        else:
            self._stderr_line(message)

    def outcome(self, spec: str, kind: str, text: str, fields: dict[str, Any]) -> None:
        if self.json:
            self._json(kind, spec, fields)
            return
        if self.view is None and fields.get("url"):
            self._stderr_line(f"{spec}: listening on {fields['url']}")
        self._write(self.streams.stdout, self._clean(text) + "\n")

    def failure(self, spec: str, report: Report) -> None:
        if self.redact:
            from logsleuth.redact import redact_report

            report = redact_report(report)
        if self.json:
            full = json.loads(render(report, replace(self.render_options, format=OutputFormat.JSON)))
            self._json("failure", spec, {"report": full})
            return
        self._write(self.streams.stdout, render(report, self.render_options))

    def error(self, spec: str, kind: str, message: str) -> None:
        """The watch ended without an outcome (timeout, unreadable): one line on stderr, and in JSON an event."""
        if self.json:
            self._json(kind, spec, {"message": self._clean(message)})
        if self.view is not None:
            self.view.note(message)
        if self.fleet is not None:  # the row says it already
            return
        self._stderr_line(message)

    def interrupted(self, spec: str) -> None:
        """Ctrl-C: a JSON reader learns why the events stop (the entry point prints "interrupted" and exits 130)."""
        if self.json:
            self._json("interrupted", spec, {"message": "interrupted"})

    def _json(self, kind: str, spec: str, fields: dict[str, Any]) -> None:
        record = {"schema": SCHEMA, "event": kind, "source": self._clean(spec),
                  "elapsed": round(time.monotonic() - self.started, 3), **fields}
        # ASCII escapes: a JSON line is valid whatever the locale's encoding is.
        self._write(self.streams.stdout, json.dumps(record) + "\n")

    def _stderr_line(self, message: str) -> None:
        """As program.print_stderr, through this printer's streams: redacted even with --no-redact."""
        self._write(self.streams.stderr, f"logsleuth: {terminal_text(message).replace(chr(10), ' ')}\n")

    def _clean(self, text: str) -> str:
        """Log text made inert for a terminal, and without secrets unless --no-redact."""
        if self.redact:
            from logsleuth.redact import redact_secrets

            text = redact_secrets(text)
        return strip_controls(text)

    @property
    def _live(self) -> bool:
        """A view is drawn on the terminal: the lines it shows are not printed, and other writes wait for it."""
        return self.view is not None or self.fleet is not None

    def release(self) -> None:
        held, self._held, self.view, self.fleet = self._held, [], None, None
        for stream, text in held:
            self._write(stream, text)

    def _write(self, stream: TextIO, text: str) -> None:
        """What the stream's encoding cannot hold (`✓` on an ASCII terminal) is written as a backslash escape
        rather than failing the watch."""
        if self._live:
            self._held.append((stream, text))
            return
        encoding = getattr(stream, "encoding", None)
        if encoding and getattr(stream, "buffer", None) is not None:
            text = text.encode(encoding, "backslashreplace").decode(encoding)
        stream.write(text)
        stream.flush()


def _isatty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def _launch_view(spec: str) -> LaunchView:
    from logsleuth.render.launch_view import LaunchView

    return LaunchView(spec)


def _fleet_view(specs: Sequence[str]) -> FleetView:
    from logsleuth.render.fleet_view import FleetView

    return FleetView(specs)


def _live(view: LaunchView | FleetView | None, stream: TextIO) -> AbstractContextManager[Any]:
    """The rich Live display of the launch view on `stream`; it stays on screen when the watch ends."""
    if view is None:
        return nullcontext()
    from rich.console import Console
    from rich.live import Live

    return Live(view, console=Console(file=stream), refresh_per_second=8, transient=False)

