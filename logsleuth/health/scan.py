"""Reading a running server's log for its health: the latest launch's steady-state lines, fed to detectors.

`HealthScan` is fed lines in log order (a whole log here, a followed one in watch/health.py) and keeps every
health pattern's detectors, the batch samples for the series, and the launch facts.  A new launch in the log
starts it over: health is about the latest run.

The lines are SGLang's `Prefill batch`/`Decode batch` lines (metrics.py) or vLLM's periodic stats lines
(vllm_metrics.py).  Once the lines show whose server it is (the batch lines' wording, else the launch), only
that engine's patterns are fed: SGLang and vLLM print some of the same warnings, with other causes and flags.

A large log is not read whole.  One pass of the fast literal search (sources/anchors.py, or grep on a
remote host) finds every launch (SGLang's `server_args=`, vLLM's engine config line) and every line a
`lines` signal names by its literal (a retraction storm may last a minute of a week); then the latest launch's start-up (HEAD_BYTES), SAMPLES
evenly spaced windows of batch lines and the tail are read.  The series and the batch signals come from
those samples: a signal that holds for a run of batches shows in them.

Over SSH each read is a round trip, so a source that reads many ranges in one request (base.ReadsRanges: a
remote file) gets them that way: the search (one `grep` on the host, which also says which anchor each hit is),
the latest launch's check, then every window at once.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field, replace
from functools import partial

from logsleuth.diagnosis.schema import REGEX_TIMEOUT
from logsleuth.health.detectors import Detector, detector_for
from logsleuth.health.library import HealthPattern
from logsleuth.health.metrics import parse_batch_line, plausible
from logsleuth.health.model import BatchSample
from logsleuth.health.vllm_metrics import VllmStatsReader, is_launch_line
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.normalize import normalize_chunks
from logsleuth.models import LaunchInfo, LogLine
from logsleuth.sources.base import FindsAnchors, GrepMatches, ReadsRanges, Source, SplitsWork, merged_ranges
from logsleuth.tracebacks.grammar import TRACEBACK_HEADER

FULL_READ_BYTES = 48 << 20  # a log this small is read whole
HEAD_BYTES = 4 << 20  # at most, of the latest launch: its version, flags and start-up warnings...
HEAD_BATCHES = 200  # ...read until this many batch lines show the steady state (the collapse's baseline)
BEFORE_LAUNCH_BYTES = 64 << 10  # read before the launch's `server_args=` line, for its command line
TAIL_BYTES = 32 << 10
SAMPLES = 128  # evenly spaced windows between the head and the tail...
SAMPLE_BYTES = 4 << 10  # ...of this many bytes: ~15 batch lines each
SEARCH_LIMIT = 200_000  # hits of the literal search kept (more: only the launches are searched for again)
EVENT_READS = 200  # hit lines read: all of them, or the first and the last half of this many
EVENT_WINDOW = 512  # read before a literal's hit, to the start of its line
LINE_OVERRUN = 8 << 10  # read past a range's end to finish its last line (longer lines are cut there)
HEAD_FETCH = 1 << 20  # of the head, fetched with the other windows in one request; the rest only if needed
# Every SGLang launch logs its arguments once, at its start; every vLLM launch its engine's config (V0 and V1:
# `Initializing … LLM engine (vX) with config: model=…, speculative_config=…`, vllm/config VllmConfig.__str__).
# Both hold `_` and `=`, rare in batch lines: the search shares one memchr pass (sources/anchors.py).
LAUNCH_ANCHORS = (b"server_args=", b"speculative_config=")


@dataclass
class HealthScan:
    """Detectors for every pattern, fed one line at a time, and the latest launch's batch samples."""

    patterns: tuple[HealthPattern, ...]
    tracker: LaunchTracker = field(default_factory=LaunchTracker)
    samples: list[BatchSample] = field(default_factory=list)
    # The causes' `log_line` regexes (by their text) that a line of this launch matched
    seen: set[str] = field(default_factory=set)
    detectors: dict[str, list[Detector]] = field(default_factory=dict)
    # Where a Python traceback began after the steady state did: the run ended in a failure, which is
    # diagnose's to name (None: none was read)
    failure_offset: int | None = None
    vllm: VllmStatsReader = field(default_factory=VllmStatsReader)
    sample_engine: str | None = None  # whose wording this launch's batch lines are in
    # Batch lines of this launch holding a number no server prints (metrics.plausible), and the first one
    implausible: int = 0
    first_implausible: tuple[str, str] | None = None
    _launches: int = 0
    _fed_engine: str | None = None  # the engine whose patterns `_fed` holds (None: every pattern's)
    _fed: list[Detector] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._cause_lines = list(
            {c.log_line.pattern: c.log_line for p in self.patterns for r in p.causes for c in r.when if c.log_line}.values()
        )
        self._restart()

    def _restart(self) -> None:
        self.detectors = {pattern.id: [detector_for(d) for d in pattern.detects] for pattern in self.patterns}
        self.samples = []
        self.seen = set()
        self.failure_offset = None
        self.vllm = VllmStatsReader()
        self.sample_engine = None
        self.implausible, self.first_implausible = 0, None
        self._feed_engine(self.tracker.engine)

    @property
    def engine(self) -> str | None:
        """Whose server this launch is: the batch lines' wording says it best (a version line may name the
        other engine, e.g. a dependency in `pip freeze`), else what the launch lines say."""
        return self.sample_engine or self.tracker.engine

    def applies(self, pattern: HealthPattern) -> bool:
        """Whether the pattern is about this engine (a pattern of no engine, or an engine not known: yes)."""
        engine = self.engine
        return not (pattern.engine and engine and pattern.engine != engine)

    def _feed_engine(self, engine: str | None) -> None:
        self._fed_engine = engine
        self._fed = [d for p in self.patterns if self.applies(p) for d in self.detectors[p.id]]

    def feed(self, line: LogLine) -> BatchSample | None:
        """One line of the log, in order; the batch sample it is, if it is one."""
        self.tracker.observe(line)
        text = line.text
        if len(self.tracker.markers) != self._launches:  # a new launch: health is about the latest one
            self._launches = len(self.tracker.markers)
            self._restart()
        elif self.samples and "LLM engine (v" in text and is_launch_line(text):
            self._restart()  # vLLM started again (its engine config line) after serving: no command line logged
        sample = parse_batch_line(text, line.meta.timestamp, line.offset) or self.vllm.parse(
            text, line.meta.timestamp, line.offset
        )
        if sample is not None:
            sample, absurd = plausible(sample)
            if absurd is not None:
                self.implausible += 1
                self.first_implausible = self.first_implausible or absurd
            if self.sample_engine is None:
                self.sample_engine = sample.engine
        if self.engine != self._fed_engine:
            self._feed_engine(self.engine)
        if sample is None:
            if self.samples and self.failure_offset is None and text.endswith(TRACEBACK_HEADER):
                self.failure_offset = line.offset
            for expression in self._cause_lines:
                if expression.pattern not in self.seen and expression.search(text, timeout=REGEX_TIMEOUT):
                    self.seen.add(expression.pattern)
            for detector in self._fed:
                detector.feed_line(line)
            return None
        self.samples.append(sample)
        for detector in self._fed:
            detector.feed_batch(sample, line)
        return sample

    def launch(self, command: str | None = None, version: str | None = None) -> LaunchInfo:
        """The launch, with the engine its batch or stats lines are written by (`engine`) when they showed it."""
        info = self.tracker.info(command, version)
        return info if self.engine == info.engine else replace(info, engine=self.engine)


