"""`logsleuth health` without its command line: sources in, a `HealthReport` out (api.health calls it)."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace

from logsleuth import versions
from logsleuth.errors import SourceError
from logsleuth.health.causes import rank_causes
from logsleuth.health.detectors import MAX_EVIDENCE, Hit, metric_words
from logsleuth.health.library import HealthPattern, HealthPatternSet, load_health_patterns
from logsleuth.health.model import Finding, HealthReport
from logsleuth.health.scan import FULL_READ_BYTES, HealthScan, plan_reads, read_plan
from logsleuth.health.series import build_series
from logsleuth.models import LaunchInfo, SourceInfo, nothing_to_judge
from logsleuth.sources.base import Source
from logsleuth.sources.fanout import DEFAULT_PARALLEL
from logsleuth.sources.open import open_sources, read_concurrently, read_specs, with_workloads_expanded
from logsleuth.sources.options import SSHOptions

# on_source(name, state, detail), as api.OnSource: "connecting", "reading", "done" or "error"; for a large log also
# "searching" (the literal search over all of it) and "sampling" (detail: how many windows are read).
OnSource = Callable[[str, str, str | None], None]


def progress_text(name: str, state: str, detail: str | None) -> str:
    """A status line for an on_source call (the terminal's progress line: health_program.py)."""
    return {
        "connecting": f"connecting to {name}…",
        "reading": f"reading {name}…",
        "searching": f"searching {name}…",
        "sampling": f"reading {detail} of {name}…",
        "done": f"{name}: read",
    }.get(state, f"{name}: {detail or state}")


@dataclass(frozen=True)
class HealthOptions:
    """What `health` is asked to do, beyond the sources."""
    pattern_dirs: tuple[str, ...] = ()
    include_user_patterns: bool = True
    command: str | None = None  # the launch command, when the user gives it (--cmd): for the causes
    engine_version: str | None = None  # overrides what the log says
    ssh: SSHOptions = field(default_factory=SSHOptions)
    parallel: int = DEFAULT_PARALLEL
    host: str | None = None  # the name of this machine in the report (--host); None: its host name


@dataclass(frozen=True)
class SourceHealth:
    """One source's findings and the scan they came from."""
    info: SourceInfo
    findings: tuple[Finding, ...] = ()
    scan: HealthScan | None = None
    launch: LaunchInfo = field(default_factory=LaunchInfo)
    sampled: bool = False


def check_health(
    specs: Sequence[str],
    options: HealthOptions | None = None,
    *,
    patterns: HealthPatternSet | None = None,
    on_source: OnSource | None = None,
) -> HealthReport:
    """The health of one or more sources (`path`, `-`, `host:path`, runtime specs); a source that cannot be
    read is in `HealthReport.sources` with its error, and the others go on."""
    options = options or HealthOptions()
    patterns = patterns or load_health_patterns(options.pattern_dirs, include_user=options.include_user_patterns)
    notify = on_source or (lambda name, state, detail: None)
    specs = with_workloads_expanded(specs)  # each pod of a Kubernetes workload is read as a source

    def read_spec(spec: str) -> list[SourceHealth]:
        if read_concurrently(spec):
            notify(spec, "connecting", None)
        try:
            sources = open_sources(spec, options.ssh)
        except SourceError as exc:
            notify(spec, "error", str(exc))
            return [SourceHealth(SourceInfo(name=spec, bytes_read=0, size=None, error=str(exc)))]
        return [_read_source(source, patterns.patterns, options, notify) for source in sources]

    results = read_specs(specs, read_spec, parallel=options.parallel)
    report = _report([result for per_spec in results for result in per_spec], patterns)
    return with_reporter(report, options.host)


def with_reporter(report: HealthReport, host: str | None) -> HealthReport:
    """The report with the machine that wrote it, and its time zone on the logs read here (as api.build_report)."""
    from logsleuth.machine import this_machine

    reporter = this_machine(host)
    sources = tuple(replace(info, utc_offset=reporter.utc_offset) if info.host is None else info for info in report.sources)
    return replace(report, sources=sources, reporter=reporter)


def _read_source(source: Source, patterns: tuple[HealthPattern, ...], options: HealthOptions, notify: OnSource) -> SourceHealth:
    notify(source.name, "reading", None)
    try:
        widen = getattr(source, "widen", None)  # a runtime's log (runtime/command.py): every line it keeps
        if widen is not None:
            widen(to_all=True)
        size = source.size()
        if size == 0:
            raise SourceError(nothing_to_judge(source.name))  # no line is not a healthy server
        literals = tuple(dict.fromkeys(literal for pattern in patterns for literal in pattern.literals()))
        if size > FULL_READ_BYTES:
            notify(source.name, "searching", None)
        plan = plan_reads(source, size, literals)
        if plan.sampled:
            notify(source.name, "sampling", f"{len(plan.ranges) + 1} windows")
        scan = HealthScan(patterns)
        read_plan(source, size, plan, scan, host=source.host)
    except SourceError as exc:
        notify(source.name, "error", str(exc))
        return SourceHealth(SourceInfo(source.name, 0, None, error=str(exc), host=source.host))
    finally:
        source.close()
    notify(source.name, "done", None)
    bytes_read = size if plan.searched else sum(end - start for start, end in (plan.head, *plan.ranges))
    info = SourceInfo(source.name, bytes_read, size, host=source.host, note=getattr(source, "note", None))
    launch = scan.launch(options.command, options.engine_version)
    findings = tuple(_findings(scan, launch, source.name, source.host))
    return SourceHealth(info, findings, scan, launch, plan.sampled)


def _applies(pattern: HealthPattern, scan: HealthScan, launch: LaunchInfo) -> bool:
    """The pattern is about this server's engine (its batch lines' wording, else the launch's) and release."""
    if not scan.applies(pattern):
        return False
    if pattern.engine and launch.engine and pattern.engine != launch.engine:
        return True  # the version the log names is the other engine's (a dependency): it says nothing here
    return not pattern.versions or launch.engine_version is None or versions.matches(pattern.versions, launch.engine_version)


def _findings(scan: HealthScan, launch: LaunchInfo, source: str, host: str | None) -> list[Finding]:
    hits = {
        pattern.id: [hit for detector in scan.detectors[pattern.id] if (hit := detector.hit()) is not None]
        for pattern in scan.patterns
        if _applies(pattern, scan, launch)
    }
    _fold_explained(hits, scan.patterns)
    return [
        _finding(pattern, hits[pattern.id], launch, scan.seen, source, host)
        for pattern in scan.patterns
        if hits.get(pattern.id)
    ]


def _finding(
    pattern: HealthPattern, hits: list[Hit], launch: LaunchInfo, seen: set[str], source: str, host: str | None
) -> Finding:
    firsts = [hit.first_seconds for hit in hits if hit.first_seconds is not None]
    lasts = [hit.last_seconds for hit in hits if hit.last_seconds is not None]
    return Finding(
        pattern_id=pattern.id,
        title=pattern.title,
        category=pattern.category,
        summary="; ".join(hit.summary for hit in hits),
        root_cause=pattern.root_cause,
        causes=rank_causes(pattern, launch, seen, _dropped(hits)),
        evidence=tuple(evidence for hit in hits for evidence in hit.evidence)[: MAX_EVIDENCE + 2],
        occurrences=sum(hit.occurrences for hit in hits),
        first_seconds=min(firsts) if firsts else None,
        last_seconds=max(lasts) if lasts else None,
        references=pattern.references,
        sources=(source,),
        hosts=(host,) if host else (),
    )


def _dropped(hits: list[Hit]) -> bool | None:
    answers = [hit.after_healthy_start for hit in hits if hit.after_healthy_start is not None]
    return any(answers) if answers else None


def _fold_explained(hits: dict[str, list[Hit]], patterns: tuple[HealthPattern, ...]) -> None:
    """A signal another finding explains (`explained_by`) while it holds is told within that finding; what
    of it happened at other times stays a finding of its own."""
    titles = {pattern.id: pattern.title for pattern in patterns}
    for pattern in patterns:
        explainers = [i for i in pattern.explained_by if hits.get(i)]
        if not hits.get(pattern.id) or not explainers:
            continue
        spans = [(h.first_seconds, h.last_seconds) for i in explainers for h in hits[i]]
        kept: list[Hit] = []
        told: list[Hit] = []
        for hit in hits[pattern.id]:
            for episode in hit.episodes or [hit]:
                (told if any(_overlap(episode, span) for span in spans) else kept).append(episode)
        if told:
            host = hits[explainers[0]][0]
            title = titles[pattern.id]
            host.summary += f"; with it, {title[0].lower()}{title[1:]}: " + "; ".join(h.summary for h in told)
        hits[pattern.id] = kept


def _overlap(hit: Hit, span: tuple[float | None, float | None]) -> bool:
    """Whether the hit's time overlaps the span (without times, it is taken to: the same run)."""
    start, end = span
    if None in (hit.first_seconds, hit.last_seconds, start, end):
        return True
    assert hit.first_seconds is not None and hit.last_seconds is not None and start is not None and end is not None
    return hit.first_seconds <= end and start <= hit.last_seconds


def _report(results: list[SourceHealth], patterns: HealthPatternSet) -> HealthReport:
    """One report: findings of every source (one per pattern, naming every source and host that shows it, the
    first source's evidence), the series of each source, the first launch that is known."""
    merged = merge_findings(result.findings for result in results)
    scans = [result for result in results if result.scan is not None]
    launch = next((r.launch for r in scans if r.launch.engine_version or r.launch.command), LaunchInfo())
    series = tuple(
        s for r in scans if r.scan is not None for s in build_series(r.scan.samples, r.info.name, r.info.host)
    )
    warnings = list(patterns.errors)
    warnings.extend(
        broken for r in scans if r.scan for ds in r.scan.detectors.values() for d in ds if (broken := getattr(d, "broken", None))
    )
    warnings.extend(
        f"{r.info.name}: the server failed after serving (a traceback at byte {r.scan.failure_offset:,}): "
        "`diagnose` names that failure, `health` does not"
        for r in scans
        if r.scan is not None and r.scan.failure_offset is not None
    )
    warnings.extend(_implausible_warning(r.info.name, r.scan) for r in scans if r.scan is not None and r.scan.implausible)
    return HealthReport(
        sources=tuple(result.info for result in results),
        findings=merged,
        series=series,
        launch=launch,
        batches=sum(len(r.scan.samples) for r in scans if r.scan is not None),
        sampled=any(r.sampled for r in results),
        speculative=any(s.accept_length is not None for r in scans if r.scan is not None for s in r.scan.samples[:1000]),
        warnings=tuple(dict.fromkeys(warnings)),
    )


def merge_findings(per_source: Iterable[Iterable[Finding]]) -> tuple[Finding, ...]:
    """One finding per pattern, naming every source and host that shows it, with the first source's evidence (a health
    report of several sources, and `logsleuth merge` of health reports)."""
    merged: dict[str, Finding] = {}
    for findings in per_source:
        for finding in findings:
            earlier = merged.get(finding.pattern_id)
            merged[finding.pattern_id] = finding if earlier is None else _merged(earlier, finding)
    return tuple(merged.values())


def _implausible_warning(name: str, scan: HealthScan) -> str:
    assert scan.first_implausible is not None
    metric, value = scan.first_implausible
    lines = scan.implausible
    return (
        f"{name}: {lines:,} batch line{'s' if lines != 1 else ''} held numbers no server prints "
        f"({metric_words(metric, scan.engine or 'sglang')} {value}): read as missing"
    )


def _merged(earlier: Finding, later: Finding) -> Finding:
    """One finding for a pattern that holds in several sources: every source and host that shows it."""
    return replace(
        earlier,
        sources=earlier.sources + later.sources,
        hosts=tuple(dict.fromkeys(earlier.hosts + later.hosts)),
        occurrences=earlier.occurrences + later.occurrences,
    )
