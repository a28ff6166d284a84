"""Traceback parser: find failures in a stream of normalized log lines.

The scanner is fed one `LogLine` at a time (so it works the same on a file read
backwards in windows, on a whole file and on a live `watch` stream) and cuts the log
into failures: Python tracebacks with their chains and groups, faulthandler dumps,
bare exception lines, argparse usage errors and kill notices.  Each failure is
gathered by a `Collector` (collector.py) and parsed into exception blocks by chain.py; the
line regexes are in grammar.py.

Interleaving: lines are demultiplexed by their stream (process prefix or SGLang rank
record).  Within one stream, several tracebacks may still interleave line by line
(ranks writing to one unprefixed stderr); each open collector takes the lines that fit
its grammar, and among equals the one that is behind, so identical tracebacks printed
at once by several ranks come out whole.  When they were mixed at any line rather than by
CPython's writes (two processes on one terminal), the cohort is rebuilt after the fact
(interleave.py).

Pastes: a traceback in an indented block is read without that indentation; an exception quoted
in a sentence (backticks, bold, quotes) is a failure unless the log shows it itself; a bare
`Exception: …` line is the failure only of a log without another; an exception line pasted
above its frames is theirs (repair.py).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator
from dataclasses import replace

from logsleuth.facts.message_templates import MIN_FIXED
from logsleuth.ingest.stages import past_its_arguments
from logsleuth.ingest.startup_lines import READY_LINE, engine_up, serves
from logsleuth.lazyre import compile_lazily
from logsleuth.models import FACT_PREFIX, Failure, FailureKind, Frame, LogLine
from logsleuth.tracebacks.c10_blocks import (
    BACKTRACE_WORDS,
    C10_ERROR,
    MESSAGE_REACH,
    error_above_backtrace,
    opens_backtrace,
)
from logsleuth.tracebacks.chain import FRAMELESS_CAUSE_REACH, frameless_cause
from logsleuth.tracebacks.collector import UNPASTED_FRAME, Collector, Phase
from logsleuth.tracebacks.cut_tail import marked_cut
from logsleuth.tracebacks.device_errors import (
    CANN_INNER_WORDS,
    CANN_REPORT_LINE,
    MIOPEN_ERROR,
    NPU_WARNING_WORDS,
    QUIET_LEVELS,
    SAYS_IT_WENT_ON,
    device_error_line,
    gpu_library_line,
    went_on,
)
from logsleuth.tracebacks.grammar import (
    BUDGET_LINE,
    BUDGET_REPORT,
    BUDGET_WORDS,
    CASCADE_CONTEXT_LINE,
    CONTEXT_HINT,
    CONTEXT_WORDS,
    CPP_TERMINATE,
    ERROR_LEVELS,
    GENERIC_EXCEPTION_LINE,
    GLOG_ERROR,
    GROUP_AFTER_TEXT,
    KILL_LINE,
    KILL_LINE_WORDS,
    MESSAGE_SECOND_PARAGRAPH,
    NATIVE_FILE_ROW,
    NOT_BARE_TYPES,
    RAY_WORKER_DIED,
    RAY_WORKER_DIED_WORDS,
    REFUSED_FLUSH,
    SERVED_AFTER_FLUSH,
    STARTUP_BOUNDARY,
    STARTUP_BOUNDARY_WORDS,
    STRICT_EXCEPTION_LINE,
    THREAD_INTRO,
    TRACEBACK_HEADER,
    USAGE_ERROR,
    USAGE_LINE,
    WATCHDOG_TIMEOUT,
    LineKind,
    RuntimeFact,
    argparse_error,
    classify,
    embedded_failure,
    fatal_line,
    glog_record,
    inline_failure,
    is_typeless_engine_line,
    native_dump_evidence,
    native_frame,
    native_header,
    prose_usage_error,
    reads_as_error,
    record_repr,
    repr_failure,
    retyped_failure,
    retyped_usage_error,
    runtime_fact,
    said_failure,
    shell_notice,
    usage_message_cut,
    without_ray_cause_guesses,
)
from logsleuth.tracebacks.indented_tail import IndentedTail
from logsleuth.tracebacks.instruction_tail import InstructionTail, engine_block
from logsleuth.tracebacks.interleave import MAX_INTERLEAVED, choose, in_step, redeal
from logsleuth.tracebacks.logged_errors import (
    MAX_RECORD,
    LineAbove,
    engine_message,
    error_record_candidates,
    is_command_line,
    is_error_record,
    last_record_candidates,
    logged_by_request_handler,
    may_hold_status,
    message_candidates,
    named_by_lines_above,
    named_by_validation_link,
    plain_candidates,
    status_candidates,
)
from logsleuth.tracebacks.native_errors import CUDACHECK_WORDS, KEPT_AS_CONTEXT, NPU_ERROR, UCX_ERROR
from logsleuth.tracebacks.notebook import notebook_exception_type
from logsleuth.tracebacks.prose_failures import (
    CURLED_QUOTES,
    import_name_fragment,
    may_quote_a_failure,
    quoted_assert_statement,
    quoted_message_candidates,
    quotes_a_failure,
    retyped_variants,
    states_the_failure,
)
from logsleuth.tracebacks.raising_statement import (
    lost_its_exception_line,
    raised_type,
    statement_frame,
    stripped_frames_above,
)
from logsleuth.tracebacks.rendezvous_stall import RendezvousStall
from logsleuth.tracebacks.rendezvous_warnings import rendezvous_warning
from logsleuth.tracebacks.repair import (
    attach_moved_exceptions,
    fold_kernel_prints,
    join_inner_errors,
    join_second_paragraphs,
    shown_in,
)
from logsleuth.tracebacks.split_bodies import SplitErrorBodies
from logsleuth.tracebacks.startup_waits import StartupWaits
from logsleuth.tracebacks.stated_failures import got_past_later, stated_failure
from logsleuth.tracebacks.typeless_errors import (
    COMMAND_NOT_FOUND,
    PYDANTIC_VALIDATION_ERROR,
    RAY_AUTOSCALER_ERROR,
    VALUE_ERROR_LINE,
    typed_by_message,
)
from logsleuth.tracebacks.warned_failures import REACH, WarnedFailures

__all__ = ["FailureScanner", "LineKind", "classify", "scan"]

CONTEXT_LINES = 6
# The Ascend NPU's Triton compiler's crash report (CANN's bishengir-compile: its `[ERROR][Triton][BEG]`…`[END]` banners,
# LLVM's `Program arguments:` line): the cause of a kill right under it (sgl-project/sglang#11546), not of one after the
# server came up and served.
COMPILER_CRASH_REPORT = compile_lazily(r"\[ERROR\]\[Triton\]|\bProgram arguments: \S*\bbishengir-compile\b")
# A native backtrace printed on its own (its banner on another stream, or not pasted) explains a failure that starts
# within this many lines after it: faulthandler's dump of the same crash, the shell's notice.
NATIVE_DUMP_REACH = 10
NATIVE_DUMP_LINES = 32  # rows of one dump kept; its innermost are what is read
NATIVE_FILE_ROW_WORDS = '"<unknown>", line 0, in '  # (the literal of grammar.NATIVE_FILE_ROW: tried on every line)
STALE_GAP = 3  # a collector that got none of the last N lines of its stream is finished
MAX_OPEN = 64  # open collectors per stream; the least recently fed one is closed beyond this
# The innermost frame's source line pasted without its `File …` line, right above a bare `AssertionError` (CPython
# prints the failing assert statement there, and a paste that cut the frames often keeps just these two lines): the
# statement (CPython 3.11+'s caret line under it skipped) is the check that failed, kept as that frame's source (collector.Collector.assert_source).
ASSERT_SOURCE_ABOVE = compile_lazily(r"^[ \t]*(?P<statement>assert\s.*?)\s*$")
ERROR_SAID_REACH = 3  # non-blank lines above a traceback's header searched for the error it was logged under
# lines of content above it searched for an error the engine's own code logs (the raise site index says so): the
# engine may print its advice after it (SGLang's piecewise CUDA graph failure: the error, its cause, then three lines
# of workaround and where to report it)
LOGGED_ERROR_REACH = 6
RECENT_TEXTS = 6  # lines above a raising statement read for frames that lost their `File` lines
# A paste's Markdown around a log: a code fence, a heading, a lone quote mark or rule, an HTML tag line (`<details>`,
# `<summary>Log</summary>`, `</pre>`).
MARKDOWN_SCAFFOLD = compile_lazily(r"^\s*(?:```|~~~|#{1,6}\s|>\s*$|-{3,}\s*$|</?[A-Za-z][^>]*>)")
BARE_ASSERTION_ERROR = compile_lazily(r"^\s*(?:builtins\.)?AssertionError:?\s*$")


def _quotes_value_error(error_type: str, text: str, line: LogLine) -> bool:
    """Whether a line is a quiet record that quotes pydantic's `Value error, …` after words of its own.  The level must
    be the line's own header's: a line with no header takes over the record above's level (ingest/normalize.py), and
    pydantic prints its `  Value error, …` line indented on its own after whatever INFO record came last."""
    if error_type != PYDANTIC_VALIDATION_ERROR or not line.headed:
        return False
    before, found, _ = text.partition(VALUE_ERROR_LINE)
    return bool(found) and bool(before.strip())


def _indentation(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _fatal_output(kind: LineKind, text: str) -> tuple[str, str] | None:
    """(type, message) of a fatal error printed as a line of its own (grammar.fatal_line); on a line indented as
    source, only CANN's inner report line (its place `[FUNC:…][FILE:…][LINE:…]` ending it, device_errors)."""
    if kind in (LineKind.OTHER, LineKind.EXCEPTION):
        return fatal_line(text)
    if kind is LineKind.SOURCE and CANN_INNER_WORDS in text and text.rstrip().endswith("]"):
        return device_error_line(text)
    return None


