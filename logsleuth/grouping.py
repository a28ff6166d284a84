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

from logsleuth.models import Failure, FailureGroup, Frame

GROUPING_CONFIG = "logsleuth:2026-11"
TOP_FRAMES = 5

_IN_APP_MARKERS = ("/sglang/", "/sgl_kernel/", "/flashinfer/", "sglang/", "sgl_kernel", "flashinfer")
_LIBRARY_MARKERS = ("site-packages/", "dist-packages/", "/lib/python3", "<frozen ", "/torch/", "/triton/")

# Failures that are usually a consequence of another process dying first.
_CASCADE_TEXT = regex.compile(
    r"(?i)nccl|tcpstore|connection reset by peer|broken pipe|connection refused|eoferror|"
    r"watchdog caught collective operation timeout|processgroup|"
    r"received sigquit|resource_tracker|socket timed? ?out|died, exit code|detokenizer.*exit"
)


def is_in_app(path: str) -> bool:
    if any(marker in path for marker in _IN_APP_MARKERS):
        return True
    if path.startswith("<") or any(marker in path for marker in _LIBRARY_MARKERS):
        return False
    return True  # the user's own code


def module_path(path: str) -> str:
    """`/usr/lib/python3.11/dist-packages/sglang/srt/server_args.py` -> `sglang/srt/server_args.py`."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    parts = path.replace("\\", "/").split("/")
    return "/".join(parts[-2:])


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
    parts.extend(f"{module_path(frame.file)}:{frame.function}" for frame in frames[-TOP_FRAMES:])
    if not final.frames or failure.kind in ("usage", "bare", "killed"):
        parts.append(mask(final.message.splitlines()[0] if final.message else ""))
    return hashlib.sha1("\x1f".join(parts).encode("utf-8", "replace")).hexdigest()[:16]


def is_cascade(failure: Failure) -> bool:
    if failure.kind == "killed":
        return True
    text = " ".join(f"{block.type} {block.message[:300]}" for block in failure.exceptions)
    frames = " ".join(frame.file for frame in failure.final.frames[-3:])
    return bool(_CASCADE_TEXT.search(text) or "resource_tracker" in frames)


def mark_in_app(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    from dataclasses import replace

    return tuple(replace(frame, in_app=is_in_app(frame.file)) for frame in frames)


@dataclass
class _Group:
    fingerprint: str
    failure: Failure
    order: int
    count: int = 0
    ranks: list[str] = field(default_factory=list)
    hosts: list[str] = field(default_factory=list)
    sources: list[str] = field(default_factory=list)
    cascade: list[str] = field(default_factory=list)

    def add(self, failure: Failure, source: str, host: str | None) -> None:
        self.count += 1
        rank = failure.meta.rank_label
        if rank and rank not in self.ranks:
            self.ranks.append(rank)
        where = failure.meta.host or host
        if where and where not in self.hosts:
            self.hosts.append(where)
        if source not in self.sources:
            self.sources.append(source)


@dataclass
class Grouper:
    """Collects failures from one or more sources; `groups()` returns them ordered."""

    _groups: dict[str, _Group] = field(default_factory=dict)
    _killed: list[tuple[Failure, str, str | None]] = field(default_factory=list)
    _last_by_source: dict[str, _Group] = field(default_factory=dict)
    _order: int = 0

    def add(self, failure: Failure, source: str, host: str | None = None) -> None:
        from dataclasses import replace

        failure = replace(
            failure,
            exceptions=tuple(replace(block, frames=mark_in_app(block.frames)) for block in failure.exceptions),
        )
        if failure.kind == "killed":
            previous = self._last_by_source.get(source)
            if previous is not None:
                previous.cascade.append(failure.final.message)
            else:
                self._killed.append((failure, source, host))
            return
        group = self._add_to_group(failure, source, host)
        self._last_by_source[source] = group

    def _add_to_group(self, failure: Failure, source: str, host: str | None) -> _Group:
        key = fingerprint(failure)
        group = self._groups.get(key)
        if group is None:
            self._order += 1
            group = self._groups[key] = _Group(key, failure, self._order)
        group.add(failure, source, host)
        return group

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
            )
            for group in groups
        ]
