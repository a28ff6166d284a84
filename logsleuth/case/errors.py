"""Which log lines look like errors, for the case file's list of them (issue 28, item 6).

A person scanning a paste points at these: the words engines, Python, C++ and the shell print when something
failed (`ERROR`, `…Error`, `error:`, `Exception`, `Traceback`, `FATAL`, `Killed`, `terminate called`,
`what():`), and the fatal shapes of the traceback grammar (glog E and F records, native signal handlers, Rust
panics, pip's resolver, an engine's fatal lines, argparse usage errors, kill notices).  The source line CPython
prints under a frame (`raise ValueError(…)`) is code, not an error the log reports, and is left out.

Lines are listed once each, with how often they occur: the same record from eight ranks differs only in its
header (`[2026-03-14 09:26:55 TP3] `), so the key is the text after the header.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from logsleuth.ingest.normalize import after_line_prefix
from logsleuth.lazyre import compile_lazily
from logsleuth.tracebacks import grammar

_ERROR_WORDS = compile_lazily(
    r"ERROR|Error\b|\berror:|Exception\b|Traceback \(most recent call last\)|\bFATAL\b|\bKilled\b"
    r"|terminate called|what\(\):"
)
# A line holds one of these, or none of _ERROR_WORDS can match (a cheap test first: most lines hold none).
_ERROR_LITERALS = ("ERROR", "Error", "error:", "Exception", "Traceback", "FATAL", "Killed", "terminate called", "what():")
# A line of a fatal shape of the grammar holds one of these (or is a glog record, tested apart).
_SHAPE_LITERALS = (
    "rror", "Caught signal", "*** SIG", "panicked", "atchdog", "undefined symbol", "max seq len", "placement group",
    "Abort", "Segmentation fault", "Illegal instruction", "Exit", "Interrupt", "Fault", "Failure", "Timeout",
    "Killed", "sigquit", "exit", "died", '"message"', "ERROR", "Exception", "Traceback", "FATAL", "terminate called",
    "what():",
)
# A record header that differs between ranks or repeats of one record: SGLang's `[time TPn] `, a bracketed time.
_RECORD_HEADER = compile_lazily(r"^\[[^\]]{0,80}\]\s*")
_GLOG_HINT = compile_lazily(r"[EF]\d{4} \d\d:")
_FRAME_PREFIX = compile_lazily(r'^\s*File "')
_TRACEBACK_PIECES = frozenset(
    {grammar.LineKind.FRAME, grammar.LineKind.FAULT_FRAME, grammar.LineKind.CARET, grammar.LineKind.REPEATED}
)
_ERROR_LEVELS = ("ERROR", "CRITICAL", "FATAL")


def _message(record: str) -> str:
    """A line without its process prefix and record header (`record`: the line after its prefix): what it says."""
    return _RECORD_HEADER.sub("", record, count=1) if record[:1] == "[" else record


def is_error_looking(line: str, record: str | None = None) -> bool:
    """Whether a person scanning the log would point at this line as an error (`record`: the line after its
    process prefix and logger header, when the caller has it).

    What the line itself says decides: an ERROR record's header makes its message an error unless the message is
    a piece of a traceback (vLLM logs every line of one as an ERROR record: its frames, source lines and carets
    are the failure region's, not errors of their own)."""
    record = after_line_prefix(line) if record is None else record
    message = _message(record)
    if not message.strip():
        return False
    kind = grammar.classify(message)
    if kind in _TRACEBACK_PIECES:
        return False
    if any(word in message for word in _ERROR_LITERALS) and _ERROR_WORDS.search(message):
        return True
    header = line[: len(line) - len(record)]
    if kind is not grammar.LineKind.SOURCE and any(level in header for level in _ERROR_LEVELS):
        return True
    record = record.strip()
    if not (grammar.glog_record(record, "E") or grammar.glog_record(record, "F")
            or any(word in line for word in _SHAPE_LITERALS)):
        return False
    # A glog or c10 record's own header is bracketed like a record header: tried with it and without.
    return any(_fatal_shape(text) for text in {record, message.strip()} if text)


def _fatal_shape(text: str) -> bool:
    return bool(
        grammar.native_header(text)
        or grammar.fatal_line(text)
        or (grammar.glog_record(text, "E") and grammar.GLOG_ERROR.match(text))
        or grammar.USAGE_ERROR.match(text)
        or grammar.SHELL_NOTICE.match(text)
        or grammar.STRICT_EXCEPTION_LINE.match(text)
        or grammar.KILL_LINE.search(text)
    )


@dataclass
class _Seen:
    """An error-looking line met before: where it first stood, and how often."""
    index: int  # position of the first occurrence, in the lines given
    count: int


def error_lines(lines: Iterable[str]) -> list[tuple[int, int]]:
    """(index of the first occurrence, count) of each distinct error-looking line, in the order they first
    appear.  The line under a frame line (its source) is skipped."""
    seen: dict[str, _Seen] = {}
    after_frame = False
    for index, line in enumerate(lines):
        if after_frame:
            after_frame = False
            if _message(after_line_prefix(line))[:1] in " \t":
                continue
        if 'File "' in line and _FRAME_PREFIX.match(_message(after_line_prefix(line))):
            after_frame = True
            continue
        if not (any(word in line for word in _SHAPE_LITERALS) or _GLOG_HINT.search(line)):
            continue  # every error-looking line holds one of them ("rror" and "Exception" among the words)
        record = after_line_prefix(line)
        if not is_error_looking(line, record):
            continue
        key = _message(record).strip()
        if key in seen:
            seen[key].count += 1
        else:
            seen[key] = _Seen(index, 1)
    return [(entry.index, entry.count) for entry in seen.values()]
