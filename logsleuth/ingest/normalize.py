"""Line normalizer: turn raw log lines into `LogLine`s with clean text and metadata.

Layers are peeled from the outside in, the way collectors wrap them:

    > 2026-01-17T18:48:10.418+01:00 stderr F sglang-1  | (WorkerDict pid=5) [2025-04-23 21:31:41 TP2] text
    ^ quote ^ collector timestamp (CRI)       ^ compose  ^ Ray/vLLM process  ^ SGLang record header

Transport layers (quote markers, collector and log-viewer timestamps, journald, docker compose,
`kubectl logs --prefix`'s `[pod/P/C] ` (the pod is the line's host), torchrun's `[rankN]:`, wrapper loggers
that re-log a child's output) sit on every line a program
wrote.  They name the pipe the line came through (its namespace, so two containers or two torchrun
ranks are never mixed) and add metadata; only a wrapper logger's prefix after lines without it starts
a record (`LineNormalizer._wrapped_record`).  Record headers (SGLang's
`[2025-04-23 21:31:41 DP0 TP2] `, vLLM's `ERROR 03-25 21:13:53 [file.py:374] `) start records: for
SGLang on the first line of a record only (the unprefixed lines that follow continue it).

A paste adds its own decoration: Markdown fences (```), HTML `<details>`/`<pre>` lines, `**bold**`
lines, an inline-code span over several lines, frames copied out of a JSON string (`File \\"x\\"`).
Fences and HTML lines end whatever was being printed (they are record boundaries); the rest is
removed.  Line breaks a paste added (hard wraps, double spacing) are undone before this, by
`lines.Reflow`.

Every check that runs on every line is a slice or character test first: most lines of a multi-GB log
have none of these layers, and each regex below runs only on a line that passed its cheap test.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from logsleuth.ingest.line_shapes import FRAME_LINE, TORCHRUN_PREFIX
from logsleuth.ingest.lines import Reflow, split_lines
from logsleuth.ingest.notebook_frames import ipython_frames_as_cpython
from logsleuth.ingest.rich_frames import rich_frames_as_cpython
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LineMeta, LogLine

# CSI sequences (colours, cursor movement), OSC sequences (titles, clipboard writes,
# hyperlinks) terminated by BEL or ST, character-set designations (`ESC ( B`, sent by
# tput sgr0) and two-character escapes.
_ANSI = compile_lazily(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[ -/]+[0-~]|\x1b[@-Z\\-_]"
)
# Other C0/C1 control characters except tab; \r is handled apart (tqdm redraws).
_CONTROL = compile_lazily(r"[\x00-\x08\x0b-\x1f\x7f\x80-\x9f]")

_QUOTE = compile_lazily(r"^>(?: |$)")
# What is left of a colour code whose ESC byte a copy dropped: `[36m(WorkerDict pid=5)[0m `.
_SGR_REMNANT = compile_lazily(r"^\[\d{1,3}(?:;\d{1,3}){0,4}m")
# ISO 8601 timestamps added by collectors: GitHub Actions / Buildkite `[2025-11-06T02:10:00.702Z] `,
# `kubectl logs --timestamps` `2025-11-06T02:10:00.702123456Z `, a container runtime's log file (CRI)
# `2026-01-17T18:48:10.418481013+01:00 stderr F ` (P would mark a partial line; both are kept as lines).
_COLLECTOR_TS = compile_lazily(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?)\]?\s"
    r"(?:(?:stdout|stderr) [FP](?: |$))?"
)
# A cloud log viewer's export: the entry's severity, then its ISO time (`ERROR 2025-04-04T06:24:51.493Z `).
_VIEWER = compile_lazily(
    r"^(?:DEFAULT|DEBUG|INFO|NOTICE|WARNING|ERROR|CRITICAL|ALERT|EMERGENCY) "
    r"(?P<ts>\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:[.,]\d+)?(?:Z|[+-]\d{2}:?\d{2})?) "
)
_LEVELS = r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL|TRACE|SUCCESS)"
# A date and time with a space: Docker Desktop's local time before every line (no fraction), or a wrapper
# logger re-logging a child's output line by line: `<ts> | ERROR | stderr | ` (FastChat) or
# `<ts> - gpustack.worker.backends.sglang - INFO - ` (GPUStack).  Python logging's own asctime has a comma
# fraction (`2025-04-23 21:31:45,123 - INFO - x`): that is a record of its own, left as it is.
_SPACED_TS = compile_lazily(
    r"^(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?P<fraction>[.,]\d{1,9})?(?:Z|[+-]\d{2}:?\d{2})?) "
    rf"(?:\| (?P<level>{_LEVELS}) +\| (?P<name>[\w.\-]+) +\| ?|- (?P<logger>[\w.\-]+) - (?P<level2>{_LEVELS}) - ?)?"
)
# journald / syslog: `Nov 30 12:00:01 gpu-node-3 python3[123]: ` (journalctl's default `short`), and the
# writer after an ISO time (`journalctl -o short-iso`): `2026-11-30T23:58:41+0000 gpu-node-3 python3[123]: `.
_JOURNALD = compile_lazily(r"^(?P<ts>[A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2}) ")
_JOURNAL_WRITER = compile_lazily(r"^(?P<host>[^\s\[\]]+) (?P<unit>[^\s\[\]]+)\[(?P<pid>\d{1,10})\]: ?")
# journalctl's ISO times end in a numeric offset (`+0000`; `+00:00` since systemd 255), never in `Z`, which
# `kubectl logs --timestamps` writes: a line after a `Z` time is the program's own text.
_NUMERIC_OFFSET = compile_lazily(r"[+-]\d{2}:?\d{2}$")
# docker compose: `sglang-1  | ` (the service name padded, then ` | `); a bare `sglang-1  |` is an empty line.
_COMPOSE = compile_lazily(r"^(?P<service>\w[\w.\-]*) {2,}\|(?: |$)")
# `kubectl logs --prefix` (several pods or containers at once: `-l app=vllm`, `deploy/x --all-containers`):
# `[pod/vllm-0/vllm] ` before every line, the pod and container it came from.
_KUBECTL_PREFIX = compile_lazily(r"^\[pod/(?P<pod>[^/\]\s]{1,253})/(?P<container>[^/\]\s]{1,63})\] ?")
# vLLM / Ray / SkyPilot process prefix: `(VllmWorker rank=1 pid=12231) `, vLLM 0.10's `(VllmWorker TP0 pid=406) `
# and `(VllmWorker TP6_EP6 pid=21360) ` (its ranks as tags), `(EngineCore_DP0 pid=1)`, `(RayWorkerWrapper pid=5,
# ip=10.0.0.1)`, `(Worker_TP1 pid=7)`, `(head, rank=0, pid=8292)`, Ray's unnamed task or actor `(pid=53316) `
# (vllm-project/vllm#5785), a Ray Serve replica's actor class `(ServeReplica:default:VLLMDeployment pid=1328933) `
# (ray/serve/_private/common.py DeploymentID.to_replica_actor_class_name: `ServeReplica:{app}:{deployment}`;
# ray-project/ray#50275); a colour code's remnant may follow it.
_PROCESS = compile_lazily(
    r"^\((?:(?P<name>[\w.\-]+(?::[\w.\-]+){0,2}(?: \([\w]+\))?)(?: (?P<tags>(?:DP|PP|PCP|TP|DCP|EP)\d{1,6}(?:_(?:DP|PP|PCP|TP|DCP|EP)\d{1,6})*))?"
    r"(?:,? rank=(?P<rank>\d{1,6}))?,? )?pid=(?P<pid>\d{1,10})"
    r"(?:, ip=(?P<ip>[\w.:\-]+))?\)"
    r"(?:\[\d{1,3}(?:;\d{1,3}){0,4}m)?\s?"
)
# vLLM logger header: `ERROR 03-25 21:13:53 [multiproc_executor.py:374] ` or the older
# `INFO 03-25 21:13:53 multiproc_executor.py:374] `.
_VLLM_HEADER = compile_lazily(
    r"^(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL) (?P<ts>\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:\.\d+)?) "
    r"\[?(?P<where>[\w.\-]+:\d+)\] ?"
)
# Progress dots a program prints without a newline while it works (torch_npu's and CANN's graph compile prints `.`
# per step), the next record glued after them: `.[rank0]:[E903 07:21:23.263967696 compiler_depend.ts:429] Rope…`
# (vllm-project/vllm-ascend#2720).  Only before a torchrun rank prefix or a glog/c10 record's header, which never
# start with a dot, so a sentence or a relative path (`./run.sh`, `...`) is left as it is.  c10's MessageLogger prints
# the month and day as `(tm_mon + 1) * 100 + tm_mday` with no padding: `E903` on September 3, `E1203` in December.
_PROGRESS_DOTS = compile_lazily(r"^\.{1,400}(?=\[rank\d{1,6}\]:|\[?[EWF]\d{3,4} \d\d:\d\d:\d\d\.)")
# SGLang logger header: `[2025-01-01 12:00:00 DP0 TP2] ` with rank tags in any order.
_SGLANG_HEADER = compile_lazily(
    r"^\[?(?P<ts>\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?)"
    r"(?P<tags>(?: (?:DP|PP|TP|EP|ATTN_CP|MOE_DP|CP)\d{1,6})*)\] ?"
)
TRACEBACK_START = "Traceback (most recent call last):"
MAX_LEARNED_PREFIX = 120  # a wrapper's prefix is short; a longer text before the header is a sentence or a dump
_PREFIX_PARTS = compile_lazily(r"\d+| +|[^\d ]+")
_ERROR_LEVEL_FIELD = compile_lazily(r"(?:^|[\s\[|(])(?:ERROR|CRITICAL|FATAL)(?:[\s\]|):]|$)")
# A logger's level as the first field of a record, before a separator (`ERROR - `, `ERROR | `, `ERROR: `, `[ERROR]`).
_LEVEL_FIELD = compile_lazily(r"(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)(?: ?[-|:]\s| {2,})")
# A wrapper's level after a bracketed time (SGLang's own header has no level): `[2025-06-01 10:00:00] ERROR `,
# `[…] [ERROR] `, `[…][verl][ERROR] `, after the logger's bracketed names if any.
_WRAPPER_LEVEL = compile_lazily(r"^ ?(?:\[[\w.\-]+\] ?){0,3}\[?(?P<level>DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL)\]?(?:[\s:|\-]|$)")
# The rank tags of an SGLang header whose `[` a copy lost, after its time: `TP0] `.
_LOST_BRACKET = compile_lazily(r"^(?:(?:DP|PP|TP|EP|ATTN_CP|MOE_DP|CP)\d{1,6} ?)*\]")
_RANK_TAG = compile_lazily(r"(DP|PP|TP|EP|ATTN_CP|MOE_DP|CP)(\d+)")
# A CI log viewer's margin copied with the lines (Buildkite's web log: `  | ` before each line, vllm-project/vllm#6042,
# #14574).  CPython prints the same `  | ` before an exception group's lines, so the margin is the viewer's only from
# a line where a log record follows it (a bracketed ISO time, torch's `[rankN]:`, vLLM's level and date), never
# something CPython prints there.
_CI_MARGIN = compile_lazily(r"^ {0,2}\| ")
_CI_MARGIN_RECORD = compile_lazily(r"\[\d{4}-\d{2}-\d{2}T|\[rank\d{1,6}\]:|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) \d{2}-\d{2} ")
# Where a frame starts after a prefix nobody took off: CPython's two spaces of indentation, then `File "`.
_FRAME_START = '  File "'
# A line of HTML a paste put around a log: `<details>`, `<summary>Logs</summary>`, `<pre>`, `</pre></div></details>`.
_HTML_LINE = compile_lazily(r"^(?:</?(?:details|summary|pre|code|div|p|br)\b[^<>]{0,200}>[^<>]{0,200})+$")
# A fence's info string: ```python, ~~~text.
_FENCE_INFO = compile_lazily(r"^[\w+\-.]*$")

MAX_LAYERS = 8  # transport layers peeled off one line
SPAN_LINES = 1000  # an inline-code span left open this many lines was a stray backtick


# What a line that must not be lost to a `\r` redraw starts with: an exception line or a traceback header.
_FAILURE_START = compile_lazily(
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


def _odd_backticks(text: str) -> bool:
    return text.count("`") % 2 == 1


def _is_quoted_record(text: str) -> bool:
    """The whole line is one inline-code span around a log record: a single backtick at each end (not a fence's
    three, not an empty span) and a record's prefix right inside it (a process prefix, an engine's logger header, a
    collector's time).  Code a sentence quotes (`` `vllm serve --dtype half` ``) has no such prefix and stays as it is."""
    return (len(text) > 2 and text[1] != "`" and text.endswith("`") and text[-2] != "`"
            and has_line_prefix(text[1:-1]))


