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
kind (a worker's progress, the readiness line) says the start went on."""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.ingest.startup_lines import WAITING_LINE, is_waiting_line
from logsleuth.models import ExceptionBlock, Failure, LogLine

STARTUP_HANG = "start-up hang"  # the failure's type: no exception was raised, the start never finished
POLL_SECONDS = 10  # vLLM's STARTUP_POLL_PERIOD_MS: the time each waiting line stands for
# The run of waiting lines that shows a stall: a minute in which no engine core answered and nothing else was printed.
# A normal start prints a few, between the workers' own lines (weights loading, the KV cache, graph capture).
MIN_WAITS = 60 // POLL_SECONDS


@dataclass
class _Run:
    """The current run of waiting lines: the first and last, and how many."""

    first: LogLine
    last: LogLine
    count: int = 1


class StartupWaits:
    """Fed every line of a paste; holds the run of waiting lines the paste ends on, if any."""

    def __init__(self) -> None:
        self.run: _Run | None = None

    def feed(self, line: LogLine) -> None:
        text = line.text
        if not text or text.isspace():
            return  # blank lines neither extend nor end a run
        if is_waiting_line(text):
            if self.run is None:
                self.run = _Run(line, line)
            else:
                self.run.last = line
                self.run.count += 1
            return
        self.run = None  # any other line: the start went on, or the paste says more than the wait

    def stalled(self, ready_offset: int) -> Failure | None:
        """The run the paste ends on as its failure, when it is long enough and no readiness line came after it."""
        run = self.run
        if run is None or run.count < MIN_WAITS or ready_offset > run.first.offset:
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
