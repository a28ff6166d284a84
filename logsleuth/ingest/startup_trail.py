"""Where a log's start-up stopped: its last start-up line, the stage that line shows, and what came after it.

A paste that ends during the start-up holds no error and no line saying the server came up (issue 28: splits 17-19's
cut excerpts and silent hangs).  The start-up's lines are the stage lines of ingest/stages.py and the settings dumps
(read by the launch tracker), and, until the server came up, the lines ingest/startup_lines.py names: per-rank
distributed set-up, download and loading bars, a wrapper's wait for its engine, a launch command with nothing of the
engine after it.  A wait that the paste ends on, repeated or followed only by the user's own words, is a start-up
that stalled there."""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.ingest.startup_lines import WAITING_CORES, WAITING_READY, WAITING_STAGES, startup_stage
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LogLine

# The lines of content a paste that stopped during the start-up may show after the start-up's last line: a warning or
# two printed beside it (a ulimit, a backend's choice), not a run that went on.  The start-up's own progress (a
# loading bar, the API server's polls for its engine cores) is not counted.
STARTUP_TAIL = 2
# Waits in a row the paste ends on that say the start stalled there (a normal start prints one or two between its
# workers' lines); a single wait followed only by the user's words says so too.
STALLED_WAITS = 3
LAUNCHED = "launched, before any line of the engine's start-up"
# A user's sentence in a paste ("It does not go on after this."): words from a capital, no logger header, no key=value,
# brackets or colons of a log record.  A line continuing a record shares its metadata, so the shape is what tells.
_SENTENCE = compile_lazily(r"^[A-Z][a-z']{0,20}(?: [\w'\u2019,()-]{1,40}){3,60}[.!?]?$")


@dataclass
class StartupTrail:
    """Fed the log's lines by the launch tracker: where its start-up is and whether the log ended in it."""

    ready_at: int = -1  # the offset of the last line saying the server came up (READY_LINE)
    startup_at: int = -1  # the offset of the last start-up line
    done: bool = False  # that line's stage is one past which the engine is up, or the engine's output followed it
    came_up: bool = False  # a line said the server came up or served: later noise lines start nothing
    after: int = 0  # lines of content after it
    after_records: int = 0  # of those, the lines that are not a sentence of the user's own (_SENTENCE)
    stage: str = ""  # the stage the last start-up line shows ("" when it shows none)
    waits: int = 0  # the waits for the engine in a row since the last other start-up line

    def ready(self, line: LogLine) -> None:
        self.ready_at = max(self.ready_at, line.offset)
        self.came_up = True

    def served(self) -> None:
        """A line the engine prints only once it is up (its output, its serving metrics)."""
        if self.startup_at >= 0:
            self.done = True
        self.came_up = True

    def start_line(self, line: LogLine, stage: str, *, done: bool = False) -> None:
        """A settings dump or a stage line (ingest/stages.py): the start-up's own lines, wherever they are."""
        self._at(line, stage, done=done)

    def launched(self, line: LogLine) -> None:
        """A launch command: the start-up begins, when nothing has said the server came up."""
        if not self.came_up and (self.startup_at < 0 or self.stage == LAUNCHED or self.after > 0):
            self._at(line, LAUNCHED)

    def other_line(self, line: LogLine) -> None:
        """Any other line of content: a start-up line of startup_lines.py before the server came up, else content."""
        stage = None if self.came_up else startup_stage(line.text, line.meta)
        if stage is not None:
            if stage in WAITING_STAGES:
                self.waits = self.waits + 1 if self.stage == stage and self.after == 0 else 1
            self._at(line, stage, keep_waits=stage in WAITING_STAGES)
            return
        if self.startup_at < 0:
            return
        self.after += 1
        if line.headed or not _SENTENCE.match(line.text):
            self.after_records += 1

    def quiet_line(self, line: LogLine) -> None:
        """A start-up's own progress (a loading bar, vLLM's polls for its engine cores): its stage, nothing after."""
        if self.came_up:
            return
        stage = startup_stage(line.text, line.meta)
        if stage is not None and self.startup_at < 0:
            self._at(line, stage, keep_waits=True)  # a paste of the bars or the polls alone
        if stage is not None and self.after == 0:
            if stage in WAITING_STAGES:
                self.waits = self.waits + 1 if self.stage == stage else 1
            self.stage = stage

    def _at(self, line: LogLine, stage: str, *, done: bool = False, keep_waits: bool = False) -> None:
        self.startup_at, self.done, self.after, self.after_records = line.offset, done, 0, 0
        self.stage = stage or self.stage
        if not keep_waits:
            self.waits = 0

    def ended(self) -> bool:
        """The log ends during the start-up: its last lines are start-up lines before the engine is up, at most
        STARTUP_TAIL lines after them, and no line after them says the server came up."""
        return self.startup_at > self.ready_at and not self.done and self.after <= STARTUP_TAIL

    def stalled(self) -> bool:
        """The log ends on a wait for the engine: repeated, or followed only by the user's own words."""
        return self.ended() and self.waits > 0 and (
            self.waits >= STALLED_WAITS or (self.after > 0 and self.after_records == 0))

    def absorb(self, other: StartupTrail) -> None:
        self.ready_at = max(self.ready_at, other.ready_at)
        self.came_up = self.came_up or other.came_up
        if other.startup_at > self.startup_at:
            self.startup_at, self.done, self.after = other.startup_at, other.done, other.after
            self.after_records, self.stage, self.waits = other.after_records, other.stage, other.waits


# General guidance for a start-up that stalled on a wait, by the stage it waits in: engine-neutral, no flag (the
# notice does not know the release), labelled as guidance where it is shown (render/view.py startup_notice).
STALL_GUIDANCE = {
    WAITING_READY: (
        "the engine printed nothing after this wait: its own log (the scheduler's or engine "
        "core's lines) says where it stopped, and may be written somewhere other than the wrapper's output",
        "start the same engine with the same model alone, without the wrapper, to see whether it comes up",
        "a wrapper that embeds the engine is built for particular engine releases: check the installed engine's "
        "release against the one the wrapper's release names",
    ),
    WAITING_CORES: (
        "the API server is waiting for its engine core processes: their own lines (weights loading, memory "
        "profiling, torch.compile, CUDA graph capture) say where they are; a paste of the lines before the waits "
        "shows them",
        "with tensor or pipeline parallelism a stall is often the workers' first collective never completing: "
        "NCCL_DEBUG=INFO shows where it stops",
        "a first start may download or compile for minutes: a start that moves on slowly is not stuck",
    ),
}
