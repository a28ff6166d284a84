"""Many nodes' reports as one: each node's local logs named after the node (`node07:/var/log/sglang.log`, as the
SSH fan-out names a remote log), the same failure on several nodes one group, and the fleet built by the code
that builds a live fan-out's (diagnosis/fleet.py): the earliest failure across hosts is the root, the later
cascades on other hosts are its."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from logsleuth.diagnosis.fleet import build_fleet
from logsleuth.diagnosis.grouping import MAX_GROUPS
from logsleuth.health.model import Finding, HealthReport, Series
from logsleuth.merge.read import ReadReport
from logsleuth.models import FailureGroup, LaunchInfo, Occurrence, Report, SourceInfo

IsCascade = Callable[[FailureGroup], bool]
OrderGroups = Callable[[list[FailureGroup]], list[FailureGroup]]


def host_of(read: ReadReport) -> str:
    """The node a report speaks for: the host it names (`reporter.host`, or `--host`), else its file's name
    without `.json` (a report of a logsleuth before issue 31, written as Slurm's `%N.json`)."""
    reporter = read.report.reporter
    return reporter.host if reporter is not None else Path(read.path).name.removesuffix(".json")


def _node_of(read: ReadReport, taken: set[str], warnings: list[str]) -> tuple[str, list[SourceInfo]]:
    """The report's host and its sources renamed; a report whose sources would take names an earlier report's
    already have (containers that all call themselves `localhost`, reading one path) is named after its file,
    with a warning: two nodes must not become one."""
    host = host_of(read)
    renamed = [_renamed(info, host) for info in read.report.sources]
    if any(info.name in taken for info in renamed):
        fallback = Path(read.path).name.removesuffix(".json")
        warnings.append(f"{read.path}: names host {host} as an earlier report does: shown as {fallback}")
        host = fallback
        renamed = [_renamed(info, host) for info in read.report.sources]
    taken.update(info.name for info in renamed)
    return host, renamed


def _renamed(info: SourceInfo, host: str) -> SourceInfo:
    """A log the node read on itself, named and hosted as the fan-out would name it; a log it read from
    elsewhere (over SSH, from a runtime on another host) as it is."""
    if info.host is not None:
        return info
    return replace(info, name=f"{host}:{info.name}", host=host)


@dataclass
class _Merged:
    """One failure across the nodes' reports (a mutable grouping.FailureGroup)."""

    first: FailureGroup
    count: int = 0
    ranks: dict[str, int] = field(default_factory=dict)
    hosts: dict[str, int] = field(default_factory=dict)
    sources: dict[str, None] = field(default_factory=dict)  # a dict: in order, and found at once among 10,000
    cascade: dict[str, None] = field(default_factory=dict)
    firsts: list[Occurrence] = field(default_factory=list)

    def add(self, group: FailureGroup) -> None:
        self.count += group.count
        for rank, count in group.rank_counts:
            self.ranks[rank] = self.ranks.get(rank, 0) + count
        for host, count in group.host_counts:
            self.hosts[host] = self.hosts.get(host, 0) + count
        self.sources.update(dict.fromkeys(group.sources))
        self.cascade.update(dict.fromkeys(group.cascade))
        self.firsts.extend(group.firsts)

    def group(self) -> FailureGroup:
        return replace(
            self.first,
            count=self.count,
            ranks=tuple(self.ranks),
            hosts=tuple(self.hosts),
            sources=tuple(self.sources),
            cascade=tuple(self.cascade),
            host_counts=tuple(self.hosts.items()),
            rank_counts=tuple(self.ranks.items()),
            firsts=tuple(self.firsts),
            cascade_of=None,  # the fleet decides it again, across every node
        )


def _group_on_host(group: FailureGroup, names: dict[str, str], host: str) -> FailureGroup:
    """A node's failure group with its sources renamed; the occurrences no line attributed to a host are
    the node's own (a local log's lines name no host: the fan-out counts them for the host it read)."""
    unattributed = group.count - sum(count for _, count in group.host_counts)
    host_counts = group.host_counts
    if unattributed > 0 and any(source in names and names[source].startswith(f"{host}:") for source in group.sources):
        counts = dict(host_counts)
        counts[host] = counts.get(host, 0) + unattributed
        host_counts = tuple(counts.items())
    return replace(
        group,
        sources=tuple(names.get(source, source) for source in group.sources),
        firsts=tuple(
            replace(o, source=names.get(o.source, o.source), host=o.host or (host if o.source in names else None))
            for o in group.firsts
        ),
        hosts=tuple(name for name, _ in host_counts),
        host_counts=host_counts,
    )


def merge_crash_reports(
    reads: Sequence[ReadReport],
    unreadable: Sequence[SourceInfo],
    *,
    order: OrderGroups,
    is_cascade: IsCascade,
    warnings: Sequence[str] = (),
) -> Report:
    """One fleet report from the nodes' crash reports, in the order given (a directory's files sorted by name);
    `unreadable`: the report files that could not be read, shown as unreadable hosts.  `order` puts causes
    before cascades and `is_cascade` tells one, as for a live diagnose (the pattern library decides)."""
    infos: list[SourceInfo] = []
    merged: dict[str, _Merged] = {}
    launches: list[LaunchInfo] = []
    notes: list[tuple[str, str]] = []
    omitted_failures = omitted_groups = 0
    reports_omitting = 0
    taken: set[str] = set()
    warnings = list(warnings)
    for read in reads:
        report = read.report
        assert isinstance(report, Report)
        host, renamed = _node_of(read, taken, warnings)
        names = {old.name: new.name for old, new in zip(report.sources, renamed, strict=True) if old.name != new.name}
        infos.extend(renamed)
        for group in report.failures:
            group = _group_on_host(group, names, host)
            entry = merged.get(group.fingerprint)
            if entry is None:
                entry = merged[group.fingerprint] = _Merged(group)
            entry.add(group)
        launches.append(report.launch)
        notes.extend((warning, host) for warning in report.warnings)
        omitted_failures += report.omitted_failures
        omitted_groups += report.omitted_groups
        reports_omitting += report.omitted_groups > 0
    infos.extend(unreadable)
    groups = [entry.group() for entry in merged.values()]
    if len({source for group in groups for source in group.sources}) > 1:  # as grouping.Grouper.groups()
        groups.sort(key=lambda group: group.failure.meta.timestamp or "")  # stable: first seen among equals
    groups = order(groups)
    fleet, groups = build_fleet(infos, groups, is_cascade)
    # As a live report, at most MAX_GROUPS groups (the root's first): the fleet's host lines still name each
    # host's first failure; the groups left out are counted.
    kept, left_out = groups[:MAX_GROUPS], groups[MAX_GROUPS:]
    return Report(
        sources=tuple(infos),
        failures=tuple(kept),
        launch=first_known_launch(launches),
        warnings=tuple([*warnings, *per_host_warnings(notes)]),
        omitted_failures=omitted_failures + sum(group.count for group in left_out),
        omitted_groups=omitted_groups + len(left_out),
        # Distinct counts of several nodes added: the same failure left out on two nodes is counted twice.
        omitted_groups_estimated=reports_omitting > 1 or any(r.report.omitted_groups_estimated for r in reads if isinstance(r.report, Report)),
        fleet=fleet,
    )


def merge_health_reports(reads: Sequence[ReadReport], unreadable: Sequence[SourceInfo], warnings: Sequence[str] = ()) -> HealthReport:
    """One health report from the nodes' health reports, as `health` of several sources makes one: a finding
    per pattern naming every source that shows it, each source's series."""
    from logsleuth.health.run import merge_findings

    infos: list[SourceInfo] = []
    findings: list[tuple[Finding, ...]] = []
    series: list[Series] = []
    launches: list[LaunchInfo] = []
    notes: list[tuple[str, str]] = []
    taken: set[str] = set()
    warnings = list(warnings)
    for read in reads:
        report = read.report
        assert isinstance(report, HealthReport)
        host, renamed = _node_of(read, taken, warnings)
        names = {old.name: new.name for old, new in zip(report.sources, renamed, strict=True)}
        own = renamed[0].name if len(renamed) == 1 else host
        infos.extend(renamed)
        # A node's local log is on that node (its findings and series name no host): as the fan-out names it.
        findings.append(tuple(
            replace(f, sources=tuple(names.get(s, s) for s in f.sources) or (own,), hosts=f.hosts or (host,))
            for f in report.findings
        ))
        series.extend(
            replace(s, source=names.get(s.source, s.source) if s.source else own, host=s.host or host)
            for s in report.series
        )
        launches.append(report.launch)
        notes.extend((warning, host) for warning in report.warnings)
    health = [read.report for read in reads if isinstance(read.report, HealthReport)]
    return HealthReport(
        sources=tuple([*infos, *unreadable]),
        findings=merge_findings(findings),
        series=tuple(series),
        launch=first_known_launch(launches),
        batches=sum(report.batches for report in health),
        sampled=any(report.sampled for report in health),
        speculative=any(report.speculative for report in health),
        warnings=tuple([*warnings, *per_host_warnings(notes)]),
    )


def first_known_launch(launches: Iterable[LaunchInfo]) -> LaunchInfo:
    """The launch the merged report is about: each part from the first node that knows it (as api's
    `_merge_launch`: hosts of one launch, the first to know wins)."""
    merged = LaunchInfo()
    for launch in launches:
        if merged.engine is None and launch.engine is not None:
            merged = replace(merged, engine=launch.engine)
        if merged.engine_version is None and launch.engine_version is not None:
            merged = replace(merged, engine_version=launch.engine_version, engine_version_source=launch.engine_version_source)
        if merged.command is None and launch.command is not None:
            merged = replace(merged, command=launch.command, command_source=launch.command_source)
        if merged.wrapper is None and launch.wrapper is not None:
            merged = replace(merged, wrapper=launch.wrapper)
    return merged


def per_host_warnings(notes: Sequence[tuple[str, str]], names: int = 3) -> list[str]:
    """Each warning once, with the nodes that gave it (`… (node01, node02 and 998 more)`): a thousand nodes
    missing the same pattern file is one line."""
    hosts: dict[str, list[str]] = {}
    for warning, host in notes:
        hosts.setdefault(warning, []).append(host)
    lines = []
    for warning, where in hosts.items():
        shown = ", ".join(where[:names]) + (f" and {len(where) - names} more" if len(where) > names else "")
        lines.append(f"{warning} ({shown})")
    return lines
