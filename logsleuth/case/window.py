"""The log itself, read again for the case file: the evidence an assistant needs, verbatim (issue 28, item 6).

A `Report` keeps the failure and the warning lines that explain it, not the log, so the case reads the log again
from any `Source` (a local file here; the CLI reopens a remote one or spools stdin):

- a small log (WHOLE_BYTES at most) whole: the case then holds the paste itself, never less than it;
- the failure region: the failure's own lines as the log printed them, and the LINES_BEFORE lines before it;
- every error-looking line (case/errors.py) of the last SCAN_BYTES and of the failure's window, once each with
  how often it occurs, in order;
- the last TAIL_LINES lines of the log, also when no failure was found;
- the GPU and memory facts of the WINDOW_BYTES before the failure (of the log's end without one).

Reading never fails a case: a log that cannot be read again gives an empty window, and the case says so.

Redaction before any cut: each piece shown is redacted as one text with the log around it (CONTEXT_BYTES
before, a little after), so a private key or a wrapped token that starts above a piece, or ends below it, is
seen whole and its lines inside the piece are redacted too.  The case redacts everything once more with the
report (case/build.py), which also replaces a secret the launch command gave wherever the log repeats it.
"""

from __future__ import annotations

import bisect
import os
import re
from dataclasses import dataclass

from logsleuth.case.errors import error_lines
from logsleuth.case.model import LogWindow
from logsleuth.errors import SourceError
from logsleuth.ingest.lines import decode, split_lines
from logsleuth.ingest.stages import memory_in
from logsleuth.lazyre import compile_lazily
from logsleuth.models import FailureGroup, Report
from logsleuth.redact import command_secrets, redact_lines, without_secrets
from logsleuth.render.safety import clean
from logsleuth.sources.base import Source

WINDOW_BYTES = 1 << 20  # before the failure: where the load and memory lines of the launch usually are
SCAN_BYTES = 4 << 20  # of the log's end, searched for error-looking lines (and the failure's window besides)
WHOLE_BYTES = 128 << 10  # a log this small is kept whole: the case may hold all of it (case/build.py decides)
HEAD_BYTES = 256 << 10  # of a longer log's start, read only for the secrets its launch command gives
LINES_BEFORE = 10
TAIL_LINES = 40
MAX_FACTS = 8
MAX_ERROR_LINES = 200  # distinct ones: the first and the last half of them are kept
LINE_CHARS = 1000  # of one log line in the case file
FAILURE_BYTES = 256 << 10  # of the failure's own lines
FAILURE_LINE_CHARS = 4000
# Redacted with a run of lines shown (the whole log, the failure region, the tail): a private key of any size
# that starts above it is seen from its BEGIN line.  A single line shown (an error line, a GPU fact) needs less:
# the secrets that span lines (a wrapped token, a `--api-key \` continuation) span two or three.
CONTEXT_BYTES = 64 << 10
SINGLE_CONTEXT_BYTES = 8 << 10
AFTER_BYTES = 4 << 10

# Lines that state what the GPUs are and how their memory went, beyond the figures watch reads (memory_in):
# the device, CUDA and driver versions, visible devices, torch's OOM summary, SGLang's pool sizes.
_GPU_FACT = compile_lazily(
    r"\bNVIDIA (?:[A-Z]|GeForce)|\bcompute capability\b|\bsm_?\d{2,3}a?\b|CUDA_VISIBLE_DEVICES|total capacity of"
    r"|\bmax_total_num_tokens=|\bavailable_gpu_mem=|\b(?:CUDA|driver) version\b|\bROCm\b|\bMI\d{3}X?\b",
    re.IGNORECASE,
)
# A record header ("[2026-03-14 09:26:55 TP3] ") differs between ranks that print the same fact.
_RECORD_HEADER = compile_lazily(r"^\[[^\]]{0,80}\]\s*")


def is_fact(text: str) -> bool:
    """A log line that states a GPU or memory fact (not the whole server_args line, which the case shows apart)."""
    return "server_args=" not in text and (bool(memory_in(text)) or bool(_GPU_FACT.search(text)))


