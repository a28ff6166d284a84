"""One failure being collected: the grammar of what may follow each line, by phase.

A `Collector` holds the lines of one failure (a traceback with its chain or group, a faulthandler dump,
a bare exception line, an abort, a usage error) while the scanner feeds it; `accepts` says whether a
line continues it (as structure, or only as a message continuation), `add` moves its phase, and `build`
parses the text into a `Failure` (chain.py).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from enum import Enum, auto
from typing import Literal

from logsleuth.models import ExceptionBlock, Failure, FailureKind, Frame, LogLine
from logsleuth.tracebacks.chain import parse_chain, parse_faulthandler
from logsleuth.tracebacks.grammar import (
    CARET_LINE,
    CPP_BACKTRACE,
    CPP_TERMINATE,
    ELIDED_LINE,
    ELIDED_TEMPLATE,
    ELISION_LENGTH,
    FILE_ROW_BANNER,
    GLOG_ERROR,
    GROUP_CLOSE,
    KILL_LINE,
    LOG_RECORD_START,
    MESSAGE_SECOND_PARAGRAPH,
    NATIVE_MESSAGE_END,
    PROCESS_DIED_HEADER,
    PY_WARNING,
    QUOTED_FRAMES_HEADING,
    RAYLET_WORKER_DIED,
    SHELL_NOTICE,
    SHELL_PROMPT,
    STRICT_EXCEPTION_LINE,
    USAGE_ERROR,
    LineKind,
    classify,
    fatal_line,
    glog_record_type,
    is_elision,
    native_dump_evidence,
    native_header,
    runtime_fact,
    shell_notice,
    usage_message_cut,
)
from logsleuth.tracebacks.logged_errors import LineAbove
from logsleuth.tracebacks.raising_statement import (
    STRIPPED_FRAME,
    imported_type,
    raised_type,
    statement_frame,
    statement_message,
    without_cut_frame,
)

# A runaway traceback (deep recursion printed without CPython's repeat marker, 100k frames) keeps its first
# ELIDED_HEAD and its last lines, up to MAX_FAILURE_LINES in all; the middle becomes one marker line.  The
# innermost frames and the exception line are what matter, so they are never the part dropped.
MAX_FAILURE_LINES = 20_000
ELIDED_HEAD = 1_000
UNPASTED_FRAME = "<File line not pasted>"  # the file of a frame known only by its source line
MAX_MESSAGE_LINES_KEPT = 60  # of an exception message; reports show fewer (render.view)


class Phase(Enum):
    FRAMES = auto()  # inside a traceback, before its exception line
    MESSAGE = auto()  # after the exception line (message may continue)
    BLANK = auto()  # a blank line after the message: a separator may follow
    SEPARATOR = auto()  # after a chain separator: a new traceback follows
    GROUP = auto()  # inside an exception group's margins
    FATAL = auto()  # inside a faulthandler dump
    DONE = auto()


@dataclass
class Collector:
    """The lines of one failure being collected, until it ends."""

    kind: FailureKind
    first: LogLine
    phase: Phase
    header: str | None = None
    truncated: bool = False
    context: tuple[str, ...] = ()
    error_context: tuple[str, ...] = ()  # those of `context` that read as an error (Failure.error_context)
    ends_paste: bool = False  # an ERROR record the paste ends on (Failure.ends_paste)
    outdented: str | None = None  # the line `accepts` last read as an exception line indented under the frames
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
    # printing the same traceback at once.  They are built together (see `redeal`).
    cohort: int = 0
    # The failure started on an indented line (a Markdown code block, a paste indented as a whole):
    # its lines are read without this indentation.
    indent: str = ""
    fallback: bool = False  # reported only when the log has no other failure (a bare `Exception: …`)
    mention: bool = False  # quoted in a sentence: dropped when the log shows the same failure itself
    stated: bool = False  # a person's sentence states it (a prose reader's fallback): it may name a cut traceback below
    # read from prose (ExceptionBlock.read_from_prose): a class stated in words, or an error line retyped by hand
    in_words: Literal["", "stated", "retyped"] = ""
    # a type logsleuth gives a line that prints no type of its own (c10_blocks.C10_ERROR: a c10::Error's what() above its
    # backtrace); its message is the line as printed
    given_type: str = ""
    # The lines of content above a traceback's header that may name it when the paste cut its exception line, nearest
    # first, each with the readers it is read by: an error line (`ERROR … Scheduler hit an exception: ValueError: …`,
    # logged_errors.record_naming) or an error the engine's code logs (named_by_logged_error).
    lines_above: tuple[LineAbove, ...] = ()
    blanks: int = 0  # blank lines at the end of its text
    assert_source: str = ""  # the assert statement pasted right above a bare `AssertionError`, its File line cut
    stripped_frames: bool = False  # its frame lines lost CPython's `File "…", line N, in f` wording
    typed_by_statement: bool = False  # its type read from the raising statement, the exception line lost
    statement_place: Frame | None = None  # that statement's frame, placed by the stripped frame line above it
    ray_remote: bool = False  # holds a Ray task error's remote frames (`_ray_task_error_header`): joined in `build`
    # The lines of an exception printed without a traceback right above the chain separator this traceback started at
    # (chain.frameless_cause): the chain's oldest exception, read with the rest in `build`.
    lead: tuple[str, ...] = ()

    def expects(self, leader: Collector) -> str | None:
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
            if kind is LineKind.SOURCE and self._outdented_exception(text):
                self.outdented = text  # (add reads it so, without asking again)
                return 1
            if kind in (LineKind.SOURCE, LineKind.OTHER) and self._stripped_frame(text):
                return 1  # a frame line that lost CPython's `File "…", line N, in f` wording (raising_statement.py)
            if kind is LineKind.SOURCE and self.last is LineKind.HEADER:
                return 2  # only the frames' source lines pasted under the header
            if kind is LineKind.OTHER:
                if self.last is LineKind.FRAME:
                    # a source line pasted without its indentation; never a native handler's banner, which opens a
                    # dump of its own (`!!!!!!! Segfault encountered !!!!!!!` under the rows of the dump before it)
                    return 0 if native_header(text) is not None else 2
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
        if phase is Phase.MESSAGE and self.kind == "usage":
            # an argparse error whose message the line's wrap cut: its next line is its rest (grammar.usage_message_cut)
            wrapped = kind is not LineKind.BLANK and usage_message_cut(self._usage_message())
            return 2 if wrapped and self._message_line(kind, text, line) else 0
        if phase is Phase.MESSAGE:
            if kind is LineKind.BLANK:
                return 1
            if kind is LineKind.FRAME and self.kind == "abort" and FILE_ROW_BANNER in self.texts[0]:
                return 1  # a native backtrace printed in CPython's frame format (grammar.FILE_ROW_BANNER)
            if kind in (LineKind.FRAME, LineKind.SOURCE, LineKind.CARET) and self._quoting_frames():
                return 1  # the user's frames torch.compile's message quotes after `from user code:`
            if kind is LineKind.EXCEPTION and self._introduces_inner_error() and not line.starts_record:
                return 1  # torch's `BackendCompilerFailed: backend='inductor' raised:` + the inner `AssertionError: …`
            if kind is LineKind.FRAME and self._ray_task_error_header():
                return 1  # the remote task's own traceback, its cause's exception line last
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
            # message continues it, or a library's own second paragraph (MESSAGE_SECOND_PARAGRAPH).
            heading = self.blanks == 1 and self.message_lines >= 1 and text.rstrip().endswith(":")
            known = self.blanks == 1 and MESSAGE_SECOND_PARAGRAPH.match(text) is not None
            # Native output (pip's resolver) introduces its detail with a heading after one blank line.
            native = self.kind == "abort" and self.blanks == 1 and not self.texts[0].startswith("terminate called")
            heading = heading or (native and text.rstrip().endswith(":"))
            return 2 if (heading or known) and self.kind in ("traceback", "bare", "abort") and self._message_line(kind, text, line) else 0
        if phase is Phase.SEPARATOR:
            if kind is LineKind.BLANK:
                return 1 if self.last is LineKind.SEPARATOR else 2
            if kind in (LineKind.HEADER, LineKind.GROUP):
                return 1 if self.last is LineKind.BLANK else 2
            return 0
        return 0

    def _outdented_exception(self, text: str) -> bool:
        """An exception line a paste indented a little, right after the last frame's source line (sgl-project/sglang
        #5136: ` ValueError: …` under a `raise ValueError(` indented by four): CPython prints the exception line
        left of its frames, so a `Type: message` line indented less than the frames of the source line above is it.
        A source line is always indented two more than its frame, so this reads no statement of the code."""
        if self.last not in (LineKind.SOURCE, LineKind.CARET) or not text.startswith(" "):
            return False
        source = next((t for t in reversed(self.texts[-3:]) if t.strip() and CARET_LINE.match(t) is None), "")
        source_indent = len(source) - len(source.lstrip())
        indent = len(text) - len(text.lstrip())
        return indent < source_indent - 2 and STRICT_EXCEPTION_LINE.match(text.lstrip()) is not None

    def _stripped_frame(self, text: str) -> bool:
        """A frame's place without CPython's wording, right under the header or under another such line."""
        return (
            (self.last is LineKind.HEADER or self.stripped_frames)
            and ".py" in text
            and STRIPPED_FRAME.match(text) is not None
        )

    def _message_line(self, kind: LineKind, text: str, line: LogLine) -> bool:
        """Whether a line may continue the exception message (not a new record, failure or warning, nor
        a reader's `...`)."""
        if line.starts_record or self.message_lines >= MAX_MESSAGE_LINES_KEPT:
            return False
        if len(text) < ELISION_LENGTH and is_elision(text):
            return False
        if text.startswith(("... ", "\u2026 ")):
            return False  # a later line whose start the reader left out (`... Rank 0 scheduler is dead`), not the message
        if text == self.texts[0]:
            return False  # the same line again: another rank printing the same failure
        if kind not in (LineKind.OTHER, LineKind.SOURCE, LineKind.CARET, LineKind.EXCEPTION):
            return False
        if STRICT_EXCEPTION_LINE.match(text) or USAGE_ERROR.match(text) or ("Warning: " in text and PY_WARNING.match(text)):
            return False
        if KILL_LINE.search(text) or text.lstrip().startswith("warnings.warn(") or PROCESS_DIED_HEADER.match(text):
            return False
        if RAYLET_WORKER_DIED in text:
            return False  # the raylet's report of a dead worker: a kill notice of its own
        if self.kind != "abort" and shell_notice(text) is not None:
            return False  # the shell's notice after the process died (a native dump ends with it)
        if "@" in text and SHELL_PROMPT.match(text):
            return False  # the prompt that came back after the crash
        return not LOG_RECORD_START.match(text)  # the next log record (uvicorn, logging, a dated line)

    def _quoting_frames(self) -> bool:
        """The message's current paragraph began with torch.compile's `from user code:` (no blank line since)."""
        if self.kind != "traceback" or self.message_lines == 0:
            return False
        for text in reversed(self.texts):
            if not text or text.isspace():
                return False
            if text.strip() == QUOTED_FRAMES_HEADING:
                return True
        return False

    def _introduces_inner_error(self) -> bool:
        """The exception line just read ends its message with `raised:` (or `error:`): a wrapper's message that
        prints the inner exception as `Type: message` on its next line, so that line is this message, not another
        failure (torch/_dynamo/exc.py BackendCompilerFailed: f"backend={name!r} raised:\n{type}: {inner}")."""
        return self.kind == "traceback" and self.message_lines == 0 and self.last is LineKind.EXCEPTION \
            and self.texts[-1].rstrip().endswith((" raised:", " error:"))

    def _usage_message(self) -> str:
        """An argparse error's message: its line's, and the rest a wrap put on the lines after it (accepts)."""
        m = USAGE_ERROR.match(self.texts[0])
        message = m["msg"].strip() if m else self.texts[0].strip()
        for text in self.texts[1:]:
            message = f"{message} {text.strip()}" if not message.endswith("(") else message + text.strip()
        return message

    def _ray_task_error_header(self) -> bool:
        """The exception line just read is Ray's re-raise of a remote task's error, `ray.exceptions.
        RayTaskError(ValueError): ray::Actor.method() (pid=…, ip=…)`: Ray prints the task's own traceback after it,
        frames and then the cause's exception line (ray/exceptions.py RayTaskError.__str__)."""
        if self.kind not in ("traceback", "bare") or self.message_lines or self.last is not LineKind.EXCEPTION:
            return False
        m = STRICT_EXCEPTION_LINE.match(self.texts[-1])
        return m is not None and m["type"].endswith(")") and (m["msg"] or "").startswith("ray::")

    def add(self, kind: LineKind, line: LogLine, seq: int, text: str | None = None) -> None:
        """`text` replaces the line's text (a group header without the log text before it)."""
        if text is None:
            text = line.text
            if self.indent:
                kind, text = self.view(kind, text)
        if kind is LineKind.SOURCE and self.phase is Phase.FRAMES and text == self.outdented:
            kind, text = LineKind.EXCEPTION, text.lstrip()
        remote_frames = kind is LineKind.FRAME and self.phase is Phase.MESSAGE and self._ray_task_error_header()
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
            if kind in (LineKind.SOURCE, LineKind.OTHER) and self._stripped_frame(text):
                kind = LineKind.FRAME  # its source line may follow, as under a `File` line
                self.stripped_frames = True
            elif kind is LineKind.EXCEPTION:
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
            elif remote_frames:
                self.kind = "traceback"  # a Ray task error's remote frames (accepts): its cause's line follows
                self.phase = Phase.FRAMES
                self.ray_remote = True
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
        program: str | None = None
        truncated = self.truncated or not self.complete
        context = self.context
        if self.kind == "fatal":
            exceptions = parse_faulthandler(texts)
        elif self.kind == "usage":
            m = USAGE_ERROR.match(texts[0])
            exceptions = (ExceptionBlock(type="UsageError", message=self._usage_message()),)
            program = m["prog"] if m else None
        elif self.kind == "abort" and (cpp := CPP_TERMINATE.match(texts[0])):
            exceptions = (ExceptionBlock(type=cpp["type"], message=_what(texts[1:])),)
        elif self.kind == "abort" and (notice := shell_notice(texts[0])):
            exceptions = (ExceptionBlock(type=notice[0], message=notice[1]),)
        elif self.kind == "abort" and (native := native_header(texts[0])):
            exceptions = (ExceptionBlock(type=native[0], message=_native_message(native, texts[1:])),)
            if native[0].startswith(("SIG", "signal ")):  # a signal handler's dump: its frames say where it crashed
                context = (*context, *native_dump_evidence(texts[1:]))
        elif self.kind == "line" and (glog := GLOG_ERROR.match(texts[0])):
            exceptions = (ExceptionBlock(type=glog_record_type(glog["msg"]), message=glog["msg"].strip()),)
        elif self.kind == "line" and (found := fatal_line(texts[0])):
            exceptions = (ExceptionBlock(type=found[0], message=found[1]),)
        elif self.given_type:
            exceptions = (ExceptionBlock(type=self.given_type, message=texts[0].strip()),)
        elif fact := runtime_fact(texts[0]):
            exceptions = (ExceptionBlock(type=fact.type, message=fact.message),)
        elif self.kind == "killed":
            exceptions = (ExceptionBlock(type="Killed", message=texts[0].strip()),)
        else:
            exceptions = parse_chain([*self.lead, "", *texts] if self.lead else texts)
            if not exceptions:
                exceptions = (ExceptionBlock(type="", message="", truncated=True),)
            if self.ray_remote:
                exceptions = _join_ray_remote(exceptions)
        if self.kind == "traceback" and exceptions and not exceptions[-1].type:
            exceptions = (*exceptions[:-1], _typed_by_statement(exceptions[-1], texts))
        if self.assert_source and exceptions and not exceptions[-1].frames:
            # the frame's place was not pasted; its source line is the check that failed (scanner.ASSERT_SOURCE_ABOVE)
            unplaced = self.statement_place or Frame(file=UNPASTED_FRAME, line=None, function=None, source=self.assert_source)
            message = statement_message(self.assert_source) if self.typed_by_statement else exceptions[-1].message
            exceptions = (*exceptions[:-1], replace(exceptions[-1], message=message, frames=(unplaced,),
                                                       truncated=self.typed_by_statement,
                                                       typed_from_statement=self.typed_by_statement))
        if self.in_words and exceptions:
            exceptions = (*exceptions[:-1], replace(exceptions[-1], read_from_prose=self.in_words))
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
            context=context,
            error_context=self.error_context,
            program=program,
            ends_paste=self.ends_paste,
        )


