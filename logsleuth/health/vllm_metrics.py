"""vLLM's periodic stats lines as numbers (`BatchSample`), V0 and V1, 0.6 to 0.33.

vLLM prints no line per batch.  Its stat logger sums what the engine did since its last line and prints one
line every logging interval (V0: 5 s, vllm/engine/llm_engine.py `_LOCAL_LOGGING_INTERVAL_SEC`; V1: 10 s,
`VLLM_LOG_STATS_INTERVAL`), and nothing while the engine is idle (the line goes to debug).  The wordings
(citations per release: scripts/health_fixtures/vllm_wordings.py):

    V0 0.6-0.10  Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 812.4 tokens/s, Running: 8 reqs,
                 Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 3.1%, CPU KV cache usage: 0.0%.
    V1 0.7       Avg prompt throughput: …, Running: 8 reqs, Waiting: 0 reqs, GPU KV cache usage: 3.1%,
                 Prefix cache hit rate: 0.0%
    V1 0.8-0.11  Engine 000: Avg prompt throughput: …[, Preemptions: 2 (0.11)], GPU KV cache usage: 3.1%, …
    V1 0.33      … Waiting: 0 reqs[, Deferred: …][, KV fetch: …][, Preemptions: 2], GPU KV cache usage: 3.1%[, …]

and, after it when the server decodes speculatively:

    V0           Speculative metrics: Draft acceptance rate: 0.730, System efficiency: 0.512, Number of
                 speculative tokens: 5, Number of accepted tokens: …, Number of draft tokens: …, Number of
                 emitted tokens: ….
    V1 0.8-0.9   SpecDecoding metrics: Draft acceptance rate: 43.1%, Mean acceptance length: …, Accepted: …
                 tokens, Drafted: … tokens, Per-position acceptance rate: 0.701, 0.452, 0.280
    V1 0.10-0.33 SpecDecoding metrics: Mean acceptance length: 2.43, Accepted throughput: … tokens/s, Drafted
                 throughput: … tokens/s, Accepted: … tokens, Drafted: … tokens, Per-position acceptance rate:
                 0.701, 0.452, 0.280, Avg Draft acceptance rate: 47.8%

Not read: the first V1 releases' speculative line (0.8.0 to 0.8.2, `Speculative metrics: Draft acceptance
rate: 1.000, Number of accepted tokens: …, Number of draft tokens: …, `, renamed by vllm-project/vllm#15902,
with the drafts counted from vllm-project/vllm#16665): it counts no drafts, so it tells no acceptance length.

What maps to the detectors' metrics, and where the meaning is not SGLang's:
- `throughput` is `Avg generation throughput`: generated tokens over the whole interval divided by its
  length, all running requests together.  SGLang's `gen throughput` is the same quantity over its last
  `--decode-log-interval` decode steps; here the average also counts the steps spent on prefills.
- `running_requests` is `Running`; `queue_requests` is `Waiting` (V1; from 0.33 it includes the `Deferred`
  requests) or `Pending` + `Swapped` (V0: a swapped-out request waits to run again, as SGLang counts a
  retracted request in `#queue-req`).
- `token_usage` is `GPU KV cache usage` / 100: the share of KV *blocks* in use (SGLang: of KV tokens).
- `accept_length` is the mean number of tokens one speculative step yields, the bonus token included, as
  SGLang's `accept len`.  vLLM 0.9 and later print it that way (`1 + accepted / drafts`, v1/spec_decode/
  metrics.py); 0.8 printed `accepted / drafts`, without the bonus token, under the same name: the sum of the
  per-position rates tells the two apart (it equals `accepted / drafts`).  V0 prints no length: it is
  emitted tokens per draft (`emitted / (drafted / k)`, the bonus token included), from the difference of
  two lines' counts, because V0's counts (and its rates) are totals since the server started.
- `accept_rate` is the draft acceptance rate (accepted / drafted tokens) as a fraction.
- `preemptions` (V1 0.11 on) is `Preemptions`, requests preempted since the previous line; V0 warns instead
  (the scheduler's "… is preempted by PreemptionMode…" line, one in every 50: a `lines` signal).
- No `cuda_graph`: vLLM does not print it per line (a start-up line says so: a `lines` signal).

Several data-parallel engines print one line each (`Engine 000:`, `Engine 001:`): the first engine seen is
followed and the others are skipped, because their numbers are not one series (`N Engines Aggregated:`, the
aggregate, is followed when it comes first).  The speculative lines carry no engine index and are all read.

Like metrics.py, this runs on every line of a log: one `in` test rejects every other line.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from logsleuth.health.metrics import timestamp_seconds
from logsleuth.health.model import BatchSample

_STATS_KEY = "Avg prompt throughput: "  # the first item of every stats line, V0 and V1
_THROUGHPUT = "Avg generation throughput"  # ...and its second (the line's fast test)
_SPEC_V1 = "SpecDecoding metrics: "
_SPEC_V0 = "Speculative metrics: "
_PER_POSITION = "Per-position acceptance rate"
_KV_USAGE_SUFFIX = " KV cache usage"  # `GPU KV cache usage` (0.33: the device's name, `GPU` on CUDA)
_ENGINE_PREFIX = "Engine "  # `Engine 000: `
_AGGREGATED = " Engines Aggregated: "  # `2 Engines Aggregated: ` (0.11 on, --aggregate-engine-logging)

# A launch of vLLM: the engine's config line (V0 `Initializing an LLM engine (v0.6.6.post1) with config: …`,
# V1 `Initializing a V1 LLM engine (v0.11.2) with config: …`), printed once at start-up (V1: by the first
# data-parallel rank).  Not V1's `Dumping input data for V1 LLM engine (v…) with config: …`, printed when
# the engine fails (logging_utils/dump_input.py).
LAUNCH_WORDS = ("LLM engine (v", ") with config: ", "Initializing a")


def is_launch_line(text: str) -> bool:
    return all(words in text for words in LAUNCH_WORDS)


@dataclass
class VllmStatsReader:
    """Reads vLLM's stats lines in log order; keeps what one line needs of the lines before it (the engine
    followed, V0's running totals)."""

    engine_label: str | None = None  # "000", "aggregated": the engine whose lines are followed
    _v0_totals: tuple[int, int, int] | None = None  # accepted, drafted, emitted tokens on V0's previous line

    def parse(self, text: str, timestamp: str | None, offset: int) -> BatchSample | None:
        """The numbers of one vLLM stats or speculative line, or None for any other line (or one cut short)."""
        if _THROUGHPUT in text:
            return self._stats(text, timestamp, offset)
        if "metrics: " in text:
            if _SPEC_V1 in text:
                return self._spec_v1(text, timestamp, offset)
            if _SPEC_V0 in text:
                return self._spec_v0(text, timestamp, offset)
        return None

    # --- the stats line ---------------------------------------------------------------------------------------

    def _stats(self, text: str, timestamp: str | None, offset: int) -> BatchSample | None:
        start = _item_start(text, _STATS_KEY)
        if start is None:
            return None
        label = _engine_label(text[:start])
        if label is None:
            return None
        if self.engine_label is None:
            self.engine_label = label
        elif label != self.engine_label:
            return None  # another data-parallel engine: not this series
        try:
            items = _items(text[start:])
            running = _count(items["Running"], "reqs")
            if "Waiting" in items:
                queue = _count(items["Waiting"], "reqs")
            else:  # V0
                queue = _count(items["Pending"], "reqs") + _count(items["Swapped"], "reqs")
            usage = _kv_usage(items)
            throughput = _unit(items[_THROUGHPUT], "tokens/s")
            preemptions = _count(items["Preemptions"], "") if "Preemptions" in items else None
        except (KeyError, ValueError):  # cut short, or not vLLM's line
            return None
        if "Waiting" in items and preemptions is None:
            preemptions = 0  # V1 prints the item only when some were preempted
        return BatchSample(
            kind="decode",
            seconds=timestamp_seconds(timestamp),
            offset=offset,
            running_requests=running,
            queue_requests=queue,
            token_usage=usage,
            throughput=throughput,
            preemptions=preemptions,
            engine="vllm",
        )

    # --- speculative decoding ---------------------------------------------------------------------------------

    def _spec_v1(self, text: str, timestamp: str | None, offset: int) -> BatchSample | None:
        start = _item_start(text, _SPEC_V1)
        if start is None:
            return None
        try:
            items, positions = _spec_items(text[start + len(_SPEC_V1) :])
            _count(items["Drafted"], "tokens")  # after the length in every wording: the line reached it
            printed = _number(items["Mean acceptance length"])
            rate_text = items.get("Avg Draft acceptance rate") or items["Draft acceptance rate"]
            rate = _percent(rate_text)
        except (KeyError, ValueError):
            return None
        return BatchSample(
            kind="decode",
            seconds=timestamp_seconds(timestamp),
            offset=offset,
            accept_length=_with_bonus_token(printed, positions),
            accept_rate=rate,
            engine="vllm",
        )

    def _spec_v0(self, text: str, timestamp: str | None, offset: int) -> BatchSample | None:
        start = _item_start(text, _SPEC_V0)
        if start is None:
            return None
        try:
            items = _items(text[start + len(_SPEC_V0) :])
            steps_tokens = _count(items["Number of speculative tokens"], "")
            totals = (
                _count(items["Number of accepted tokens"], ""),
                _count(items["Number of draft tokens"], ""),
                _count(items["Number of emitted tokens"], ""),
            )
        except (KeyError, ValueError):
            return None
        previous, self._v0_totals = self._v0_totals, totals
        accepted, drafted, emitted = totals
        if previous is not None and all(now >= then for now, then in zip(totals, previous, strict=True)):
            # The totals since the previous line: this interval's acceptance, as V1 and SGLang print it
            accepted, drafted, emitted = (now - then for now, then in zip(totals, previous, strict=True))
        if drafted <= 0 or steps_tokens <= 0:
            return None  # nothing drafted in the interval: no acceptance to judge
        return BatchSample(
            kind="decode",
            seconds=timestamp_seconds(timestamp),
            offset=offset,
            accept_length=emitted / (drafted / steps_tokens),
            accept_rate=accepted / drafted,
            engine="vllm",
        )


