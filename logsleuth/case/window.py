"""The log around a failure, re-read for the case file: the lines just before it and the GPU and memory facts.

A `Report` keeps the failure and the warning lines that explain it, not the plain lines around it, so the
case reads them again from the log: the bytes before the failure's offset (WINDOW_BYTES at most), from any
`Source` (a local file here; the CLI reopens a remote one).  Reading never fails a case: a log that cannot be
read again gives an empty window, and the case says so.

Everything read is redacted as one text before the window is cut from it: a private key or a wrapped token
whose first line falls outside the window is seen whole, so its later lines inside the window are redacted too.
"""

from __future__ import annotations

import os
import re

from logsleuth.case.model import LogWindow
from logsleuth.errors import SourceError
from logsleuth.ingest.lines import decode, split_lines
from logsleuth.ingest.stages import memory_in
from logsleuth.models import FailureGroup, Report
from logsleuth.redact import redact_lines
from logsleuth.render.safety import clean
from logsleuth.sources.base import Source

WINDOW_BYTES = 1 << 20  # before the failure: where the load and memory lines of the launch usually are
LINES_BEFORE = 10
MAX_FACTS = 8
LINE_CHARS = 300  # of one log line in the case file
FAILURE_BYTES = 256 << 10  # of the failure's own lines kept for a drafted pattern's fixture
FAILURE_LINE_CHARS = 4000

# Lines that state what the GPUs are and how their memory went, beyond the figures watch reads (memory_in):
# the device, CUDA and driver versions, visible devices, torch's OOM summary, SGLang's pool sizes.
_GPU_FACT = re.compile(
    r"\bNVIDIA (?:[A-Z]|GeForce)|\bcompute capability\b|\bsm_?\d{2,3}a?\b|CUDA_VISIBLE_DEVICES|total capacity of"
    r"|\bmax_total_num_tokens=|\bavailable_gpu_mem=|\b(?:CUDA|driver) version\b|\bROCm\b|\bMI\d{3}X?\b",
    re.IGNORECASE,
)
# A record header ("[2026-03-14 09:26:55 TP3] ") differs between ranks that print the same fact.
_RECORD_HEADER = re.compile(r"^\[[^\]]{0,80}\]\s*")


def is_fact(text: str) -> bool:
    """A log line that states a GPU or memory fact (not the whole server_args line, which the case shows apart)."""
    return "server_args=" not in text and (bool(memory_in(text)) or bool(_GPU_FACT.search(text)))


def _lines(source: Source, start: int, end: int) -> list[str]:
    return [decode(raw).rstrip() for raw, _ in split_lines(source.read_range(start, end), start)]


def _engine_line(lines: list[str]) -> str:
    """The first line after which the log shows its engine (ingest/launch.py's evidence), or ""."""
    from logsleuth.ingest.launch import LaunchTracker
    from logsleuth.ingest.normalize import normalize_text

    tracker = LaunchTracker()
    for index, line in enumerate(normalize_text("\n".join(lines))):
        tracker.observe(line)
        if tracker.evidence:
            return lines[index] if index < len(lines) else ""
    return ""


def window_before(source: Source, offset: int, origin: str, *, end: int | None = None, window: int = WINDOW_BYTES) -> LogWindow:
    """The LINES_BEFORE lines before `offset` and the GPU facts of the WINDOW_BYTES before it; with `end`, also
    the lines from `offset` to `end` (the failure's own, FAILURE_BYTES at most)."""
    start = max(0, offset - window)
    try:
        lines = _lines(source, start, offset)
        own = _lines(source, offset, min(end, offset + FAILURE_BYTES)) if end is not None and end > offset else []
    except (SourceError, OSError):
        return LogWindow()
    if start > 0 and lines:
        lines = lines[1:]  # the window began inside a line
    redacted = redact_lines((*lines, *own))  # whole, before any cut (see the module docstring)
    lines, own = list(redacted[: len(lines)]), list(redacted[len(lines) :])
    cleaned = [clean(line, LINE_CHARS) for line in lines]
    before = [line for line in cleaned if line.strip()][-LINES_BEFORE:]
    facts: dict[str, str] = {}  # without its record header -> the last line that said it
    for line in cleaned:
        if is_fact(line):
            key = _RECORD_HEADER.sub("", line)
            facts.pop(key, None)
            facts[key] = line
    failure = tuple(clean(line, FAILURE_LINE_CHARS) for line in own)
    opening = _engine_line(cleaned)
    opening = "" if opening in before else opening
    return LogWindow(tuple(before), tuple(list(facts.values())[-MAX_FACTS:]), origin, failure, opening)


def local_window(report: Report, group: FailureGroup) -> LogWindow | None:
    """The window of a failure read from a local file (None when its log is not one: stdin, a remote host, text
    held in memory)."""
    from logsleuth.api import in_written_order
    from logsleuth.sources.local import LocalFileSource

    name = group.sources[0] if group.sources else None
    info = next((source for source in report.sources if source.name == name), None)
    if name is None or info is None or info.host is not None or not os.path.isfile(name):
        return None
    try:
        source = in_written_order(LocalFileSource(name))  # the offsets are those of the order diagnose read
    except SourceError:
        return None
    try:
        return window_before(source, group.failure.offset, "the log", end=group.failure.end_offset)
    finally:
        source.close()
