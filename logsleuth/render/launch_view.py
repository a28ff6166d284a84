"""The launch view of `logsleuth watch` on a terminal (drawn by rich Live, refreshed several times a second):

    ✓ arguments parsed                 1.0 s
    ✓ loading weights                 12.4 s
    ⠙ capturing CUDA graphs            4.1 s
      CUDA graph batches ━━━━━━━━━╸━━━━━━━━━━  45%  10/23  bs=160 avail_mem=10.50 GB
      weights 15.20 GB · KV cache 40.00 GB (400000 tokens) · avail mem 10.10 GB
      <the last log line, dimmed>

On ready the view stays with the total time and the server's URL.  The view only draws what the watch events
say (watch/follow.py); log text is shown as `Text`, never read as markup, and cleaned of escape sequences.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.progress_bar import ProgressBar
from rich.spinner import Spinner
from rich.table import Table
from rich.text import Text

from logsleuth.models import ProgressReading
from logsleuth.redact import redact_secrets
from logsleuth.render.safety import strip_controls

if TYPE_CHECKING:
    from logsleuth.watch.events import WatchEvent

# The memory figures shown, in this order (names from ingest/stages.py MEMORY_FIGURES).
_MEMORY_ORDER = ("weights", "KV cache", "KV cache tokens", "avail mem")
_BAR_WIDTH = 30


@dataclass
class _Row:
    """One stage row of the live launch view."""
    key: str  # the stage's key (ingest/stages.py)
    label: str
    at: float | None  # on the launch's clock (WatchEvent.at)
    seen: float  # on the watch clock: when the view learnt of it


class LaunchView:
    """What the watch has seen of one launch, drawn by rich (`__rich__`)."""

    def __init__(self, source: str, clock: Callable[[], float] = time.monotonic) -> None:
        self.source = source
        self.clock = clock
        self.rows: tuple[_Row, ...] = ()  # replaced, never mutated: rich draws from another thread
        self.progress: ProgressReading | None = None
        self.memory: tuple[tuple[str, str], ...] = ()
        self.last_line: str | None = None
        self.message: str | None = None  # a note (waiting for the log, reconnecting) or the outcome
        self.url: str | None = None
        self.outcome: str | None = None  # "ready", "failed", "stalled"

    def apply(self, event: WatchEvent) -> None:
        if event.memory:
            self.memory = event.memory
        if event.kind in ("stage", "ready") and event.stage is not None:
            self.rows = (*self.rows, _Row(event.stage.key, event.stage.label, event.at, self.clock()))
            self.progress = None
            self.url = event.url or self.url
            if event.kind == "ready":
                self.outcome = "ready"
        elif event.kind == "progress":
            self.progress = event.progress
        elif event.kind == "line":
            self.last_line = _clean(event.text or "")
        elif event.kind in ("waiting", "restarted", "warning"):
            self.message = event.text
        elif event.kind == "failure":
            self.outcome = "failed"
        elif event.kind == "stall":
            self.outcome = "stalled"

    def note(self, message: str) -> None:
        self.message = message

    def total_seconds(self) -> float | None:
        """From the first stage seen to the latest, on the launch's clock."""
        stamps = [row.at for row in self.rows if row.at is not None]
        return stamps[-1] - stamps[0] if len(stamps) > 1 else None

    # -- drawing -----------------------------------------------------------------------------------------
    def __rich__(self) -> RenderableType:
        parts: list[RenderableType] = [self._stages()]
        if self.progress is not None and self.outcome is None:
            parts.append(self._bar(self.progress))
        if self.memory:
            parts.append(Text("  " + _memory_text(dict(self.memory)), style="cyan"))
        if self.outcome == "ready":
            total = self.total_seconds()
            summary = "ready" + (f" in {_duration(total)}" if total is not None else "")
            parts.append(Text(f"  {summary}" + (f" · {self.url}" if self.url else ""), style="bold green"))
        if self.message:
            parts.append(Text("  " + _clean(self.message), style="yellow"))
        if self.last_line and self.outcome is None:
            parts.append(Text("  " + self.last_line, style="dim", overflow="ellipsis", no_wrap=True))
        return Group(*parts)

    def _stages(self) -> Table:
        table = Table.grid(padding=(0, 1))
        table.add_column(width=1)
        table.add_column()
        table.add_column(justify="right")
        if not self.rows:
            table.add_row(Spinner("dots", style="cyan"), Text(f"watching {_clean(self.source)}"), "")
        for index, row in enumerate(self.rows):
            following = self.rows[index + 1] if index + 1 < len(self.rows) else None
            if following is not None or self.outcome == "ready":
                mark: RenderableType = Text("✓", style="green")
                seconds = _between(row, following)
            else:
                mark = Text("✗", style="red") if self.outcome else Spinner("dots", style="cyan")
                seconds = self.clock() - row.seen
            if row.key == "ready":
                continue  # the ready line below says it, with the total
            table.add_row(mark, Text(row.label), Text(_duration(seconds) if seconds is not None else "", style="dim"))
        return table

    def _bar(self, reading: ProgressReading) -> Table:
        table = Table.grid(padding=(0, 1))
        table.add_row(
            Text(f"  {reading.label}"),
            ProgressBar(total=100, completed=reading.percent, width=_BAR_WIDTH),
            Text(f"{reading.percent:3d}%  {reading.done}/{reading.total}"),
            Text(_clean(reading.detail), style="dim"),
        )
        return table


def _between(row: _Row, following: _Row | None) -> float | None:
    if following is None or row.at is None or following.at is None:
        return None
    return max(0.0, following.at - row.at)


def _memory_text(memory: dict[str, str]) -> str:
    parts = []
    for name in _MEMORY_ORDER:
        value = memory.get(name)
        if value is None or name == "KV cache tokens":
            continue
        if name == "KV cache" and "KV cache tokens" in memory:
            value = f"{value} ({memory['KV cache tokens']} tokens)"
        parts.append(f"{name} {value}")
    if "KV cache" not in memory and "KV cache tokens" in memory:
        parts.append(f"KV cache {memory['KV cache tokens']} tokens")
    return " · ".join(parts)


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest:02d} s"


def _clean(text: str) -> str:
    return strip_controls(redact_secrets(text))
