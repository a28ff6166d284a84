"""Traceback parser: find failures in a stream of normalized log lines.

The scanner is fed one `LogLine` at a time (so it works the same on a file read
backwards in windows, on a whole file and on a live `watch` stream) and cuts the log
into failures: Python tracebacks with their chains and groups, faulthandler dumps,
bare exception lines, argparse usage errors and kill notices.  The text of each
failure is then parsed into exception blocks by chain.py; the line regexes are in grammar.py.

Interleaving: lines are demultiplexed by their stream (process prefix or SGLang rank
record).  Within one stream, several tracebacks may still interleave line by line
(ranks writing to one unprefixed stderr); each open collector takes the lines that fit
its grammar, and among equals the one that is behind, so identical tracebacks printed
at once by several ranks come out whole.  When they were mixed at any line rather than by
CPython's writes (two processes on one terminal), the cohort is rebuilt after the fact
(`_reinterleave`).

Pastes: a traceback in an indented block is read without that indentation; an exception quoted
in a sentence (backticks, bold, quotes) is a failure unless the log shows it itself; a bare
`Exception: …` line is the failure only of a log without another; an exception line pasted
above its frames is theirs (`_attach_moved_exceptions`).
"""

from __future__ import annotations

import copy
from collections import Counter, deque
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from enum import Enum, auto

from logsleuth.models import ExceptionBlock, Failure, FailureKind, LogLine
from logsleuth.tracebacks.chain import parse_chain, parse_faulthandler
from logsleuth.tracebacks.grammar import (
    CASCADE_CONTEXT_LINE,
    CONTEXT_HINT,
    CONTEXT_WORDS,
    CPP_BACKTRACE,
    CPP_TERMINATE,
    ELIDED_LINE,
    ELIDED_TEMPLATE,
    ELISION_LENGTH,
    GENERIC_EXCEPTION_LINE,
    GROUP_AFTER_TEXT,
    GROUP_CLOSE,
    KILL_LINE,
    LOG_RECORD_START,
    NOT_BARE_TYPES,
    PY_WARNING,
    STRICT_EXCEPTION_LINE,
    THREAD_INTRO,
    TRACEBACK_HEADER,
    USAGE_ERROR,
    LineKind,
    classify,
    embedded_failure,
    fatal_line,
    is_elision,
)

# A runaway traceback (deep recursion printed without CPython's repeat marker, 100k frames) keeps its first
# ELIDED_HEAD and its last lines, up to MAX_FAILURE_LINES in all; the middle becomes one marker line.  The
# innermost frames and the exception line are what matter, so they are never the part dropped.
MAX_FAILURE_LINES = 20_000
ELIDED_HEAD = 1_000
MAX_MESSAGE_LINES_KEPT = 60  # of an exception message; reports show fewer (render.view)
CONTEXT_LINES = 6
STALE_GAP = 3  # a collector that got none of the last N lines of its stream is finished
# Identical tracebacks of up to this many ranks interleaving in one stream are matched line by
# line against each other; beyond it (or garbage that opens thousands) plain grammar decides,
# so the cost per line stays bounded.
MAX_INTERLEAVED = 16
MAX_OPEN = 64  # open collectors per stream; the least recently fed one is closed beyond this


class Phase(Enum):
    FRAMES = auto()  # inside a traceback, before its exception line
    MESSAGE = auto()  # after the exception line (message may continue)
    BLANK = auto()  # a blank line after the message: a separator may follow
    SEPARATOR = auto()  # after a chain separator: a new traceback follows
    GROUP = auto()  # inside an exception group's margins
    FATAL = auto()  # inside a faulthandler dump
    DONE = auto()