@dataclass(slots=True)
class _StreamState:
    """Where one interleaved stream (one process's lines) is in its current record."""

    meta: LineMeta
    header: str  # the last record header, to tell a new record from a repeated one
    # An unprefixed line followed the header: the same header again is a new record
    # (vLLM repeats a header only on consecutive lines of one record).
    continued: bool = False


@dataclass(slots=True)
class _Transport:
    """What the transport layers of one line said."""

    namespace: str = ""
    timestamp: str | None = None
    host: str | None = None
    process: str | None = None
    pid: int | None = None
    ranks: tuple[tuple[str, int], ...] = ()
    level: str | None = None
    # A wrapper logger's `| ERROR | stderr |` (or a bare time): it re-logs a child's lines one by one, so
    # it starts a record only after lines it did not prefix (see LineNormalizer._wrapped_record).
    wrapper: str | None = None


class LineNormalizer:
    """Stateful: a record header sets the metadata of the unprefixed lines that follow it."""

    def __init__(self, host: str | None = None) -> None:
        self.host = host
        self._current_plain = ""  # stream key of the last record seen outside any transport
        self._current: dict[str, str] = {}  # transport namespace -> stream key of the last record seen in it
        self._streams: dict[str, _StreamState] = {}
        # Consecutive records often share a header (same second, same rank): reuse its metadata.
        self._meta_cache: dict[str, LineMeta] = {}
        self._boundary_next = False  # the last line closed a code fence or span: the next one starts anew
        self._span_lines = 0  # lines since an inline-code span opened, 0 when none is open
        self._wrapped: dict[str, bool] = {}  # wrapper namespace -> its last line carried the wrapper
        # A wrapper's own prefix (its time, level, process) learned from the line where a traceback starts after it:
        # the same prefix is taken off the traceback's later lines (`_learn_prefix`).
        self._learned_prefix: re.Pattern[str] | None = None
        self._ci_margin = False  # a CI log viewer's `  | ` margin seen before a record (`_CI_MARGIN`)

    def normalize(self, raw: str, number: int, offset: int) -> LogLine:
        return self.normalize_clean(clean_text(raw), number, offset)

    def normalize_clean(self, text: str, number: int, offset: int) -> LogLine:
        """`text` already went through `clean_text` (and maybe `Reflow`)."""
        boundary = self._boundary_next
        if boundary:
            self._boundary_next = False
        first = text[:1]
        if first == "." and (glued := _PROGRESS_DOTS.match(text)) is not None:
            text = text[glued.end() :]  # a record glued to the progress dots printed before it (_PROGRESS_DOTS)
            first = text[:1]
        if first in " \t" and text.endswith("**") and text.lstrip().startswith("**"):
            text = text.lstrip()  # a bold line the paste indented (vllm-project/vllm#730: `  **ValueError: …**`)
            first = "*"
        if first and first in ">`*<~":
            text = _unquote(text) if first == ">" else text
            if text[:1] in "`*<~":
                text, whole = self._markdown(text)
                if whole:
                    return self._boundary(text, number, offset)
            first = text[:1]
        if (first == " " or first == "|") and (margin := _CI_MARGIN.match(text)) is not None \
                and (self._ci_margin or _CI_MARGIN_RECORD.match(text, margin.end())):
            self._ci_margin = True  # from the first record under it on, every line's margin is the viewer's
            text = text[margin.end() :]
            first = text[:1]
        transport: _Transport | None = None
        if first and first not in " \t" and (first != "[" or text[11:12] == "T" or text[1:5] == "rank" or "m" in text[2:9]):
            text, transport = _peel_transport(text)
        if transport is None:
            namespace = ""
            timestamp = level = meta_process = None
            meta_pid = None
            host = self.host
            ranks: tuple[tuple[str, int], ...] = ()
        else:
            namespace = transport.namespace
            timestamp, level, ranks = transport.timestamp, transport.level, transport.ranks
            meta_process, meta_pid = transport.process, transport.pid
            host = transport.host or self.host

        process: str | None = None  # of the program's own prefix (Ray, vLLM): it decides the stream
        pid: int | None = None
        has_header = False
        header_text = ""
        header_kind: str | None = None  # "vllm" | "sglang": whose logger header it was
        logged_from: str | None = None  # the file a vLLM header names
        first = text[:1]
        if first == "(" and (m := _PROCESS.match(text)):
            meta_process = m["name"]
            process = meta_process or ""  # Ray's unnamed `(pid=N) `: its pid alone tells the stream
            pid = meta_pid = int(m["pid"])
            if m["ip"]:
                host = m["ip"]
            if m["rank"] is not None:
                ranks = (("rank", int(m["rank"])),)
            elif m["tags"]:
                ranks = tuple((tag, int(number)) for tag, number in _RANK_TAG.findall(m["tags"]))
            text = text[m.end() :]
            header_text = m.group(0)
            if text.startswith("[rank") and (m := TORCHRUN_PREFIX.match(text)):
                # torch's per-rank prefix on a Ray worker's line: Ray's log monitor puts the actor before what the
                # worker printed, torch's logger its rank (`(WorkerDict pid=616) [rank1]:[E416 … ProcessGroupNCCL.cpp…]`)
                ranks = (("rank", int(m["rank"])),)
                text = text[m.end() :]
                header_text += m.group(0)
            first = text[:1]
        if first in "DIWEC" and first and (m := _VLLM_HEADER.match(text)):
            level = m["level"]
            timestamp = m["ts"]
            header_text += m.group(0)
            text = text[m.end() :]
            has_header = True
            header_kind, logged_from = "vllm", m["where"].partition(":")[0]
        elif (first == "[" or first.isdigit() and text[4:5] == "-") and (m := _SGLANG_HEADER.match(text)):
            timestamp = m["ts"]
            tags = tuple((name, int(value)) for name, value in _RANK_TAG.findall(m["tags"])) if m["tags"] else ()
            if tags:
                ranks = tags
            header_text += m.group(0)
            text = text[m.end() :]
            has_header = True
            # SGLang's format is `[time ranks] message`, no level and no other field: a bracketed date followed by a
            # logger's fields (`[2025-06-01 10:00:00][llamafactory][ERROR]`, `[…] [Worker-1] ERROR - `) is a wrapper's
            header_kind = None if tags == () and text[:1] == "[" or _LEVEL_FIELD.match(text) else "sglang"
            if not tags and (wrapper_level := _WRAPPER_LEVEL.match(text)):
                # a wrapper's record (verl's, LLaMA-Factory's loggers): its level decides whether its text is read
                # for an error (an engine's exception a wrapper logs on one line, no traceback)
                level = wrapper_level["level"]
                header_kind = None

        if self._learned_prefix is not None and (m := self._learned_prefix.match(text)):
            text = text[m.end() :]  # after every prefix and header known: what is left is a wrapper's own
        elif TRACEBACK_START in text and not text.startswith(TRACEBACK_START):
            self._learn_prefix(text)
        elif self._learned_prefix is None and (frame_at := text.find(_FRAME_START)) > 0:
            if self._learn_prefix_from_frame(text, frame_at):
                text = text[frame_at:]  # the frame it was learned from is read too
        if self._span_lines or text[-1:] == "`":
            text = self._close_markdown(text)
        if text.find('\\"', 0, 24) >= 0:
            text = _unescape_json_frame(text)

        if process is not None:
            stream = f"{namespace}{process}:{pid}"
        elif has_header:
            stream = namespace + "sglang:" + " ".join(f"{n}{v}" for n, v in ranks)
        elif namespace:
            stream = self._current.get(namespace, namespace)  # an unprefixed line continues the last record
        else:
            stream = self._current_plain

        state = self._streams.get(stream)
        if has_header:
            cache_key = namespace + header_text + (level or "")
            meta = self._meta_cache.get(cache_key) if host == self.host else None
            if meta is None:
                meta = LineMeta(
                    timestamp=timestamp, host=host, process=meta_process, pid=meta_pid, ranks=ranks, level=level,
                    header=header_kind, logged_from=logged_from,
                )
                if len(self._meta_cache) > 4096:
                    self._meta_cache.clear()
                self._meta_cache[cache_key] = meta
            # vLLM repeats the same header on every line of one record.  A blank line of the record keeps the header
            # without the space after it when the paste trimmed trailing white space (`ERROR … [core.py:586]` between
            # an exception line and its chain separator): the same record still.
            header_text = header_text.rstrip()
            starts_record = state is None or state.header != header_text or state.continued
            self._streams[stream] = _StreamState(meta, header_text)
        else:
            starts_record = transport is not None and transport.wrapper is not None and self._wrapped_record(transport)
            if state is not None and process is None:
                meta = state.meta
                state.continued = True
            else:
                meta = LineMeta(
                    timestamp=timestamp, host=host, process=meta_process, pid=meta_pid, ranks=ranks, level=level
                )
                if state is None and (process is not None or transport is not None):
                    self._streams[stream] = _StreamState(meta, header_text)
        if self._wrapped and (transport is None or transport.wrapper is None):
            self._unwrapped()
        if namespace:
            self._current[namespace] = stream
        else:
            self._current_plain = stream
        return LogLine(number, offset, text, meta, stream, starts_record or boundary, has_header)

    # -- paste decoration ------------------------------------------------------------------------

    def _learn_prefix(self, text: str) -> None:
        """A prefix before `Traceback (most recent call last):` that no layer above took off, with a time or a pid in it
        or an error level (a wrapper's `2025-06-01T10:00:00.123+08:00 ERROR [pid 123] `, `[2025-06-01 10:00:00,123][ERROR]
        [worker_3] `, `[ERROR] ` after journald's writer): its
        shape (digits as any digits, inner spaces as any spaces, its separator exact) is taken off the lines after
        it, so the frames and the exception line under it are read.  A sentence before the header (`Scheduler hit an
        exception: `) has no digits and is left to the scanner, which keeps it as the traceback's header."""
        prefix = text[: text.index(TRACEBACK_START)]
        if len(prefix) > MAX_LEARNED_PREFIX or not prefix.strip():
            return
        if sum(char.isdigit() for char in prefix) < 2 and not _ERROR_LEVEL_FIELD.search(prefix):
            return
        self._compile_prefix(prefix)

    def _compile_prefix(self, prefix: str) -> None:
        body = prefix.rstrip()
        shape = "".join(r"\d+" if part[:1].isdigit() else " +" if part[:1] == " " else re.escape(part)
                        for part in _PREFIX_PARTS.findall(body))
        self._learned_prefix = re.compile(shape + re.escape(prefix[len(body) :]))

    def _learn_prefix_from_frame(self, text: str, frame_at: int) -> bool:
        """The same for a traceback whose header the paste cut: a wrapper's prefix before a frame's `  File "…",
        line N, in f` (a logger re-logging a container's output, `2026-05-29 09:14:45,594 - INFO - [container]
        (APIServer pid=557)   File "…"`), learned from the first such frame.  The frame keeps CPython's two
        spaces of indentation; the prefix ends where they start."""
        if not FRAME_LINE.match(text[frame_at:]):
            return False
        prefix = text[:frame_at]
        if len(prefix) > MAX_LEARNED_PREFIX or not prefix.strip() or not prefix.endswith(" "):
            return False
        if sum(char.isdigit() for char in prefix) < 2 and not _ERROR_LEVEL_FIELD.search(prefix):
            return False
        self._compile_prefix(prefix)
        return True

    def _markdown(self, text: str) -> tuple[str, bool]:
        """The text without its Markdown decoration, and whether the whole line is a boundary (a fence or
        HTML around a log)."""
        first = text[:1]
        if first == "`" and text.startswith("```"):
            rest = text[3:].lstrip("`")
            if _FENCE_INFO.match(rest):
                return text, True  # an opening or closing fence
            return rest, False  # a fence glued to the first line of the block
        if first == "~" and text.startswith("~~~") and _FENCE_INFO.match(text.lstrip("~")):
            return text, True
        if first == "`" and _is_quoted_record(text):
            # one log record a sentence's paste put in inline code, whole (`ERROR 04-29 21:35:55 [engine.py:448] …`):
            # its header is read as on a line of its own, so its level and its engine's format count
            return text[1:-1], False
        if first == "`" and _odd_backticks(text):
            self._span_lines = 1  # an inline-code span over several lines opens here
            return text[1:], False
        if first == "*" and text.startswith("**") and text.endswith("**") and len(text) > 4 and not text.startswith("*** "):
            return text[2:-2], False  # (`*** SIGSEGV received … ***` is a signal handler's banner, not bold)
        if first == "<" and _HTML_LINE.match(text):
            return text, True
        return text, False

    def _close_markdown(self, text: str) -> str:
        """The end of a line inside an inline-code span (its closing backtick ends what was printed), or a
        fence glued to the end of a line (```: the block, and so the message, ends there)."""
        if self._span_lines:
            # The line that opened the span counts twice (when it opens, and here): only a later line
            # (count > 2) can close it.
            self._span_lines += 1
            if self._span_lines > SPAN_LINES:
                self._span_lines = 0
            elif self._span_lines > 2 and text.endswith("`") and _odd_backticks(text):
                self._span_lines = 0
                self._boundary_next = True
                return text[:-1]
        elif text.endswith("```"):
            self._boundary_next = True
            return text[:-3]
        return text

    def _boundary(self, text: str, number: int, offset: int) -> LogLine:
        """A fence or HTML line: it belongs to no program's output and ends what the last one printed."""
        self._span_lines = 0
        stream = self._current_plain
        state = self._streams.get(stream)
        meta = state.meta if state is not None else LineMeta(host=self.host)
        return LogLine(number, offset, text, meta, stream, True)

    def _wrapped_record(self, transport: _Transport) -> bool:
        """A wrapper-prefixed line starts a record after lines the wrapper did not prefix (a logger's
        traceback continues unprefixed), not after its own: then it is re-logging a child line by line."""
        namespace = transport.namespace
        previous = self._wrapped.get(namespace)
        self._wrapped[namespace] = True
        return previous is False

    def _unwrapped(self) -> None:
        for namespace in self._wrapped:
            self._wrapped[namespace] = False