class FailureScanner:
    """Feed lines in order; collect `Failure`s.  `finish()` flushes what is still open."""

    def __init__(self) -> None:
        self._open: dict[str, list[Collector]] = {}
        self._seq: dict[str, int] = {}
        self._previous_text: dict[str, str] = {}
        # each stream's last line no collector took, when it is a plain line (OTHER): read at the end of a paste that
        # shows no failure (_read_last_lines)
        self._last_unread: dict[str, tuple[LogLine, int] | None] = {}
        self._unread_before_traceback: dict[str, tuple[LogLine, int] | None] = {}
        # each stream's last indented paragraph no collector took, and its last line of content (indented_tail.py)
        self._indented_tail = IndentedTail()
        # each stream's last lines no collector took: the end of an engine's message of several lines (instruction_tail.py)
        self._instruction_tail = InstructionTail()
        self._last_content: dict[str, int] = {}
        self._last_content_offset = -1  # of the log's last line with content, whatever its stream (cut_tail.py)
        self._recent_texts: dict[str, deque[str]] = {}  # each stream's last lines no collector took (raising_statement.py)
        self._lines_above: dict[str, deque[str]] = {}  # the same, as far up as a frameless cause's lines reach
        # Whether a failure took a line of the stream since the last line kept above: then those lines are above that
        # failure, not right above the next header (a crash printed after a WON'T CONVERT traceback is no fallback).
        self._taken_since_above: dict[str, bool] = {}
        # each stream's last lines of content no collector took: a paste's Markdown between them (a fence, a heading,
        # `<details>`) left out, so the error a traceback was logged under is reached across it (_error_said_above)
        self._recent_content: dict[str, deque[str]] = {}
        # those of them an ERROR or CRITICAL record printed, its header taken off (only such a record's repr names a
        # traceback: `logger.exception(repr(e))`, logged_errors.record_naming)
        self._error_records: dict[str, deque[str]] = {}
        # each stream's last line where a person's sentence states an error (a fallback a prose reader started), and
        # for each traceback's first line the last such sentence above it (_stated_above_cut)
        self._last_stated: dict[str, int] = {}
        self._stated_above: dict[int, int] = {}
        self._source_above: dict[str, str] = {}  # the last line that is no caret line (CPython 3.11+ `^^^^` under a source)
        self._recent_context: deque[str] = deque(maxlen=CONTEXT_LINES)
        self._erroneous: set[str] = set()  # those of _recent_context that read as an error (grammar.reads_as_error)
        self._budget_lines: dict[str, str] = {}  # each stream's last budget line kept in _recent_context (_forget_budget)
        # torch's c10d store-socket warnings kept in _recent_context for that alone, and whether a line of content
        # other than such a warning followed them (_age_rendezvous_warnings)
        self._rendezvous_kept: set[str] = set()
        self._rendezvous_followed = False
        self._fed = 0  # lines fed so far
        self._last_text = ""  # the last line of content fed, and the one before it (`_kill_context`)
        self._above = ""
        self._native_dump: list[str] = []  # the rows of the last native backtrace seen outside a failure
        self._native_dump_at = 0  # the line (self._fed) of its last row
        self._recent_finals: dict[str, int] = {}  # final exception line -> line number, to drop re-logged copies
        self.failures: list[Failure] = []
        self.cascade_lines: list[LogLine] = []  # `kill_process_tree called`, ...
        self._fallbacks: list[Failure] = []  # failures reported only when there is no other
        # where a later line said the run got past a failure a sentence stated (stated_failures.got_past_later): the
        # stated failures above it are a past fix, none; looked for only once a sentence stated one
        self._stated_at: int | None = None
        self._got_past_at: int | None = None
        # ERROR records still to be looked up in the raise site index (logged_errors.py): a fallback, so a log of a
        # million error records does not pay a lookup for each; the first ones of a paste are read.
        self._record_lookups_left = MAX_RECORD_LOOKUPS
        self._banner_lookups_left = MAX_BANNER_LOOKUPS  # a budget of its own: the ERROR records' is not spent on them
        self._ready_offset = -1  # where the server last said it was ready: logged errors before it were survived
        # An accelerator runtime's status line (device_errors.py) is the failure only while nothing after it says the
        # run went on: the lines of content before it (by offset), where a later line last said a call succeeded or a
        # request was served, and the lines of content so far.
        self._device_lines: dict[int, int] = {}
        self._went_on_offset = -1
        self._content_lines = 0
        # Within a CANN error report (device_errors.CANN_REPORT_LINE): whether the line before was one of its lines,
        # and whether the report is torch_npu's NPU warning's (the run went on), both for the line being fed.
        self._in_cann_report = False  # the line before was one of a report's
        self._cann_continues = False  # the line being fed continues it
        self._cann_report_failed = False  # a line of the report is a failure already
        self._under_npu_warning = False  # the report is torch_npu's NPU warning's
        # the stream of a pydantic ValidationError's title just fed, and how many of its list's lines may still follow
        self._validation_title: tuple[str | None, int] = (None, 0)
        # the programs of argparse's `usage: PROG …` lines seen so far, newest last (grammar.argparse_error)
        self._usages: deque[str] = deque(maxlen=MAX_USAGES_KEPT)
        self._mentions: list[Failure] = []  # failures quoted in prose, reported unless the log shows them
        self._cohorts = 0
        self._closed_cohorts: dict[int, list[Collector]] = {}
        # The runtime's fact lines after the log (grammar.runtime_fact): the strongest is a failure, the others
        # its context.  (line, fact or None when it states nothing wrong), in order.
        self._facts: list[tuple[LogLine, RuntimeFact | None]] = []
        self._fact_failure: Failure | None = None
        self._split_bodies = SplitErrorBodies()  # error bodies a paste spread over lines, still open
        # the last warning that states an incapacity (warned_failures.py): the failure of a paste that shows no other
        self._warned = WarnedFailures()
        # the run of an API server's waits for its engine cores the paste ends on (startup_waits.py): a stalled start
        self._waits = StartupWaits()
        self._rendezvous_stall = RendezvousStall()  # store timeouts the user's Ctrl-C ended (rendezvous_stall.py)
        # each stream's lines since its last record header or blank line, for a c10::Error's message (c10_blocks.py)
        self._blocks: dict[str, deque[tuple[LogLine, int]]] = {}
        # A failure of STOPS_A_START_ONLY is one only while nothing after it shows the start went on: whether one was
        # seen, and where a later line last showed the start moving (_shows_progress)
        self._awaiting_progress = False
        self._progress_offset = -1

    # -- public ------------------------------------------------------------------
    def feed(self, line: LogLine) -> None:
        if line.text.startswith(FACT_PREFIX):
            self._note_fact(line)
            return
        self._fed += 1
        self._warned.feed(line, self._context)
        self._waits.feed(line)
        self._rendezvous_stall.feed(line)
        # a native dump's row in CPython's frame shape (the rows above a parent's EOFError when the banner was cut):
        # kept, as every native dump's rows are, for the failure it explains (`_context`), unless a Python traceback
        # holds it (below)
        native_row = NATIVE_FILE_ROW_WORDS in line.text and NATIVE_FILE_ROW.match(line.text) is not None
        line = self._with_validation_title(line)
        stream = line.stream
        seq = self._seq.get(stream, 0) + 1
        self._seq[stream] = seq
        kind = classify(line.text)
        if line.text.lstrip().startswith("usage: ") and (shown := USAGE_LINE.match(line.text)):
            self._usages.append(shown["prog"])  # argparse's usage, printed before its error line
        collectors = self._open.get(stream)
        if kind is not LineKind.BLANK:
            self._age_rendezvous_warnings(line.text)
            self._above, self._last_text = self._last_text, line.text
            self._forget_refused_flush(line.text)
        if kind is not LineKind.BLANK and not (line.text[:1] in "`~<#" and MARKDOWN_SCAFFOLD.match(line.text)) \
                and not cut_traceback_header(line.text):
            self._last_content[stream] = seq  # (a paste's closing fence or `</details>` is not its last line)
            self._last_content_offset = line.offset
            self._content_lines += 1
        if went_on(line.text):
            self._went_on_offset = line.offset
        if self._awaiting_progress and kind is not LineKind.BLANK and _shows_progress(line.text):
            self._progress_offset = line.offset
        self._note_block_line(kind, line, seq)
        self._note_cann_report(line.text)

        if collectors and line.starts_record:
            self._close_all(stream)  # a new log record ends whatever this stream was printing
            collectors = None

        if collectors:
            best = choose(collectors, kind, line, seq)
            if best is not None:
                if native_row and NATIVE_FILE_ROW.match(best.texts[0]) is not None:
                    # rows of a dump that began on a row of its own; the same rows inside a Python traceback (tvm_ffi's
                    # C++ frames under `tvm_ffi.core.Function.__call__`: flashinfer's JIT kernels, TileLang) are that
                    # traceback's frames, no child's crash
                    self._note_native_frame(line.text, False)
                best.add(kind, line, seq)
                self._taken_since_above[stream] = True
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

        if native_row:
            self._note_native_frame(line.text, False)
        self._maybe_start(kind, line, seq)
        if self._stated_at is not None and line.offset > self._stated_at and kind is LineKind.OTHER and got_past_later(line.text):
            self._got_past_at = line.offset
        self._previous_text[stream] = line.text
        # (get before setdefault: setdefault would build a deque for every line, this runs on every line)
        recent = self._recent_texts.get(stream)
        if recent is None:
            recent = self._recent_texts[stream] = deque(maxlen=RECENT_TEXTS)
        recent.append(line.text)
        above = self._lines_above.get(stream)
        if above is None:
            above = self._lines_above[stream] = deque(maxlen=FRAMELESS_CAUSE_REACH)
        above.append(line.text)
        self._taken_since_above[stream] = False
        if kind is LineKind.OTHER and line.text.strip() and not MARKDOWN_SCAFFOLD.match(line.text):
            content = self._recent_content.get(stream)
            if content is None:
                content = self._recent_content[stream] = deque(maxlen=LOGGED_ERROR_REACH)
            content.append(line.text)
            if line.meta.level in ERROR_LEVELS:
                records = self._error_records.get(stream)
                if records is None:
                    records = self._error_records[stream] = deque(maxlen=LOGGED_ERROR_REACH)
                records.append(line.text)
        if kind is not LineKind.CARET:
            self._source_above[stream] = line.text

    def _with_validation_title(self, line: LogLine) -> LogLine:
        """A line of pydantic's error list on the stream of the `ValidationError: N validation error(s) for X` title
        right above it, when their process prefixes differ: a paste that began inside the first line's prefix, or a
        wrapper that re-logged the title alone, leaves `(APIServer pid=619068)   Value error, …` on a stream of its
        own (Tencent-Hunyuan/HunyuanImage-3.0#54, the retired blind split 15's D-04), and the exception lost its
        detail.  pydantic prints the title and its list in one write (pydantic_core ValidationError.__str__): the
        lines are one exception's."""
        title_stream, left = self._validation_title
        if VALIDATION_TITLE_WORDS in line.text and VALIDATION_TITLE.search(line.text):
            self._validation_title = (line.stream, MAX_VALIDATION_LIST_LINES)
            return line
        if title_stream is None or left <= 0 or not VALIDATION_LIST_LINE.match(line.text):
            self._validation_title = (None, 0)
            return line
        self._validation_title = (title_stream, left - 1)
        return line if line.stream == title_stream else line._replace(stream=title_stream)

    def feed_all(self, lines: Iterable[LogLine]) -> FailureScanner:
        for line in lines:
            self.feed(line)
        return self

    def finish(self) -> list[Failure]:
        for stream in list(self._open):
            self._close_all(stream)
        if not self._fallbacks and not self._mentions and all(_is_user_interrupt(f) for f in self.failures):
            # nothing failed but the user's Ctrl-C (or nothing at all): the line the paste, or the interrupt, cut off
            self._read_last_lines(self._unread_before_traceback if self.failures else self._last_unread)
            if not self._fallbacks:
                self._read_indented_tail()
            if not self._fallbacks and not self.failures:
                self._read_instruction_tail()
            if not self._fallbacks and not self.failures:
                self._read_last_error_record()
            if not self._fallbacks and (warned := self._warned.strongest(self._ready_offset)) is not None:
                # a failure the paste shows only as a warning, its strongest evidence (warned_failures.py): a fallback
                # as the lines above are (a user's Ctrl-C after it is how the paste ended, not its failure)
                self._fallbacks.append(warned)
            if not self._fallbacks and (stalled := self._waits.stalled(self._ready_offset)) is not None:
                self._fallbacks.append(stalled)  # a start that never finished, the paste's last lines (startup_waits.py)
            if not self._fallbacks and (stalled := self._rendezvous_stall.stalled(self._ready_offset)) is not None:
                self._fallbacks.append(stalled)  # a store no connect reached, until the user's Ctrl-C (rendezvous_stall.py)
        self.failures.extend(mention for mention in self._mentions if not shown_in(mention, self.failures))
        # A fallback (a bare `Exception: …`) may be the exception of frames pasted after it; else it is
        # reported only when nothing else was found.
        # A glog/c10 ERROR record or a warning the server came up after (a connection retried while ranks met, an
        # optional kernel that did not load) was survived.
        self._fallbacks = [f for f in self._fallbacks if not (_is_survivable(f) and f.offset < self._ready_offset)]
        self._fallbacks = [f for f in self._fallbacks
                           if not (f.final.type in STOPS_A_START_ONLY and f.offset < self._progress_offset)]
        # A runtime's status line the run went on after (a readiness line, a later success or served request, or more
        # than warned_failures.REACH lines of content, as for a warning) was survived: an autotuner's rejected config,
        # a call retried, a probe before the CPU fallback.
        self._fallbacks = [f for f in self._fallbacks if not self._went_on_after_device_line(f)]
        if self._got_past_at is not None:
            self._fallbacks = [f for f in self._fallbacks
                               if not (f.final.read_from_prose == "stated" and f.offset < self._got_past_at)]
        found = attach_moved_exceptions(sorted(self.failures + self._fallbacks, key=lambda failure: failure.offset))
        fallbacks = {id(failure) for failure in self._fallbacks} - {
            id(failure) for failure in _stated_above_cut(found, self._stated_above)}
        # The user's Ctrl-C of a launch that had already failed (`^C`, then a KeyboardInterrupt traceback of the wait
        # loop), or a launcher's report that its child failed (torchrun's ChildFailedError, accelerate's
        # CalledProcessError of the child's command): how the paste ended, not the failure; an engine's error line
        # above it is.
        found = [
            failure for failure in found
            if not (_ends_a_launch(failure) and any(
                id(other) in fallbacks and other.offset < failure.offset for other in found))
        ]
        # A kill notice (`Worker … died, exit code: -6`, the shell's `Killed`) says a process died, not why: torch's E
        # records of the NCCL watchdog taking its process down still count beside it (`_explains_a_death`); any other
        # failure outranks every fallback.
        if any(id(failure) not in fallbacks and failure.kind != "killed" and not is_cancelled_task(failure)
               for failure in found):
            found = [failure for failure in found if id(failure) not in fallbacks]
        elif any(failure.kind == "killed" for failure in found):
            found = [failure for failure in found if id(failure) not in fallbacks or _explains_a_death(failure)]
        self.failures = [marked_cut(failure) if failure.offset <= self._last_content_offset < failure.end_offset else failure
                         for failure in join_inner_errors(join_second_paragraphs(fold_kernel_prints(found)))]
        return self.failures

    def _note_cann_report(self, text: str) -> None:
        """Follow a CANN error report line by line (device_errors.CANN_REPORT_LINE), for the line being fed: whether
        it continues a report opened above it, whether that report is torch_npu's NPU warning's."""
        if self._in_cann_report and CANN_REPORT_LINE.match(text) is not None:
            self._cann_continues = True
            return
        self._cann_continues = self._cann_report_failed = False
        self._under_npu_warning = NPU_WARNING_WORDS in text
        self._in_cann_report = self._under_npu_warning or CANN_INNER_WORDS in text or (
            text[:1] == "E" and CANN_REPORT_LINE.match(text) is not None)

    def _cann_report_goes_on(self, text: str) -> bool:
        """A line of a CANN report that is no failure of its own: any line of a report under torch_npu's NPU warning
        (the warning's, the run went on: hiyouga/LlamaFactory#5347), or an inner report line after a line of the same
        report that already is the failure (one error manager's stack of one failure, sgl-project/sglang#9226)."""
        return self._cann_continues and (self._under_npu_warning or (self._cann_report_failed and CANN_INNER_WORDS in text))

    def _went_on_after_device_line(self, failure: Failure) -> bool:
        before = self._device_lines.get(failure.offset)
        return before is not None and (failure.offset < max(self._ready_offset, self._went_on_offset)
                                       or self._content_lines - before - 1 > REACH)

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
        if kind is LineKind.OTHER or kind is LineKind.SOURCE or self._split_bodies.holding(line.stream):
            member = self._split_bodies.holding(line.stream) and text.lstrip()[:1] in ('"', "}")
            if (split_body := self._split_bodies.feed(line)) is not None:
                # a server's error body the paste spread over lines (split_bodies.py): read as the one line it was
                first, joined = split_body
                record = Collector("line", first, Phase.DONE, context=self._context(), fallback=is_typeless_engine_line(joined))
                record.add(LineKind.OTHER, first, seq, text=joined)
                self._register(line.stream, record)
                return
            if member:
                return  # a member of a body still open (`"type": "BadRequestError",`): no failure of its own
        started = self._start(kind, text, line)
        if (
            started is not None
            and started[0].fallback
            and kind is LineKind.OTHER
            and MESSAGE_SECOND_PARAGRAPH.match(text.lstrip(" \t>*`\"'"))
            and (opening := self._first_paragraph_above(line.stream)) is not None
        ):
            # a library's second paragraph read as a failure of its own, the paragraph above it the message's opening
            # with no type line: that opening names the cause, and the failure is the message it opens (only
            # transformers' advice paragraph is such a fallback; torch.compile's `from user code:` and `Set TORCH_LOGS=`
            # start none, so the other alternatives of MESSAGE_SECOND_PARAGRAPH never reach here)
            started = (Collector("bare", line, Phase.DONE, context=self._context(), fallback=True), opening)
        if started is None and text[:1] in " \t" and kind is LineKind.SOURCE:
            # An indented line nobody took: a Markdown code block, or a paste indented as a whole.
            body = text.lstrip()
            started = self._start(classify(body), body, line)
            if started is not None:
                started[0].indent = _indentation(text)
        if (
            started is None
            and ("rror" in text or "xception" in text)  # what a quoted failure says: most lines do not
            # a record's text is read only when it is an error record (`ERROR … [core.py:700] EngineCore hit an
            # exception: ValueError: …`): its inline exception is then a fallback, as in a sentence
            and (not line.starts_record or line.meta.level in ("ERROR", "CRITICAL"))
            and kind in (LineKind.OTHER, LineKind.EXCEPTION)
        ):
            quoted = embedded_failure(text)
            if quoted is not None and ":" not in quoted and not states_the_failure(text, quoted):
                quoted = None  # a type alone, in a sentence that does not say it happened (`is this an \`X\`?`)
            if quoted is not None:
                kind_of: FailureKind = "usage" if USAGE_ERROR.match(quoted) else "bare"
                started = (Collector(kind_of, line, Phase.DONE, context=self._context(), mention=True), quoted)
            elif (usage := prose_usage_error(text)) is not None:
                started = (Collector("usage", line, Phase.DONE, context=self._context(), fallback=True), usage)
            elif (usage := retyped_usage_error(text)) is not None:
                # retyped by hand, its spacing changed: read as argparse prints it, said to be inferred
                started = (Collector("usage", line, Phase.DONE, context=self._context(), fallback=True,
                                     in_words="retyped"), usage)
            elif (named := _unquoted_failure(text)) is not None:
                started = (Collector("bare", line, Phase.DONE, context=self._context(), fallback=True,
                                     stated=not line.starts_record), named)
            if started is not None and line.starts_record:
                self._keep_context(text, True)  # an error record stays the context of what fails next
        if (
            started is None
            and kind is LineKind.OTHER
            and not line.starts_record
            and may_quote_a_failure(text)
            and (quoted_message := self._quoted_engine_message(text)) is not None
        ):
            # a message a sentence quotes without its type, the raise site index's (prose_failures.py): a fallback;
            # one read only with its retyped spacing or quotes undone is said to be inferred
            named, retyped = quoted_message
            started = (Collector("bare", line, Phase.DONE, context=self._context(), fallback=True, stated=True,
                                 in_words="retyped" if retyped else ""), named)
        if (
            started is None
            and kind is LineKind.OTHER
            and "' from '" in text
            and (named := import_name_fragment(text, self._content_above(line.stream))) is not None
        ):
            # only the tail of CPython's `cannot import name` error, retyped in prose (prose_failures.py): a fallback
            started = (Collector("bare", line, Phase.DONE, context=self._context(), fallback=True, stated=True), named)
        if (
            started is None
            and kind is LineKind.OTHER
            and not line.starts_record
            and (named := stated_failure(text)) is not None
        ):
            # a sentence that says the run failed with an error class it names in words, no error line pasted
            # (stated_failures.py): a fallback, its exception inferred
            record = Collector("bare", line, Phase.DONE, context=self._context(), fallback=True, stated=True,
                               in_words="stated")
            if self._stated_at is None:
                self._stated_at = line.offset
            started = (record, named)
        if (
            started is None
            and kind is LineKind.OTHER
            and (not line.starts_record or line.meta.level in ("ERROR", "CRITICAL"))
            and (banner := self._banner_opening(text)) is not None
        ):
            # the first line of a package's banner of several lines, its type line lost: a fallback, the lines below
            # it its message as they are under the type line
            started = (Collector("bare", line, Phase.MESSAGE, context=self._context(), fallback=True), banner)
        if (
            started is None
            and kind in (LineKind.OTHER, LineKind.EXCEPTION)  # `ERROR: <message>` reads as an exception line of no type
            and self._record_lookups_left > 0
            and ("ERROR" in text or "CRITICAL" in text or line.meta.level in ("ERROR", "CRITICAL"))
            and (logged := self._engine_text(error_record_candidates(line))) is not None
        ) or (
            # (a JSON error body's `"type":"BadRequestError"` reads as a quoted mention: the engine's message beats it)
            (started is None or started[0].mention)
            and kind is LineKind.OTHER
            and self._record_lookups_left > 0
            and may_hold_status(text)  # `400 Bad Request: …`, `HTTP 400: …`, `Error code: 400 - …`
            and (logged := self._engine_text(status_candidates(text))) is not None
        ) or (
            started is None
            and kind is LineKind.OTHER
            and self._record_lookups_left > 0
            and is_command_line(self._previous_text.get(line.stream, ""))  # the one line the launch printed
            and (logged := self._engine_text(plain_candidates(line), cut=True, logged=True)) is not None
        ):
            # an engine's error text in an ERROR record, its type line lost (a wrapper logging str(exc)), after the HTTP
            # error status a client printed (logged_errors.status_candidates), or alone right after the command that
            # launched it: a fallback, whole on its one line, so closed at once (a traceback the wrapper prints next is
            # a failure of its own)
            self._add_engine_text(line, seq, logged)
            return
        if started is None and kind is LineKind.OTHER and (named_type := notebook_exception_type(text)) is not None:
            # IPython's header of a traceback (notebook.py): its type, the message below not read; a fallback
            record = Collector("bare", line, Phase.DONE, context=self._context(), fallback=True)
            record.add(LineKind.EXCEPTION, line, seq, text=named_type)
            self._register(line.stream, record)
            self._close(line.stream, record)
            return
        if (
            started is None
            and kind is LineKind.OTHER
            and "assert" in text
            and (not line.starts_record or line.meta.level in ("ERROR", "CRITICAL"))
            and (statement := quoted_assert_statement(text)) is not None
        ):
            # an assert statement a sentence says failed (prose_failures.py): an AssertionError raised there, its
            # message and place unknown; the failure only of a paste that shows no other
            self._add_statement_failure(line, seq, statement, Frame(file=UNPASTED_FRAME, line=None, function=None,
                                                                    source=statement))
            return
        if (
            started is None
            and kind in (LineKind.SOURCE, LineKind.OTHER)
            and ("raise" in text or "assert" in text)
            and raised_type(text) is not None
            and stripped_frames_above(text, self._recent_texts.get(line.stream, ()))
        ):
            # the raising statement under frames that lost their `File` lines, no exception line (raising_statement.py):
            # a failure of the type it names, the message unknown; the failure only of a paste that shows no other
            # the frame line above it, when it kept its file and function, places the statement (the engine's check)
            self._add_statement_failure(line, seq, text.strip(),
                                        statement_frame(text, self._recent_texts.get(line.stream, ()), UNPASTED_FRAME))
            return
        if started is None:
            if kind in (LineKind.OTHER, LineKind.SOURCE, LineKind.EXCEPTION):
                self._note_plain_line(kind, line, seq)
                self._instruction_tail.feed(line, seq)
            if kind is LineKind.SOURCE and text[:1] in " \t":
                above = self._previous_text.get(line.stream)
                self._indented_tail.feed(line, seq, opens_paragraph=above is None or not above.strip()
                                         or MARKDOWN_SCAFFOLD.match(above) is not None)
            if (
                kind is not LineKind.BLANK
                and not (text[:1] in "`~<#" and MARKDOWN_SCAFFOLD.match(text))
                and not _INTERRUPT_ECHO.match(text)
                and not cut_traceback_header(text)
            ):
                # (a paste's closing fence or `</details>` is not its last line, nor the user's Ctrl-C after it)
                self._last_unread[line.stream] = (line, seq) if kind is LineKind.OTHER else None
            return
        if kind is LineKind.HEADER:
            # the line a traceback cut off: read like a paste's last line when that traceback is the user's Ctrl-C
            self._unread_before_traceback[line.stream] = self._last_unread.get(line.stream)
        self._last_unread[line.stream] = None
        new, first_text = started
        if new.kind == "bare" and (source := ASSERT_SOURCE_ABOVE.match(self._source_above.get(line.stream, ""))):
            if BARE_ASSERTION_ERROR.match(first_text):
                new.assert_source = source["statement"]
        elif new.mention and BARE_ASSERTION_ERROR.match(first_text) and (statement := quoted_assert_statement(text)):
            new.assert_source = statement  # `crashes with an \`assert x\` \`AssertionError\``: the check that failed
        new.add(kind if first_text is text else classify(first_text), line, seq, text=first_text)
        self._note_stated(new, line)
        self._register(line.stream, new)

    def _note_stated(self, new: Collector, line: LogLine) -> None:
        """Remember a line where a person's sentence states an error, and for a traceback starting on this line the
        last such sentence above it in its stream (_stated_above_cut reads them)."""
        if new.stated:
            self._last_stated[line.stream] = line.offset
        elif new.kind == "traceback" and (stated := self._last_stated.get(line.stream)) is not None:
            self._stated_above[line.offset] = stated

    def _banner_opening(self, text: str) -> str | None:
        """`Type: line` when the line is the whole first line of a message of several lines that an indexed raise site
        raises and that says something could not be loaded or found (facts/engine_messages.banner_raised_as), else
        None.  Read only for lines with those words, within a budget of its own."""
        if self._banner_lookups_left <= 0 or len(text) > MAX_BANNER_LINE or not _LOAD_FAILURE.search(text):
            return None
        from logsleuth.facts.engine_messages import banner_raised_as  # the index is read only for such lines

        self._banner_lookups_left -= 1
        body = text.strip()
        type_name = banner_raised_as(body)
        return f"{type_name}: {body}" if type_name is not None else None

    def _first_paragraph_above(self, stream: str) -> str | None:
        """`Type: message` of the message a paragraph right above opens (its last lines, joined as a paste that
        hard-wrapped it), typed by the raise site index, else None."""
        content = list(self._recent_content.get(stream, ()))
        for lines in range(1, len(content) + 1):
            joined = " ".join(part.strip() for part in content[-lines:])
            if len(joined) >= MIN_FIXED and (named := self._engine_text(message_candidates(joined), cut=True)) is not None:
                return named
        return None

    def _content_above(self, stream: str) -> str:
        """The last line of content before this one in the stream (a blank line between them skipped), or ""."""
        content = self._recent_content.get(stream)
        return content[-1] if content else ""

    def _add_statement_failure(self, line: LogLine, seq: int, statement: str, place: Frame) -> None:
        """A failure of the type a raising statement names, its exception line not pasted (raising_statement.py): the
        statement is its innermost frame's source, at `place`; a fallback failure of one line."""
        raised = raised_type(statement)
        if raised is None:
            return
        record = Collector("bare", line, Phase.DONE, context=self._context(), fallback=True)
        record.assert_source, record.typed_by_statement, record.statement_place = statement, True, place
        record.add(LineKind.EXCEPTION, line, seq, text=raised)
        self._register(line.stream, record)
        self._close(line.stream, record)

    def _add_engine_text(self, line: LogLine, seq: int, logged: str) -> None:
        """An engine's message read against the raise site index (`Type: message`): a fallback failure of one line."""
        record = Collector("bare", line, Phase.DONE, context=self._context(), fallback=True)
        record.add(LineKind.EXCEPTION, line, seq, text=logged)
        self._register(line.stream, record)
        self._close(line.stream, record)
        if line.meta.level in ("ERROR", "CRITICAL"):
            # a fallback: when a failure printed after it outranks it (a client's `openai.InternalServerError: …` for
            # the request it failed), the record stays that failure's context, as any error record before it does
            self._keep_context(line.text, True)

    def _read_last_lines(self, last_lines: dict[str, tuple[LogLine, int] | None]) -> None:
        """A paste that shows no failure: each stream's last line, when no collector took it, is read against the raise
        site index (a bare engine message the paste ends on, with no type and no record header)."""
        for last in list(last_lines.values())[:MAX_LAST_LINES_READ]:
            if last is None or self._record_lookups_left <= 0:
                continue
            line, seq = last
            if THREAD_INTRO.match(line.text.strip()):
                self._add_cut_traceback(line, seq)
                continue
            candidates = plain_candidates(line) or last_record_candidates(line)
            if (logged := self._engine_text(candidates, cut=True, logged=True)) is not None:
                self._add_engine_text(line, seq, logged)

    def _add_cut_traceback(self, line: LogLine, seq: int) -> None:
        """A paste that ends on the line CPython prints right before the traceback of a thread or a process that died
        of an uncaught exception (`Exception in thread Thread-13 (backup_thread_func):`, Lib/threading.py excepthook;
        `Process SpawnProcess-1:`, Lib/multiprocessing/process.py _bootstrap), the traceback cut off: a traceback cut
        before its frames, as its `Traceback (most recent call last):` alone is (sgl-project/sglang#9292)."""
        record = Collector("traceback", line, Phase.FRAMES, header=line.text.strip(), context=self._context(),
                           fallback=True)
        record.add(LineKind.HEADER, line, seq)
        self._register(line.stream, record)
        self._close(line.stream, record)

    def _read_last_error_record(self) -> None:
        """A paste that shows no failure and ends on an ERROR or CRITICAL record of a logger's own format, its traceback
        cut off or never printed, whose text an engine's code raises or logs as an error (engine_message: the raise
        site index's raised and logged sites, CPython's own message templates, a package's raised messages): that
        record is where the run failed.  vLLM's EngineCore logs `Invocation of collective_rpc method failed`
        (v1/engine/core.py, logger.exception) before the traceback the paste stops short of (modelscope/ms-swift#6866).
        An error record with anything after it (progress, a served request, a retry) was survived, so only the paste's
        very last line of content is read.  No failure either: a record no engine logs (a wrapper's `request cancelled
        by the client`); one that says in its own words the program went on (SAYS_IT_WENT_ON: `(non-fatal)`,
        `falling back to …`, `retrying`); one an engine's HTTP request handling logs (`Exception caught. Request id:
        …`, `Error in preprocessing prompt inputs`: one request refused, the server serving on).  The failure is kept
        as cut: the traceback below the record, in the server's log, is what to paste next (Failure.ends_paste)."""
        for last in self._last_unread.values():
            if last is None or self._record_lookups_left <= 0:
                continue
            line, seq = last
            if line.offset != self._last_content_offset or line.meta.level not in ("ERROR", "CRITICAL"):
                continue
            if len(line.text) > MAX_RECORD or SAYS_IT_WENT_ON.search(line.text):
                continue
            if (logged := self._engine_text(error_record_candidates(line), cut=True, logged=True)) is None:
                continue
            if logged_by_request_handler(logged.partition(": ")[2]):
                continue
            text = line.text.strip()
            # (the record itself, and the traceback header the paste cut after it: no line before it)
            context = tuple(above for above in self._context() if above.strip() != text and not cut_traceback_header(above))
            record = Collector("bare", line, Phase.DONE, context=context, fallback=True, truncated=True)
            record.ends_paste = True
            record.add(LineKind.EXCEPTION, line, seq, text=logged)
            self._register(line.stream, record)
            self._close(line.stream, record)

    def _read_indented_tail(self) -> None:
        """A paste that shows no failure and ends on an indented paragraph that continues nothing above it: the
        paragraph's lines joined, read against the raise site index as a last line is (indented_tail.py)."""
        for line, seq, joined in self._indented_tail.paragraphs(self._last_content)[:MAX_LAST_LINES_READ]:
            if self._record_lookups_left <= 0 or len(joined) < MIN_FIXED or len(joined) > MAX_RECORD:
                continue
            if (logged := self._engine_text(message_candidates(joined), cut=True, logged=True)) is not None:
                self._add_engine_text(line, seq, logged)

    def _read_instruction_tail(self) -> None:
        """A paste that shows no failure and ends on lines of an engine's message of several lines (its numbered
        solutions), its first line cut off: that message, typed as the engine raises it, kept as cut
        (instruction_tail.py)."""
        for run in self._instruction_tail.tails(self._last_content)[:MAX_LAST_LINES_READ]:
            if run[0][0].offset < self._ready_offset:
                continue  # the server came up before: a healthy log that ends on the same lines quoted
            found = engine_block([line.text for line, _ in run], self._instruction_tail.stages_ended)
            if found is None:
                continue
            opening, lines = found
            first, seq = run[-len(lines)]
            record = Collector("bare", first, Phase.MESSAGE, context=self._context(), fallback=True, truncated=True)
            record.ends_paste = True
            record.add(LineKind.EXCEPTION, first, seq, text=opening)
            for (line, at), text in zip(run[-len(lines):], lines, strict=True):
                record.add(LineKind.OTHER, line, at, text=text)
            self._register(first.stream, record)
            self._close(first.stream, record)

    def _quoted_engine_message(self, text: str) -> tuple[str, bool] | None:
        """`Type: message` of a message a sentence that says it failed quotes (prose_failures.py), typed by the raise
        site that raises it, and whether it was read only as retyped (its spacing or curled quotes undone), else
        None."""
        if self._record_lookups_left <= 0 or not (quoted := quoted_message_candidates(text)):
            return None
        found = self._engine_text(quoted, cut=True)
        if found is not None:
            return (found, False) if quotes_a_failure(text, found.split(": ", 1)[1][:40]) else None
        if (variants := retyped_variants(quoted)) and (found := self._engine_text(variants, cut=True)) is not None:
            return (found, True) if quotes_a_failure(text.translate(CURLED_QUOTES), found.split(": ", 1)[1][:12]) else None
        # retyped with its letter case or spacing changed (`SGlang only supports sm 75 and  above`): the engine's own
        # text, matched with case and white space set aside (engine_messages.retyped_raised_as)
        from logsleuth.facts.engine_messages import retyped_raised_as  # the index is read only for such lines

        for candidate in quoted[:MAX_RETYPED_CANDIDATES]:
            if (found := retyped_raised_as(candidate)) is not None:
                return (found, True) if quotes_a_failure(text, candidate[:12]) else None
        return None

    def _engine_text(self, candidates: list[str], *, cut: bool = False, logged: bool = False) -> str | None:
        """The engine's message among a record's candidates.  Only a line that has candidates is charged to the lookup
        budget: charging every line that merely holds a status word spent it on a long log's INFO lines, and the
        ERROR record at its end was never read.  `cut`: a bare line (after a command, ending a paste) may be the
        message's opening only, the paste stopped short."""
        if not candidates:
            return None
        self._record_lookups_left -= 1
        return engine_message(candidates, cut=cut, logged=logged)

    def _start(self, kind: LineKind, text: str, line: LogLine) -> tuple[Collector, str] | None:
        """The collector a line starts (and the text it keeps of the line), or None."""
        new: Collector | None = None
        if (kind in (LineKind.OTHER, LineKind.EXCEPTION) and (usage := USAGE_ERROR.match(text))
                and argparse_error(usage, self._usages)):
            # a message the line's wrap cut takes its rest from the next line (Collector.accepts)
            phase = Phase.MESSAGE if usage_message_cut(usage["msg"]) else Phase.DONE
            new = Collector("usage", line, phase, context=self._context())
        elif text.startswith("terminate called") and CPP_TERMINATE.match(text):
            new = Collector("abort", line, Phase.MESSAGE, context=self._context())
        elif kind in (LineKind.OTHER, LineKind.EXCEPTION) and native_header(text) is not None:
            # a signal handler's report, glog's FATAL, a Rust panic, pip's resolver: read like a C++ abort
            new = Collector("abort", line, Phase.MESSAGE, context=self._context())
        elif kind in (LineKind.OTHER, LineKind.EXCEPTION) and shell_notice(text) is not None:
            # the shell's `Segmentation fault (core dumped)`: the failure only of a paste that shows no other
            new = Collector("abort", line, Phase.DONE, context=self._context(), fallback=True)
        elif glog_record(text, "E") and GLOG_ERROR.match(text):
            new = Collector("line", line, Phase.DONE, context=self._context(), fallback=True)
        elif (fatal := _fatal_output(kind, text)) is not None and not (
            line.meta.level in QUIET_LEVELS
            and (_quotes_value_error(fatal[0], text, line)
                 or (device_error_line(text) is not None and (line.starts_record or not gpu_library_line(text))))
        ) and not (self._cann_continues and self._cann_report_goes_on(text)):
            # (a runtime's status or pydantic's `Value error, …` quoted in an INFO or WARNING record, its header taken
            # off, was survived: a request refused, a retry; the process went on)
            typeless = is_typeless_engine_line(text)  # an engine's logged error text: only if nothing else failed
            own = _unstamped(line) if fatal[0] in STOPS_A_START_ONLY else line
            new = Collector("line", own, Phase.DONE, context=self._context(), fallback=typeless)
            device = typeless and device_error_line(text) is not None
            self._awaiting_progress = self._awaiting_progress or fatal[0] in STOPS_A_START_ONLY
            if device:
                self._device_lines[line.offset] = self._content_lines - 1
            if fatal[0] == NPU_ERROR:
                # the report's lines below it (CANN's inner report under its `[ERROR] … ERR99999 …` or `EE1001:` record)
                # are this failure's (_cann_report_goes_on)
                self._in_cann_report = self._cann_report_failed = True
            if fatal[0] in KEPT_AS_CONTEXT or device or CUDACHECK_WORDS in text:
                # a GPU runtime's abort, a companion tool's failure or a kernel's CUDACHECK stays the context of what
                # fails next (the faulthandler dump of the abort it caused, the worker's death), as an error record does
                self._keep_context(text, True)
        elif kind is LineKind.HEADER:
            head = text.strip()[: -len(TRACEBACK_HEADER)].strip()
            previous = self._previous_text.get(line.stream, "")
            if not head and THREAD_INTRO.match(previous.strip()):
                head = previous.strip()
            # torch.compile's account of a frame it ran eagerly instead: a failure only of a paste that shows no other
            gave_up = (None if self._taken_since_above.get(line.stream)
                       else compile_fell_back(self._lines_above.get(line.stream, ())))
            new = Collector("traceback", line, Phase.FRAMES, header=gave_up or head or None, context=self._context(),
                            fallback=gave_up is not None)
            new.lines_above = self._lines_above_header(line.stream, previous, head)
            if not head and text[:1] in " \t":
                new.indent = _indentation(text)  # a traceback in an indented block
        elif kind is LineKind.GROUP:
            m = GROUP_AFTER_TEXT.match(text)
            group_head: str | None = m["head"] if m else None
            new = Collector("traceback", line, Phase.GROUP, header=group_head, context=self._context())
            if m and group_head:
                return new, m["group"]  # the margins line up with the group alone
            new.indent = _indentation(text)[2:]  # CPython indents a top-level group's header by two
            return new, text[len(new.indent) :]
        elif kind is LineKind.FRAME:
            new = Collector("traceback", line, Phase.FRAMES, truncated=True, context=self._context(),
                            fallback=NATIVE_FILE_ROW.match(text) is not None)
        elif kind is LineKind.SEPARATOR:
            new = Collector("traceback", line, Phase.SEPARATOR, truncated=True, context=self._context())
            new.phase = Phase.BLANK  # add() moves BLANK -> SEPARATOR on the separator line
            new.lead = frameless_cause(self._lines_above.get(line.stream, ()))
        elif kind is LineKind.FATAL:
            new = Collector("fatal", line, Phase.FATAL, context=self._context())
        elif kind is LineKind.EXCEPTION:
            m = STRICT_EXCEPTION_LINE.match(text)
            if m and m["type"].rsplit(".", 1)[-1] not in NOT_BARE_TYPES:
                new = Collector("bare", line, Phase.MESSAGE, context=self._context())
            elif m is None and text.startswith(("Exception: ", "Error: ")) and GENERIC_EXCEPTION_LINE.match(text):
                # `Exception: …` alone says little (a program's own print may look like it): it is the
                # failure only of a log that has no other.
                new = Collector("bare", line, Phase.MESSAGE, context=self._context(), fallback=True)
        return None if new is None else (new, text)

    def _relogged(self, text: str, line: LogLine) -> bool:
        """The same exception line re-logged right after its traceback."""
        return self._recent_finals.get(text.strip(), -(10**9)) >= line.number - 400

    def _error_said_above(self, stream: str, previous: str) -> tuple[str, ...]:
        """The error lines a traceback's header may follow, nearest first: the line right above it, and those of the
        last few lines of content (a paste leaves a blank line, a fence, a heading or `<details>`, or the server a line
        of its own, between the error it logged and the traceback) that say they are an error.  `_build` takes the first
        that names the traceback (a nearer `Error log:` names nothing and gives way to the record above it)."""
        errors = self._error_records.get(stream, ())

        def says_error(text: str) -> bool:
            return ("rror" in text or "xception" in text or "failed: " in text or is_error_record(text)
                    or (("('" in text or '("' in text) and text in errors and record_repr(text) is not None))  # (repr(e))

        said = [previous] if says_error(previous) else []
        # (an exception line up there is the traceback's own, pasted above it: repair.py moves it back)
        said.extend(text for text in reversed(list(self._recent_content.get(stream, ()))[-ERROR_SAID_REACH:])
                    if text != previous and says_error(text) and not STRICT_EXCEPTION_LINE.match(text.strip()))
        return tuple(said)

    def _lines_above_header(self, stream: str, previous: str, head: str) -> tuple[LineAbove, ...]:
        """The lines above a traceback's header that may name it, nearest first, each with its readers: error lines
        when the header has no text before it, an error the engine logged when that text names no error either
        (`Scheduler hit an exception:`)."""
        said = set(self._error_said_above(stream, previous)) if not head else set()
        logged = set(self._logged_errors_above(stream)) if not head or _announces_only(head) else set()
        if not said and not logged:
            return ()
        content = list(reversed(self._recent_content.get(stream, ())))
        nearest_first = content if content[:1] == [previous] else [previous, *content]
        errors = self._error_records.get(stream, ())
        return tuple(LineAbove(text, text in said, text in logged, text in errors) for text in dict.fromkeys(nearest_first)
                     if text in said or text in logged)

    def _logged_errors_above(self, stream: str) -> tuple[str, ...]:
        """The lines of content above a traceback's header that may be an error the engine logs, nearest first (read
        against the raise site index only when the traceback lost its exception line: `_build`)."""
        return tuple(text for text in reversed(self._recent_content.get(stream, ()))
                     if "rror" in text or "fail" in text or is_error_record(text))

    def _context(self) -> tuple[str, ...]:
        """The recent warning lines, and what a native backtrace just before says of its crash, for a failure
        starting now (built only then: this is per line)."""
        if self._native_dump and self._fed - self._native_dump_at <= NATIVE_DUMP_REACH:
            return (*self._recent_context, *native_dump_evidence(self._native_dump))
        return tuple(self._recent_context)

    def _kill_context(self) -> tuple[str, ...]:
        """A kill notice's context: a compiler's crash report (COMPILER_CRASH_REPORT) only when it is the last line of
        content above the notice; any other line between (the server coming up, serving) and it names no cause."""
        context = self._context()
        if COMPILER_CRASH_REPORT.search(self._above):
            return context
        return tuple(text for text in context if not COMPILER_CRASH_REPORT.search(text))

    def _note_native_frame(self, text: str, innermost: bool) -> None:
        """A row of a native backtrace outside any failure: kept for the failure it explains (`_context`)."""
        if innermost or self._fed - self._native_dump_at > 1:
            self._native_dump = []  # a new dump
        if len(self._native_dump) < NATIVE_DUMP_LINES:
            self._native_dump.append(text)
        self._native_dump_at = self._fed

    def _register(self, stream: str, new: Collector) -> None:
        if new.context:
            new.error_context = self._error_context()
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
        if any(word in text for word in STARTUP_BOUNDARY_WORDS) and STARTUP_BOUNDARY.search(text):
            self._forget_budget(None)
        if ("ready to roll" in text or "startup complete" in text) and READY_LINE.search(text):
            self._ready_offset = line.offset
            return
        if "kill_process_tree" in text or "Dump" in text:
            if CASCADE_CONTEXT_LINE.search(text):
                self.cascade_lines.append(line)
                return
        if (innermost := native_frame(text)) is not None:
            self._note_native_frame(text, innermost)
            return
        if BACKTRACE_WORDS in text and opens_backtrace(text):
            self._read_c10_error_above(line, seq)
            return
        if any(word in text for word in KILL_LINE_WORDS) and KILL_LINE.search(text):
            collector = Collector("killed", line, Phase.DONE, context=self._kill_context())
            collector.add(kind, line, seq)
            self.failures.append(collector.build())
            return
        if any(word in text for word in RAY_WORKER_DIED_WORDS) and RAY_WORKER_DIED.search(text):
            collector = Collector("killed", line, Phase.DONE, context=self._context())
            collector.add(kind, line, seq, text=without_ray_cause_guesses(text))
            self.failures.append(collector.build())
            return
        lowered = text.lower()
        budget = any(word in text for word in BUDGET_WORDS) and BUDGET_REPORT.search(text) is not None
        if budget:
            self._forget_budget(line.stream)
        # torch's c10d warning of a store socket that timed out (its words say no error, and the c10 record's `[W…]`
        # level is not parsed): an error of the rendezvous, kept for a traceback it leaves cut (reasoning/network.py)
        rendezvous = rendezvous_warning(text)
        kept_anyway = (any(word in lowered for word in CONTEXT_WORDS) and CONTEXT_HINT.search(text)
                       or line.meta.level in ("WARNING", "ERROR", "CRITICAL") or budget and BUDGET_LINE.search(text))
        if kept_anyway or rendezvous:
            # (shown above a traceback cut under it; reasoning/root_cause.py reads it as no cause of a failure that
            # shows its own exception line: a start-up retries it, and a Ctrl-C under it is no NCCL cascade)
            self._keep_context(text, rendezvous or reads_as_error(text, line.meta.level))
            if rendezvous and not kept_anyway:
                self._rendezvous_kept.add(text.strip())
                self._rendezvous_followed = False
            if budget:
                self._budget_lines[line.stream] = text.strip()

    def _read_c10_error_above(self, line: LogLine, seq: int) -> None:
        """c10's backtrace opening under a plain line that reads as an error: that line is a c10::Error's message,
        printed with no Python exception (c10_blocks.py), a fallback failure of one line."""
        block = list(self._blocks.get(line.stream, ()))[:-1]  # (the backtrace's opening itself is the last)
        above = self._last_unread.get(line.stream)  # (a line a reader took, an error record, is its own failure)
        if (above is None or above[1] != seq - 1 or not block or block[-1][1] != seq - 1
                or (said := error_above_backtrace([kept for kept, _ in block])) is None):
            return
        first = next((above, at) for above, at in block if above.text.strip() == said)
        context = tuple(text for text in self._context() if text.strip() != said)  # (the message's own line)
        record = Collector("bare", _unstamped(first[0]), Phase.DONE, context=context, fallback=True, given_type=C10_ERROR)
        record.add(LineKind.OTHER, _unstamped(first[0]), first[1], text=said)
        self._awaiting_progress = True
        self._register(line.stream, record)
        self._close(line.stream, record)
        self._last_unread[line.stream] = None

    def _note_block_line(self, kind: LineKind, line: LogLine, seq: int) -> None:
        """Keep the stream's lines since its last record header or blank line (a c10::Error's what() and the record
        it is printed in, c10_blocks.error_above_backtrace)."""
        block = self._blocks.get(line.stream)
        if block is None:
            block = self._blocks[line.stream] = deque(maxlen=MESSAGE_REACH + 2)  # (the header, the message, the opening)
        if kind is LineKind.BLANK or line.starts_record:
            block.clear()
        if kind is not LineKind.BLANK:
            block.append((line, seq))

    def _keep_context(self, text: str, erroneous: bool) -> None:
        """A line kept as the context of what fails next, and whether it reads as an error (Failure.error_context)."""
        text = text.strip()
        self._recent_context.append(text)
        if erroneous:
            self._erroneous.add(text)
        if len(self._erroneous) > CONTEXT_LINES:
            self._erroneous &= set(self._recent_context)

    def _forget_refused_flush(self, text: str) -> None:
        """Drop SGLang's refused flush from the context once the scheduler records a batch served or the cache flushed:
        the requests it waited for ran on normally, so it says nothing of a later failure."""
        if ("batch" in text or "flushed" in text) and SERVED_AFTER_FLUSH.search(text) and any(
                REFUSED_FLUSH.search(kept) for kept in self._recent_context):
            self._recent_context = deque((kept for kept in self._recent_context if not REFUSED_FLUSH.search(kept)),
                                         maxlen=CONTEXT_LINES)

    def _age_rendezvous_warnings(self, text: str) -> None:
        """Keep torch's c10d store-socket warnings as context only for the line right after them: a failure that starts
        there was cut under them (split 19's B-03); once any other line of content followed (a start-up that went on,
        another record), they say nothing of a later failure (a run that recovered from them)."""
        if not self._rendezvous_kept:
            return
        if self._rendezvous_followed:
            kept = self._rendezvous_kept
            self._recent_context = deque((line for line in self._recent_context if line not in kept), maxlen=CONTEXT_LINES)
            self._rendezvous_kept = set()
            self._rendezvous_followed = False
        elif not rendezvous_warning(text):
            self._rendezvous_followed = True

    def _error_context(self) -> tuple[str, ...]:
        """Those of the context (`_context`) that read as an error; a native dump's crash evidence always does."""
        return tuple(text for text in self._context() if text in self._erroneous or text not in self._recent_context)

    def _forget_budget(self, stream: str | None) -> None:
        """Drop the budget lines kept as context (of one process's stream, or of all at a new launch or a server
        up and serving): a budget line is evidence only for the start-up it belongs to (a relaunch that fits, or a
        failure ten minutes into serving, is not that start-up's)."""
        dropped = {text for key, text in self._budget_lines.items() if stream is None or key == stream}
        if not dropped:
            return
        self._budget_lines = {key: text for key, text in self._budget_lines.items() if text not in dropped}
        self._recent_context = deque((text for text in self._recent_context if text not in dropped),
                                     maxlen=CONTEXT_LINES)

    def _note_fact(self, line: LogLine) -> None:
        """A runtime fact line: the log it follows has ended, so whatever was being printed is complete.  The
        strongest fact so far (the first of equal rank) is the one fact failure, the other facts its context."""
        for stream in list(self._open):
            self._close_all(stream)
        self._facts.append((line, runtime_fact(line.text)))
        stated = [(fact_line, fact) for fact_line, fact in self._facts if fact is not None]
        if not stated:
            return
        best_line, best = max(stated, key=lambda item: item[1].rank)
        if self._fact_failure is not None and self._fact_failure in self.failures:
            self.failures.remove(self._fact_failure)  # a stronger fact came after it (or the same, rebuilt)
        others = tuple(fact_line.text for fact_line, _ in self._facts if fact_line is not best_line)
        collector = Collector(best.kind, best_line, Phase.DONE, context=(*self._context(), *others))
        collector.add(LineKind.OTHER, best_line, self._seq.get(best_line.stream, 0))
        self._fact_failure = collector.build()
        self.failures.append(self._fact_failure)

    def _close(self, stream: str, collector: Collector) -> None:
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
        for member in redeal(done):
            self._build(member)

    def _build(self, collector: Collector) -> None:
        failure = typed_by_message(collector.build())  # `Error: <CPython's own message>`: the type it names
        failure = without_trailing_cancellation(failure)
        # (a traceback the paste cut before its first whole frame line counts too: the record above it is
        # all it says, Xinference's ERROR record of `str(exc)` over a traceback cut inside its first `File` line,
        # xorbitsai/inference#3020)
        if (collector.lines_above and failure.kind == "traceback" and (failure.final.frames or failure.truncated)
                and lost_its_exception_line(failure.final)):
            failure = named_by_lines_above(failure, collector.lines_above)
        if failure.kind == "traceback" and failure.final.frames and lost_its_exception_line(failure.final):
            failure = named_by_validation_link(failure)  # pydantic's closing line alone above it
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
            if seq - collector.last_seq > gap and not (interleaved and in_step(collector, collectors)):
                self._close(stream, collector)