@dataclass(frozen=True)
class ReadPlan:
    """What of a large log `health` reads, and whether that is a sample."""
    head: tuple[int, int]  # [start, end): read until its batch lines show the steady state (HEAD_BATCHES)
    ranges: tuple[tuple[int, int], ...]  # then these, [start, end) in order, not overlapping
    sampled: bool  # not every line is read
    searched: bool  # the whole log was searched for the literals


def plan_reads(source: Source, size: int, literals: tuple[str, ...]) -> ReadPlan:
    """What to read of a log of `size` bytes: all of it when small; otherwise the latest launch's head, the
    samples, the tail and the lines the literal search found."""
    if size <= FULL_READ_BYTES:
        return ReadPlan((0, 0), ((0, size),), sampled=False, searched=True)
    launches, events, searched, sglang = _search(source, literals)
    read = events
    if len(read) > EVENT_READS:  # a storm's start and end, each line as it came: its density shows
        read = read[: EVENT_READS // 2] + read[-EVENT_READS // 2 :]
    event_ranges = [(max(0, hit - EVENT_WINDOW), min(size, hit + 1)) for hit in read]  # read_plan ends the line
    launch_start = _latest_launch(source, launches, sglang)
    head_start = max(0, launch_start - BEFORE_LAUNCH_BYTES) if launch_start else 0
    head_end = min(size, launch_start + HEAD_BYTES)
    tail_start = max(head_end, size - TAIL_BYTES)
    step = max((tail_start - head_end) // SAMPLES, SAMPLE_BYTES)
    samples = [(at, min(at + SAMPLE_BYTES, tail_start)) for at in range(head_end, tail_start, step)]
    ranges = tuple(merged_ranges(r for r in [*samples, (tail_start, size), *event_ranges] if r[1] > r[0]))
    return ReadPlan((head_start, head_end), ranges, sampled=True, searched=searched)


def _search(source: Source, literals: tuple[str, ...]) -> tuple[list[int], list[int], bool, set[int]]:
    """(offsets of every launch anchor, offsets of the literals' hits, whether the log was searched, the launch
    anchors known to be SGLang's `server_args=`) in one pass where the source tells which anchor each hit is (a
    local file, a remote grep); else by reading the hits when they are few, or a second search for the launches
    alone."""
    if not isinstance(source, FindsAnchors):
        return [], [], False, set()
    anchors = (*LAUNCH_ANCHORS, *(literal.encode() for literal in literals))
    launch_lengths = {len(anchor) for anchor in LAUNCH_ANCHORS}
    find_matches = getattr(source, "find_matches", None)
    if find_matches is not None and len({len(anchor) for anchor in anchors}) == len(anchors):
        matches = _matches_in_halves(source, anchors) if isinstance(source, SplitsWork) else find_matches(anchors)
        if matches is not None:
            launches = [o for o, n in zip(matches.offsets, matches.lengths, strict=True) if n in launch_lengths]
            events = [o for o, n in zip(matches.offsets, matches.lengths, strict=True) if n not in launch_lengths]
            sglang = {o for o, n in zip(matches.offsets, matches.lengths, strict=True) if n == len(LAUNCH_ANCHORS[0])}
            return launches, events, True, sglang
    hits = source.find_anchors(anchors, limit=SEARCH_LIMIT) or []
    if len(hits) <= EVENT_READS:
        launches = [hit for hit in hits if _is_launch_at(source, hit)]
    else:  # too many to read each: the launches alone, in a search of their own
        launches = source.find_anchors(LAUNCH_ANCHORS, limit=SEARCH_LIMIT) or []
    known = set(launches)
    return launches, [hit for hit in hits if hit not in known], True, set()


def _matches_in_halves(source: SplitsWork, anchors: tuple[bytes, ...]) -> GrepMatches | None:
    """A local file's matches, its two halves searched at once by two forked processes (sources/anchors.py's
    in_two_halves: here only when the file is large and there are two cores).  A search with hits to check
    (a retraction storm's thousands of lines) is bound by the CPU, not by reading."""
    size = source.size()  # type: ignore[attr-defined]
    halves = source.in_two_halves(size, partial(_matches_between, anchors=anchors), _line_start_after)
    found = [half for half in halves if half is not None]
    if len(found) < len(halves):
        return None  # too many in a half
    merged = found[0]
    for half in found[1:]:
        merged = merged.extend(half)
    return merged if len(merged.offsets) <= SEARCH_LIMIT else None


def _matches_between(source: Source, start: int, end: int, *, anchors: tuple[bytes, ...]) -> GrepMatches | None:
    matches: GrepMatches | None = source.find_matches(anchors, SEARCH_LIMIT, start, end)  # type: ignore[attr-defined]
    return matches


def _line_start_after(source: Source, middle: int, size: int) -> int:
    """Where the line after `middle` starts (no anchor holds a newline, so none straddles it)."""
    window = b"".join(source.read_range(middle, min(size, middle + LINE_OVERRUN)))
    newline = window.find(b"\n")
    return middle + newline + 1 if newline >= 0 else size


LAUNCH_CHECKS = 8  # launch anchors checked from the last one back, for the latest that is a launch
LAUNCH_LINE_BEFORE = 2 << 10  # read before a vLLM anchor, for the start of its line


def _latest_launch(source: Source, launches: list[int], sglang: set[int]) -> int:
    """The offset of the latest launch among the anchors' hits (0: none).  `server_args=` is one (`sglang`: the
    hits the search knows are it, which need no read: over SSH a read is a round trip); vLLM's
    `speculative_config=` also comes in the dump V1 prints when its engine fails (`Dumping input data for V1
    LLM engine (v…) with config: …`), which is not a launch: its line must say `Initializing a`."""
    if launches and launches[-1] in sglang:
        return launches[-1]
    checked = launches[::-1][:LAUNCH_CHECKS]
    windows = [(max(0, offset - LAUNCH_LINE_BEFORE), offset + len(LAUNCH_ANCHORS[0])) for offset in checked]
    for offset, (start, _), window in zip(checked, windows, _windows(source, windows), strict=False):
        line = window[window.rfind(b"\n", 0, offset - start) + 1 :]
        if line.endswith(LAUNCH_ANCHORS[0]) or (b"Initializing a" in line and b" with config: " in line):
            return offset
    return launches[-1] if launches else 0


def _is_launch_at(source: Source, offset: int) -> bool:
    """Whether a launch anchor starts at `offset` (one read, however many anchors: over SSH a read is a trip)."""
    text = b"".join(source.read_range(offset, offset + max(len(anchor) for anchor in LAUNCH_ANCHORS)))
    return text.startswith(LAUNCH_ANCHORS)


def _windows(source: Source, ranges: list[tuple[int, int]]) -> Iterator[bytes]:
    """The bytes of each range: in one request where the source can (a remote file), else one read each, as
    they are asked for."""
    if isinstance(source, ReadsRanges) and len(ranges) > 1:
        yield from source.read_ranges(ranges)
        return
    for start, end in ranges:
        yield b"".join(source.read_range(start, end))


def _span_reader(source: Source, spans: list[tuple[int, int]], sampled: bool) -> Callable[[int], Iterable[bytes]]:
    """The chunks of each span, by its index.  A sampled log over a source that reads many ranges in one request
    (a remote file) gets every span at once, the first (the head) up to HEAD_FETCH, the rest of it only if its
    reader goes on; otherwise each span is read when asked for (a whole log is streamed)."""
    if not sampled or not isinstance(source, ReadsRanges):
        return lambda index: source.read_range(*spans[index])
    (head_start, head_end), rest = spans[0], spans[1:]
    fetched_end = min(head_end, head_start + HEAD_FETCH)
    fetched = source.read_ranges([(head_start, fetched_end), *rest])

    def head() -> Iterator[bytes]:
        yield fetched[0]
        if fetched_end < head_end:
            yield from source.read_range(fetched_end, head_end)

    return lambda index: head() if index == 0 else (fetched[index],)


def read_plan(source: Source, size: int, plan: ReadPlan, scan: HealthScan, host: str | None = None) -> None:
    """Feed `scan` the whole lines that start in each range of the plan, in order, each line once: the head
    until HEAD_BATCHES batch lines, then the ranges.  A range that starts mid-line drops its fragment, one
    that ends mid-line reads on to the line's end."""
    fed_until = 0
    ranges = (plan.head, *plan.ranges)
    spans = [(start, min(size, end + LINE_OVERRUN if end < size else end)) for start, end in ranges]
    chunks_of = _span_reader(source, spans, plan.sampled)
    for index, (start, end) in enumerate(ranges):
        chunks = chunks_of(index)
        for line in normalize_chunks(chunks, start_offset=start, host=host, drop_partial_first=start > 0):
            if line.offset >= end or (index == 0 and len(scan.samples) >= HEAD_BATCHES):
                break
            if line.offset >= fed_until:
                scan.feed(line)
                fed_until = line.offset + 1

