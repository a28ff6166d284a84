"""Dense reading: logs with many tracebacks (a server failing on every request writes a million of them).

The text is cut into SGLang records at `[date …] … Traceback (most recent call last):` header lines with
C-level bytes operations, and only the first copy of each record text is parsed; later copies are recognized
by their text and counted.  At most grouping.MAX_GROUPS groups are kept; occurrences of the others are counted
as omitted.  What this makes approximate (only ever on such logs) is listed in `DenseScan`'s docstring.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from logsleuth.diagnosis.grouping import MAX_GROUPS, Grouper, fingerprint
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.lines import decode
from logsleuth.ingest.normalize import LineNormalizer
from logsleuth.models import Failure
from logsleuth.reading.scan import (
    ANCHORS,
    FALLBACK_ANCHORS,
    GROWTH,
    REGION_BEFORE,
    Examined,
    ReadResult,
    Scanned,
    failures_in,
    latest_launch,
    regions,
    scan_range,
)
from logsleuth.sources.base import Source, SplitsWork, anchors_in_chunks


def read_latest_dense(
    source: Source, size: int, start: int, later: Scanned, examined: Examined, window: int, max_bytes: int
) -> ReadResult:
    """Widen backwards the dense way: each step reads only the bytes before the last one.

    `later` is the exact scan of [start, size).  Its failures from its first record header on
    are kept; each dense step covers [an earlier record header, where the last step began)."""
    boundary = first_record_at_or_after(source, start, size)
    kept = latest_launch([failure for failure in later.failures if failure.offset >= boundary], later.tracker)
    grouper = Grouper()
    for failure in kept:
        grouper.add(failure, source.name, source.host)
    tracker, cascade = later.tracker, later.cascade
    done = bool(kept) and tracker.segment_start(kept[-1].offset) >= boundary > 0
    capped = False
    while not done and boundary > 0 and not grouper.full:
        window = min(window * GROWTH, max_bytes)
        capped = window >= max_bytes and size - window > 0
        start = first_record_at_or_after(source, max(0, size - window), boundary)
        scan = DenseScan(source, examined, split_launches=True)
        scan.run(start, boundary)
        earlier = scan.finish()
        if scan.launch_marker_seen:
            done = True
            if not len(earlier) and not len(grouper) and scan.previous is not None:
                earlier = scan.previous  # nothing failed since the last launch began: the one before is the latest
        earlier.merge(grouper)
        grouper = earlier
        scan.tracker.absorb(tracker, later_command_wins=True)
        scan.tracker.markers.extend(tracker.markers)
        tracker, cascade = scan.tracker, scan.cascade + cascade
        boundary = start
        done = done or capped
    capped = capped and boundary > 0 and not len(grouper)
    return ReadResult(grouper.representatives(), tracker, examined.total, size, capped, cascade, groups=grouper)


def first_record_at_or_after(source: Source, start: int, end: int) -> int:
    """Offset of the first dense record header in [start, end), else `end`."""
    if start == 0:
        return 0
    position = start
    carry = b""
    for chunk in source.read_range(start, end):
        data = carry + chunk
        base = position - len(carry)
        found = _next_record(data, 0, len(data), line_at_start=False)
        if found is not None:
            return base + found[0]
        position += len(chunk)
        carry = data[-(_HEAD_LIMIT + len(ANCHOR)) :]
    return end


def read_all_dense(source: Source, size: int, examined: Examined) -> ReadResult:
    """The whole log the dense way; a local file in two halves at once (two cores).

    Only the first half's groups are bounded (MAX_GROUPS, the first seen in the log).  The second half keeps
    every group it parses, so that each of the first half's groups gets its occurrences from both: bounded on
    its own, it kept the first groups *it* saw and counted the others' occurrences as omitted (451 of 900).
    Where the second half met more distinct texts than it may parse, what it left unparsed might belong to a
    kept group: the first half's reading then goes on over the second half here, as one process reads it."""
    # No separate look at the head for the launch command: dense reading parses every text
    # between records that mentions a launch (see _TAIL_TRIGGERS).
    if isinstance(source, SplitsWork):
        halves = source.in_two_halves(size, _dense_half, _split_point)
    else:
        halves = [_dense_half(source, 0, size)]
    if len(halves) == 2 and halves[1].unparsed:
        first, second = halves
        assert second.start is not None
        first.source = source
        first.run(second.start, size)
        first.finish()
        halves = [first]
    tracker = LaunchTracker()
    grouper = Grouper()
    cascade: list[str] = []
    for half in halves:
        grouper.merge(half.grouper)
        tracker.absorb(half.tracker, later_command_wins=True)
        cascade.extend(half.cascade)
    return ReadResult(grouper.representatives(), tracker, examined.total, size, False, cascade, groups=grouper)