MAX_RECORD_LOOKUPS = 256  # ERROR records per scan looked up in the raise site index
MAX_BANNER_LOOKUPS = 32  # lines per scan read as the first line of a banner (_banner_opening)
MAX_BANNER_LINE = 512
# The words of a banner that a compiled package prints when it cannot load its library or find its kernel: the
# sgl_kernel, flashinfer and vLLM messages of several lines that banner_raised_as reads say so in these words.
_LOAD_FAILURE = compile_lazily(r"(?i)\b(?:could not|cannot|can't|failed to|unable to) (?:load|find|import|open)\b")
MAX_LAST_LINES_READ = 8  # streams whose last line a paste with no failure has read against the index (ranks, hosts)


def _stated_above_cut(found: list[Failure], stated_above: dict[int, int]) -> list[Failure]:
    """The error a person stated in a sentence above a traceback whose exception line the paste cut off, when that
    traceback is the paste's only other failure (`启动时报错 'X' object has no attribute 'y'` above frames that stop
    short, the retired blind split 13): the sentence names what the traceback lost, so it stays beside it, ahead of
    it.  Only the last sentence a prose reader read above it (`stated_above`, by the traceback's first line): a
    program's own `Exception: …` print, an ERROR record or a banner is no person's statement of the error (review 1
    of stop 50).  At any distance: an issue's form puts its other sections (hardware, versions, context) between the
    description that states the error and the traceback pasted at its end (the retired blind split 13's D-02).  [] for any
    other paste."""
    cut = [failure for failure in found if failure.kind == "traceback" and lost_its_exception_line(failure.final)]
    if len(cut) != 1 or any(failure.kind == "traceback" and failure is not cut[0] for failure in found):
        return []
    at = stated_above.get(cut[0].offset)
    stated = [failure for failure in found if failure.kind == "bare" and failure.offset == at
              and not lost_its_exception_line(failure.final)]
    return stated[-1:]


