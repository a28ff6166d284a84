"""What every health report shows, decided once, answer first: the verdict, then each finding (its numbers,
root cause, likely causes with their fixes, evidence lines), then the series behind them.

Like render/view.py for crash reports: every log-derived string here has been through `safety.clean` (no
escape sequences or control characters, one line, clipped); pattern prose is cleaned and never clipped.
Each renderer still applies its own format's escaping.  Secrets are not this module's business: the report is
redacted before it reaches a renderer (unless --no-redact).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Literal

from logsleuth.health.metrics import YEARLESS_YEAR
from logsleuth.health.model import Evidence, Finding, HealthReport, Series
from logsleuth.render.safety import clean
from logsleuth.render.view import prose, source_error_text

# What the periodic lines health reads are called, by engine: SGLang's `Prefill batch`/`Decode batch` lines,
# vLLM's stats lines (`Avg prompt throughput: …`); SGLang's words when the log shows no engine (the default).
LINES_READ = {"sglang": "batch line", "vllm": "stats line"}
NO_LINES_FOUND = {
    "sglang": "no Prefill/Decode batch lines found",
    "vllm": "no vLLM stats lines (Avg prompt throughput …) found",
}
# The series shown, in this order, with their labels; accept length only for a speculative run, and a series
# the report does not carry is left out (a name not listed here is shown after these, under its own name).
SERIES_LABELS = {
    "throughput": "throughput",
    "accept_length": "accept length",
    "queue_requests": "queue depth",
    "running_requests": "running requests",
    "token_usage": "token usage",
}
MAX_EVIDENCE_SHOWN = 5  # lines per finding (the detectors keep a few)

HealthStatus = Literal["findings", "healthy", "no-batches", "unreadable"]


@dataclass(frozen=True)
class CauseView:
    """A likely cause of a health finding, as shown."""
    text: str
    fix: str
    evidence: str  # "" when nothing in the log or launch supports it


@dataclass(frozen=True)
class FindingView:
    """A health finding, as shown."""
    title: str
    pattern: str
    category: str
    summary: str  # the detector's line with the numbers
    details: str  # how often and when: "412 occurrences · 2026-01-01 10:00:00 – 11:30:00"
    where: str  # with several sources, which show it: "on gpu7: gpu7:/var/log/sglang.log (1 of 4 sources)"; else ""
    root_cause: str
    causes: list[CauseView]  # most likely first
    evidence: list[str]  # log lines, inert, each with its line number and time when known
    evidence_left_out: int
    references: list[str]


# Every health series is a quantity (tokens, requests, token/s, a fraction): drawn from zero, so noise stays
# flat and a fall is as deep as it is (render/sparkline.py).
SERIES_FLOOR = 0.0
# Except accept length, which is never below 1 (the target's own token): drawn from 1 over at least 1 token, so an
# accept length stuck at 1.0, speculation gaining nothing, is a low line and not a full bar.
SERIES_SCALES: dict[str, tuple[float, float | None]] = {"accept_length": (1.0, 1.0)}


@dataclass(frozen=True)
class SeriesView:
    """A series drawn as a sparkline."""
    label: str
    unit: str
    values: tuple[float, ...]
    samples: int
    source: str = ""  # with several sources, the one it was read from, as short as tells them apart; else ""
    floor: float = SERIES_FLOOR  # where its bars start, and the least height of their scale (sparkline.bars)
    span: float | None = None


def health_status(report: HealthReport) -> HealthStatus:
    """`findings`: at least one; `unreadable`: none, and no source could be read; `no-batches`: none, and no
    batch line was read (nothing shows the steady state); `healthy`: batch lines were read and none is wrong."""
    if report.findings:
        return "findings"
    if report.sources and all(source.error for source in report.sources):
        return "unreadable"
    return "no-batches" if report.batches == 0 else "healthy"


def _plural(count: int, word: str) -> str:
    return f"{count:,} {word}{'' if count == 1 else 's'}"


def no_lines_text(report: HealthReport) -> str:
    """`no Prefill/Decode batch lines found`, in the words of the server's engine."""
    return NO_LINES_FOUND.get(report.launch.engine or "sglang", NO_LINES_FOUND["sglang"])


def read_text(report: HealthReport) -> str:
    """`12,345 batch lines (sampled)` (vLLM: `stats lines`)."""
    word = LINES_READ.get(report.launch.engine or "sglang", "batch line")
    return _plural(report.batches, word) + (" (sampled)" if report.sampled else "")


def verdict(report: HealthReport) -> str:
    """The one-line answer: `healthy: no finding in 12,345 batch lines (sampled)`, `2 findings in …: A · B`."""
    status = health_status(report)
    if status == "findings":
        titles = " · ".join(prose(finding.title) for finding in report.findings)
        where = f"in {read_text(report)}" if report.batches else f"({no_lines_text(report)})"
        text = f"{_plural(len(report.findings), 'finding')} {where}: {titles}"
    elif status == "unreadable":
        empty = all(source.empty for source in report.sources)
        return "nothing to judge: the log is empty" if empty else "no log could be read"
    elif status == "no-batches":
        text = f"no finding, and {no_lines_text(report)}: the log shows no steady state to judge"
    else:
        text = f"healthy: no finding in {read_text(report)}"
    unreadable = sum(1 for source in report.sources if source.error)
    if unreadable:
        text += f" · {unreadable} of {_plural(len(report.sources), 'source')} could not be read"
    return clean(text, 1000)


