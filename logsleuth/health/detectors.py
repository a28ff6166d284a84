"""The signals a health pattern's `[[detect]]` tables name, as detectors fed one line or batch at a time.

The same detectors run on a whole log (`logsleuth health`, health/scan.py) and live (`watch --then-follow`,
watch/health.py): each is fed lines and batch samples in log order and says at any moment whether its
signal holds.  Thresholds come from the pattern (docs/health.md); none is written here.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field, replace

from logsleuth.diagnosis.schema import REGEX_TIMEOUT
from logsleuth.health.library import Detect
from logsleuth.health.metrics import timestamp_seconds
from logsleuth.health.model import BatchSample, Evidence, median
from logsleuth.models import LogLine

MAX_EVIDENCE = 3  # log lines kept per detector
# How each metric reads in SGLang's own batch lines (the words a user would grep for).
METRIC_WORDS = {
    "accept_length": "accept len",
    "accept_rate": "accept rate",
    "queue_requests": "#queue-req",
    "running_requests": "#running-req",
    "throughput": "gen throughput (token/s)",
    "token_usage": "token usage",
    "cuda_graph": "cuda graph",
    "preemptions": "preemptions",
}
# ...and in vLLM's stats lines (health/vllm_metrics.py; V0 says `Pending` for what V1 calls `Waiting`).
VLLM_METRIC_WORDS = {
    "accept_length": "Mean acceptance length",
    "accept_rate": "Draft acceptance rate",
    "queue_requests": "Waiting",
    "running_requests": "Running",
    "throughput": "Avg generation throughput (tokens/s)",
    "token_usage": "GPU KV cache usage",
    "cuda_graph": "CUDA graphs",
    "preemptions": "Preemptions",
}
# What one sample is called in each engine's log: SGLang prints a line per batch, vLLM one per interval.
LINE_NOUNS = {"sglang": "{batch} batches", "vllm": "stats lines"}


def metric_words(metric: str, engine: str) -> str:
    return (VLLM_METRIC_WORDS if engine == "vllm" else METRIC_WORDS)[metric]


@dataclass
class Hit:
    """What a detector saw when its signal holds."""

    summary: str
    occurrences: int
    evidence: list[Evidence]
    first_seconds: float | None = None
    last_seconds: float | None = None
    after_healthy_start: bool | None = None  # the signal followed a healthy stretch (None: not a question here)
    episodes: list[Hit] = field(default_factory=list)  # separate stretches of it, when the signal has them


def evidence_of(line: LogLine) -> Evidence:
    return Evidence(text=line.text, offset=line.offset, timestamp=line.meta.timestamp)


def _number(value: float) -> str:
    if not math.isfinite(value) or abs(value) >= 1e15:
        return f"{value:g}"  # never printed by a server (metrics.plausible), but never an exception either
    return f"{value:.2f}".rstrip("0").rstrip(".") if value != int(value) else str(int(value))


@dataclass
class LinesDetector:
    """`lines`: a log line matching the pattern's regex, `min_count` times (within `within_seconds`)."""

    detect: Detect
    count: int = 0
    times: deque[float] = field(default_factory=deque)
    most_in_window: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    first_seconds: float | None = None
    last_seconds: float | None = None
    broken: str | None = None  # the regex timed out: the detector is off (a user pattern's fault)

    def __post_init__(self) -> None:
        self.literal = self.detect.params.get("literal")

    def feed_line(self, line: LogLine) -> None:
        if self.broken or (self.literal is not None and self.literal not in line.text):
            return
        assert self.detect.line is not None
        try:
            if self.detect.line.search(line.text, timeout=REGEX_TIMEOUT) is None:
                return
        except TimeoutError:
            self.broken = f"regex {self.detect.line.pattern!r} took over {REGEX_TIMEOUT} s on a line: detector skipped"
            return
        self.count += 1
        seconds = timestamp_seconds(line.meta.timestamp)
        if len(self.evidence) < MAX_EVIDENCE:
            self.evidence.append(evidence_of(line))
        if seconds is not None:
            self.first_seconds = seconds if self.first_seconds is None else self.first_seconds
            self.last_seconds = seconds
            window = self.detect.params.get("within_seconds")
            if window is not None:
                self.times.append(seconds)
                while self.times and seconds - self.times[0] > window:
                    self.times.popleft()
                self.most_in_window = max(self.most_in_window, len(self.times))

    def feed_batch(self, sample: BatchSample, line: LogLine) -> None:
        pass

    def hit(self) -> Hit | None:
        needed = int(self.detect.number("min_count", 1))
        window = self.detect.params.get("within_seconds")
        seen = self.most_in_window if window is not None else self.count
        if self.count == 0 or seen < needed:
            return None
        summary = f"{self.count} such line{'s' if self.count != 1 else ''}"
        if window is not None:
            summary += f", {self.most_in_window} within {_number(window)} s"
        return Hit(summary, self.count, list(self.evidence), self.first_seconds, self.last_seconds)