def _announces_only(head: str) -> bool:
    """Whether the text before a traceback's header on its line names no error (`Scheduler hit an exception:`), only
    says a traceback follows."""
    return embedded_failure(head) is None and inline_failure(head) is None


def _unquoted_failure(text: str) -> str | None:
    """An exception a sentence names without quoting it (`… I get ValueError: …`) or as its repr
    (`… ValueError("…")`), else None: a fallback, the failure only of a paste that shows no other."""
    if ("rror: " in text or "xception: " in text) and (named := inline_failure(text)) is not None:
        return named
    if "rror(" in text or "xception(" in text:
        return repr_failure(text)
    if "rror: " in text or "xception: " in text:
        return retyped_failure(text)
    if '"' in text or "'" in text or "\u201c" in text:
        return said_failure(text)  # `… an AssertionError saying "…"`: the type named, its message quoted
    return None


def _explains_a_death(failure: Failure) -> bool:
    """torch's E record of the NCCL watchdog's timeout, which takes its process down (ProcessGroupNCCL.cpp): what a
    parent's kill notice of that process leaves out."""
    return failure.kind == "line" and WATCHDOG_TIMEOUT in failure.final.message


# The terminal's echo of the user's Ctrl-C (`^C`) and click's line for it (`Aborted!`, click's Abort).
_INTERRUPT_ECHO = compile_lazily(r"^\s*(?:\^C)+\s*(?:Aborted!)?\s*$|^\s*Aborted!\s*$")
# The opening of CPython's traceback header that a paste cut mid-word (`Traceback (mos`): no line of its own, so the
# record above it (an engine's ERROR record naming the error it logs the traceback of: vLLM's worker_base.py
# `logger.exception("Error executing method …. This might cause deadlock in distributed execution.")`, the traceback in
# the same record, vllm-project/vllm#11260) is the paste's last line, as it is when the whole header ends the paste.
_CUT_HEADER_OPENING = "Traceback ("