def collector_stamp(text: str) -> str | None:
    """The ISO time a collector or a log viewer wrote before a raw line (ingest/order.py reads the order of a
    log from it), else None."""
    m = _COLLECTOR_TS.match(text) or _VIEWER.match(text)
    return m["ts"] if m else None


def has_line_prefix(text: str) -> bool:
    """The text starts with a prefix that only the start of a log line carries (a transport layer, a
    process prefix, a record header): it cannot be the continuation of a wrapped line."""
    first = text[:1]
    if first == "(" and _PROCESS.match(text):
        return True
    if first in "DIWEC" and _VLLM_HEADER.match(text):
        return True
    if first == "[" and _SGLANG_HEADER.match(text):
        return True
    return _peel_transport(text)[1] is not None


def after_line_prefix(text: str) -> str:
    """The text after a process prefix and a logger header (`(EngineCore pid=1) ERROR 03-14 09:26:54 [core.py:1]
    `): what a wrapped line's first piece says, for Reflow (only lines as long as the longest get here)."""
    if text[:1] == "(" and (m := _PROCESS.match(text)):
        text = text[m.end() :]
    if text[:1] in "DIWEC" and (m := _VLLM_HEADER.match(text)) or text[:1] == "[" and (m := _SGLANG_HEADER.match(text)):
        text = text[m.end() :]
    return text


