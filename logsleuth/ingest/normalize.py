"""Line normalizer: turn raw log lines into `LogLine`s with clean text and metadata.

Layers are peeled from the outside in, the way collectors wrap them:

    > [2025-11-06T02:10:00.702Z] (VllmWorker rank=1 pid=12231) ERROR 03-25 21:13:53 [core.py:12] text
    ^ quote   ^ collector timestamp ^ vLLM/Ray process prefix       ^ vLLM logger header

or, for SGLang, `[2025-04-23 21:31:41 DP0 TP2] text` (header on the first line of a
record only; the following unprefixed lines continue that record).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import regex

from logsleuth.ingest.lines import decode, split_lines
from logsleuth.models import LineMeta, LogLine

# CSI sequences (colours, cursor movement), OSC sequences (titles, clipboard writes,
# hyperlinks) terminated by BEL or ST, character-set designations (`ESC ( B`, sent by
# tput sgr0) and two-character escapes.
_ANSI = regex.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]+[0-~]|\x1b[@-Z\\-_]"
)
# Other C0/C1 control characters except tab; \r is handled apart (tqdm redraws).
_CONTROL = regex.compile(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")

_QUOTE = regex.compile(r"^>(?: |$)")
# ISO 8601 timestamps added by collectors: GitHub Actions / Buildkite `[2025-11-06T02:10:00.702Z] `,
# `kubectl logs --timestamps` `2025-11-06T02:10:00.702123456Z `.
_COLLECTOR_TS = regex.compile(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\]?\s"
)
# vLLM / Ray process prefix: `(VllmWorker rank=1 pid=12231) `, `(EngineCore_DP0 pid=1)`,
# `(RayWorkerWrapper pid=5, ip=10.0.0.1)`, `(Worker_TP1 pid=7)`.
_PROCESS = regex.compile(
    r"^\((?P<name>[\w.\-]+(?: \([\w]+\))?)(?: rank=(?P<rank>\d+))? pid=(?P<pid>\d+)(?:, ip=(?P<ip>[\w.:\-]+))?\)\s?"
)
# vLLM logger header: `ERROR 03-25 21:13:53 [multiproc_executor.py:374] ` or the older
# `INFO 03-25 21:13:53 multiproc_executor.py:374] `.
_VLLM_HEADER = regex.compile(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?P<ts>\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) "
    r"\[?(?P<where>[\w.\-]+:\d+)\] ?"
)
# SGLang logger header: `[2025-01-01 12:00:00 DP0 TP2] ` with rank tags in any order.
_SGLANG_HEADER = regex.compile(
    r"^\[(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?)"
    r"(?P<tags>(?: (?:DP|PP|TP|EP|ATTN_CP|MOE_DP|CP)\d+)*)\] ?"
)
_RANK_TAG = regex.compile(r"(DP|PP|TP|EP|ATTN_CP|MOE_DP|CP)(\d+)")



# What a line that must not be lost to a `\r` redraw starts with: an exception line or a traceback header.
_FAILURE_START = regex.compile(
    r"^\s*(?:Traceback \(most recent call last\):|(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Fault|Failure|Timeout)(?::|$))"
)


def clean_text(text: str) -> str:
    """Remove terminal escapes and control characters.  A `\\r` inside a line is a redraw (tqdm): keep only
    what was drawn last, unless an earlier part is the start of a failure and the last is not (a progress bar
    drawn over an exception line in a terminal still leaves the exception in the log)."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    if "\r" in text:
        text = text.rstrip("\r")
        if "\r" in text:
            parts = [part for part in text.split("\r") if part]
            text = parts[-1] if parts else ""
            if not _FAILURE_START.match(text):
                text = next((part for part in reversed(parts) if _FAILURE_START.match(part)), text)
    if text.isprintable():  # the common case, checked in C
        return text
    return _CONTROL.sub("", text)


@dataclass(slots=True)
class _StreamState:
    meta: LineMeta
    header: str  # the last record header, to tell a new record from a repeated one
    # An unprefixed line followed the header: the same header again is a new record
    # (vLLM repeats a header only on consecutive lines of one record).
    continued: bool = False


