"""Where a log's start-up stopped: its last start-up line, the stage that line shows, and what came after it.

A paste that ends during the start-up holds no error and no line saying the server came up (issue 28: splits 17-19's
cut excerpts and silent hangs).  The start-up's lines are the stage lines of ingest/stages.py and the settings dumps
(read by the launch tracker), and, until the server came up, the lines ingest/startup_lines.py names: per-rank
distributed set-up, download and loading bars, a wrapper's wait for its engine, a launch command with nothing of the
engine after it.  A download bar, a wait for some server or a glog line continues a start-up the engine's own lines
began, and opens none (a client or a download tool prints them too).

A stall is said only where the log shows it: the paste ends on waits for the engine, nothing after them but more waits
or the user's own sentence saying it stays there (never a record or a library's message: those say the engine went
on), and the waits are a minute of the API server's polls (tracebacks/startup_waits.py MIN_WAITS, the run a normal
start does not print) or the user's sentence says so.  Fewer polls are told as the time they stand for, not a stall."""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.ingest.startup_lines import (
    NCCL_PLATFORMS,
    WAITING_CORES,
    WAITING_READY,
    WAITING_STAGES,
    engine_own,
    parallel_degrees,
    startup_stage,
)
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LogLine

# The lines of content a paste that stopped during the start-up may show after the start-up's last line: a warning or
# two printed beside it (a ulimit, a backend's choice), not a run that went on.  The start-up's own progress (a
# loading bar, the API server's polls for its engine cores) is not counted.
STARTUP_TAIL = 2
# Waits in a row the paste ends on that say the start stalled there: a minute of vLLM's 10-second polls, the run
# tracebacks/startup_waits.py asks for too (a normal start prints a few while the weights load).  A wrapper's wait has
# no known period: the same count.  A wait followed only by the user's sentence saying it stays there says so too.
STALLED_WAITS = 6
POLL_SECONDS = 10  # vLLM's STARTUP_POLL_PERIOD_MS: the time each poll for the engine cores stands for
LAUNCHED = "launched, before any line of the engine's start-up"
# A user's sentence in a paste ("It does not go on after this."): words from a capital, no logger header, no key=value,
# brackets or colons of a log record.  A line continuing a record shares its metadata, so the shape is what tells.
_SENTENCE = compile_lazily(r"^[A-Z][a-z']{0,20}(?: [\w'\u2019,()-]{1,40}){3,60}[.!?]?$")
# What makes such a sentence the user's report of a stall rather than a library's unheaded message (transformers'
# "Special tokens have been added in the vocabulary, make sure …", torch.distributed's "Setting OMP_NUM_THREADS
# environment variable …"): a first person, or words saying it stays where it is.
_STALL_WORDS = compile_lazily(
    r"\b(?:I|I'm|I've|we|my|our|stays?|stuck|hangs?|hanging|hung|freez(?:es|ing)|frozen|forever|never|nothing|"
    r"no (?:more|further|other|new)|(?:does not|doesn't|did not|didn't|won't|will not) (?:go|move|continue|progress|"
    r"proceed|start|finish|print|get))\b")