def cut_traceback_header(text: str) -> bool:
    """Whether the line is only the opening of CPython's traceback header, cut before its end."""
    said = text.strip()
    return said.startswith(_CUT_HEADER_OPENING) and said != TRACEBACK_HEADER and TRACEBACK_HEADER.startswith(said)


# Failures of a start that went no further: Ray's autoscaler's event for a request it cannot place (the request may be
# placed once the cluster scales or frees GPUs), MIOpen's error line (errors.hpp try_ prints and returns the status; the
# caller decides: torch raises `RuntimeError: miopenStatus…` when it gives up) and a c10::Error's what() printed with
# no Python exception (a caught error logged).  A later line showing the start moving on says it was survived.
STOPS_A_START_ONLY = frozenset({RAY_AUTOSCALER_ERROR, MIOPEN_ERROR, C10_ERROR})


def _unstamped(line: LogLine) -> LogLine:
    """The line without the time the normalizer carried down from a record above it, when it starts no record: native
    output or Ray's event line (`(autoscaler +9s) …`) printed beside the records has no time of its own."""
    return line if line.starts_record or line.meta.timestamp is None else line._replace(
        meta=replace(line.meta, timestamp=None))


def _shows_progress(text: str) -> bool:
    """Whether a line shows a start-up went on: a later stage (weights, KV cache, CUDA graphs, the HTTP server), the
    engine up or serving, a call that succeeded, the readiness line."""
    return (went_on(text) or serves(text) or engine_up(text) or past_its_arguments(text)
            or (("ready to roll" in text or "startup complete" in text) and READY_LINE.search(text) is not None))