def _unquote(text: str) -> str:
    """Markdown quote markers, `> ` (an empty quoted line is a bare `>`), possibly nested."""
    for _ in range(4):
        m = _QUOTE.match(text)
        if m is None:
            break
        text = text[m.end() :]
    return text


def _unescape_json_frame(text: str) -> str:
    """A frame copied out of a JSON string: `File \\"/x.py\\", line 3, in f` (maybe in a group's margin)."""
    if text.lstrip(" |").startswith('File \\"'):
        return text.replace('\\"', '"')
    return text


def _bracketed_transport(text: str) -> bool:
    """A `[` that may open a transport layer (`[2025-11-06T…Z]`, `[rank0]:`, `[36m`), not an SGLang header."""
    return text[11:12] == "T" or text[1:5] in ("rank", "pod/") or "m" in text[2:9]


def _peel_transport(text: str) -> tuple[str, _Transport | None]:
    """Strip the transport layers at the start of `text` (outermost first); None when there were none.
    Each branch is entered on one or two character tests: most lines have no transport layer at all."""
    transport: _Transport | None = None
    for _ in range(MAX_LAYERS):
        first = text[:1]
        m = None
        if first == "[":
            if not _bracketed_transport(text):
                break
            if text[11:12] == "T" and (m := _COLLECTOR_TS.match(text)):
                transport = transport or _Transport()
                transport.timestamp = m["ts"]
            elif text.startswith("[pod/") and (m := _KUBECTL_PREFIX.match(text)):
                transport = transport or _Transport()
                transport.host = transport.host or m["pod"]
                transport.namespace += f"{m['pod']}/{m['container']}|"
            elif text.startswith("[rank") and (m := TORCHRUN_PREFIX.match(text)):
                transport = transport or _Transport()
                transport.namespace += f"rank{m['rank']}|"
                transport.ranks = (("rank", int(m["rank"])),)
            elif text[1:2].isdigit() and "m" in text[2:9] and (m := _SGR_REMNANT.match(text)):
                transport = transport or _Transport()
            if m is None:
                break
            text = text[m.end() :]
            continue
        if first.isdigit():
            if text[10:11] == "T":
                m = _COLLECTOR_TS.match(text)
                if m:
                    transport = transport or _Transport()
                    transport.timestamp = m["ts"]
                    text = text[m.end() :]
                    if _NUMERIC_OFFSET.search(m["ts"]) and text.find("]", 2, 160) > 0:
                        text = _peel_journal_writer(text, transport)
                    continue
            elif text[10:11] == " " and text[4:5] == "-" and text[13:14] == ":":
                peeled = _peel_spaced_timestamp(text, transport)
                if peeled is None:
                    break
                text, transport = peeled
                continue
        elif first.isupper():
            if text[3:4] == " " and text[9:10] == ":" and (m := _JOURNALD.match(text)):
                candidate = _Transport(timestamp=m["ts"])
                rest = _peel_journal_writer(text[m.end() :], candidate)
                if candidate.pid is not None:  # a syslog time alone is no transport layer
                    transport = transport or _Transport()
                    transport.timestamp = candidate.timestamp
                    transport.host, transport.process, transport.pid = candidate.host, candidate.process, candidate.pid
                    transport.namespace += candidate.namespace
                    text = rest
                    continue
            space = text.find(" ", 4, 10)
            if space > 0 and text[space + 11 : space + 12] == "T" and (m := _VIEWER.match(text)):
                transport = transport or _Transport()
                transport.timestamp = m["ts"]
                text = text[m.end() :]
                continue
        elif first == ">":
            text = _unquote(text)
            transport = transport or _Transport()
            continue
        elif first == "^":
            if text.startswith("^@"):  # NUL bytes a terminal showed as ^@
                text = text.lstrip("^@")
                transport = transport or _Transport()
                continue
            break
        elif not first or first in " \t(":
            break
        if text.find("  |", 1, 100) > 0 and (m := _COMPOSE.match(text)):
            transport = transport or _Transport()
            transport.process = transport.process or m["service"]
            transport.namespace += f"{m['service']}|"
            text = text[m.end() :]
            continue
        break
    return text, transport