class _BatchDetector:
    """The part every batch signal shares: which batches it reads, and the value of its metric in one."""

    detect: Detect
    engine: str = "sglang"  # the wording of the samples read: their words in the summary

    def feed_line(self, line: LogLine) -> None:
        pass

    def _value(self, sample: BatchSample) -> float | None:
        if sample.kind != self.detect.params.get("batch", "decode"):
            return None
        value = getattr(sample, self.detect.params["metric"])
        if value is None:
            return None
        self.engine = sample.engine
        return float(value)

    @property
    def words(self) -> str:
        return metric_words(self.detect.params["metric"], self.engine)

    def words_of(self, metric: str) -> str:
        return metric_words(metric, self.engine)

    @property
    def lines(self) -> str:
        """What the samples are called: "decode batches" (SGLang), "stats lines" (vLLM)."""
        return LINE_NOUNS.get(self.engine, LINE_NOUNS["sglang"]).format(batch=self.detect.params.get("batch", "decode"))


@dataclass
class LowDetector(_BatchDetector):
    """`low`: the metric at or below `at_most` over `min_batches` batches in a row.  Also says whether the
    run was healthy before it (a drop mid-run) and what the metric was then."""

    detect: Detect
    run: int = 0
    run_start: tuple[Evidence, float | None] | None = None
    best: tuple[int, Evidence, float | None, float | None] | None = None  # (length, first line, t0, t1)
    total: int = 0
    low_total: int = 0
    healthy_before: list[float] = field(default_factory=list)  # values above the threshold before the first low run

    def feed_batch(self, sample: BatchSample, line: LogLine) -> None:
        value = self._value(sample)
        if value is None:
            return
        self.total += 1
        if value > self.detect.number("at_most", 0):
            self.run, self.run_start = 0, None
            if self.best is None or self.best[0] < self.detect.number("min_batches", 1):
                self.healthy_before.append(value)
            return
        self.low_total += 1
        self.run += 1
        if self.run_start is None:
            self.run_start = (evidence_of(line), sample.seconds)
        if self.best is None or self.run > self.best[0]:
            self.best = (self.run, self.run_start[0], self.run_start[1], sample.seconds)

    def hit(self) -> Hit | None:
        needed = int(self.detect.number("min_batches", 1))
        if self.best is None or self.best[0] < needed:
            return None
        length, first, t0, t1 = self.best
        summary = (
            f"{self.words} ≤ {_number(self.detect.number('at_most', 0))} in {length} "
            f"{self.lines} in a row ({self.low_total} of {self.total} read)"
        )
        dropped = len(self.healthy_before) >= needed
        if dropped:
            summary += f"; it was {_number(median(self.healthy_before))} before, then dropped"
        return Hit(summary, self.low_total, [first], t0, t1, after_healthy_start=dropped)


@dataclass
class GrowthDetector(_BatchDetector):
    """`growth`: the metric climbs over `min_batches` batches or more by `min_increase` or more, never falling
    more than `tolerance` (a fraction) below its highest value so far: a queue that keeps growing, not the
    jitter of one that is steady, nor a burst that drains."""

    detect: Detect
    peak: float = 0.0
    run: tuple[float, Evidence, float | None] | None = None  # (first value, first line, its time) of this climb
    length: int = 0
    best: tuple[float, float, int, Evidence, Evidence, float | None, float | None] | None = None

    def feed_batch(self, sample: BatchSample, line: LogLine) -> None:
        value = self._value(sample)
        if value is None:
            return
        if self.run is None or value < self.peak * (1 - self.detect.number("tolerance", 0.05)) - 1:
            self.run, self.length, self.peak = (value, evidence_of(line), sample.seconds), 0, value
        self.length += 1
        self.peak = max(self.peak, value)
        first_value, first_line, t0 = self.run
        grown = value - first_value
        if (
            grown >= self.detect.number("min_increase", 0)
            and self.length >= self.detect.number("min_batches", 1)
            and (self.best is None or grown > self.best[1] - self.best[0])
        ):
            self.best = (first_value, value, self.length, first_line, evidence_of(line), t0, sample.seconds)

    def hit(self) -> Hit | None:
        if self.best is None:
            return None
        start, end, length, first, last, t0, t1 = self.best
        noun = "batches" if self.engine == "sglang" else self.lines
        summary = f"{self.words} grew from {_number(start)} to {_number(end)} over {length} {noun} without draining"
        return Hit(summary, length, [first, last], t0, t1)


