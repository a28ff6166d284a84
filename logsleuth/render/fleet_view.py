"""The fleet view of `logsleuth watch` over several logs on a terminal: one row per log, redrawn in place (rich
Live), instead of a line per log per stage:

    ✓ node01:/var/log/sglang.log  ready
    ⠙ node02:/var/log/sglang.log  loading weights                12.4 s
    ✗ node03:/var/log/sglang.log  connection refused by 10.0.0.3 port 22
      all 4 servers are ready  (the fleet's outcome, or a note)

Each row shows its log's latest stage and how long it has been in it, or why the log cannot be read.  The view
only draws what the fleet's events say (watch_fleet.py); their text is made inert and redacted, as the launch
view's is.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from rich.console import Console, ConsoleOptions, RenderResult
from rich.spinner import Spinner
from rich.text import Text

from logsleuth.redact import redact_secrets
from logsleuth.render.safety import strip_controls

WAITING = "waiting for its first stage"
_SPINNER = Spinner("dots")


@dataclass(frozen=True)
class _Row:
    """One log's row of the fleet view: its stage, since when, and how it stands."""

    stage: str
    since: float  # on the watch clock: when this stage was seen
    state: str = "running"  # "running" | "ready" | "error"
    note: str = ""  # the error, or what happened to the log (rotated, restarted)


class FleetView:
    """What the fleet watch has seen of each log, drawn by rich (`__rich__`)."""

    def __init__(self, sources: Sequence[str], clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        now = clock()
        # replaced, never mutated: rich draws from another thread
        self.rows: dict[str, _Row] = {source: _Row(WAITING, now) for source in sources}
        self.message: str | None = None  # the fleet's outcome, or a note that belongs to no row

    def apply(self, source: str | None, kind: str, text: str | None) -> None:
        """One fleet event (watch_fleet.FleetEvent's kind, source and text)."""
        text = _clean(text or "")
        row = self.rows.get(source) if source is not None else None
        if row is None or source is None:
            self.message = text or self.message
            return
        if kind == "stage":
            row = _Row(text, self.clock(), "ready" if text == "ready" else "running")
        elif kind == "error":
            row = replace(row, state="error", note=text.removeprefix(f"{_clean(source)}: "))
        else:
            row = replace(row, note=text)
        self.rows = {**self.rows, source: row}

    def note(self, message: str) -> None:
        self.message = _clean(message)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        """One line per log, cut to the width: the log's name stays whole (its identity), its stage gives way."""
        width = options.max_width
        names = {source: _clean(source) for source in self.rows}
        name_width = min(max(map(len, names.values()), default=0), max(20, width // 2))
        now = self.clock()
        for source, row in self.rows.items():
            line = Text(no_wrap=True, overflow="ellipsis")
            if row.state == "ready":
                line.append("✓", style="green")
            elif row.state == "error":
                line.append("✗", style="red")
            else:
                line.append_text(Text(str(_SPINNER.render(console.get_time())), style="cyan"))
            line.append(f" {names[source].ljust(name_width)}  ", style="bold")
            if row.state == "error":
                line.append(row.note, style="red")
            else:
                line.append(row.stage)
                if row.state == "running" and row.stage != WAITING:
                    line.append(f"  {now - row.since:.1f} s", style="dim")
                if row.note:
                    line.append(f"  ({row.note})", style="dim")
            line.truncate(width, overflow="ellipsis")
            yield line
        if self.message:
            yield Text(f"  {self.message}", style="bold", no_wrap=True, overflow="ellipsis")


def _clean(text: str) -> str:
    return strip_controls(redact_secrets(text)).replace("\n", " ")
