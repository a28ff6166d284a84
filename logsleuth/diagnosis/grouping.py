"""Group identical failures and put the root failure first.

Fingerprint (versioned, like Sentry's grouping configs): the chain's exception types
plus the top in-app frames of the final exception as (module path, function), line
numbers excluded, so the same crash on eight ranks or in two versions of a file is one
group.  `is_cascade` tells failures that are usually a consequence of another (NCCL/
TCPStore errors, kill notices, a `resource_tracker` KeyError printed while everything
shuts down); the api puts causes before them.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

import regex

from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import LOGGED_LINE_TYPE, Failure, FailureGroup, Frame, Occurrence
from logsleuth.tracebacks.scanner import is_cancelled_task

GROUPING_CONFIG = "logsleuth:2026-11"
TOP_FRAMES = 5

_IN_APP_MARKERS = ("/sglang/", "/sgl_kernel/", "/flashinfer/", "sglang/", "sgl_kernel", "flashinfer")
_LIBRARY_MARKERS = ("site-packages/", "dist-packages/", "/lib/python3", "<frozen ", "/torch/", "/triton/")

# Failures that are usually a consequence of another process dying first.
_CASCADE_TEXT = compile_lazily_regex(
    r"(?i)nccl|tcpstore|connection reset by peer|broken pipe|connection refused|eoferror|"
    r"watchdog caught collective operation timeout|processgroup|taking the entire process down|"
    r"received sigquit|resource_tracker|socket timed? ?out|died, exit code|detokenizer.*exit"
)


def is_in_app(path: str) -> bool:
    if any(marker in path for marker in _IN_APP_MARKERS):
        return True
    if path.startswith("<") or any(marker in path for marker in _LIBRARY_MARKERS):
        return False
    return True  # the user's own code


_MASKS = (
    (regex.compile(r"0x[0-9a-fA-F]+"), "0xX"),
    (regex.compile(r"(?:[A-Za-z]:)?(?:/[\w.\-~@+]+){2,}/?"), "<path>"),
    (regex.compile(r"\b\d+(?:\.\d+)?\b"), "N"),
)


def mask(text: str) -> str:
    """Mask numbers, paths and addresses so messages that differ only in them compare equal."""
    for pattern, replacement in _MASKS:
        text = pattern.sub(replacement, text)
    return " ".join(text.split())


def signature(failure: Failure) -> str:
    """`Type: masked message`: a string to search issue trackers with."""
    final = failure.final
    first_line = final.message.splitlines()[0] if final.message else ""
    return f"{final.type}: {mask(first_line)}" if first_line else final.type


def fingerprint(failure: Failure) -> str:
    final = failure.final
    parts = [GROUPING_CONFIG, failure.kind, *(block.type for block in failure.exceptions)]
    frames = [frame for frame in final.frames if frame.in_app or is_in_app(frame.file)]
    if not frames:
        frames = list(final.frames[-3:])
    parts.extend(f"{frame.module_path}:{frame.function}" for frame in frames[-TOP_FRAMES:])
    if not final.frames or failure.kind in ("usage", "bare", "abort", "line", "killed"):
        parts.append(mask(final.message.splitlines()[0] if final.message else ""))
    return hashlib.sha1("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


def is_cascade(failure: Failure) -> bool:
    if failure.kind == "killed":
        return True
    text = " ".join(f"{block.type} {block.message[:300]}" for block in failure.exceptions)
    frames = " ".join(frame.file for frame in failure.final.frames[-3:])
    return bool(_CASCADE_TEXT.search(text) or "resource_tracker" in frames)


def names_no_cause(failure: Failure) -> bool:
    """A traceback cut before its exception line (no type, no message): its frames say where a process was, not what
    failed, so it does not outrank a failure printed before it that names an error, even one worded like a cascade
    (one rank's `NCCL error: …` and the next rank's traceback cut short)."""
    return failure.kind == "traceback" and not failure.final.type and not failure.final.message


def names_no_exception(failure: Failure) -> bool:
    """An error record that states its words and names no exception (a glog or c10 `E` record: type `ERROR`, the
    record's level).  Beside a failure that names one, in a paste where each is a fallback, the record is its
    context: a transfer library's `E… transfer_metadata.cpp:877] Local segment descriptor not found` above SGLang's
    `Prefill transfer failed … with exception KVTransferError(…): …` (the retired blind split 12's F-03), Triton's `E… model.py:248]
    "[vllm] Failed to start engine: NoneType: None"` above its stub's `TypeError: … got an unexpected keyword argument
    'stat_loggers'` (triton-inference-server/server#8578).  The person reading the paste points at the exception."""
    return failure.kind == "line" and failure.final.type == LOGGED_LINE_TYPE


def is_shutdown_noise(failure: Failure) -> bool:
    """What a process prints while it is being torn down because something else failed: vLLM's message-queue
    read cancelled under it (`RuntimeError: cancelled` from vllm/distributed/device_communicators/shm_broadcast.py,
    as the engine core shuts down after a worker died), or a task asyncio cancelled (its CancelledError: the task
    itself did not fail; a server's event loop cancels every task when one fails).  Even a cascade is a better answer
    than it; alone it is still the failure."""
    final = failure.final
    if is_cancelled_task(failure):
        return True
    return final.message.strip() == "cancelled" and any("shm_broadcast" in frame.file for frame in final.frames[-2:])


def mark_in_app(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    from dataclasses import replace

    return tuple(replace(frame, in_app=is_in_app(frame.file)) for frame in frames)


# At most this many failure groups are kept per report (and per source while reading).  A person
# reads the first few; a hundred covers every distinct failure of a real multi-rank crash many
# times over, keeps a JSON report well under a megabyte, and bounds the time spent parsing
# first occurrences in a log where every traceback differs.  The rest are counted (Report.omitted_*).
MAX_GROUPS = 100

_EXACT_DISTINCT = 1 << 16  # distinct keys counted exactly; beyond this they are estimated


class DistinctCounter:
    """How many distinct keys were added, in bounded memory: exact up to _EXACT_DISTINCT keys, then
    estimated by adaptive sampling (Flajolet 1990): only keys whose lowest `level` bits are zero are
    kept, and each stands for 2**level keys; the estimate is within about 1 %.  Keys must be
    well-mixed integers (Python's hash of bytes or str, a cryptographic digest)."""

    def __init__(self) -> None:
        self._keys: set[int] = set()
        self._level = 0
        self._mask = 0  # keys with any of these bits set are not kept
        self._approximate_keys = False  # some key stands for what may be a failure counted under another

    @property
    def estimated(self) -> bool:
        return self._level > 0 or self._approximate_keys

    @property
    def value(self) -> int:
        return len(self._keys) << self._level

    @property
    def mask(self) -> int:
        """`add` ignores keys with any of these bits set: a hot loop may skip calling it for them."""
        return self._mask

    def add(self, key: int, *, exact: bool = True) -> None:
        """`exact=False`: `key` is not the failure's own key (a text's shape, when there were too many to
        fingerprint each), so the count becomes an estimate."""
        self._approximate_keys = self._approximate_keys or not exact
        if key & self._mask:
            return
        self._keys.add(key)
        if len(self._keys) > _EXACT_DISTINCT:
            self._thin(self._level + 1)

    def _thin(self, level: int) -> None:
        while True:
            self._level, self._mask = level, (1 << level) - 1
            self._keys = {key for key in self._keys if not key & self._mask}
            if len(self._keys) <= _EXACT_DISTINCT:
                return
            level += 1

    def merge(self, other: DistinctCounter) -> None:
        self._approximate_keys = self._approximate_keys or other._approximate_keys
        if other._level > self._level:
            self._thin(other._level)
        for key in other._keys:
            self.add(key)


@dataclass
class _Group:
    """A fingerprint's group while it is being built: its first failure and counts."""
    fingerprint: str
    failure: Failure
    order: int
    count: int = 0
    ranks: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    cascade: list[str] = field(default_factory=list)
    # Occurrences per host and per rank (their keys are `hosts` and `ranks`, in the same order).
    host_counts: dict[str, int] = field(default_factory=dict)
    rank_counts: dict[str, int] = field(default_factory=dict)
    firsts: dict[str, Occurrence] = field(default_factory=dict)  # source -> its earliest occurrence
    other_messages: list[str] = field(default_factory=list)  # later occurrences' own wording (a rank's own GPU)

    def add(self, failure: Failure, source: str, host: str | None) -> None:
        where = failure.meta.host or host
        self.add_copies(source, failure.meta.rank_label, where, 1)
        self._note_message(failure.final.message)
        seen = self.firsts.get(source)
        if seen is None or failure.offset < seen.offset:  # a source may be read from its end backwards
            self.firsts[source] = Occurrence(source, where, failure.meta.timestamp, failure.line, failure.offset)

    def _note_message(self, message: str) -> None:
        if (message != self.failure.final.message and message not in self.other_messages
                and len(self.other_messages) < _MAX_OTHER_MESSAGES):
            self.other_messages.append(message)

    def add_copies(self, source: str, rank: str | None, where: str | None, count: int) -> None:
        self.count += count
        if rank:
            _count(self.rank_counts, self.ranks, rank, count)
        if where:
            _count(self.host_counts, self.hosts, where, count)
        if source not in self.sources:
            self.sources.append(source)

    def absorb(self, other: _Group) -> None:
        self.count += other.count
        for rank, count in other.rank_counts.items():
            _count(self.rank_counts, self.ranks, rank, count)
        for host, count in other.host_counts.items():
            _count(self.host_counts, self.hosts, host, count)
        self.sources.extend(source for source in other.sources if source not in self.sources)
        self.cascade.extend(other.cascade)
        for message in (other.failure.final.message, *other.other_messages):
            self._note_message(message)
        for source, occurrence in other.firsts.items():
            seen = self.firsts.get(source)
            if seen is None or occurrence.offset < seen.offset:
                self.firsts[source] = occurrence


def _count(counts: dict[str, int], keys: list[str], key: str, count: int) -> None:
    """`count` more of `key`; `keys` lists the keys in the order first seen (the hot path of a dense log
    calls this for every copy, so a new key is appended rather than the list rebuilt)."""
    seen = counts.get(key)
    if seen is None:
        keys.append(key)
    counts[key] = (seen or 0) + count


@dataclass
class Grouper:
    """Collects failures from one or more sources; `groups()` returns them ordered.

    At most `max_groups` groups are kept, the first ones seen; later failures of other groups are
    counted in `omitted_failures` and, as distinct failures, in `omitted_distinct`."""

    max_groups: int | None = MAX_GROUPS
    _groups: dict[str, _Group] = field(default_factory=dict)
    _killed: list[tuple[Failure, str, str | None]] = field(default_factory=list)
    _last_by_source: dict[str, _Group] = field(default_factory=dict)
    _order: int = 0
    omitted_failures: int = 0
    omitted_distinct: DistinctCounter = field(default_factory=DistinctCounter)

    @property
    def full(self) -> bool:
        return self.max_groups is not None and len(self._groups) >= self.max_groups

    def __len__(self) -> int:
        return len(self._groups)

    def __contains__(self, fingerprint: object) -> bool:
        return fingerprint in self._groups

    def add(self, failure: Failure, source: str, host: str | None = None) -> None:
        from dataclasses import replace

        failure = replace(
            failure,
            exceptions=tuple(replace(block, frames=mark_in_app(block.frames)) for block in failure.exceptions),
        )
        if failure.kind == "killed":
            previous = self._last_by_source.get(source)
            if previous is not None:
                if len(previous.cascade) < _MAX_CASCADE:
                    previous.cascade.append(failure.final.message)
            elif len(self._killed) < _MAX_CASCADE:
                self._killed.append((failure, source, host))
            return
        group = self._add_to_group(failure, source, host)
        if group is not None:
            self._last_by_source[source] = group

    def add_copies(self, key: str, source: str, rank: str | None, host: str | None, count: int) -> None:
        """`count` more occurrences of the failure whose fingerprint is `key` (already added once),
        seen on `rank` and `host` but not parsed (the reader recognized their text)."""
        group = self._groups.get(key)
        if group is None:
            self.omitted_failures += count  # its group was beyond the bound
            return
        group.add_copies(source, rank, host, count)
        self._last_by_source[source] = group

    def omit(self, distinct_key: int, count: int = 1) -> None:
        """Occurrences of a failure that was not parsed because the bound was reached."""
        self.omitted_failures += count
        self.omitted_distinct.add(distinct_key)

    def _add_to_group(self, failure: Failure, source: str, host: str | None) -> _Group | None:
        key = fingerprint(failure)
        group = self._groups.get(key)
        if group is None:
            if self.full:
                self.omit(int(key, 16))
                return None
            self._order += 1
            group = self._groups[key] = _Group(key, failure, self._order)
        group.add(failure, source, host)
        return group

    def merge(self, other: Grouper) -> None:
        """Take `other`'s groups (read later, or from another source) after this one's."""
        for group in sorted(other._groups.values(), key=lambda g: g.order):
            mine = self._groups.get(group.fingerprint)
            if mine is not None:
                mine.absorb(group)
            elif self.full:
                self.omit(int(group.fingerprint, 16), group.count)
            else:
                self._order += 1
                self._groups[group.fingerprint] = replace_order(group, self._order)
        for source, group in other._last_by_source.items():
            self._last_by_source[source] = self._groups.get(group.fingerprint, group)
        self._killed.extend(other._killed[: max(0, _MAX_CASCADE - len(self._killed))])
        self.omitted_failures += other.omitted_failures
        self.omitted_distinct.merge(other.omitted_distinct)

    def representatives(self) -> list[Failure]:
        """The first failure of each group, in the order they were seen."""
        return [group.failure for group in sorted(self._groups.values(), key=lambda g: g.order)]

    def groups(self) -> list[FailureGroup]:
        """Groups in the order they happened: log order within one source, timestamps across
        sources.  Putting causes before cascades is the caller's job (it knows the patterns)."""
        if not self._groups:
            # Only kill notices: they are the failure (category process-killed).
            for failure, source, host in self._killed:
                self._add_to_group(failure, source, host)
        groups = list(self._groups.values())
        if len({s for g in groups for s in g.sources}) > 1:
            groups.sort(key=lambda g: (g.failure.meta.timestamp or "", g.order))
        else:
            groups.sort(key=lambda g: g.order)
        return [
            FailureGroup(
                fingerprint=group.fingerprint,
                failure=group.failure,
                count=group.count,
                ranks=tuple(group.ranks),
                hosts=tuple(group.hosts),
                sources=tuple(group.sources),
                cascade=tuple(dict.fromkeys(group.cascade)),
                signature=signature(group.failure),
                host_counts=tuple(group.host_counts.items()),
                rank_counts=tuple(group.rank_counts.items()),
                firsts=tuple(group.firsts[source] for source in group.sources if source in group.firsts),
                other_messages=tuple(group.other_messages),
            )
            for group in groups
        ]


_MAX_CASCADE = 1000  # kill notices kept per group (they repeat the same few lines)
_MAX_OTHER_MESSAGES = 8  # distinct wordings kept beside the first occurrence's


def replace_order(group: _Group, order: int) -> _Group:
    from dataclasses import replace

    return replace(group, order=order, ranks=list(group.ranks), hosts=list(group.hosts),
                   sources=list(group.sources), cascade=list(group.cascade), host_counts=dict(group.host_counts),
                   rank_counts=dict(group.rank_counts), firsts=dict(group.firsts),
                   other_messages=list(group.other_messages))
