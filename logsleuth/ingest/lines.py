"""Bytes to lines: the one line splitter, used by diagnose (whole windows) and watch (a growing stream).

A line is never held longer than MAX_LINE_BYTES: the rest of a 100 MB line is skipped, but counted, so every
offset after it stays exact.  `bytes.split` does the work in C; only a line that spans chunks is stitched.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from logsleuth.ingest.flattened import FRAME_WORDS, unflattened
from logsleuth.ingest.line_shapes import (
    CARET_LINE,
    CAUSE_SEPARATOR,
    CONTEXT_SEPARATOR,
    FAULT_FRAME_LINE,
    FRAME_LINE,
    TRACEBACK_HEADER,
)
from logsleuth.lazyre import compile_lazily

MAX_LINE_BYTES = 64 * 1024  # of one log line kept for parsing; a 100 MB line must not cost 100 MB per copy


class LineSplitter:
    """Cut a byte stream, fed chunk by chunk, into (line, offset of its first byte)."""

    def __init__(self, start_offset: int = 0) -> None:
        self.end = start_offset  # absolute offset just past the last byte fed
        self._pending = b""  # the start of a line continued by the next chunk (capped)
        self._pending_start = -1  # its offset, or -1 when there is none

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        """The lines that `chunk` completes."""
        lines: list[tuple[bytes, int]] = []
        parts = chunk.split(b"\n")
        for part in parts[:-1]:
            if self._pending_start >= 0:
                if len(self._pending) < MAX_LINE_BYTES:
                    self._pending += part[: MAX_LINE_BYTES - len(self._pending)]
                lines.append((self._pending, self._pending_start))
                self._pending, self._pending_start = b"", -1
            else:
                lines.append((part if len(part) <= MAX_LINE_BYTES else part[:MAX_LINE_BYTES], self.end))
            self.end += len(part) + 1
        last = parts[-1]
        if last:
            if self._pending_start < 0:
                self._pending_start = self.end
            if len(self._pending) < MAX_LINE_BYTES:
                self._pending += last[: MAX_LINE_BYTES - len(self._pending)]
            self.end += len(last)
        return lines

    def flush(self) -> tuple[bytes, int] | None:
        """The last line, when the stream ended without a newline."""
        if self._pending_start < 0:
            return None
        line = (self._pending, self._pending_start)
        self._pending, self._pending_start = b"", -1
        return line


def split_lines(chunks: Iterable[bytes], start_offset: int = 0) -> Iterator[tuple[bytes, int]]:
    """Every line of a byte stream with its offset (the last one even without a newline)."""
    splitter = LineSplitter(start_offset)
    for chunk in chunks:
        yield from splitter.feed(chunk)
    last = splitter.flush()
    if last is not None:
        yield last


def decode(line: bytes) -> str:
    """Logs are mostly UTF-8 but may hold anything: never fail on a byte."""
    return line.decode("utf-8", errors="replace")


# -- line breaks a paste added ---------------------------------------------------------------------

Line = tuple[str, int, int]  # text, line number, offset of its first byte

MIN_WRAP_WIDTH = 60  # narrower "terminals" are more likely short lines of the same length
MAX_WRAP_WIDTH = 1000  # a log with longer lines was not hard-wrapped
DOUBLE_SPACED_AFTER = 6  # lines each followed by an odd run of blank lines before a paste counts as double-spaced
_SEPARATORS = (CONTEXT_SEPARATOR, CAUSE_SEPARATOR)
_HEADER = TRACEBACK_HEADER
_NAME_CONTINUES = frozenset("abcdefghijklmnopqrstuvwxyz_0123456789")
_CODE_NAME = compile_lazily(r"<[a-z]+>")  # the name CPython gives a module's, a lambda's or a comprehension's code
_OPEN_CODE_NAME = compile_lazily(r", in <[a-z]+$")
_WHOLE_LINES = frozenset({CAUSE_SEPARATOR, CONTEXT_SEPARATOR})
# What only a line of its own starts with: never the continuation of a wrapped one.
_LINE_STARTS = ('  File "', _HEADER, *_SEPARATORS)


class Reflow:
    """Undo the line breaks a paste added, on clean text (after `normalize.clean_text`).

    Double spacing: a blank line after every line (so a blank line of the log is three).  Once
    DOUBLE_SPACED_AFTER lines in a row were each followed by an odd run of blank lines, a run of k blank
    lines stands for (k - 1) // 2; the lines that showed it are held until then.  Two lines in a row
    end it.  CPython's own single blank lines around a chain separator do not count.

    Hard wraps: a terminal cut every line at its width W, so a wrapped line is exactly W characters
    long (and W is the longest line seen: a log with longer lines was not wrapped) and its
    continuation starts the next line.  Lines of equal length are common (ranks print the same
    traceback), so W is only trusted after a line of that length was surely cut (`_wrap_evidence`: a
    `File "...` line cut inside, a caret line continued by carets, a chain separator or traceback
    header cut in two, a C++ backtrace frame cut).  The continuation is glued back without a separator
    (the terminal cut mid-word) unless it cannot be one: blank, a line of its own (a `File` line, a
    traceback header, a line with a log prefix), a caret line under a line that is not one, or a line
    starting like the wrapped one (the same prefix: the next line of the same program).  A line that
    is exactly W long without having been cut cannot be told from a cut one: the paste lost that.

    It holds at most one line (to glue its continuation) plus the lines of a run that may turn out
    double-spaced.
    """

    def __init__(
        self, starts_line: Callable[[str], bool] = lambda text: False, body: Callable[[str], str] = lambda text: text
    ) -> None:
        self._starts_line = starts_line  # the text begins with a prefix only a line of its own has
        self._body = body  # the text after the log prefixes a program put before it (`(EngineCore pid=1) ERROR …] `)
        self._width = 0  # the wrap width, once a line was surely wrapped at it
        self._held: list[Line] = []  # lines (and blank lines) that may be a double-spaced paste
        self._blank_run: list[Line] = []
        self._odd_runs = 0  # lines in a row followed by an odd run of blank lines
        self._double = False
        self._plain = True  # no blank line is held and the paste is not double-spaced
        self._pending: Line | None = None  # the last line, waiting for its continuation
        self._piece = 0  # length of the last piece of the pending line
        self._longest = 0

    def lines(
        self, source: Iterable[tuple[bytes, int]], first_line: int, clean: Callable[[str], str]
    ) -> Iterator[Line]:
        """The lines of `source` (as `split_lines` cuts them), decoded and cleaned by `clean`, with the
        paste's line breaks undone.  One loop for all three: this runs on every line of a log."""
        number = first_line - 1
        flattened = False  # the line before was a traceback flattened onto one line (ingest/flattened.py)
        for raw, offset in source:
            number += 1
            cleaned = clean(decode(raw))
            pieces = unflattened(cleaned, flattened, self._body) if FRAME_WORDS in cleaned else None
            flattened = pieces is not None
            for text in pieces or (cleaned,):
                if self._plain and self._pending is None and len(text) < self._longest and text and not text.isspace():
                    # The common case: a line after a line, shorter than the longest (so not cut by a wrap),
                    # and no wrapped line waiting for its continuation.
                    yield (text, number, offset)
                    continue
                for held in self._space((text, number, offset)) if not self._plain or not text or text.isspace() else ((text, number, offset),):
                    yield from self._wrap(held)
        for held in self._flush_spacing():
            yield from self._wrap(held)
        if self._pending is not None:
            yield self._pending
            self._pending = None

    def _space(self, line: Line) -> list[Line]:
        """Double spacing: the lines that can go on now (blank lines are held until the next line)."""
        text = line[0]
        if not text or text.isspace():
            self._blank_run.append(line)
            self._plain = False
            return []
        run, self._blank_run = self._blank_run, []
        if self._double:
            if run:
                return [*run[: (len(run) - 1) // 2], line]
            self._double = False  # two lines in a row: no longer double-spaced
        elif len(run) % 2 == 0 or len(run) == 1 and text.startswith(_SEPARATORS):
            # No run, or an even one: not double-spaced.  One blank line before a chain separator is
            # CPython's own (a double-spaced paste shows three).
            out = [*self._held, *run, line]
            self._held, self._odd_runs = [], 0
            self._plain = True
            return out
        else:
            self._odd_runs += 1
            if self._odd_runs < DOUBLE_SPACED_AFTER:
                self._held.extend(run)
                self._held.append(line)
                return []
            self._double = True
            out = self._collapse([*self._held, *run, line])
            self._held, self._odd_runs = [], 0
            return out
        self._plain = not self._double
        return [line]

    def _flush_spacing(self) -> list[Line]:
        run, self._blank_run = self._blank_run, []
        rest = run[: (len(run) - 1) // 2] if self._double else self._held + run
        self._held = []
        return rest

    @staticmethod
    def _collapse(lines: list[Line]) -> list[Line]:
        """Lines of a double-spaced paste: each run of k blank lines becomes (k - 1) // 2."""
        out: list[Line] = []
        run: list[Line] = []
        for line in lines:
            if not line[0] or line[0].isspace():
                run.append(line)
                continue
            out.extend(run[: (len(run) - 1) // 2])
            run = []
            out.append(line)
        return out

    def _wrap(self, line: Line) -> list[Line]:
        """Glue `line` to the wrapped line waiting for it, if it continues it; the lines that are complete."""
        size = len(line[0])
        if size > self._longest:
            self._longest = size
        pending = self._pending
        if pending is not None and self._piece == self._longest and self._continues(pending[0], line[0]):
            self._pending = (pending[0] + line[0], pending[1], pending[2])
            self._piece = size
            return []
        out = [pending] if pending is not None else []
        if size == self._longest and (size == self._width or _may_be_cut(self._body(line[0]))):
            self._pending, self._piece = line, size  # maybe cut by a wrap: wait for the next line
        else:
            self._pending = None
            out.append(line)
        return out

    def _continues(self, text: str, following: str) -> bool:
        piece = self._piece
        if not MIN_WRAP_WIDTH <= piece <= MAX_WRAP_WIDTH:
            return False
        if not following or following.isspace() or following.startswith(_LINE_STARTS):
            return False
        if following[:6] == text[:6]:
            return False  # the same prefix: the next line of the same program
        if following[:1] in " \t":
            body = following.lstrip()
            if body.startswith('File "') or body[:1] in "^~" and text.lstrip()[:1] not in "^~":
                return False  # a frame line; a caret line under a line that happens to be W long
            if text.lstrip(" |").startswith('File "') and following.startswith("    "):
                return False  # a frame's source line
        if self._starts_line(following) and not (following == ">" and _OPEN_CODE_NAME.search(text)):
            return False  # (a bare `>` is an empty quoted line, or the end of a `<module>` a wrap cut off)
        if _wrap_evidence(self._body(text), following):
            self._width = piece
            return True
        return piece == self._width


def _may_be_cut(text: str) -> bool:
    """Whether `text` may be the first piece of a line that `_wrap_evidence` can tell was cut."""
    body = text.lstrip(" |")
    if body.startswith(('File "', "^", "~", "frame #")) or _SEPARATORS[0].startswith(body) or _SEPARATORS[1].startswith(body):
        return True
    start = body.rfind("T", max(0, len(body) - len(_HEADER)))
    return start >= 0 and _HEADER.startswith(body[start:])


def _wrap_evidence(text: str, following: str) -> bool:
    """`text`, the longest line so far, was surely cut by a wrap: a frame line cut before its function
    name ends (or inside it: the rest is a lower-case name), a caret line continued by carets, a C++
    backtrace frame cut before its closing parenthesis.  Exception-group margins (`  | `) are looked
    through."""
    body = text.lstrip(" |")
    tail = following.rstrip()
    if (body + tail) in _WHOLE_LINES:
        return True  # a chain separator cut in two
    if 0 < len(tail) < len(_HEADER) and _HEADER.endswith(tail) and body.endswith(_HEADER[: -len(tail)]):
        return True  # a traceback header cut in two
    if body.startswith('File "'):
        alone = FRAME_LINE.match(body)
        if alone is None:
            return FAULT_FRAME_LINE.match(body) is None  # cut before its line number
        if alone["func"] is None:  # cut inside its line number, or before `, in`
            whole = FRAME_LINE.match(body + following)
            return whole is not None and whole["func"] is not None
        # cut inside its function name: the rest is lower case (an exception type, printed after a frame
        # without source, is capitalized), or the rest of a code object's name (`<mod` + `ule>`).  The first
        # frame of a traceback may be the first line this long.
        if alone["func"].startswith("<") and not alone["func"].endswith(">"):
            return _CODE_NAME.fullmatch(alone["func"] + tail) is not None
        return following.isidentifier() and following[:1] in _NAME_CONTINUES
    if body[:1] in "^~" and CARET_LINE.match(body) and CARET_LINE.match(following):
        return True
    return text.startswith("frame #") and not text.endswith(")") and not following.startswith("frame #")