def _peel_journal_writer(text: str, transport: _Transport) -> str:
    """The text after journald's `host unit[pid]: ` (the writer of the entry), which becomes the line's host,
    process and pipe; the text unchanged when it does not start so."""
    m = _JOURNAL_WRITER.match(text)
    if m is None:
        return text
    transport.host = m["host"]
    transport.process = m["unit"]
    transport.pid = int(m["pid"])
    transport.namespace += f"{m['host']}:{m['unit']}[{m['pid']}]|"
    return text[m.end() :]


def _peel_spaced_timestamp(text: str, transport: _Transport | None) -> tuple[str, _Transport] | None:
    """Docker Desktop's time or a wrapper logger's prefix; None for a record of Python logging or an SGLang
    header that lost its `[` (the header regex takes it)."""
    m = _SPACED_TS.match(text)
    if m is None:
        return None
    name, level = m["name"] or m["logger"], m["level"] or m["level2"]
    if name is None:
        rest = text[m.end() :]
        if (m["fraction"] or "").startswith(",") or rest.startswith(("- ", "| ")):
            return None  # Python logging's asctime: a record of its own
        if _LOST_BRACKET.match(rest):
            return None  # `2025-02-09 10:14:05 TP0] …`: an SGLang header whose `[` a copy lost
    transport = transport or _Transport()
    transport.timestamp = m["ts"]
    if name is not None:
        transport.level = level
        transport.wrapper = f"{name}|{level}"
        transport.namespace += f"{name}|{level}|"
    else:
        # A time on every line (Docker Desktop) is transport; on a line after lines without one, it is a
        # program's record starting (`2025-04-23 21:31:45 Server stopped` after a traceback).
        transport.wrapper = "time"
    return text[m.end() :], transport


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
    normalize = LineNormalizer(host).normalize_clean
    lines = split_lines(chunks, start_offset)
    if drop_partial_first:
        next(lines, None)
    reflowed = Reflow(starts_line=has_line_prefix, body=after_line_prefix).lines(lines, first_line, clean_text)
    for text, number, offset in ipython_frames_as_cpython(rich_frames_as_cpython(reflowed)):
        yield normalize(text, number, offset)


def normalize_text(text: str, host: str | None = None) -> list[LogLine]:
    """Convenience for tests and small inputs."""
    return list(normalize_chunks([text.encode("utf-8", errors="surrogateescape")], host=host))