def _is_user_interrupt(failure: Failure) -> bool:
    """A traceback of KeyboardInterrupt alone (the user's Ctrl-C), no other exception in its chain."""
    return all(block.type == "KeyboardInterrupt" for block in failure.exceptions)


# asyncio's CancelledError (`asyncio.exceptions.CancelledError`, `asyncio.CancelledError`, and before Python 3.8
# `concurrent.futures._base.CancelledError`, which asyncio re-exported): a task was cancelled, by its owner or because
# a task beside it failed and the loop was torn down.
_CANCELLED = compile_lazily(r"^(?:[\w.]+\.)?CancelledError$")


def is_cancelled_task(failure: Failure) -> bool:
    """A traceback of asyncio's CancelledError alone, no other exception in its chain: the task did not fail, it was
    stopped, so any other failure of the paste (an error line a client printed among them) is the one to report."""
    return bool(failure.exceptions) and all(_CANCELLED.match(block.type) for block in failure.exceptions)


def without_trailing_cancellation(failure: Failure) -> Failure:
    """A chain that ends in asyncio's CancelledError raised while another error was handled (`ValueError`, then
    "During handling of the above exception, another exception occurred:", then `CancelledError`): the task was
    cancelled because of that error, so the chain ends at it."""
    blocks = failure.exceptions
    if len(blocks) < 2 or not _CANCELLED.match(blocks[-1].type) or is_cancelled_task(failure):
        return failure
    last = max(index for index, block in enumerate(blocks) if not _CANCELLED.match(block.type))
    kept = (*blocks[:last], replace(blocks[last], relation=None))
    return replace(failure, exceptions=kept)