def _native_message(header: tuple[str, str], lines: list[str]) -> str:
    """The message of native fatal output: the header's text and the lines after it up to its backtrace or
    hint.  A Rust panic since 1.73 prints its location on the header line and its text on the next lines."""
    kind, first = header
    if kind not in ("Rust panic", "ResolutionImpossible", "pip dependency conflict"):
        return first  # a signal's or glog's report: the lines after it are frames
    body: list[str] = []
    for text in lines:
        if NATIVE_MESSAGE_END.match(text) or SHELL_NOTICE.match(text):
            break
        if text.strip() or body:
            body.append(text.strip())
    while body and not body[-1]:
        body.pop()
    if kind == "Rust panic" and body and "'" not in first:
        return "\n".join([*body, f"at {first}"])
    return "\n".join([first, *body])


def _what(lines: list[str]) -> str:
    """The message of a C++ exception: the text after `what():`, up to its backtrace.  Lines before
    `what():` are other writers' (an NCCL INFO line of a sibling thread), never the message."""
    start = next((index for index, text in enumerate(lines) if text.lstrip().startswith("what():")), 0)
    message: list[str] = []
    for text in lines[start:]:
        if CPP_BACKTRACE.match(text) or SHELL_NOTICE.match(text):
            break
        message.append(text.strip().removeprefix("what():").strip())
    while message and not message[-1]:
        message.pop()
    return "\n".join(message)


