"""A fleet: several hosts (sources) of one launch read together.  Which host failed first, and which failures on
the others followed it.

The root failure is the earliest in time across hosts, by the timestamps the logs printed (LineMeta.timestamp),
preferring a failure that is a cause over one that usually follows another (NCCL timeouts, sigquit, a dead peer):
a watchdog that fires on node05 a second before node03's OOM is printed still waited for node03.  A failure that
looks like a cascade and came after the root is attributed to it.  When a failed host's log has no readable
time, nothing is guessed: the order is "unknown" and the root is the report's usual first failure.

Each host's clock may be off; when the clocks measured over SSH (sources/ssh/clock.py) may differ by more than
the time between the first two hosts' failures, the root is said to be uncertain.
"""

from __future__ import annotations

import calendar
import datetime
import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import FailureGroup, Fleet, FleetMember, FleetOutcome, Occurrence, SourceInfo

# The time formats ingest/normalize.py keeps: ISO 8601 from collectors (`2025-11-06T02:10:00.702Z`), SGLang's and
# wrappers' `2025-11-06 02:10:01` (`.123` or `,123`), vLLM's year-less `03-25 21:13:53`, syslog's `Nov 30 12:00:01`.
_DATED = compile_lazily(
    r"(?P<y>\d{4})-(?P<mo>\d{2})-(?P<d>\d{2})[T ](?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:[.,](?P<f>\d+))?"
    r"\s*(?P<tz>Z|[+-]\d{2}:?\d{2})?"
)
_VLLM = compile_lazily(r"(?P<mo>\d{2})-(?P<d>\d{2}) (?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})(?:\.(?P<f>\d+))?")
_SYSLOG = compile_lazily(r"(?P<mon>[A-Z][a-z]{2}) +(?P<d>\d{1,2}) (?P<h>\d{2}):(?P<mi>\d{2}):(?P<s>\d{2})")
_MONTHS = {name: number for number, name in enumerate(calendar.month_abbr) if name}
_NO_YEAR = 2000  # a leap year, so that a year-less Feb 29 is a date


@dataclass(frozen=True, slots=True)
class EventTime:
    """A log timestamp as seconds, and whether its format had a year (year-less times compare only with each
    other).  Times without a zone are in their source's zone when every failed source's is known
    (`SourceInfo.utc_offset`: reports merged from nodes in several zones), else taken as UTC: hosts of one
    launch log in one zone."""

    seconds: float
    dated: bool


def event_time(timestamp: str | None, utc_offset: int = 0) -> EventTime | None:
    """`timestamp` (as LineMeta keeps it) as an EventTime; None when it is missing or not a time.  `utc_offset`:
    the seconds east of UTC of a time that names no zone."""
    if not timestamp:
        return None
    text = timestamp.strip()
    try:
        if m := _DATED.fullmatch(text):
            seconds = _seconds(int(m["y"]), int(m["mo"]), m)
            return EventTime(seconds - (_zone_offset(m["tz"]) if m["tz"] else utc_offset), dated=True)
        if m := _VLLM.fullmatch(text):
            return EventTime(_seconds(_NO_YEAR, int(m["mo"]), m) - utc_offset, dated=False)
        if (m := _SYSLOG.fullmatch(text)) and m["mon"] in _MONTHS:
            return EventTime(_seconds(_NO_YEAR, _MONTHS[m["mon"]], m) - utc_offset, dated=False)
    except ValueError:  # 02-30, 25:00: not a time
        return None
    return None


def _seconds(year: int, month: int, m: re.Match[str]) -> float:
    moment = datetime.datetime(year, month, int(m["d"]), int(m["h"]), int(m["mi"]), int(m["s"]))
    fraction = m.groupdict().get("f")  # syslog's format has none
    return calendar.timegm(moment.timetuple()) + (float(f"0.{fraction}") if fraction else 0.0)


def _zone_offset(zone: str | None) -> int:
    if not zone or zone == "Z":
        return 0
    digits = zone[1:].replace(":", "")
    minutes = int(digits[:2]) * 60 + int(digits[2:])
    return minutes * 60 * (1 if zone[0] == "+" else -1)


@dataclass(frozen=True, slots=True)
class _FirstFailure:
    """A source's first failure: its group's position in the report and its occurrence there."""

    index: int
    group: FailureGroup
    occurrence: Occurrence
    time: EventTime | None