def _dense_half(source: Source, start: int, end: int) -> DenseScan:
    """One half's reading, returned whole (from a forked helper: pickled without its source)."""
    scan = DenseScan(source, Examined(), split_launches=False, bounded=start == 0)
    scan.run(start, end)
    scan.finish()
    return scan


def _split_point(source: Source, middle: int, size: int) -> int:
    """Where the second half starts: a record header, so no record is cut in two."""
    return first_record_at_or_after(source, middle, size)


# -- dense reading ----------------------------------------------------------------------

ANCHOR = b"Traceback (most recent call last):"
_DIGITS = b"0123456789"
_HEAD_LIMIT = 512  # a record header longer than this before "Traceback" is not one
_UNIT_LIMIT = 64 << 10  # a record with what follows it, up to the next one; longer: read exactly
_CACHE_LIMIT = 50_000  # entries per cache: a cache of tails that fills up is emptied, records stop being added
_PARSE_LIMIT = 10 * MAX_GROUPS  # records parsed at most per scan (first copies of distinct texts: ~2 ms each)
# Distinct shapes of records left unparsed beyond the bound: one record of each is kept (up to this many
# bytes in all) and parsed alone at the end (~0.3 ms each), to count the distinct failures left out; past
# that, the count is an estimate.
_RESOLVE_BYTES = 8 << 20
# A text between records holding none of these (digits removed, lower-cased) adds nothing the
# scanner, the launch tracker or a failure's context would use: every trigger of theirs contains
# one (exception names and kill notices, launch lines, frames, context words).
_TAIL_TRIGGERS = (
    b"error", b"xception", b"exit", b"interrupt", b"fault", b"failure", b"timeout", b"killed", b"sigquit",
    b"terminate", b"kill_process_tree", b"dump", b"server_args", b"launch_server", b" serve", b"sglang",
    b"vllm", b'file "', b"traceback", b"warn", b"fail", b"not enough", b"out of memory", b"critical",
    b"thread x", b"stack (most recent", b"[previous line", b"[logsleuth: ", b"\n ", b"\n\t", b"\n+", b"\n|",
)
# A frames block and its exception type: a record's text without its message (the "shape").
_FRAMES_END = re.compile(rb"\n(?![ \t])")


def _next_record(data: bytes, start: int, end: int, *, line_at_start: bool = True) -> tuple[int, int] | None:
    """(line start, anchor offset) of the first dense record header in data[start:end]: a line
    that starts with `[` and a digit (an SGLang `[2026-… TP0]` or collector `[2026-…T…]` stamp)
    and holds the traceback anchor.  `line_at_start`: data[0] begins a line."""
    find = data.find
    index = find(ANCHOR, start, end)
    while index >= 0:
        line_start = data.rfind(b"\n", max(0, index - _HEAD_LIMIT), index) + 1
        if (line_start or (line_at_start and index <= _HEAD_LIMIT)) and data[line_start] == 91:  # "["
            if 48 <= data[line_start + 1] <= 57:
                return line_start, index
        index = find(ANCHOR, index + 1, end)
    return None


@dataclass
class _Known:
    """What the first copy of a record text held: one complete failure starting at its header."""

    key: str  # its fingerprint
    shape_ok: bool  # a single traceback with frames: copies that differ only in the message match too
    tag: bytes = b""  # appended to a header to key the copies of this record seen with that header


def _known(failure: Failure, record_end: int) -> _Known | None:
    if failure.truncated or failure.end_offset > record_end + 1:
        return None  # the record did not hold all of it: its copies must be parsed too
    return _Known(fingerprint(failure), len(failure.exceptions) == 1 and bool(failure.final.frames))


class _Mark(Enum):
    """What a record text's cache entry says when it is not a _Known (an Enum: it survives pickling, so a
    half read by a forked helper can be read on here)."""

    UNSEEN = 0
    OMITTED = 1  # a record text counted as omitted: beyond the bound, never parsed


_UNSEEN, _OMITTED = _Mark.UNSEEN, _Mark.OMITTED