@dataclass
class _Lines:
    """The lines read, in order, from one or more byte ranges of the log (`segment`: which range; lines of two
    ranges are not consecutive in the log, so no redaction context crosses from one to the other)."""

    texts: list[str]
    offsets: list[int]
    segment: list[int]

    def bounds(self, index: int) -> tuple[int, int]:
        """The first and one past the last index of the segment holding `index`."""
        segment = self.segment[index]
        return bisect.bisect_left(self.segment, segment), bisect.bisect_right(self.segment, segment)

    def around(self, index: int, before: int, after: int) -> tuple[int, int]:
        """The indices within `before` bytes above and `after` bytes below the line, in its segment."""
        first, last = self.bounds(index)
        offset = self.offsets[index]
        lo = max(first, bisect.bisect_left(self.offsets, offset - before, first, last))
        hi = min(last, bisect.bisect_right(self.offsets, offset + after, first, last))
        return lo, max(hi, index + 1)


def _read(source: Source, ranges: list[tuple[int, int]]) -> _Lines:
    lines = _Lines([], [], [])
    for number, (start, end) in enumerate(ranges):
        pairs = [(decode(raw).rstrip(), offset) for raw, offset in split_lines(source.read_range(start, end), start)]
        if start > 0 and pairs:
            pairs = pairs[1:]  # the range began inside a line
        for text, offset in pairs:
            lines.texts.append(text)
            lines.offsets.append(offset)
            lines.segment.append(number)
    return lines


def _ranges(size: int, offset: int | None, end: int | None) -> list[tuple[int, int]]:
    """The byte ranges to read, in order and apart: the log's end, and the failure's window when it is not in it."""
    if size <= WHOLE_BYTES:
        return [(0, size)]
    ranges = [(max(0, size - SCAN_BYTES), size)]
    if offset is not None:
        own_end = min(size, max(end or offset, offset) + CONTEXT_BYTES)
        ranges.append((max(0, offset - WINDOW_BYTES), own_end))
    ranges.sort()
    merged = [ranges[0]]
    for start, stop in ranges[1:]:
        if start <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(stop, merged[-1][1]))
        else:
            merged.append((start, stop))
    return merged