# A launcher's exception that says its child failed, not why: torchrun's (torch/distributed/elastic/multiprocessing/
# errors ChildFailedError), and CalledProcessError of a Python child's command (accelerate/commands/launch.py
# simple_launcher: `Command '['/usr/bin/python3', 'serve.py']' returned non-zero exit status 1.`).
_CHILD_FAILED = compile_lazily(r"(?:^|\.)ChildFailedError$")
_PYTHON_CHILD_COMMAND = compile_lazily(r"^Command '\[?['\"]?(?:\S*/)?python[\d.]*['\"]?[, ]")


def _ends_a_launch(failure: Failure) -> bool:
    """The user's interrupt or a launcher's report of its child's exit: a trailer of the child's own error."""
    final = failure.final
    return (
        _is_user_interrupt(failure)
        or bool(_CHILD_FAILED.search(final.type))
        or (final.type.endswith("CalledProcessError") and bool(_PYTHON_CHILD_COMMAND.match(final.message.strip())))
    )


# pydantic's ValidationError (pydantic_core's display): `N validation error(s) for <Model>`, then per error its location
# (a field's name; none for a model validator's `Value error, …`), the error indented by two (`  Value error, …`,
# `  Assertion failed, …`, `  Input should be …`) and `    For further information visit https://errors.pydantic.dev/…`.
VALIDATION_TITLE_WORDS = "validation error"
VALIDATION_TITLE = compile_lazily(r"ValidationError: \d+ validation errors? for [A-Za-z_]\w*\s*$")
# (never a frame's `  File "…"` line: another process's traceback interleaved right after the title stays its own)
VALIDATION_LIST_LINE = compile_lazily(
    r"^(?:  (?!File \")[A-Z].*|    For further information visit \S+|[A-Za-z_][\w.\[\]]{0,120})$"
)
MAX_VALIDATION_LIST_LINES = 3 * 8  # three lines per error, the first eight errors
MAX_RETYPED_CANDIDATES = 4  # a quoted message's candidates matched with case and spacing set aside (the first few)
MAX_USAGES_KEPT = 8  # argparse usage lines remembered: a paste holds one per failed launch, rarely more
# The shell's `line N: python: command not found` is a wrapper script's own line (a probe of its PATH, a setup step):
# when the server it goes on to launch says it is ready, nothing the script needed was missing.
# Ray's autoscaler's error event is printed while a request waits: a cluster that scaled up or freed the GPUs after it
# placed the request, and the server came up.
SURVIVABLE_RECORD_TYPES = ("ERROR", UCX_ERROR, COMMAND_NOT_FOUND, RAY_AUTOSCALER_ERROR)