@dataclass
class _Collector:
    kind: FailureKind
    first: LogLine
    phase: Phase
    header: str | None = None
    truncated: bool = False
    context: tuple[str, ...] = ()
    texts: list[str] = field(default_factory=list)
    last: LineKind = LineKind.OTHER
    last_seq: int = 0
    last_end: int = 0
    message_lines: int = 0
    # hashes[i] identifies texts[: i + 1], so "is this collector's text a prefix of that
    # one's" is one comparison: it tells a rank that is behind an identical traceback.
    hashes: list[int] = field(default_factory=list)
    seqs: list[int] | None = field(default_factory=list)  # the stream position of each line (None once elided)
    # Collectors that started with the same line in one stream while another was open: ranks
    # printing the same traceback at once.  They are built together (see `_redeal`).
    cohort: int = 0
    # The failure started on an indented line (a Markdown code block, a paste indented as a whole):
    # its lines are read without this indentation.
    indent: str = ""
    fallback: bool = False  # reported only when the log has no other failure (a bare `Exception: …`)
    mention: bool = False  # quoted in a sentence: dropped when the log shows the same failure itself
    blanks: int = 0  # blank lines at the end of its text

    def expects(self, leader: _Collector) -> str | None:
        """The line this collector needs next if it is printing the same text as `leader`."""
        size = len(self.texts)
        if len(leader.texts) <= size or (size and leader.hashes[size - 1] != self.hashes[-1]):
            return None
        return leader.texts[size]

    def view(self, kind: LineKind, text: str) -> tuple[LineKind, str]:
        """A line as this collector reads it: without the indentation its failure started with."""
        indent = self.indent
        if indent and text.startswith(indent) and len(text) > len(indent):
            text = text[len(indent) :]
            return classify(text), text
        return kind, text

    def accepts(self, kind: LineKind, line: LogLine) -> int:
        """0 = no; 1 = as structure; 2 = only as a message continuation (weaker)."""
        text = line.text
        if self.indent:
            kind, text = self.view(kind, text)
        phase = self.phase
        if phase is Phase.FRAMES:
            if kind is LineKind.OTHER:
                if self.last is LineKind.FRAME:
                    return 2  # a source line pasted without its indentation
                return 1 if len(text) < ELISION_LENGTH and is_elision(text) else 0  # `...` in place of frames
            if kind is LineKind.EXCEPTION and self.last is LineKind.HEADER:
                return 2  # CPython prints no header for a traceback without frames: likely another failure
            if kind in (LineKind.FRAME, LineKind.REPEATED, LineKind.EXCEPTION):
                return 1
            if kind is LineKind.SOURCE and self.last is LineKind.FRAME:
                return 1
            if kind is LineKind.SOURCE and self.last is LineKind.SOURCE:
                return 2  # 3.11 prints one source line per frame; later versions may print more
            if kind is LineKind.CARET and self.last in (LineKind.SOURCE, LineKind.CARET):
                return 1
            if kind is LineKind.GROUP and self.last is LineKind.HEADER:
                return 2  # CPython never prints this, but a logger might; another rank's group is likelier
            return 0
        if phase is Phase.GROUP:
            # A blank line after the group may lead to a chain separator (a group as a cause).
            # A nested group's header carries a `|` margin; an unindented `+ Exception Group` is a new group.
            if kind in (LineKind.MARGIN, LineKind.BLANK):
                return 1
            # CPython 3.11 prints the second line of a member's multi-line message without margin.
            if kind in (LineKind.OTHER, LineKind.SOURCE, LineKind.EXCEPTION) and self.last is LineKind.MARGIN:
                return 0 if GROUP_CLOSE.match(self.texts[-1]) or line.starts_record else 2
            return 0
        if phase is Phase.FATAL:
            if kind in (LineKind.FAULT_FRAME, LineKind.THREAD, LineKind.FRAME):
                return 1
            if kind is LineKind.BLANK:
                return 1 if self.last is not LineKind.BLANK else 0
            stripped = text.strip()
            if stripped.startswith(("Extension modules:", "<no Python frame>", "Stack (most recent", "Binary file")):
                return 1
            return 0
        if phase is Phase.MESSAGE:
            if kind is LineKind.BLANK:
                return 1
            return 2 if self._message_line(kind, text, line) else 0
        # CPython prints exactly one blank line on each side of a chain separator; extra or
        # missing blanks (hand-edited logs) are tolerated but only weakly, so that among
        # interleaved ranks the one whose next line this really is takes it.
        if phase is Phase.BLANK:
            if kind is LineKind.SEPARATOR:
                return 1
            if kind is LineKind.BLANK:
                return 2
            # A message may hold a blank line: an engine wraps an error whose text ends with a newline
            # (SGLang: `Capture cuda graph failed: {torch's CUDA error}\nPossible solutions:\n1. …`).
            # What follows a message after a blank line is mostly someone else's (a status line, the
            # reporter's prose), so only a heading that introduces more (`…:`) after a multi-line
            # message continues it.
            heading = self.blanks == 1 and self.message_lines >= 1 and text.rstrip().endswith(":")
            return 2 if heading and self.kind in ("traceback", "bare") and self._message_line(kind, text, line) else 0
        if phase is Phase.SEPARATOR:
            if kind is LineKind.BLANK:
                return 1 if self.last is LineKind.SEPARATOR else 2
            if kind in (LineKind.HEADER, LineKind.GROUP):
                return 1 if self.last is LineKind.BLANK else 2
            return 0
        return 0

    def _message_line(self, kind: LineKind, text: str, line: LogLine) -> bool:
        """Whether a line may continue the exception message (not a new record, failure or warning, nor
        a reader's `...`)."""
        if line.starts_record or self.message_lines >= MAX_MESSAGE_LINES_KEPT:
            return False
        if len(text) < ELISION_LENGTH and is_elision(text):
            return False
        if text == self.texts[0]:
            return False  # the same line again: another rank printing the same failure
        if kind not in (LineKind.OTHER, LineKind.SOURCE, LineKind.CARET, LineKind.EXCEPTION):
            return False
        if STRICT_EXCEPTION_LINE.match(text) or USAGE_ERROR.match(text) or ("Warning: " in text and PY_WARNING.match(text)):
            return False
        if KILL_LINE.search(text) or text.lstrip().startswith("warnings.warn("):
            return False
        return not LOG_RECORD_START.match(text)  # the next log record (uvicorn, logging, a dated line)

    def add(self, kind: LineKind, line: LogLine, seq: int, text: str | None = None) -> None:
        """`text` replaces the line's text (a group header without the log text before it)."""
        if text is None:
            text = line.text
            if self.indent:
                kind, text = self.view(kind, text)
        self.hashes.append(hash((self.hashes[-1] if self.hashes else 0, text)))
        self.texts.append(text)
        if self.seqs is not None:
            self.seqs.append(seq)
        if len(self.texts) > MAX_FAILURE_LINES:
            self._elide_middle()
        self.last_seq = seq
        self.last_end = line.offset + len(line.text) + 1
        phase = self.phase
        if phase is Phase.FRAMES:
            if kind is LineKind.EXCEPTION:
                self.phase = Phase.MESSAGE
                self.message_lines = 0
            elif kind is LineKind.OTHER and self.last is LineKind.FRAME:
                kind = LineKind.SOURCE  # a source line pasted without its indentation
            elif kind is LineKind.GROUP:
                self.phase = Phase.GROUP
        elif phase is Phase.GROUP:
            if kind is LineKind.BLANK:
                self.phase = Phase.BLANK
        elif phase is Phase.MESSAGE:
            if kind is LineKind.BLANK:
                self.phase = Phase.BLANK
            elif len(self.texts) > 1:  # lines after the exception line (a bare failure starts with it)
                self.message_lines += 1
        elif phase is Phase.BLANK:
            if kind is LineKind.SEPARATOR:
                self.phase = Phase.SEPARATOR
            elif kind is not LineKind.BLANK:
                self.phase = Phase.MESSAGE  # a paragraph of the message after a blank line
                self.message_lines += 1
        elif phase is Phase.SEPARATOR:
            if kind in (LineKind.HEADER, LineKind.GROUP):
                # A cause printed without a traceback (`raise X from ValueError()`) started as
                # a bare line; the chain makes it a traceback.
                self.kind = "traceback"
                self.phase = Phase.FRAMES if kind is LineKind.HEADER else Phase.GROUP
        self.blanks = self.blanks + 1 if not text or text.isspace() else 0  # (kind is BLANK, without the enum lookup)
        self.last = kind

    def _elide_middle(self) -> None:
        """Replace lines after the first ELIDED_HEAD by one marker, keeping the last half of the budget."""
        head = self.texts[:ELIDED_HEAD]
        keep_tail = MAX_FAILURE_LINES // 2
        middle = self.texts[ELIDED_HEAD:-keep_tail]
        elided = len(middle)
        if middle and (m := ELIDED_LINE.match(middle[0])):
            elided += int(m["n"]) - 1  # the marker of an earlier elision is itself one of the middle lines
        self.texts = [*head, ELIDED_TEMPLATE.format(n=elided), *self.texts[-keep_tail:]]
        self.seqs = None
        self.hashes = []
        for text in self.texts:
            self.hashes.append(hash((self.hashes[-1] if self.hashes else 0, text)))
        self.truncated = True

    @property
    def complete(self) -> bool:
        return self.phase in (Phase.MESSAGE, Phase.BLANK, Phase.FATAL, Phase.DONE, Phase.GROUP)

    def build(self) -> Failure:
        texts = self.texts
        truncated = self.truncated or not self.complete
        if self.kind == "fatal":
            exceptions = parse_faulthandler(texts)
        elif self.kind == "usage":
            m = USAGE_ERROR.match(texts[0])
            exceptions = (ExceptionBlock(type="UsageError", message=m["msg"].strip() if m else texts[0]),)
        elif self.kind == "abort" and (cpp := CPP_TERMINATE.match(texts[0])):
            exceptions = (ExceptionBlock(type=cpp["type"], message=_what(texts[1:])),)
        elif self.kind == "line" and (found := fatal_line(texts[0])):
            exceptions = (ExceptionBlock(type=found[0], message=found[1]),)
        elif self.kind == "killed":
            exceptions = (ExceptionBlock(type="Killed", message=texts[0].strip()),)
        else:
            exceptions = parse_chain(texts)
            if not exceptions:
                exceptions = (ExceptionBlock(type="", message="", truncated=True),)
        if truncated and exceptions and not exceptions[-1].truncated and not self.complete:
            exceptions = (*exceptions[:-1], _mark_truncated(exceptions[-1]))
        return Failure(
            kind=self.kind,
            exceptions=exceptions,
            line=self.first.number,
            offset=self.first.offset,
            end_offset=max(self.last_end, self.first.offset),
            meta=self.first.meta,
            header=self.header,
            truncated=truncated or any(block.truncated for block in exceptions),
            context=self.context,
        )