@dataclass
class StartupTrail:
    """Fed the log's lines by the launch tracker: where its start-up is and whether the log ended in it."""

    ready_at: int = -1  # the offset of the last line saying the server came up (READY_LINE)
    startup_at: int = -1  # the offset of the last start-up line
    done: bool = False  # that line's stage is one past which the engine is up, or the engine's output followed it
    came_up: bool = False  # a line said the server came up or served: later noise lines start nothing
    first_up_at: int = -1  # the offset of the first such line (-1: none): what a failure after it was not raised in
    after: int = 0  # lines of content after it
    after_records: int = 0  # of those, the lines that are not a sentence of the user's own (_SENTENCE)
    stage: str = ""  # the stage the last start-up line shows ("" when it shows none)
    waits: int = 0  # the waits for the engine in a row since the last other start-up line
    engine_seen: bool = False  # a launch command, an engine's record or its own start-up line was seen (engine_own)
    platform: str = ""  # the platform vLLM said it detected (startup_lines.platform_named), lower case
    parallel: bool | None = None  # its settings dumps show tensor or pipeline parallelism over several ranks (None: none shown)

    def ready(self, line: LogLine) -> None:
        self.ready_at = max(self.ready_at, line.offset)
        self._up(line)

    def served(self, line: LogLine) -> None:
        """A line the engine prints only once it is up (its output, its serving metrics)."""
        if self.startup_at >= 0:
            self.done = True
        self._up(line)

    def _up(self, line: LogLine) -> None:
        self.came_up = True
        if self.first_up_at < 0:
            self.first_up_at = line.offset

    def up_before(self, offset: int | None) -> bool:
        """A line before `offset` (anywhere, when None) said the server came up or served."""
        return self.first_up_at >= 0 and (offset is None or self.first_up_at < offset)

    def start_line(self, line: LogLine, stage: str, *, done: bool = False) -> None:
        """A settings dump or a stage line (ingest/stages.py): the start-up's own lines, wherever they are.  A stage
        past which the engine is up (`done`) closes the start-up as a readiness line does."""
        self._at(line, stage, done=done)
        self.engine_seen = True
        degrees = parallel_degrees(line.text)
        if degrees:
            self.parallel = bool(self.parallel) or max(degrees) > 1
        if done:
            self._up(line)

    def launched(self, line: LogLine) -> None:
        """A launch command: the start-up begins, when nothing has said the server came up."""
        self.engine_seen = True
        if not self.came_up and (self.startup_at < 0 or self.stage == LAUNCHED or self.after > 0):
            self._at(line, LAUNCHED)

    def other_line(self, line: LogLine) -> None:
        """Any other line of content: a start-up line of startup_lines.py before the server came up, else content."""
        stage = None if self.came_up else startup_stage(line.text, line.meta)
        self.engine_seen = self.engine_seen or line.meta.header is not None  # a record of the engine's own logger
        if stage is not None and not self.engine_seen and not engine_own(stage, line.meta):
            stage = None  # a download bar, a wait or a glog line with nothing of the engine before it
        if stage is not None:
            self.engine_seen = True
            if stage in WAITING_STAGES:
                self.waits = self.waits + 1 if self.stage == stage and self.after == 0 else 1
            self._at(line, stage, keep_waits=stage in WAITING_STAGES)
            return
        if self.startup_at < 0:
            return
        self.after += 1
        if line.headed or not _SENTENCE.match(line.text) or not _STALL_WORDS.search(line.text):
            self.after_records += 1

    def quiet_line(self, line: LogLine, progress_stage: str = "") -> None:
        """A start-up's own progress (vLLM's polls for its engine cores; a loading or capture bar, whose stage is
        `progress_stage`): its stage, nothing after.  A bar between the polls is the start-up moving on: the waits
        count again from the next poll."""
        if self.came_up:
            return
        stage = startup_stage(line.text, line.meta) if not progress_stage else None
        if stage is not None and self.startup_at < 0:
            self._at(line, stage, keep_waits=True)  # a paste of the polls alone
            self.engine_seen = True
        if stage is not None and self.after == 0:
            if stage in WAITING_STAGES:
                self.waits = self.waits + 1 if self.stage == stage else 1
            self.stage = stage
        elif progress_stage and self.startup_at >= 0 and self.after == 0:
            self.stage, self.waits = progress_stage, 0

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
        """The log ends on waits for the engine, nothing after them but the user's own sentence saying it stays there,
        and they are STALLED_WAITS in a row or that sentence follows them."""
        return self.ended() and self.waits > 0 and self.after_records == 0 and (
            self.waits >= STALLED_WAITS or self.after > 0)

    def polls_seconds(self) -> int:
        """For a log that ends on fewer of the API server's polls than a stall, the time they stand for (0 else)."""
        if not self.ended() or self.stalled() or self.stage != WAITING_CORES or self.after_records:
            return 0
        return self.waits * POLL_SECONDS

    def absorb(self, other: StartupTrail) -> None:
        self.ready_at = max(self.ready_at, other.ready_at)
        self.came_up = self.came_up or other.came_up
        ups = [at for at in (self.first_up_at, other.first_up_at) if at >= 0]
        self.first_up_at = min(ups, default=-1)
        self.engine_seen = self.engine_seen or other.engine_seen
        self.platform = self.platform or other.platform
        self.parallel = self.parallel if other.parallel is None else bool(self.parallel) or other.parallel
        if other.startup_at > self.startup_at:
            self.startup_at, self.done, self.after = other.startup_at, other.done, other.after
            self.after_records, self.stage, self.waits = other.after_records, other.stage, other.waits


# General guidance for a start-up that stalled on a wait, by the stage it waits in: engine-neutral, no flag (the
# notice does not know the release), labelled as guidance where it is shown (render/view.py startup_notice).
_READY_TIPS = (
    "the engine printed nothing after this wait: its own log (the scheduler's or engine core's lines) says where it "
    "stopped, and may be written somewhere other than this output",
    "start the same engine with the same model by itself, without what waits for it, to see whether it comes up",
)
_WRAPPER_TIP = ("a wrapper that embeds the engine is built for particular engine releases: check the installed "
                "engine's release against the one the wrapper's release names")
_CORES_TIPS = (
    "the API server is waiting for its engine core processes: their own lines (weights loading, memory profiling, "
    "compilation, graph capture) say where they are; a paste of the lines before the waits shows them",
    "a first start may download or compile for minutes: a start that moves on slowly is not stuck",
)
_NCCL_TIP = ("with tensor or pipeline parallelism a stall is often the workers' first collective never completing: "
             "NCCL_DEBUG=INFO shows where it stops")


def stall_guidance(stage: str, *, wrapper: bool, platform: str, parallel: bool | None) -> tuple[str, ...]:
    """General guidance for a start-up stalled waiting at `stage`: the wrapper's tip only when a wrapper runs the
    engine, NCCL's only where the log shows no platform other than NVIDIA's or AMD's (NCCL_PLATFORMS: a TPU, CPU, XPU
    or HPU run has other collectives) and parallelism is shown or unknown (`parallel` None)."""
    if stage == WAITING_READY:
        return _READY_TIPS + ((_WRAPPER_TIP,) if wrapper else ())
    if stage == WAITING_CORES:
        nccl = (not platform or platform in NCCL_PLATFORMS) and parallel is not False
        return _CORES_TIPS[:1] + ((_NCCL_TIP,) if nccl else ()) + _CORES_TIPS[1:]
    return ()