def notes(report: HealthReport) -> list[str]:
    """What the reader must know about what was read: sampling, unreadable sources (each with its error)."""
    out = []
    if report.sampled:
        out.append(
            f"The log was sampled: {read_text(report).removesuffix(' (sampled)')} were read, evenly spaced "
            "through it, not every line."
        )
    out.extend(source_error_text(source) for source in report.sources if source.error)
    return [clean(note, 1000) for note in out]


def log_time(seconds: float) -> str:
    """A time as the log printed it: SGLang's own times carry no zone (the host's local time), so none is
    named here (health/metrics.py reads them as if UTC, and gives them back the same way).  A time the log
    printed without its year (vLLM's `03-25 21:13:53`) is shown without one."""
    moment = time.gmtime(seconds)
    return time.strftime("%m-%d %H:%M:%S" if moment.tm_year == YEARLESS_YEAR else "%Y-%m-%d %H:%M:%S", moment)


def span_text(first: float | None, last: float | None) -> str:
    """`2026-01-01 10:00:00 – 11:30:00` in the log's own time (the date once when both fall on it), or ""."""
    if first is None:
        return ""
    start = log_time(first)
    if last is None or last == first:
        return f"at {start}"
    end = log_time(last)
    return f"{start} – {end[11:] if end[:10] == start[:10] else end}"


def evidence_line(evidence: Evidence) -> str:
    """A log line as shown: `line 1,204 · [2026-01-01 10:00:00] Decode batch …`, inert and clipped."""
    lead = f"line {evidence.line_number:,} · " if evidence.line_number is not None else ""
    text = evidence.text
    if evidence.timestamp and evidence.timestamp not in text:
        text = f"[{evidence.timestamp}] {text}"
    return clean(lead + text)


def where_text(finding: Finding, sources: int) -> str:
    """Which of the report's `sources` show the finding, hosts first: `on gpu7, gpu9: gpu7:/x.log, gpu9:/x.log
    (2 of 16 sources)`, `in a.log (1 of 2 sources)` for local logs; "" for a report on one source."""
    if not finding.sources or (sources <= 1 and len(finding.sources) <= 1):
        return ""
    names = ", ".join(finding.sources)
    count = f"({len(finding.sources)} of {max(sources, len(finding.sources))} sources)"
    if finding.hosts:
        return clean(f"on {', '.join(finding.hosts)}: {names} {count}", 2000)
    return clean(f"in {names} {count}", 2000)


def finding_view(finding: Finding, sources: int = 1) -> FindingView:
    """`sources`: how many the report read (several: each finding says which of them show it)."""
    details = [
        _plural(finding.occurrences, "occurrence"),
        span_text(finding.first_seconds, finding.last_seconds),
    ]
    shown = finding.evidence[:MAX_EVIDENCE_SHOWN]
    return FindingView(
        title=prose(finding.title),
        pattern=clean(finding.pattern_id),
        category=clean(finding.category),
        summary=clean(finding.summary, 1000),
        details=" · ".join(part for part in details if part),
        where=where_text(finding, sources),
        root_cause=prose(finding.root_cause),
        causes=[CauseView(prose(c.text), prose(c.fix), clean(c.evidence)) for c in finding.causes],
        evidence=[evidence_line(evidence) for evidence in shown],
        evidence_left_out=len(finding.evidence) - len(shown),
        references=[clean(reference) for reference in finding.references],
    )


def series_views(report: HealthReport) -> list[SeriesView]:
    """The series to draw, in SERIES_LABELS order; none when no batch line was read (the renderers then say
    NO_BATCH_LINES instead of drawing nothing)."""
    if report.batches == 0 or not any(series.points for series in report.series):
        return []
    rank = {name: index for index, name in enumerate(SERIES_LABELS)}
    shown = [s for s in report.series if s.name != "accept_length" or report.speculative]
    labels = _source_labels(shown)
    ordered = sorted(shown, key=lambda s: rank.get(s.name, len(rank)))  # stable: the sources stay in their order
    return [_series_view(series, labels.get(series.source, "")) for series in ordered]


def _source_labels(series: list[Series]) -> dict[str, str]:
    """With several sources, each source's label on its series rows, the shortest that tells them apart: its host
    when every source has a host of its own (a fleet), else its file name, else its whole name; nothing with one
    source."""
    hosts = dict.fromkeys((s.source, s.host) for s in series)
    if len(hosts) <= 1:
        return {}
    for labels in ([host or "" for _, host in hosts], [source.rsplit("/", 1)[-1] for source, _ in hosts]):
        if all(labels) and len(set(labels)) == len(labels):
            return {source: clean(label, 60) for (source, _), label in zip(hosts, labels, strict=True)}
    return {source: clean(source, 120) for source, _ in hosts}


def _series_view(series: Series, source: str) -> SeriesView:
    label = SERIES_LABELS.get(series.name, series.name.replace("_", " "))
    floor, span = SERIES_SCALES.get(series.name, (SERIES_FLOOR, None))
    return SeriesView(clean(label, 40), clean(series.unit, 40), series.values, series.samples, source, floor, span)


def series_heading(report: HealthReport) -> str:
    """`Over the run (12,345 batch lines, sampled, 2026-01-01 10:00:00 – 11:30:00):` (log time)."""
    stamps = [
        point.seconds for series in report.series for point in series.points if point.seconds is not None
    ]
    when = span_text(min(stamps), max(stamps)) if stamps else "by position in the log: it has no timestamps"
    sampled = ", sampled" if report.sampled else ""
    return f"Over the run ({_plural(report.batches, 'batch line')}{sampled}, {when}):"
