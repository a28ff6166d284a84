"""A start-up that never finished (issue 28, split 17's F-01): the paste ends on the API server's repeated line that it
is still waiting for its engine core processes, with nothing else after them.

vLLM's API server waits for the engine cores' handshake in a poll loop (v1/engine/utils.py wait_for_engine_startup,
0.9 to 0.33; v1/utils.py before): each poll that sees no event within STARTUP_POLL_PERIOD_MS (10 000 ms) logs at DEBUG
`Waiting for %d local, %d remote core engine proc(s) to start.` (or `… to connect.`; before 0.9 `Waiting for %d core
engine proc(s) to start: %s`), and an engine core that exits ends the loop with `Engine core initialization failed`.
So each line is ten seconds in which no engine core said hello or died.  A normal start prints a few of them while the
weights load, with the workers' own lines between them; a paste ending on a run of them and nothing else is a start
that stalled there (LMCache/LMCache#1142: a disaggregated prefill whose engine core never came up).

Only as the failure of a paste that shows no other, and only for a run at the paste's end: a later line of any other
kind (a worker's progress, the readiness line) says the start went on, except the user's Ctrl-C and what it prints
(the user gave up waiting).  A run is a minute of polls: its lines' stamps span it when they carry one (a poll logs
its `to connect.` and `to start.` lines at once when both counts are pending)."""

from __future__ import annotations

from dataclasses import dataclass, field

from logsleuth.ingest.startup_lines import WAITING_LINE, is_waiting_line
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ExceptionBlock, Failure, LogLine

STARTUP_HANG = "start-up hang"  # the failure's type: no exception was raised, the start never finished
POLL_SECONDS = 10  # vLLM's STARTUP_POLL_PERIOD_MS: the time each poll without an answer stands for
# The run of polls that shows a stall: a minute in which no engine core answered and nothing else was printed.
# A normal start prints a few, between the workers' own lines (weights loading, the KV cache, graph capture).
MIN_WAITS = 60 // POLL_SECONDS
# The time the first and last of MIN_WAITS polls are apart, when the lines carry a time: a paste that repeats its lines,
# or mixes several front-ends, can show that many in seconds.
MIN_SPAN_SECONDS = (MIN_WAITS - 1) * POLL_SECONDS
_CLOCK = compile_lazily(r"(?P<h>\d{1,2}):(?P<m>\d{2}):(?P<s>\d{2})")
# The lines a user's Ctrl-C prints after a stalled start (the terminal's `^C` echo, the servers' shutdown lines,
# CPython's KeyboardInterrupt traceback): the paste ends there because the user gave up waiting, which the scanner asks
# this module about only when nothing but that interrupt failed (scanner.finish).
_INTERRUPT_WORDS = ("KeyboardInterrupt", "Shutting down", "shutdown", "Traceback (most recent call last):")


def _seconds_of_day(line: LogLine) -> int | None:
    """The time of day a line's record was logged, in seconds, or None when it carries none."""
    stamp = line.meta.timestamp
    m = _CLOCK.search(stamp) if stamp else None
    return None if m is None else int(m["h"]) * 3600 + int(m["m"]) * 60 + int(m["s"])


def _user_interrupt(text: str) -> bool:
    return text.lstrip().startswith("^C") or any(word in text for word in _INTERRUPT_WORDS)


@dataclass
class _Run:
    """The current run of waiting lines: the first and last, how many polls they are, and how many lines of each
    kind (one poll logs its `to connect.` line and its `to start.` line together when both counts are pending)."""

    first: LogLine
    last: LogLine
    polls: int = 1
    lines_by_kind: dict[str, int] = field(default_factory=dict)


class StartupWaits:
    """Fed every line of a paste; holds the run of waiting lines the paste ends on, if any."""

    def __init__(self) -> None:
        self.run: _Run | None = None
        self.interrupted = False  # the lines after the run are the user's Ctrl-C (`_user_interrupt`): the run stands

    def feed(self, line: LogLine) -> None:
        text = line.text
        if not text or text.isspace():
            return  # blank lines neither extend nor end a run
        if self.run is not None and (self.interrupted or _user_interrupt(text)):
            self.interrupted = True  # whatever follows the interrupt is its trailer
            return
        if is_waiting_line(text):
            m = WAITING_LINE.match(text)
            kind = m["what"] if m else ""
            if self.run is None:
                self.run = _Run(line, line, lines_by_kind={kind: 1})
                return
            clock, last_clock = _seconds_of_day(line), _seconds_of_day(self.run.last)
            if clock is None or last_clock is None or clock != last_clock:
                self.run.polls += 1  # (lines of one stamp are one poll)
            self.run.lines_by_kind[kind] = self.run.lines_by_kind.get(kind, 0) + 1
            self.run.last = line
            return
        self.run = None  # any other line: the start went on, or the paste says more than the wait

    def _long_enough(self, run: _Run) -> bool:
        """The run is a minute of polls: by its stamps when its lines carry them, else by its lines of one kind."""
        first, last = _seconds_of_day(run.first), _seconds_of_day(run.last)
        if first is not None and last is not None:
            return run.polls >= MIN_WAITS and (last - first) % 86400 >= MIN_SPAN_SECONDS
        return max(run.lines_by_kind.values()) >= MIN_WAITS

    def stalled(self, ready_offset: int) -> Failure | None:
        """The run the paste ends on as its failure, when it is long enough and no readiness line came after it."""
        run = self.run
        if run is None or not self._long_enough(run) or ready_offset > run.first.offset:
            return None
        m = WAITING_LINE.match(run.last.text)
        assert m is not None
        # the engine's words are the message (what a search finds); the category row's checks say what the run means
        return Failure(
            kind="line",
            exceptions=(ExceptionBlock(type=STARTUP_HANG, message=m["msg"].strip()),),
            line=run.first.number,
            offset=run.first.offset,
            end_offset=run.last.offset + len(run.last.text) + 1,
            meta=run.first.meta,
            context=(),
        )
