"""The run's batch samples as a few series of a few dozen points: for a sparkline, and for the JSON."""

from __future__ import annotations

from collections.abc import Sequence

from logsleuth.health.model import BatchSample, Series, SeriesPoint, median

POINTS = 48  # per series: a sparkline a terminal line wide
# (metric, unit), in the order reports show them.  Decode batches only: prefill lines measure another thing.
SERIES: tuple[tuple[str, str], ...] = (
    ("throughput", "token/s"),
    ("accept_length", "tokens"),
    ("queue_requests", "requests"),
    ("running_requests", "requests"),
    ("token_usage", "fraction"),
)


def build_series(samples: Sequence[BatchSample], source: str = "", host: str | None = None) -> tuple[Series, ...]:
    """One series per metric the decode batches print, each bucketed by time (by position when the lines
    have no timestamps) into at most POINTS medians."""
    decode = [sample for sample in samples if sample.kind == "decode"]
    result = []
    for metric, unit in SERIES:
        values = [(sample.seconds, float(v)) for sample in decode if (v := getattr(sample, metric)) is not None]
        if values:
            result.append(Series(metric, unit, _buckets(values), len(values), source, host))
    return tuple(result)


def _buckets(values: list[tuple[float | None, float]]) -> tuple[SeriesPoint, ...]:
    times = [t for t, _ in values if t is not None]
    if len(times) == len(values) and times[-1] > times[0]:
        start, span = times[0], times[-1] - times[0]
        buckets: list[list[float]] = [[] for _ in range(POINTS)]
        for seconds, value in values:
            assert seconds is not None
            buckets[min(int((seconds - start) / span * POINTS), POINTS - 1)].append(value)
        return tuple(
            SeriesPoint(start + index * span / POINTS, median(bucket))
            for index, bucket in enumerate(buckets)
            if bucket
        )
    size = max(1, -(-len(values) // POINTS))  # ceil: at most POINTS buckets of equal count
    return tuple(
        SeriesPoint(values[index][0], median(v for _, v in values[index : index + size]))
        for index in range(0, len(values), size)
    )