def build_fleet(
    sources: Sequence[SourceInfo], groups: Sequence[FailureGroup], is_cascade: Callable[[FailureGroup], bool]
) -> tuple[Fleet | None, list[FailureGroup]]:
    """The fleet view of a report with more than one source, and its groups with the root's first and its
    cascades marked (`FailureGroup.cascade_of`).  One source: (None, the groups unchanged)."""
    if len(sources) < 2:
        return None, list(groups)
    offsets = _zone_offsets(sources, groups)
    by_source = _occurrences(groups)
    firsts = {
        info.name: _first_failure(groups, by_source.get(info.name, {}), is_cascade, offsets.get(info.name, 0))
        for info in sources
    }
    failed = {name: first for name, first in firsts.items() if first is not None}
    order_known = _comparable([first.time for first in failed.values()])  # nothing failed: nothing to order
    root_name = _choose_root(failed, is_cascade, order_known) if failed else None
    root = failed[root_name] if root_name is not None else None
    names = _member_names(sources)
    members = [
        _member(info, names[info.name], firsts[info.name], root, root_name, order_known, is_cascade)
        for info in sources
    ]
    gap = _first_gap(root, root_name, failed) if order_known else None
    spread = clock_spread(sources)
    root_key, ordered = _root_first(list(groups), root, order_known, is_cascade, offsets)
    fleet = Fleet(
        members=tuple(sorted(members, key=_member_order(firsts, order_known))),
        root=names[root_name] if root_name is not None else None,
        root_fingerprint=root_key,
        order_known=order_known,
        clock_spread=spread,
        first_gap=gap,
        root_uncertain=spread is not None and gap is not None and spread > gap,
    )
    return fleet, ordered


def _zone_offsets(sources: Sequence[SourceInfo], groups: Sequence[FailureGroup]) -> dict[str, int]:
    """Each source's UTC offset, when every source with a failure knows its own; else none (all taken as UTC:
    one unknown zone would put its host hours off the others)."""
    failed = {source for group in groups for source in group.sources}
    offsets = {info.name: info.utc_offset for info in sources if info.name in failed}
    if any(offset is None for offset in offsets.values()):
        return {}
    return {name: offset for name, offset in offsets.items() if offset is not None}


def _occurrences(groups: Sequence[FailureGroup]) -> dict[str, dict[int, Occurrence]]:
    """Each source's first occurrence in each group that shows it, by the group's index, in one pass over the
    groups (looking every source up in every group's occurrences was quadratic in a merge of thousands of nodes)."""
    found: dict[str, dict[int, Occurrence]] = {}
    for index, group in enumerate(groups):
        for occurrence in group.firsts:
            found.setdefault(occurrence.source, {}).setdefault(index, occurrence)
        for source in group.sources:  # counted, never parsed there: its time is unknown
            found.setdefault(source, {}).setdefault(index, Occurrence(source, None, None, 0, 1 << 62))
    return found


def _first_failure(
    groups: Sequence[FailureGroup],
    occurrences: dict[int, Occurrence],
    is_cascade: Callable[[FailureGroup], bool],
    utc_offset: int = 0,
) -> _FirstFailure | None:
    """The failure that stands for a source (`occurrences`: its own, by group index): its first cause in log
    order (byte offset), else its first failure.  A cause is preferred as in a one-source report: the NCCL error
    one rank prints before another rank's assertion is reached is still that assertion's consequence."""
    found = [
        _FirstFailure(index, groups[index], occurrence, event_time(occurrence.timestamp, utc_offset))
        for index, occurrence in occurrences.items()
    ]
    causes = [first for first in found if not is_cascade(first.group)]
    return min(causes or found, key=lambda first: (first.occurrence.offset, first.index), default=None)


def _comparable(times: Sequence[EventTime | None]) -> bool:
    """Every time is known, and all have a year or none has (a year-less time cannot be placed among dated)."""
    return all(time is not None for time in times) and len({time.dated for time in times if time}) <= 1


def _choose_root(failed: dict[str, _FirstFailure], is_cascade: Callable[[FailureGroup], bool], order_known: bool) -> str:
    """The earliest cause (a cascade only when every host's first failure is one); without comparable times,
    the source whose first failure leads the report's usual order."""
    if not order_known:
        return min(failed, key=lambda name: failed[name].index)
    causes = [name for name, first in failed.items() if not is_cascade(first.group)] or list(failed)
    return min(causes, key=lambda name: (_seconds_of(failed[name]), failed[name].index))


def _seconds_of(first: _FirstFailure) -> float:
    assert first.time is not None  # only called when the order is known
    return first.time.seconds