def _redacted(lines: _Lines, runs: list[int], singles: list[int], secrets: set[str]) -> dict[int, str]:
    """The lines at the given indices, each redacted with the log around it (see the module docstring)."""
    spans = [lines.around(index, CONTEXT_BYTES, AFTER_BYTES) for index in runs]
    spans += [lines.around(index, SINGLE_CONTEXT_BYTES, AFTER_BYTES) for index in singles]
    spans.sort()
    merged: list[tuple[int, int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] and lines.segment[lo] == lines.segment[merged[-1][0]]:
            merged[-1] = (merged[-1][0], max(hi, merged[-1][1]))
        else:
            merged.append((lo, hi))
    wanted = set(runs) | set(singles)
    shown: dict[int, str] = {}
    known = without_secrets(secrets)
    for lo, hi in merged:
        redacted = redact_lines(tuple(lines.texts[lo:hi]))
        shown.update((index, known(redacted[index - lo])) for index in range(lo, hi) if index in wanted)
    return shown


def _launch_secrets(texts: list[str]) -> set[str]:
    """The secrets every launch command the lines hold gives (`--api-key K`, `HF_TOKEN=…`), a command continued
    over lines (`--api-key \\`) read whole: the log may repeat one bare, where no rule knows it for a key, and
    the report knows only the secrets of the launch it chose."""
    known: set[str] = set()
    continued: list[str] = []
    for text in texts:
        continued.append(text)
        if text.endswith("\\"):
            continue
        command = "\n".join(continued)
        continued = []
        if ("sglang" in command or "vllm" in command) and "--" in command:
            known |= command_secrets(command)
    return known


def _last_non_blank(lines: _Lines, indices: range, count: int) -> list[int]:
    kept: list[int] = []
    for index in reversed(indices):
        if len(kept) == count:
            break
        if lines.texts[index].strip():
            kept.append(index)
    return kept[::-1]


def _engine_index(lines: list[str]) -> int | None:
    """The index of the first line after which the log shows its engine (ingest/launch.py's evidence), or None."""
    from logsleuth.ingest.launch import LaunchTracker
    from logsleuth.ingest.normalize import normalize_text

    tracker = LaunchTracker()
    for index, line in enumerate(normalize_text("\n".join(lines))):
        tracker.observe(line)
        if tracker.evidence:
            return index if index < len(lines) else None
    return None


def read_window(source: Source, origin: str, *, offset: int | None = None, end: int | None = None) -> LogWindow:
    """What the case shows of the log (module docstring); `offset` and `end`: the failure's bytes, None when the
    log holds no failure."""
    try:
        size = source.size()
        ranges = _ranges(size, offset, end)
        lines = _read(source, ranges)
        # A long log's launch command is often its first lines, far above what is read: read for its secrets.
        head = _read(source, [(0, min(HEAD_BYTES, ranges[0][0]))]).texts if ranges[0][0] > 0 else []
    except (SourceError, OSError):
        return LogWindow()
    count = len(lines.texts)
    if not count:
        return LogWindow(origin=origin)
    last_segment = lines.bounds(count - 1)
    if offset is not None:
        start = bisect.bisect_left(lines.offsets, offset)
        first_after = bisect.bisect_left(lines.offsets, min(end or offset, offset + FAILURE_BYTES), start)
        own = list(range(start, max(start, first_after)))
        seg_first = lines.bounds(min(start, count - 1))[0] if start < count else last_segment[0]
        before = _last_non_blank(lines, range(seg_first, start), LINES_BEFORE)
        fact_from = bisect.bisect_left(lines.offsets, offset - WINDOW_BYTES, seg_first, start)
        fact_range = range(fact_from, start)
    else:
        own, before = [], []
        fact_range = range(bisect.bisect_left(lines.offsets, size - WINDOW_BYTES, *last_segment), count)
    tail = _last_non_blank(lines, range(*last_segment), TAIL_LINES)
    facts: dict[str, int] = {}  # without its record header -> the last line that said it
    for index in fact_range:
        if is_fact(lines.texts[index]):
            key = _RECORD_HEADER.sub("", lines.texts[index])
            facts.pop(key, None)
            facts[key] = index
    fact_lines = list(facts.values())[-MAX_FACTS:]
    errors = error_lines(lines.texts)
    left_out = max(0, len(errors) - MAX_ERROR_LINES)
    if left_out:
        errors = errors[: MAX_ERROR_LINES // 2] + errors[-(MAX_ERROR_LINES - MAX_ERROR_LINES // 2) :]
    whole = list(range(count)) if size <= WHOLE_BYTES else []
    found = _engine_index(lines.texts[fact_range.start : fact_range.stop]) if offset is not None else None
    opening = [] if found is None or fact_range.start + found in before else [fact_range.start + found]
    singles = sorted({*fact_lines, *opening, *(index for index, _ in errors)})
    secrets = _launch_secrets(head) | _launch_secrets(lines.texts)
    shown = _redacted(lines, sorted({*whole, *own, *before, *tail}), singles, secrets)

    def text(indices: list[int], chars: int = LINE_CHARS) -> tuple[str, ...]:
        return tuple(clean(shown[index], chars) for index in indices)

    return LogWindow(
        before=text(before),
        facts=text(fact_lines),
        origin=origin,
        failure=text(own, FAILURE_LINE_CHARS),
        opening=text(opening)[0] if opening else "",
        whole=text(whole),
        tail=text(tail),
        errors=tuple((clean(shown[index], LINE_CHARS), times) for index, times in errors),
        errors_left_out=left_out,
        scope="the whole log" if ranges == [(0, size)] else _scope(offset is not None),
    )


def _scope(failure: bool) -> str:
    end = f"the last {SCAN_BYTES >> 20} MiB of the log"
    return f"{end} and the {WINDOW_BYTES >> 20} MiB before the failure" if failure else end


def local_window(report: Report, group: FailureGroup | None) -> LogWindow | None:
    """The window of a failure (of the log's end when `group` is None: no failure) read from a local file; None
    when the log is not one (stdin, a remote host, text held in memory)."""
    from logsleuth.api import in_written_order
    from logsleuth.sources.local import LocalFileSource

    name = group.sources[0] if group is not None and group.sources else None
    if group is None:
        name = next((source.name for source in report.sources if source.error is None), None)
    info = next((source for source in report.sources if source.name == name), None)
    if name is None or info is None or info.host is not None or not os.path.isfile(name):
        return None
    try:
        source = in_written_order(LocalFileSource(name))  # the offsets are those of the order diagnose read
    except SourceError:
        return None
    try:
        if group is None:
            return read_window(source, "the log")
        return read_window(source, "the log", offset=group.failure.offset, end=group.failure.end_offset)
    finally:
        source.close()
