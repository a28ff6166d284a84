"""Bytes to lines: the one line splitter, used by diagnose (whole windows) and watch (a growing stream).

A line is never held longer than MAX_LINE_BYTES: the rest of a 100 MB line is skipped, but counted, so every
offset after it stays exact.  `bytes.split` does the work in C; only a line that spans chunks is stitched.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

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