KERNEL_PRINT_REACH = 16 << 10  # bytes between a kernel's error print and the exception it causes


def _fold_kernel_prints(failures: list[Failure]) -> list[Failure]:
    """A kernel's `CUDA Error: … (700)` print just before the Python exception it caused (flashinfer prints,
    then raises) is that exception's context, not a failure of its own; alone, it is the failure."""
    kept: list[Failure] = []
    for index, failure in enumerate(failures):
        following = failures[index + 1] if index + 1 < len(failures) else None
        if (
            failure.kind == "line"
            and failure.final.type.lower() == "cuda error"
            and following is not None
            and following.kind in ("traceback", "bare")
            and 0 <= following.offset - failure.end_offset <= KERNEL_PRINT_REACH
        ):
            printed = f"{failure.final.type}: {failure.final.message}"
            failures[index + 1] = replace(following, context=(*following.context, printed))
            continue
        kept.append(failure)
    return kept


# Bytes between an exception line and the frames it was moved above (room for one `...` line).
MOVED_EXCEPTION_REACH = 8


def _attach_moved_exceptions(failures: list[Failure]) -> list[Failure]:
    """A paste that shows the exception line first and then its frames (maybe after a `...`): a bare line
    right before frames that end without an exception line is theirs."""
    merged: list[Failure] = []
    for failure in failures:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and previous.kind == "bare"
            and failure.kind == "traceback"
            and len(failure.exceptions) == 1
            and not failure.final.type
            and failure.final.frames
            and 0 <= failure.offset - previous.end_offset <= MOVED_EXCEPTION_REACH
        ):
            block = replace(failure.final, type=previous.final.type, message=previous.final.message, truncated=True)
            merged[-1] = replace(failure, exceptions=(block,), line=previous.line, offset=previous.offset,
                                 meta=previous.meta, context=previous.context, truncated=True)
            continue
        merged.append(failure)
    return merged