def _item_start(text: str, key: str) -> int | None:
    """Where `key` starts when it opens the message: at the start of the text (the normalizer removed the
    record header), or after an engine label or a prefix the normalizer did not know."""
    at = text.find(key)
    if at < 0 or (at and text[at - 1] not in " ]"):
        return None
    return at


def _engine_label(before: str) -> str | None:
    """`Engine 000: ` -> "000"; `2 Engines Aggregated: ` -> "aggregated"; nothing (V0, V1 0.7) -> "".
    None: something else stands before the first item (not a stats line)."""
    before = before.rstrip()
    if not before:
        return ""
    if before.endswith(_AGGREGATED.rstrip()):
        return "aggregated"
    head, _, index = before.rpartition(_ENGINE_PREFIX)
    index = index.rstrip(":")
    if index.isdigit() and before.endswith(":") and (not head or head.endswith((" ", "]"))):
        return index
    if before.endswith("]"):  # a prefix the normalizer kept: `[worker 3]`
        return ""
    return None


def _items(body: str) -> dict[str, str]:
    """`key: value` items joined by `, `; parts without `: ` (0.33's `KV fetch: 1 waiting to start, 2 in
    progress, …`) are ignored.  V0's stats line ends with a period."""
    items: dict[str, str] = {}
    for part in body.split(", "):
        key, separator, value = part.partition(": ")
        if separator:
            items[key.strip()] = value.strip()
    return items