class DenseScan:
    """Read [start, end) of a traceback-dense log record by record (see the module docstring).

    Exact: the first copy of every record text is parsed with its 4 KiB of context, like --all
    parses any region; a record followed by anything the scanner or tracker could use (an
    exception or kill line, a launch line, a warning: see _TAIL_TRIGGERS) is parsed with it;
    copies keep their own rank and host.
    Approximate, only here: a group's ranks are listed in the order they were first seen per
    record text; once MAX_GROUPS groups are kept (or _PARSE_LIMIT records were parsed), a record
    text never seen before is not parsed but counted as omitted; the distinct failures so omitted
    are counted by parsing one record of each shape (frames and exception types) at the end, exactly
    while those records fit in _RESOLVE_BYTES, estimated beyond (one per shape); a copy that differs
    from a kept one only in its message is recognized (by its frames and exception type) while that
    is worth it, i.e. unless fewer than 1 % of the last 1,000 tries matched.
    `bounded`: at most MAX_GROUPS groups (off for the second half of a log read in two halves).
    """

    def __init__(self, source: Source, examined: Examined, *, split_launches: bool, bounded: bool = True) -> None:
        self.source: Source | None = source
        self.examined = examined
        self.split_launches = split_launches
        self.grouper = Grouper() if bounded else Grouper(max_groups=None)
        self.start: int | None = None  # where the first run began
        self.unparsed = 0  # records counted as omitted without being parsed
        # Shape of a record left unparsed -> its text until resolved, then None (a remote log is not read again).
        self.omitted_shapes: dict[int, bytes | None] = {}
        self._omitted_bytes = 0
        self.previous: Grouper | None = None  # the launch before the last launch marker
        self.launch_marker_seen = False
        self.tracker = LaunchTracker()
        self.cascade: list[str] = []
        # Hash of a record's text -> what it holds (a _Known, None: parse every copy, _OMITTED).
        self.records: dict[int, object] = {}
        self.shapes: dict[int, _Known] = {}
        self.tails: dict[int, bool] = {}  # hash of a tail's text without digits -> plain
        self.copies: dict[bytes, int] = {}  # header + _Known.tag -> copies not given to the grouper yet
        self.known_by_tag: dict[bytes, _Known] = {}
        self.heads: dict[bytes, tuple[str | None, str | None]] = {}
        self.parses = 0
        self.exact_until = 0  # failures starting before this were already taken
        self.shape_tries = 0
        self.shape_hits = 0
        self.shape_skip = 0  # unseen records to count as omitted before matching one by its shape again

    def __getstate__(self) -> dict[str, object]:
        return {**self.__dict__, "source": None}  # a file object stays with its process

    @property
    def _source(self) -> Source:
        assert self.source is not None, "a scan returned by a forked helper needs its source back"
        return self.source

    # -- driving -------------------------------------------------------------------
    def run(self, start: int, end: int) -> None:
        if self.start is None:
            self.start = start
        self.exact_until = max(self.exact_until, start)  # context is never read from before the range
        carry = b""
        base = start  # offset of carry[0]
        unit: tuple[int, int] | None = None  # (line start, anchor) of the record being cut, in the buffer
        lead = start  # text before the first record: read as a tail
        at_line = True  # carry[0] begins a line (`start` is 0 or a record header)
        for chunk in self._source.read_range(start, end):
            data = carry + chunk if carry else chunk
            if unit is None:
                found = _next_record(data, 0, len(data), line_at_start=at_line)
                if found is not None:
                    self._tail(base, lead, base + found[0], data)
                    unit = self._units(data, base, found)
            else:
                unit = self._units(data, base, unit)
            # Keep the open record (or, before the first one, what may hold a header's start).
            if unit is not None and len(data) - unit[0] <= _UNIT_LIMIT:
                keep = unit[0]
                at_line = True
            else:
                if unit is not None:
                    self._unit(data, base, unit[0], unit[1], len(data), long=True)
                    lead = base + len(data)
                    unit = None
                keep = max(0, len(data) - _HEAD_LIMIT - len(ANCHOR))
                at_line = keep == 0 and at_line
                if base + keep > lead:
                    self._tail(base, lead, base + keep, data)
                    lead = base + keep
            carry = data[keep:]
            if unit is not None:
                unit = (unit[0] - keep, unit[1] - keep)
            base += keep
        self.examined.add(start, base + len(carry))
        if unit is not None:
            self._unit(carry, base, unit[0], unit[1], len(carry))
        elif base + len(carry) > lead:
            self._tail(base, lead, base + len(carry), carry)

    def finish(self) -> Grouper:
        """The groups since the last launch marker (all of them without `split_launches`)."""
        self._flush_copies()
        self._resolve_omitted()
        return self.grouper

    def _units(self, data: bytes, base: int, unit: tuple[int, int]) -> tuple[int, int]:
        """Take every record of `data` from `unit` on whose end is in `data`; return the open one.

        The hot loop of dense reading (a million records take seconds, so it is written for speed):
        copies of known records and records beyond the bound, with a plain tail, are counted here;
        everything else goes to `_unit`."""
        find, rfind = data.find, data.rfind
        records, tails, copies, unseen, omitted = self.records, self.tails, self.copies, _UNSEEN, _OMITTED
        anchor_length, head_limit, digits = len(ANCHOR), _HEAD_LIMIT, _DIGITS
        full, exact_until, dropped, skip = self._full(), self.exact_until - base, 0, self.shape_skip
        line_start, anchor = unit
        index = find(ANCHOR, anchor + anchor_length)
        while index >= 0:
            next_start = rfind(b"\n", max(0, index - head_limit), index) + 1
            if not (next_start and data[next_start] == 91 and 48 <= data[next_start + 1] <= 57):
                index = find(ANCHOR, index + anchor_length)
                continue  # not a record header: a chained or nested traceback inside the record
            if line_start >= exact_until:
                record_end = find(b"[", anchor, next_start)
                while record_end >= 0 and not (data[record_end - 1] == 10 and 48 <= data[record_end + 1] <= 57):
                    record_end = find(b"[", record_end + 1, next_start)
                if record_end < 0:
                    record_end = next_start
                key = hash(data[anchor:record_end])
                known = records.get(key, unseen)
                plain = record_end == next_start or tails.get(hash(data[record_end:next_start].translate(None, digits)))
                if not plain:
                    known = None  # an unseen tail (None) or one to parse (False): see _unit
                if known is omitted:
                    dropped += 1  # a record text already counted as omitted
                elif known is unseen and full and skip:
                    skip -= 1
                    dropped += 1  # beyond the bound: counted, not parsed
                    self._omitted_text(data, line_start, anchor, record_end)
                    if len(records) < _CACHE_LIMIT:
                        records[key] = omitted
                elif known is not unseen and known is not None:
                    if data[line_start + 5] == 45 and data[line_start + 20] == 32:  # `[2026-11-01 00:00:00 TP3] …`
                        copy = data[line_start + 20 : anchor] + known.tag  # type: ignore[attr-defined]
                    else:
                        copy = _head_key(data[line_start:anchor]) + known.tag  # type: ignore[attr-defined]
                    copies[copy] = copies.get(copy, 0) + 1
                else:
                    self.shape_skip = skip
                    self._unit(data, base, line_start, anchor, next_start)
                    full, exact_until, skip = self._full(), self.exact_until - base, self.shape_skip
            line_start, anchor = next_start, index
            index = find(ANCHOR, index + anchor_length)
        self.grouper.omitted_failures += dropped
        self.unparsed += dropped
        self.shape_skip = skip
        if len(copies) > _CACHE_LIMIT:
            self._flush_copies()
        return line_start, anchor

    # -- one record ------------------------------------------------------------------
    def _unit(self, data: bytes, base: int, line_start: int, anchor: int, unit_end: int, *, long: bool = False) -> None:
        """The record whose header line starts at `line_start`, and what follows it up to `unit_end`."""
        if base + line_start < self.exact_until:
            return
        record_end = _record_end(data, anchor, unit_end)
        text = data[anchor:record_end]
        key = hash(text)
        known = self.records.get(key, _UNSEEN)
        if known is _UNSEEN:
            known = self._by_shape(text)
        plain = not long and self._plain(data[record_end:unit_end])
        if plain and known is _OMITTED:
            self.grouper.omitted_failures += 1
            self.unparsed += 1
            return
        if plain and isinstance(known, _Known):
            copy = _head_key(data[line_start:anchor]) + known.tag
            self.copies[copy] = self.copies.get(copy, 0) + 1
            return
        if known is _UNSEEN and plain and self._full():
            self.grouper.omitted_failures += 1  # beyond the bound: counted, not parsed
            self.unparsed += 1
            self._omitted_text(data, line_start, anchor, record_end)
            if len(self.records) < _CACHE_LIMIT:
                self.records[key] = _OMITTED
            return
        exact_end = base + (record_end if long else unit_end)
        learned = self._exact(base + line_start, exact_end, record=(base + line_start, base + record_end), at_line=True)
        if known is _UNSEEN:
            self.parses += 1
            self._remember(key, text, learned)
        if long:
            self._tail(base, base + record_end, base + unit_end, data)

    def _omitted_text(self, data: bytes, line_start: int, anchor: int, record_end: int) -> None:
        """A record counted as omitted, never parsed: keep one record of its shape (the distinct failures
        omitted are counted by their fingerprints, not by their texts, which may differ in every occurrence's
        message)."""
        shape = _omission_key(data[anchor:record_end])
        if shape in self.omitted_shapes:
            return
        if self._omitted_bytes + record_end - line_start <= _RESOLVE_BYTES:
            self.omitted_shapes[shape] = data[line_start:record_end]
            self._omitted_bytes += record_end - line_start
        else:  # too many shapes to parse one of each: each further shape counts as a failure of its own
            self.grouper.omitted_distinct.add(shape, exact=False)

    def _resolve_omitted(self) -> None:
        """Parse the kept record of each shape left unparsed, alone, and count its failure as a distinct one
        omitted (unless its group is kept: then only its occurrences were counted as omitted)."""
        for shape, text in self.omitted_shapes.items():
            if text is None:
                continue
            for failure in failures_in(text, self._source.host)[:1]:
                key = fingerprint(failure)
                if key not in self.grouper:
                    self.grouper.omitted_distinct.add(int(key, 16))
            self.omitted_shapes[shape] = None

    def _full(self) -> bool:
        """No record text never seen before is parsed any more."""
        return self.grouper.full or self.parses >= _PARSE_LIMIT

    def _by_shape(self, text: bytes) -> object:
        """A known record with the same frames and exception type (only the message differs)."""
        if not self.shapes:
            self.shape_skip = 1 << 62  # no record with a shape was kept: nothing to match
            return _UNSEEN
        self.shape_tries += 1
        known = self.shapes.get(_shape(text))
        if known is not None:
            self.shape_hits += 1
        elif self.shape_tries >= 1000 and self.shape_hits * 100 < self.shape_tries:
            self.shape_skip = 255  # copies with another message are rare here: try only now and then
        return _UNSEEN if known is None else known

    def _remember(self, key: int, text: bytes, known: _Known | None) -> None:
        self.records[key] = known
        if known is not None:
            if not known.tag:
                known.tag = b"\x00%d" % len(self.known_by_tag)
                self.known_by_tag[known.tag] = known
            if known.shape_ok and len(self.shapes) < _CACHE_LIMIT:
                self.shapes.setdefault(_shape(text), known)
                self.shape_skip = 0

    def _plain(self, tail: bytes) -> bool:
        if not tail:
            return True
        stripped = tail.translate(None, _DIGITS)
        key = hash(stripped)
        plain = self.tails.get(key)
        if plain is None:
            lowered = b"\n" + stripped.lower()
            plain = not any(trigger in lowered for trigger in _TAIL_TRIGGERS)
            if len(self.tails) > _CACHE_LIMIT:
                self.tails.clear()
            self.tails[key] = plain
        return plain

    # -- exact parsing -----------------------------------------------------------------
    def _exact(
        self, start: int, end: int, *, record: tuple[int, int] | None = None, at_line: bool = False
    ) -> _Known | None:
        """Parse [start, end) with up to 4 KiB of context before it; take its failures.  With
        `record`: what the record there holds, if it is one complete failure starting at its header.
        `at_line`: `start` begins a line."""
        self._flush_copies()
        region_start = max(self.exact_until, start - REGION_BEFORE)
        scanned = scan_range(self._source, region_start, end, self.examined, line_start=at_line and region_start == start)
        learned = None
        markers = sorted(marker for marker in scanned.tracker.markers if marker >= start)
        for failure in scanned.failures:
            if failure.offset < start:
                continue  # context: an earlier record, already counted
            while markers and markers[0] <= failure.offset:
                self._new_launch(markers.pop(0))
            if record is not None and failure.offset == record[0] and failure.kind == "traceback":
                learned = _known(failure, record[1])
            self.grouper.add(failure, self._source.name, self._source.host)
        for marker in markers:
            self._new_launch(marker)
        self.tracker.absorb(scanned.tracker, later_command_wins=True)
        self.tracker.markers.extend(marker for marker in scanned.tracker.markers if marker >= start)
        self.cascade.extend(scanned.cascade)
        self.exact_until = max(self.exact_until, scanned.end)
        return learned

    def _new_launch(self, marker: int) -> None:
        """A launch began at `marker`: what came before belongs to an earlier one (read_latest)."""
        if not self.split_launches:
            return
        self._flush_copies()
        self.launch_marker_seen = True
        if len(self.grouper):
            self.previous = self.grouper
        self.grouper = Grouper()

    def _tail(self, base: int, start: int, end: int, data: bytes) -> None:
        """Text with no record header: skipped when plain, else read like --all reads a file."""
        if end <= max(start, self.exact_until):
            return
        if end - start <= _UNIT_LIMIT:
            if not self._plain(data[start - base : end - base]):
                self._exact(start, end)
            return
        positions = anchors_in_chunks([data[start - base : end - base]], start, ANCHORS + FALLBACK_ANCHORS, None) or []
        for region_start, region_end in regions(positions, end):
            if region_end > self.exact_until:
                self._exact(max(region_start, start), region_end)

    def _flush_copies(self) -> None:
        for copy, count in self.copies.items():
            head, _, tag = copy.rpartition(b"\x00")
            rank, host = self._head_meta(head)
            self.grouper.add_copies(self.known_by_tag[b"\x00" + tag].key, self._source.name, rank, host, count)
        self.copies.clear()

    def _head_meta(self, head: bytes) -> tuple[str | None, str | None]:
        meta = self.heads.get(head)
        if meta is None:
            text = head[1:] if head[:1] == b"\x00" else _STAMP + head
            line = LineNormalizer(self._source.host).normalize(decode(text) + ANCHOR.decode(), 1, 0)
            meta = (line.meta.rank_label, line.meta.host or self._source.host)
            if len(self.heads) > _CACHE_LIMIT:
                self.heads.clear()
            self.heads[head] = meta
        return meta