def _what(lines: list[str]) -> str:
    """The message of a C++ exception: the text after `what():`, up to its backtrace."""
    message: list[str] = []
    for text in lines:
        if CPP_BACKTRACE.match(text):
            break
        message.append(text.strip().removeprefix("what():").strip())
    while message and not message[-1]:
        message.pop()
    return "\n".join(message)


def _same_start(a: _Collector, b: _Collector) -> bool:
    """One collector's text is a prefix of the other's (or both are equal)."""
    size = min(len(a.texts), len(b.texts))
    return size > 0 and a.hashes[size - 1] == b.hashes[size - 1]


def _in_step(collector: _Collector, collectors: list[_Collector]) -> bool:
    """Another open collector prints the same text and needs this one to stay open: one of
    them is behind the other, or both are level and this one is not finished yet.  (A
    finished collector level with another is done: the same traceback printed again.)"""
    size = len(collector.texts)
    for other in collectors:
        if other is collector or not _same_start(collector, other):
            continue
        if len(other.texts) != size or not collector.complete:
            return True
    return False


# Line kinds CPython writes in one string with the kind before them.
_SAME_WRITE = {
    LineKind.SOURCE: (LineKind.FRAME,),
    LineKind.CARET: (LineKind.SOURCE, LineKind.CARET),
    LineKind.SEPARATOR: (LineKind.BLANK,),
    LineKind.BLANK: (LineKind.SEPARATOR,),
}


def _same_write(collector: _Collector, kind: LineKind) -> bool:
    return collector.last in _SAME_WRITE.get(kind, ())


