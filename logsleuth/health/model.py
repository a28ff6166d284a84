"""What `logsleuth health` hands its renderers: findings about a running server, and the series behind them.

Frozen values, like logsleuth/models.py: the health package builds them, render/health*.py lays them out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from logsleuth.models import LaunchInfo, Reporter, SourceInfo


@dataclass(frozen=True, slots=True)
class BatchSample:
    """One `Prefill batch` or `Decode batch` line of SGLang's scheduler, or one of vLLM's periodic stats lines
    (health/vllm_metrics.py), as numbers (None: not printed)."""

    kind: str  # "prefill" | "decode" (vLLM's stats lines are "decode": they measure the decode side)
    seconds: float | None  # the line's own timestamp, seconds since the epoch (UTC); None when it has none
    offset: int  # byte offset of the line in the source
    running_requests: int | None = None
    queue_requests: int | None = None
    token_usage: float | None = None  # fraction of the KV pool in use, 0..1
    throughput: float | None = None  # decode: "gen throughput (token/s)"; prefill: "input throughput (token/s)"
    accept_length: float | None = None  # speculative decoding: mean accepted tokens per step
    accept_rate: float | None = None
    cuda_graph: bool | None = None
    preemptions: int | None = None  # vLLM V1: requests preempted since the previous stats line
    engine: str = "sglang"  # whose wording the line is in: "sglang" | "vllm"


@dataclass(frozen=True, slots=True)
class SeriesPoint:
    """One bucket of a series: its start and value."""
    seconds: float | None  # bucket start (None when the log has no timestamps: buckets are by position)
    value: float


@dataclass(frozen=True, slots=True)
class Series:
    """One metric over the run, bucketed to at most a few dozen points (for a sparkline and the JSON)."""

    name: str  # "throughput" | "accept_length" | "queue_requests" | "running_requests" | "token_usage"
    unit: str  # e.g. "token/s", "tokens", "requests"
    points: tuple[SeriesPoint, ...]
    samples: int  # batch lines behind the points
    source: str = ""  # the source it was read from (several sources: one series of each name per source)
    host: str | None = None  # that source's host (None: a local log)

    @property
    def values(self) -> tuple[float, ...]:
        return tuple(point.value for point in self.points)


@dataclass(frozen=True, slots=True)
class Evidence:
    """A log line that shows a finding, as the log has it (render/safety.py makes it inert)."""

    text: str
    offset: int
    timestamp: str | None = None
    line_number: int | None = None  # known when the lines before it were all read


@dataclass(frozen=True, slots=True)
class Cause:
    """One likely cause of a finding, in order of likelihood, with what to do about it."""

    text: str
    fix: str
    id: str = ""  # the cause's id in its pattern (`[[cause]] id`), e.g. "draft-weights-not-loaded"
    # Why this cause is ranked where it is: the launch fact or log line that supports it ("" when none does:
    # a possibility the log can neither confirm nor rule out).
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class Finding:
    """One health pattern that holds for the run: what it is, where it shows, why and what to do."""

    pattern_id: str
    title: str
    category: str
    summary: str  # one line with the measured numbers ("accept len ≤ 1.05 over 412 of 415 decode batches")
    root_cause: str
    causes: tuple[Cause, ...]  # likely causes, most likely first (at least one)
    evidence: tuple[Evidence, ...]  # a few lines, first ones first
    occurrences: int  # matching lines or batches in the run
    first_seconds: float | None = None
    last_seconds: float | None = None
    references: tuple[str, ...] = ()
    sources: tuple[str, ...] = ()  # the sources that show it (several sources: the logs of a fleet)
    hosts: tuple[str, ...] = ()  # the hosts of those sources, each once, in their order (a local log has none)


@dataclass(frozen=True, slots=True)
class HealthReport:
    """What `logsleuth health` found in one or more sources."""

    sources: tuple[SourceInfo, ...]
    findings: tuple[Finding, ...]  # most important first
    series: tuple[Series, ...]
    launch: LaunchInfo = field(default_factory=LaunchInfo)
    batches: int = 0  # Prefill/Decode batch lines read (all, or the samples of a large log)
    sampled: bool = False  # a large log was read in evenly spaced samples, not every line
    speculative: bool = False  # the run decodes speculatively (accept len printed, or the flags say so)
    warnings: tuple[str, ...] = ()
    reporter: Reporter | None = None  # the machine that wrote it (JSON's `reporter`)


def median(values: Iterable[float]) -> float:
    """The median (statistics.median, without the ~10 ms its imports cost every run)."""
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of no values")
    middle = len(ordered) // 2
    return ordered[middle] if len(ordered) % 2 else ordered[middle - 1] / 2 + ordered[middle] / 2  # no overflow