def _is_survivable(failure: Failure) -> bool:
    """A glog or c10 ERROR record read as a failure (collector.py gives it the type `ERROR`), UCX's own ERROR record
    (native_errors.py: a transport UCX may fall back from), a wrapper script's shell notice, a failure read from a warning record, or the traceback of a
    frame torch.compile gave up on and ran eagerly (compile_fell_back): a server logs them and goes on."""
    if failure.kind == "traceback":
        return failure.header is not None and failure.header.startswith(COMPILE_FELL_BACK)
    if failure.kind == "bare" and failure.final.type == C10_ERROR:
        return True  # a c10::Error's what() printed and caught (c10_blocks.py): the server came up after it
    return failure.kind == "line" and (failure.final.type in SURVIVABLE_RECORD_TYPES or failure.meta.level == "WARNING")


# torch.compile's warning when it gives up on a frame and runs it eagerly (torch/_dynamo/exc.py format_error_msg,
# logged by convert_frame.py when config.suppress_errors or a soft failure lets it go on): "WON'T CONVERT {function}
# {file} line {n} \ndue to: \n{traceback}", or with config.verbose "WON'T CONVERT … line {n}\n===== TorchDynamo Stack
# Trace =====\n{traceback}".  The traceback under it was survived: the model runs uncompiled.
COMPILE_FELL_BACK = "WON'T CONVERT "
COMPILE_FELL_BACK_REACH = 3  # lines above the traceback's header: the warning's first line, `due to:` or the banner


def compile_fell_back(above: Iterable[str]) -> str | None:
    """torch.compile's `WON'T CONVERT …` line just above a traceback's header (`above`: the lines no failure took,
    oldest first), else None."""
    for text in list(above)[-COMPILE_FELL_BACK_REACH:]:
        at = text.find(COMPILE_FELL_BACK)  # after a record's prefix, if any (glog's `W1206 … convert_frame.py:2415] `)
        if at >= 0:
            return text[at:].strip()
    return None


def scan(lines: Iterable[LogLine]) -> list[Failure]:
    return FailureScanner().feed_all(lines).finish()