def _expected_line(collector: _Collector, collectors: list[_Collector]) -> str | None:
    """The next line of a longer open collector this one is a prefix of, if any."""
    for other in collectors:
        if other is not collector:
            expected = collector.expects(other)
            if expected is not None:
                return expected
    return None


def _following(collector: _Collector, collectors: list[_Collector]) -> bool:
    return any(collector.expects(other) is not None for other in collectors if other is not collector)


def _choose(collectors: list[_Collector], kind: LineKind, line: LogLine, seq: int) -> _Collector | None:
    """Which open collector of a stream takes the line (None: the line starts a new one).

    With several ranks printing the same traceback into one stream (up to MAX_INTERLEAVED):
    1. the rest of one CPython write (a frame's source and caret lines, a chain separator's
       blank line) goes to the collector that took the write's first line;
    2. a collector that is behind another one printing the same text takes the line if it
       is exactly the line it needs next;
    Then, and always with a single collector:
    3. the grammar decides; structural acceptance beats a message continuation, and among
       equals the collector with the fewest lines takes it.  Collectors behind a longer
       identical one come last: their next line is already known.
    A message continuation never takes a line that starts a failure of its own.
    """
    interleaved = 1 < len(collectors) <= MAX_INTERLEAVED
    if interleaved:
        # CPython writes a frame (File line, source, carets) as one string, and a chain
        # separator with its blank lines as one: the rest of such a write belongs to the
        # collector that took its first line, even when another rank behind expects the same
        # text (a lambda's source line repeats its caller's; recursion repeats whole frames),
        # and a collector in the middle of a write takes nothing from another writer.
        for collector in collectors:
            if collector.last_seq == seq - 1 and _same_write(collector, kind):
                expected = _expected_line(collector, collectors)
                if expected == line.text or (expected is None and collector.accepts(kind, line) == 1):
                    return collector
        waiting = [c for c in collectors if _expected_line(c, collectors) == line.text]
        in_step = [c for c in waiting if not (_same_write(c, kind) and c.last_seq != seq - 1)]
        if in_step:
            return min(in_step, key=lambda c: len(c.texts))
        if waiting and not any(c.accepts(kind, line) == 1 for c in collectors if c not in waiting):
            # Interleaved inside CPython's writes (two processes on one terminal, or a copy that mixed
            # them): the exact next line of a rank that is behind, which no one else takes as structure.
            return min(waiting, key=lambda c: len(c.texts))
        if kind is LineKind.EXCEPTION and any(c.texts[0] == line.text for c in collectors):
            return None  # another rank starting the same bare-line-first failure
    best: _Collector | None = None
    best_score: tuple[int, int, int, int] | None = None
    for index, collector in enumerate(collectors):
        strength = collector.accepts(kind, line)
        if not strength:
            continue
        behind = interleaved and _following(collector, collectors)
        score = (int(behind), strength, len(collector.texts), index)
        if best_score is None or score < best_score:
            best, best_score = collector, score
    if best is not None and best_score is not None and best_score[1] == 2 and _starts_failure(kind, line):
        return None
    return best


def _starts_failure(kind: LineKind, line: LogLine) -> bool:
    if kind in (LineKind.HEADER, LineKind.GROUP, LineKind.FATAL, LineKind.SEPARATOR, LineKind.FRAME):
        return True
    text = line.text
    if kind is LineKind.EXCEPTION and STRICT_EXCEPTION_LINE.match(text):
        return True
    return bool(USAGE_ERROR.match(text))


def _redeal(members: list[_Collector]) -> list[_Collector]:
    """Repair a cohort of identical tracebacks interleaved line by line.

    The same text at two places of a traceback (a chain's second `Traceback` header, a
    recursion's repeated frames) can send a line to the wrong rank's collector, or make a
    rank's first line look like another rank's next one.  The lines as a whole are still
    right: if they are exactly k copies of one member's complete text, k ranks printed that
    text, and the cohort becomes k collectors holding it.
    """
    if len(members) < 2:
        return members
    total = Counter(text for member in members for text in member.texts)
    lines = sum(total.values())
    for candidate in sorted(members, key=lambda m: (not m.complete, -len(m.texts))):
        size = len(candidate.texts)
        if not candidate.complete or lines % size:
            continue
        copies = lines // size
        wanted = Counter(candidate.texts)
        if len(total) != len(wanted) or any(total[text] != count * copies for text, count in wanted.items()):
            continue
        ordered = sorted(members, key=lambda m: m.first.offset)[:copies]
        while len(ordered) < copies:  # a rank's start was taken for another rank's chain header
            ordered.append(copy.copy(candidate))
        for member in ordered:
            member.texts = list(candidate.texts)
            member.phase, member.kind, member.truncated = candidate.phase, candidate.kind, candidate.truncated
        return ordered
    return _reinterleave(members) or members