@dataclass
class _Episode:
    """A stretch of consecutive judgements at or below a collapse's ratio: its worst window, and its span."""

    value: float
    load: float
    first: Evidence
    t0: float | None
    t1: float | None
    windows: int = 1


@dataclass
class CollapseDetector(_BatchDetector):
    """`collapse`: the metric's median over `window_batches` falls to `ratio` of the run's first
    `baseline_batches`, while the load (`load_metric`) is at least `load_ratio` of its own first median: a
    server that serves as many requests as before, much slower.  Each stretch of such windows is an episode
    of its own (another finding may explain one and not the other)."""

    detect: Detect
    baseline: list[tuple[float, float]] = field(default_factory=list)  # (metric, load)
    window: deque[tuple[float, float, Evidence, float | None]] = field(default_factory=deque)
    seen: int = 0
    episodes: list[_Episode] = field(default_factory=list)
    _in_episode: bool = False

    def feed_batch(self, sample: BatchSample, line: LogLine) -> None:
        value = self._value(sample)
        load = getattr(sample, self.detect.params.get("load_metric", "running_requests"))
        if value is None or load is None or load <= 0:
            return
        wanted = int(self.detect.number("baseline_batches", 50))
        if len(self.baseline) < wanted:
            self.baseline.append((value, float(load)))
            return
        size = int(self.detect.number("window_batches", 50))
        self.window.append((value, float(load), evidence_of(line), sample.seconds))
        if len(self.window) > size:
            self.window.popleft()
        self.seen += 1
        if len(self.window) == size and self.seen % max(size // 2, 1) == 0:  # every half window: medians cost
            self._judge()

    def _judge(self) -> None:
        base_value = median(v for v, _ in self.baseline)
        base_load = median(load for _, load in self.baseline)
        value = median(v for v, _, _, _ in self.window)
        load = median(load for _, load, _, _ in self.window)
        low = base_value > 0 and load >= self.detect.number("load_ratio", 0.7) * base_load
        low = low and value <= self.detect.number("ratio", 0.5) * base_value
        if not low:
            self._in_episode = False
            return
        t0, t1 = self.window[0][3], self.window[-1][3]
        if self._in_episode:
            episode = self.episodes[-1]
            episode.t1, episode.windows = t1, episode.windows + 1
            if value < episode.value:
                episode.value, episode.load = value, load
        else:
            self.episodes.append(_Episode(value, load, self.window[0][2], t0, t1))
            self._in_episode = True

    def _episode_hit(self, episode: _Episode) -> Hit:
        base_value = median(v for v, _ in self.baseline)
        base_load = median(load for _, load in self.baseline)
        load_words = self.words_of(self.detect.params.get("load_metric", "running_requests"))
        noun = "batches'" if self.engine == "sglang" else f"{self.lines}'"
        summary = (
            f"{self.words} fell to {_number(round(episode.value, 1))} ({episode.value / base_value:.0%} of the "
            f"first {len(self.baseline)} {noun} {_number(round(base_value, 1))}) at a similar load ({load_words} "
            f"{_number(episode.load)} against {_number(base_load)})"
        )
        return Hit(summary, episode.windows, [episode.first], episode.t0, episode.t1)

    def hit(self) -> Hit | None:
        if not self.episodes:
            return None
        hits = [self._episode_hit(episode) for episode in self.episodes]
        worst = min(range(len(hits)), key=lambda index: self.episodes[index].value)
        return replace(hits[worst], occurrences=sum(h.occurrences for h in hits), episodes=hits)


@dataclass
class FalseDetector(_BatchDetector):
    """`false`: a true/false metric (cuda graph) false in `min_fraction` or more of `min_batches` batches in
    a row: every decode step without a graph for a stretch.  With `load_metric`, a batch larger than any that
    ran with the metric true is left out: there is no graph of its size, which is not graphs turned off."""

    detect: Detect
    window: deque[bool] = field(default_factory=deque)
    false_in_window: int = 0
    total: int = 0
    false: int = 0
    evidence: list[Evidence] = field(default_factory=list)
    first_seconds: float | None = None
    last_seconds: float | None = None
    held: bool = False
    largest_true: float = 0  # the largest load (`load_metric`) seen with the metric true

    def feed_batch(self, sample: BatchSample, line: LogLine) -> None:
        value = self._value(sample)
        if value is None:
            return
        load_metric = self.detect.params.get("load_metric")
        load = getattr(sample, load_metric) if load_metric else None
        if value and load is not None:
            self.largest_true = max(self.largest_true, load)
        elif self.largest_true and load is not None and load > self.largest_true:
            return  # larger than any batch that ran with it: no graph of that size, not graphs off
        self.total += 1
        is_false = not value
        self.false += is_false
        self.window.append(is_false)
        self.false_in_window += is_false
        size = int(self.detect.number("min_batches", 1))
        if len(self.window) > size:
            self.false_in_window -= self.window.popleft()
        if len(self.window) == size and self.false_in_window >= self.detect.number("min_fraction", 1) * size:
            if not self.held:  # the line where the stretch first qualifies
                self.evidence, self.first_seconds, self.held = [evidence_of(line)], sample.seconds, True
            self.last_seconds = sample.seconds

    def hit(self) -> Hit | None:
        if not self.held:
            return None
        summary = (
            f"{self.words}: False in {self.detect.number('min_fraction', 1):.0%} or more of "
            f"{int(self.detect.number('min_batches', 1))} batches in a row ({self.false} of {self.total} read)"
        )
        return Hit(summary, self.false, list(self.evidence), self.first_seconds, self.last_seconds)


@dataclass
class TotalDetector(_BatchDetector):
    """`total`: a count metric (vLLM's preemptions since the previous stats line) adding up to `min_total` or
    more within `within_seconds`: a storm, where one preemption under a burst is normal.  Lines without a
    time count as one window (the whole run)."""

    detect: Detect
    window: deque[tuple[float | None, float, Evidence]] = field(default_factory=deque)
    in_window: float = 0.0
    total: float = 0.0
    most: float = 0.0
    evidence: list[Evidence] = field(default_factory=list)
    first_seconds: float | None = None
    last_seconds: float | None = None

    def feed_batch(self, sample: BatchSample, line: LogLine) -> None:
        value = self._value(sample)
        if not value:
            return
        self.total += value
        seconds = sample.seconds
        self.window.append((seconds, value, evidence_of(line)))
        self.in_window += value
        span = self.detect.number("within_seconds", math.inf)
        while seconds is not None and self.window[0][0] is not None and seconds - self.window[0][0] > span:
            self.in_window -= self.window.popleft()[1]
        if self.in_window > self.most:
            self.most = self.in_window
            if self.most >= self.detect.number("min_total", 1) and not self.evidence:
                self.evidence = [self.window[0][2], evidence_of(line)] if len(self.window) > 1 else [evidence_of(line)]
                self.first_seconds = self.window[0][0]
        if self.evidence:
            self.last_seconds = seconds if seconds is not None else self.last_seconds

    def hit(self) -> Hit | None:
        if self.most < self.detect.number("min_total", 1):
            return None
        summary = f"{_number(self.total)} {self.words.lower()} in all, {_number(self.most)} within " + (
            f"{_number(self.detect.number('within_seconds', 0))} s" if "within_seconds" in self.detect.params else "the run"
        )
        return Hit(summary, int(self.total), list(self.evidence), self.first_seconds, self.last_seconds)


Detector = LinesDetector | LowDetector | GrowthDetector | CollapseDetector | FalseDetector | TotalDetector
_BY_SIGNAL: dict[str, type[Detector]] = {
    "lines": LinesDetector,
    "low": LowDetector,
    "growth": GrowthDetector,
    "collapse": CollapseDetector,
    "false": FalseDetector,
    "total": TotalDetector,
}


def detector_for(detect: Detect) -> Detector:
    return _BY_SIGNAL[detect.signal](detect)