def _spec_items(body: str) -> tuple[dict[str, str], list[float] | None]:
    """The speculative line's items, and its per-position acceptance rates (their list is joined by `, ` too:
    the bare numbers after the per-position item belong to it)."""
    items: dict[str, str] = {}
    positions: list[float] | None = None
    for part in body.split(", "):
        key, separator, value = part.partition(": ")
        if separator:
            items[key.strip()] = value.strip()
            if key.strip() == _PER_POSITION:
                positions = [_number(value)] if value.strip() else []
        elif positions is not None and key.strip():
            positions.append(_number(key))
    return items, positions


def _with_bonus_token(printed: float, positions: list[float] | None) -> float:
    """The mean acceptance length with the bonus token counted (see the module's docstring): 0.8 printed
    `accepted / drafts`, which is the sum of the per-position rates; 0.9 on prints one more."""
    if positions:
        without = sum(positions)
        return printed + 1.0 if abs(printed - without) < abs(printed - (without + 1.0)) else printed
    return printed + 1.0 if printed < 1.0 else printed  # below one it cannot count the bonus token


def _kv_usage(items: dict[str, str]) -> float:
    if "GPU KV cache usage" in items:
        return _percent(items["GPU KV cache usage"])
    for key, value in items.items():
        if key.endswith(_KV_USAGE_SUFFIX):
            return _percent(value)
    raise KeyError(_KV_USAGE_SUFFIX)


def _unit(value: str, unit: str) -> float:
    number, _, printed_unit = value.partition(" ")
    if printed_unit.rstrip(".") != unit:
        raise ValueError(value)  # cut inside the item
    return _number(number)


def _count(value: str, unit: str) -> int:
    number = value.rstrip(".")
    if unit:
        number, _, printed_unit = number.partition(" ")
        if printed_unit != unit:
            raise ValueError(value)
    if not number.isdigit():
        raise ValueError(value)
    return int(number)


def _percent(value: str) -> float:
    value = value.rstrip(".")
    if not value.endswith("%"):
        raise ValueError(value)  # cut inside the number
    return _number(value[:-1]) / 100


def _number(value: str) -> float:
    number = float(value)  # ValueError for text
    if not math.isfinite(number) or number < 0:  # `nan` when nothing was drafted
        raise ValueError(value)
    return number