_STAMP = b"[2000-01-01 00:00:00"  # put back in front of a header whose stamp was cut off


def _head_key(head: bytes) -> bytes:
    """A record header without its timestamp: `[2026-11-01 00:00:00 TP3] Scheduler…` -> ` TP3] Scheduler…`."""
    if head[5:6] == b"-" and head[11:12] in (b" ", b"T"):
        cut = head.find(b" ", 12)  # after the time and its fraction
        if cut < 0 or head[cut - 1 : cut] == b"]":
            cut = head.find(b"]", 12)
        if cut > 0:
            return head[cut:]
    return b"\x00" + head  # not an SGLang stamp: the header as it is (never mistaken for a cut one)


def _record_end(data: bytes, anchor: int, end: int) -> int:
    """End of the record whose traceback anchor is at `anchor`: the next line that starts with
    `[` and a digit (another record's header), else `end`."""
    find = data.find
    index = find(b"[", anchor, end)
    while index >= 0:
        if data[index - 1] == 10 and 48 <= (data[index + 1] if index + 1 < len(data) else 0) <= 57:
            return index
        index = find(b"[", index + 1, end)
    return end


_CHAINED = (b"\nDuring handling of the above exception", b"\nThe above exception was the direct cause")
_MESSAGES = re.compile(rb"(?m)^([^ \t\n][^:\n]*):[^\n]*")  # an exception line: its type, without the message


def _omission_key(text: bytes) -> int:
    """What tells a record left unparsed from another failure: its shape, or for a chain (whose shape holds only
    its first exception) every frame and exception type in it, the messages left out."""
    if any(marker in text for marker in _CHAINED):
        return hash(_MESSAGES.sub(rb"\1", text))
    return _shape(text)


def _shape(text: bytes) -> int:
    """A record's frames block and exception type, without the message: hash of the text before the
    first unindented line after the anchor line, and of that line up to its first colon."""
    first = text.find(b"\n")
    match = _FRAMES_END.search(text, first + 1) if first >= 0 else None
    if match is None:
        return hash(text)
    line_end = text.find(b"\n", match.end())
    last_line = text[match.end() : line_end if line_end >= 0 else len(text)]
    return hash((text[: match.start()], last_line.split(b":", 1)[0]))