class LineNormalizer:
    """Stateful: a record header sets the metadata of the unprefixed lines that follow it."""

    def __init__(self, host: str | None = None) -> None:
        self.host = host
        self._current = ""  # stream key of the last record seen
        self._streams: dict[str, _StreamState] = {}
        # Consecutive records often share a header (same second, same rank): reuse its metadata.
        self._meta_cache: dict[str, LineMeta] = {}

    def normalize(self, raw: str, number: int, offset: int) -> LogLine:
        text = clean_text(raw)
        timestamp: str | None = None
        process: str | None = None
        pid: int | None = None
        host = self.host
        ranks: tuple[tuple[str, int], ...] = ()
        level: str | None = None
        has_header = False
        header_text = ""

        # Outer layers may repeat (a quoted CI log), so peel until nothing changes.
        for _ in range(3):
            changed = False
            if text.startswith(">") and (m := _QUOTE.match(text)):
                text = text[m.end() :]
                changed = True
            # An ISO date has its "T" at index 10 (11 after "["): a cheap test that spares SGLang's
            # `[2025-11-06 02:10:00 TP0]` headers a regex match on every line.
            if (text[10:11] == "T" and text[:1].isdigit()) or (text[11:12] == "T" and text[:1] == "["):
                m = _COLLECTOR_TS.match(text)
                if m:
                    timestamp = m["ts"]
                    text = text[m.end() :]
                    changed = True
            if not changed:
                break

        if text.startswith("(") and (m := _PROCESS.match(text)):
            process = m["name"]
            pid = int(m["pid"])
            if m["ip"]:
                host = m["ip"]
            if m["rank"] is not None:
                ranks = (("rank", int(m["rank"])),)
            text = text[m.end() :]
            header_text = m.group(0)

        if text[:1] in "DIWEC" and (m := _VLLM_HEADER.match(text)):
            level = m["level"]
            timestamp = m["ts"]
            header_text += m.group(0)
            text = text[m.end() :]
            has_header = True
        elif text.startswith("[") and (m := _SGLANG_HEADER.match(text)):
            timestamp = m["ts"]
            tags = tuple((name, int(value)) for name, value in _RANK_TAG.findall(m["tags"])) if m["tags"] else ()
            if tags:
                ranks = tags
            header_text += m.group(0)
            text = text[m.end() :]
            has_header = True

        if process is not None:
            stream = f"{process}:{pid}"
        elif has_header:
            stream = "sglang:" + " ".join(f"{n}{v}" for n, v in ranks)
        else:
            stream = self._current  # an unprefixed line continues the last record

        state = self._streams.get(stream)
        if has_header:
            meta = self._meta_cache.get(header_text) if host == self.host else None
            if meta is None:
                meta = LineMeta(timestamp=timestamp, host=host, process=process, pid=pid, ranks=ranks, level=level)
                if len(self._meta_cache) > 4096:
                    self._meta_cache.clear()
                self._meta_cache[header_text] = meta
            # vLLM repeats the same header on every line of one record.
            starts_record = state is None or state.header != header_text or state.continued
            self._streams[stream] = _StreamState(meta, header_text)
        else:
            starts_record = False
            if state is not None and process is None:
                meta = state.meta
                state.continued = True
            else:
                meta = LineMeta(timestamp=timestamp, host=host, process=process, pid=pid, ranks=ranks)
                if process is not None and state is None:
                    self._streams[stream] = _StreamState(meta, header_text)
        self._current = stream
        return LogLine(number, offset, text, meta, stream, starts_record)


def normalize_chunks(
    chunks: Iterable[bytes],
    *,
    start_offset: int = 0,
    first_line: int = 1,
    host: str | None = None,
    drop_partial_first: bool = False,
) -> Iterator[LogLine]:
    """Normalize every line.  `drop_partial_first`: the bytes start mid-file, so the
    first line is a fragment of a longer one and is skipped."""
    normalizer = LineNormalizer(host)
    lines = split_lines(chunks, start_offset)
    if drop_partial_first:
        next(lines, None)
    for number, (raw, offset) in enumerate(lines, start=first_line):
        yield normalizer.normalize(decode(raw), number, offset)


def normalize_text(text: str, host: str | None = None) -> list[LogLine]:
    """Convenience for tests and small inputs."""
    return list(normalize_chunks([text.encode("utf-8", errors="surrogateescape")], host=host))