def _reinterleave(members: list[_Collector]) -> list[_Collector] | None:
    """Rebuild a cohort whose ranks' lines interleaved at any line, not by CPython's writes (two processes
    on one terminal, or a copy that mixed them), when no member holds the whole text.

    The members' lines in log order are k copies of one text T, each in order.  Walking them, a line
    is the next line of a rank that is behind (the one furthest behind first), or else extends T as
    the next line of a rank that is level with it.  This succeeds only if every rank ends with all of
    T and T is a traceback that reached its exception line; otherwise the cohort is left as it was."""
    if any(member.seqs is None for member in members):
        return None
    merged = sorted((seq, text) for member in members for seq, text in zip(member.seqs or (), member.texts, strict=True))
    whole: list[str] = []
    positions = [0] * len(members)
    for _, text in merged:
        behind = [i for i, at in enumerate(positions) if at < len(whole) and whole[at] == text]
        if behind:
            rank = min(behind, key=lambda i: positions[i])
        else:
            level = [i for i, at in enumerate(positions) if at == len(whole)]
            if not level:
                return None
            rank = level[0]
            whole.append(text)
        positions[rank] += 1
    if any(at != len(whole) for at in positions):
        return None
    chain = parse_chain(whole)
    if not chain or not chain[-1].type or chain[-1].truncated:
        return None
    done = next((member for member in members if member.complete), None)
    if done is None:
        return None
    for member in members:
        member.texts = list(whole)
        member.phase, member.kind, member.truncated = done.phase, done.kind, False
    return members


