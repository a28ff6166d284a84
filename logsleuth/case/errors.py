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

import re
from collections.abc import Iterable
from dataclasses import dataclass

from logsleuth.ingest.normalize import after_line_prefix
from logsleuth.tracebacks import grammar

_ERROR_WORDS = re.compile(
    r"ERROR|Error\b|\berror:|Exception\b|Traceback \(most recent call last\)|\bFATAL\b|\bKilled\b"
    r"|terminate called|what\(\):"
)
# A record header that differs between ranks or repeats of one record: SGLang's `[time TPn] `, a bracketed time.
_RECORD_HEADER = re.compile(r"^\[[^\]]{0,80}\]\s*")
_FRAME_PREFIX = re.compile(r'^\s*File "')


def _message(line: str) -> str:
    """The line without its process prefix and record header: what it says."""
    text = after_line_prefix(line)
    return _RECORD_HEADER.sub("", text, count=1) if text[:1] == "[" else text


def is_error_looking(line: str) -> bool:
    """Whether a person scanning the log would point at this line as an error."""
    if _ERROR_WORDS.search(line):
        return True
    # A glog or c10 record's own header is bracketed like a record header: tried with it and without.
    record = after_line_prefix(line).strip()
    return any(_fatal_shape(text) for text in {record, _message(line).strip()} if text)


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
    index: int  # position of the first occurrence, in the lines given
    count: int


def error_lines(lines: Iterable[str]) -> list[tuple[int, int]]:
    """(index of the first occurrence, count) of each distinct error-looking line, in the order they first
    appear.  The line under a frame line (its source) is skipped."""
    seen: dict[str, _Seen] = {}
    after_frame = False
    for index, line in enumerate(lines):
        text = _message(line)
        if after_frame and text[:1] in " \t":
            after_frame = False
            continue
        after_frame = bool(_FRAME_PREFIX.match(text))
        if after_frame or not is_error_looking(line):
            continue
        key = text.strip()
        if key in seen:
            seen[key].count += 1
        else:
            seen[key] = _Seen(index, 1)
    return [(entry.index, entry.count) for entry in seen.values()]