def _typed_by_statement(block: ExceptionBlock, texts: list[str]) -> ExceptionBlock:
    """A traceback cut inside its raising statement (`raise ValueError(`, `assert (`), its exception line lost: the type
    the statement names, the message unknown (raising_statement.py).  The statement is the innermost frame's source,
    or the last line pasted when the frames lost their `File` lines."""
    at = next((index for index in range(len(texts) - 1, -1, -1) if texts[index].strip() and not CARET_LINE.match(texts[index])), None)
    last = texts[at] if at is not None else ""
    frames = without_cut_frame(block.frames)
    source = frames[-1].source if frames and frames[-1].source else last
    type_name = raised_type(source or "") or (imported_type(source or "") if block.frames else None)
    if type_name is None:
        return block
    # frames that lost their `File` lines are not parsed: the statement is kept as the innermost frame's source,
    # placed by the frame line above it when that kept its file and function
    frames = block.frames or (statement_frame(last, texts[:at or 0], UNPASTED_FRAME),)
    return replace(block, type=type_name, message=statement_message(source or ""), frames=frames, truncated=True,
                   typed_from_statement=True)
def _join_ray_remote(blocks: tuple[ExceptionBlock, ...]) -> tuple[ExceptionBlock, ...]:
    """Ray's re-raise and the remote task's error it prints as one exception, as a reader sees it: the caller's frames
    down to `ray.get`, then the task's own frames, then the cause's line (`RayTaskError(ActorDiedError)` is an
    ActorDiedError: ray/exceptions.py derives it from both).  Its cause's line, not the re-raise's first line, is then
    what the chain's rules read first."""
    joined: list[ExceptionBlock] = []
    for block in blocks:
        previous = joined[-1] if joined else None
        if previous is not None and previous.relation is None and previous.type.endswith(")") \
                and previous.message.startswith("ray::"):
            frames = (*previous.frames, *block.frames)
            if block.type:
                joined[-1] = replace(block, frames=frames, truncated=previous.truncated or block.truncated)
            else:  # the paste stopped inside the task's frames: the re-raise's own line names it
                joined[-1] = replace(previous, frames=frames, truncated=True)
        else:
            joined.append(block)
    return tuple(joined)


def _mark_truncated(block: ExceptionBlock) -> ExceptionBlock:
    return replace(block, truncated=True)