def _indentation(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _shown(mention: Failure, failures: list[Failure]) -> bool:
    """Whether one of `failures` is the failure a sentence quoted (the same exception; the quote may be
    cut short, or the log's message cut by a wrapped span)."""
    quoted = " ".join(mention.final.message.split())
    for failure in failures:
        if failure.final.type == mention.final.type:
            message = " ".join(failure.final.message.split())
            if message.startswith(quoted) or quoted.startswith(message):
                return True
    return False


def _mark_truncated(block: ExceptionBlock) -> ExceptionBlock:
    return replace(block, truncated=True)


class FailureScanner:
    """Feed lines in order; collect `Failure`s.  `finish()` flushes what is still open."""

    def __init__(self) -> None:
        self._open: dict[str, list[_Collector]] = {}
        self._seq: dict[str, int] = {}
        self._previous_text: dict[str, str] = {}
        self._recent_context: deque[str] = deque(maxlen=CONTEXT_LINES)
        self._recent_finals: dict[str, int] = {}  # final exception line -> line number, to drop re-logged copies
        self.failures: list[Failure] = []
        self.cascade_lines: list[LogLine] = []  # `kill_process_tree called`, ...
        self._fallbacks: list[Failure] = []  # failures reported only when there is no other
        self._mentions: list[Failure] = []  # failures quoted in prose, reported unless the log shows them
        self._cohorts = 0
        self._closed_cohorts: dict[int, list[_Collector]] = {}

    # -- public ------------------------------------------------------------------
    def feed(self, line: LogLine) -> None:
        stream = line.stream
        seq = self._seq.get(stream, 0) + 1
        self._seq[stream] = seq
        kind = classify(line.text)
        collectors = self._open.get(stream)

        if collectors and line.starts_record:
            self._close_all(stream)  # a new log record ends whatever this stream was printing
            collectors = None

        if collectors:
            best = _choose(collectors, kind, line, seq)
            if best is not None:
                best.add(kind, line, seq)
                self._close_stale(stream, seq)
                self._previous_text[stream] = line.text
                return
            # Nobody takes the line: finished collectors in this stream are done, unless the
            # line starts another traceback (another rank may be starting the same one while
            # this one is between the blocks of its chain).  Unfinished ones that have been
            # idle for a while were cut off.
            if kind not in (LineKind.HEADER, LineKind.GROUP, LineKind.FRAME):
                for collector in list(collectors):
                    if collector.complete:
                        self._close(stream, collector)
            self._close_stale(stream, seq)

        self._maybe_start(kind, line, seq)
        self._previous_text[stream] = line.text

    def feed_all(self, lines: Iterable[LogLine]) -> FailureScanner:
        for line in lines:
            self.feed(line)
        return self

    def finish(self) -> list[Failure]:
        for stream in list(self._open):
            self._close_all(stream)
        self.failures.extend(mention for mention in self._mentions if not _shown(mention, self.failures))
        # A fallback (a bare `Exception: …`) may be the exception of frames pasted after it; else it is
        # reported only when nothing else was found.
        found = _attach_moved_exceptions(sorted(self.failures + self._fallbacks, key=lambda failure: failure.offset))
        fallbacks = {id(failure) for failure in self._fallbacks}
        if any(id(failure) not in fallbacks for failure in found):
            found = [failure for failure in found if id(failure) not in fallbacks]
        self.failures = _fold_kernel_prints(found)
        return self.failures

    def has_open(self) -> bool:
        """True while a failure is still being collected (watch mode waits for it)."""
        return bool(self._open)

    def has_incomplete(self) -> bool:
        """True while an open traceback has not reached its exception line: more of it is still to come
        (watch mode waits longer before it reports a traceback cut short)."""
        return any(not collector.complete for collectors in self._open.values() for collector in collectors)

    def drain(self) -> Iterator[Failure]:
        """Failures completed so far (for watch mode); they are removed from the scanner."""
        done, self.failures = self.failures, []
        yield from sorted(done, key=lambda failure: failure.offset)

    # -- internals ---------------------------------------------------------------
    def _maybe_start(self, kind: LineKind, line: LogLine, seq: int) -> None:
        text = line.text
        if self._recent_finals and kind is LineKind.EXCEPTION and self._relogged(text, line):
            return  # the same exception re-logged right after its traceback
        started = self._start(kind, text, line)
        if started is None and text[:1] in " \t" and kind is LineKind.SOURCE:
            # An indented line nobody took: a Markdown code block, or a paste indented as a whole.
            body = text.lstrip()
            started = self._start(classify(body), body, line)
            if started is not None:
                started[0].indent = _indentation(text)
        if (
            started is None
            and ("rror" in text or "xception" in text)  # what a quoted failure says: most lines do not
            and not line.starts_record
            and kind in (LineKind.OTHER, LineKind.EXCEPTION)
        ):
            quoted = embedded_failure(text)
            if quoted is not None:
                kind_of: FailureKind = "usage" if USAGE_ERROR.match(quoted) else "bare"
                started = (_Collector(kind_of, line, Phase.DONE, context=self._context(), mention=True), quoted)
        if started is None:
            if kind in (LineKind.OTHER, LineKind.SOURCE, LineKind.EXCEPTION):
                self._note_plain_line(kind, line, seq)
            return
        new, first_text = started
        new.add(kind if first_text is text else classify(first_text), line, seq, text=first_text)
        self._register(line.stream, new)

    def _start(self, kind: LineKind, text: str, line: LogLine) -> tuple[_Collector, str] | None:
        """The collector a line starts (and the text it keeps of the line), or None."""
        new: _Collector | None = None
        if kind in (LineKind.OTHER, LineKind.EXCEPTION) and USAGE_ERROR.match(text):
            new = _Collector("usage", line, Phase.DONE, context=self._context())
        elif text.startswith("terminate called") and CPP_TERMINATE.match(text):
            new = _Collector("abort", line, Phase.MESSAGE, context=self._context())
        elif kind in (LineKind.OTHER, LineKind.EXCEPTION) and fatal_line(text) is not None:
            new = _Collector("line", line, Phase.DONE, context=self._context())
        elif kind is LineKind.HEADER:
            head = text.strip()[: -len(TRACEBACK_HEADER)].strip()
            previous = self._previous_text.get(line.stream, "")
            if not head and THREAD_INTRO.match(previous.strip()):
                head = previous.strip()
            new = _Collector("traceback", line, Phase.FRAMES, header=head or None, context=self._context())
            if not head and text[:1] in " \t":
                new.indent = _indentation(text)  # a traceback in an indented block
        elif kind is LineKind.GROUP:
            m = GROUP_AFTER_TEXT.match(text)
            group_head: str | None = m["head"] if m else None
            new = _Collector("traceback", line, Phase.GROUP, header=group_head, context=self._context())
            if m and group_head:
                return new, m["group"]  # the margins line up with the group alone
            new.indent = _indentation(text)[2:]  # CPython indents a top-level group's header by two
            return new, text[len(new.indent) :]
        elif kind is LineKind.FRAME:
            new = _Collector("traceback", line, Phase.FRAMES, truncated=True, context=self._context())
        elif kind is LineKind.SEPARATOR:
            new = _Collector("traceback", line, Phase.SEPARATOR, truncated=True, context=self._context())
            new.phase = Phase.BLANK  # add() moves BLANK -> SEPARATOR on the separator line
        elif kind is LineKind.FATAL:
            new = _Collector("fatal", line, Phase.FATAL, context=self._context())
        elif kind is LineKind.EXCEPTION:
            m = STRICT_EXCEPTION_LINE.match(text)
            if m and m["type"].rsplit(".", 1)[-1] not in NOT_BARE_TYPES:
                new = _Collector("bare", line, Phase.MESSAGE, context=self._context())
            elif m is None and text.startswith(("Exception: ", "Error: ")) and GENERIC_EXCEPTION_LINE.match(text):
                # `Exception: …` alone says little (a program's own print may look like it): it is the
                # failure only of a log that has no other.
                new = _Collector("bare", line, Phase.MESSAGE, context=self._context(), fallback=True)
        return None if new is None else (new, text)

    def _relogged(self, text: str, line: LogLine) -> bool:
        """The same exception line re-logged right after its traceback."""
        return self._recent_finals.get(text.strip(), -(10**9)) >= line.number - 400

    def _context(self) -> tuple[str, ...]:
        """The recent warning lines, for a failure starting now (built only then: this is per line)."""
        return tuple(self._recent_context)

    def _register(self, stream: str, new: _Collector) -> None:
        collectors = self._open.setdefault(stream, [])
        if len(collectors) >= MAX_OPEN:
            self._close(stream, min(collectors, key=lambda c: c.last_seq))
            collectors = self._open.setdefault(stream, [])
        same = next((c for c in collectors if c.texts[:1] == new.texts[:1]), None)
        if same is not None:
            new.cohort = same.cohort
        else:
            self._cohorts += 1
            new.cohort = self._cohorts
        collectors.append(new)

    def _note_plain_line(self, kind: LineKind, line: LogLine, seq: int) -> None:
        """Kill notices, cascade notes and warning context.  Most lines of a log are none of
        these, so cheap substring checks guard the regexes (this runs on every line)."""
        text = line.text
        if "kill_process_tree" in text or "Dump" in text:
            if CASCADE_CONTEXT_LINE.search(text):
                self.cascade_lines.append(line)
                return
        if ("Killed" in text or "sigquit" in text or "exit" in text) and KILL_LINE.search(text):
            collector = _Collector("killed", line, Phase.DONE, context=self._context())
            collector.add(kind, line, seq)
            self.failures.append(collector.build())
            return
        lowered = text.lower()
        if any(word in lowered for word in CONTEXT_WORDS) and CONTEXT_HINT.search(text) or line.meta.level in ("WARNING", "ERROR", "CRITICAL"):
            self._recent_context.append(text.strip())

    def _close(self, stream: str, collector: _Collector) -> None:
        collectors = self._open.get(stream)
        if not collectors or collector not in collectors:
            return
        collectors.remove(collector)
        if not collectors:
            del self._open[stream]
        done = self._closed_cohorts.setdefault(collector.cohort, [])
        done.append(collector)
        if any(c.cohort == collector.cohort for c in collectors) and len(done) < MAX_INTERLEAVED:
            return  # built with the rest of its cohort (a long run of repeats is built as it goes)
        del self._closed_cohorts[collector.cohort]
        for member in _redeal(done):
            self._build(member)

    def _build(self, collector: _Collector) -> None:
        failure = collector.build()
        if collector.fallback or collector.mention:
            (self._fallbacks if collector.fallback else self._mentions).append(failure)
            return
        self.failures.append(failure)
        if failure.kind == "traceback" and collector.texts:
            for text in reversed(collector.texts):
                if STRICT_EXCEPTION_LINE.match(text):
                    self._recent_finals[text.strip()] = failure.line + len(collector.texts)
                    break
            if len(self._recent_finals) > 256:
                self._recent_finals.pop(next(iter(self._recent_finals)))

    def _close_all(self, stream: str) -> None:
        for collector in list(self._open.get(stream, ())):
            self._close(stream, collector)

    def _close_stale(self, stream: str, seq: int) -> None:
        collectors = self._open.get(stream, [])
        # Ranks interleaving on one stream leave each collector idle for longer; ranks printing
        # the same traceback (one behind the other) are waiting for each other, not cut off.
        gap = STALE_GAP * len(collectors)
        interleaved = len(collectors) <= MAX_INTERLEAVED
        for collector in list(collectors):
            if seq - collector.last_seq > gap and not (interleaved and _in_step(collector, collectors)):
                self._close(stream, collector)


def scan(lines: Iterable[LogLine]) -> list[Failure]:
    return FailureScanner().feed_all(lines).finish()