def _member_names(sources: Sequence[SourceInfo]) -> dict[str, str]:
    """Each source's name in the fleet, as pdsh labels its lines: a remote source's host, a local file's name
    without its directory; the full name where two sources would share a label."""
    labels = {info.name: info.host or _file_name(info.name) for info in sources}
    taken = Counter(labels.values())  # not list.count per source: a merge of 10,000 nodes made that quadratic
    return {name: label if taken[label] == 1 else name for name, label in labels.items()}


def _file_name(name: str) -> str:
    return name.rstrip("/").rsplit("/", 1)[-1] or name


def _member(
    info: SourceInfo,
    name: str,
    first: _FirstFailure | None,
    root: _FirstFailure | None,
    root_name: str | None,
    order_known: bool,
    is_cascade: Callable[[FailureGroup], bool],
) -> FleetMember:
    if first is None:
        outcome: FleetOutcome = "unreadable" if info.error else "no-failure"
        return FleetMember(name=name, source=info.name, outcome=outcome, error=info.error)
    if info.name == root_name:
        outcome = "root"
    elif root is not None and is_cascade(first.group) and _not_before(first, root, order_known):
        outcome = "cascade"
    else:
        outcome = "failed"
    group = first.group
    return FleetMember(
        name=name,
        source=info.name,
        outcome=outcome,
        error=info.error,  # read in part: a failure was found before the error
        fingerprint=group.fingerprint,
        signature=group.diagnosis.title if group.diagnosis else group.signature,
        timestamp=first.occurrence.timestamp,
        time_known=first.time is not None,
    )


def _not_before(first: _FirstFailure, root: _FirstFailure, order_known: bool) -> bool:
    """`first` did not happen before the root (or the order is unknown: then a cascade is still the root's)."""
    if not order_known or first.time is None or root.time is None:
        return True
    return first.time.seconds >= root.time.seconds


def _first_gap(root: _FirstFailure | None, root_name: str | None, failed: dict[str, _FirstFailure]) -> float | None:
    """Seconds from the root's failure to the first failure on another host."""
    if root is None or root.time is None:
        return None
    others = [first.time.seconds for name, first in failed.items() if name != root_name and first.time]
    return max(0.0, min(others) - root.time.seconds) if others else None


def clock_spread(sources: Sequence[SourceInfo]) -> float | None:
    """How far apart the measured clocks may be (each offset widened by its uncertainty); None with fewer than
    two measured."""
    clocks = [info.clock for info in sources if info.clock is not None]
    if len(clocks) < 2:
        return None
    return max(c.offset + c.uncertainty for c in clocks) - min(c.offset - c.uncertainty for c in clocks)


def _member_order(
    firsts: dict[str, _FirstFailure | None], order_known: bool
) -> Callable[[FleetMember], tuple[int, float, int]]:
    """The root first, then the hosts that failed (in time order when it is known), then the clean ones,
    then the unreadable ones; otherwise in the order the sources were given (sorted() is stable)."""
    rank = {"root": 0, "failed": 1, "cascade": 1, "no-failure": 2, "unreadable": 3}

    def key(member: FleetMember) -> tuple[int, float, int]:
        first = firsts.get(member.source)
        when = first.time.seconds if order_known and first is not None and first.time is not None else 0.0
        return rank[member.outcome], when, first.index if first is not None else 0

    return key


def _root_first(
    groups: list[FailureGroup],
    root: _FirstFailure | None,
    order_known: bool,
    is_cascade: Callable[[FailureGroup], bool],
    offsets: dict[str, int],
) -> tuple[str | None, list[FailureGroup]]:
    """The root failure's fingerprint, and the groups with its group first and the cascades that did not come
    before it marked as its own."""
    if root is None:
        return None, groups
    if order_known:
        root_key = root.group.fingerprint
        ordered = sorted(groups, key=lambda group: group.fingerprint != root_key)  # stable: the rest keep their order
    else:  # the usual order stands
        root_key, ordered = groups[0].fingerprint, groups
    root_time = root.time.seconds if order_known and root.time else None
    return root_key, [
        replace(group, cascade_of=root_key)
        if group.fingerprint != root_key and is_cascade(group) and _after(group, root_time, offsets)
        else group
        for group in ordered
    ]


def _after(group: FailureGroup, root_time: float | None, offsets: dict[str, int]) -> bool:
    """The group's first occurrence did not come before the root's (unknown times do not count against it)."""
    if root_time is None:
        return True
    times = [
        time.seconds for o in group.firsts if (time := event_time(o.timestamp, offsets.get(o.source, 0))) is not None
    ]
    return not times or min(times) >= root_time
