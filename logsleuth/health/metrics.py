"""SGLang's `Prefill batch` / `Decode batch` lines as numbers (`BatchSample`), for every version we know.

The scheduler prints one line per prefill batch and one per `--decode-log-interval` decode steps (40 by
default).  The fields are `key: value` items joined by `, `; which items appear depends on the version and
the setup (research and citations: scripts/health_fixtures/wordings.py):

    0.4.10.post2  Decode batch. #running-req: 8, #token: 912, token usage: 0.01, accept len: 2.91, cuda graph: True, gen throughput (token/s): 812.40, #queue-req: 0,
    0.5.9         Decode batch, #running-req: 8, ..., accept len: 2.91, accept rate: 0.73, cuda graph: True, gen throughput (token/s): 812.40, #queue-req: 0
    0.5.23        Prefill batch, #new-seq: 1, ..., #pending-token: 0, cuda graph: False, input throughput (token/s): 93.10

So the parser reads items by name and ignores the ones it does not know (PD-disaggregation queues, MFU
estimates, mamba pools) rather than matching one fixed grammar per version.  A line cut before its
`#queue-req` item (every variant prints one) is a truncated line, not a sample: its numbers would be the
ones printed so far, read as if the rest had been zero.

Most lines of a server log are batch lines, so this runs on millions of lines: one `in` test rejects every
other line, and a batch line costs a split and a few dictionary lookups, no regex per item.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any, TypeVar

from logsleuth.health.model import BatchSample
from logsleuth.lazyre import compile_lazily

# `Decode batch, ` (0.5.x), `Decode batch. ` (0.4.x), `Decode batch [1234], ` (SGLANG_LOG_FORWARD_ITERS).
# At the start of the text (the normalizer removed the record header), or after a prefix it did not know.
_HEADER = compile_lazily(r"(?:^|(?<=[\s\]]))(?P<kind>Prefill|Decode) batch(?: \[\d{1,15}\])?[.,] ")

_T = TypeVar("_T")

# The KV pool's fill: one item on a plain pool; on hybrid pools SGLang itself reports the fuller one
# (max of full and SWA), and HiSparse's device part is the one that fills.  `mamba usage` is not KV tokens.
_USAGE_ITEMS = frozenset({"token usage", "full token usage", "swa token usage", "gpu token usage"})
_THROUGHPUT_ITEMS = {"decode": "gen throughput (token/s)", "prefill": "input throughput (token/s)"}
# The graph item's name follows the device: `cuda graph`, `cpu graph`, `npu graph`, `musa graph`.
_GRAPH_SUFFIX = " graph"
_BOOLEANS = {"True": True, "False": False}


def parse_batch_line(text: str, timestamp: str | None, offset: int) -> BatchSample | None:
    """The numbers of one `Prefill batch` / `Decode batch` line, or None for any other line.

    `text` is `LogLine.text` (record header already removed), `timestamp` its `LogLine.meta.timestamp`.
    A line that is cut short, or whose known items do not hold numbers, is None, never an exception."""
    if "batch" not in text:
        return None
    header = _HEADER.search(text)
    if header is None:
        return None
    kind = "decode" if header["kind"] == "Decode" else "prefill"
    items = _items(text[header.end():])
    if items is None or "#queue-req" not in items:
        return None
    try:
        return _sample(kind, items, timestamp, offset)
    except ValueError:  # a known item with a value SGLang never prints: not SGLang's line
        return None


def _items(body: str) -> dict[str, str] | None:
    """`key: value` items of a batch line; None when the last one has no value (a line cut inside it)."""
    items: dict[str, str] = {}
    parts = body.split(", ")
    for index, part in enumerate(parts):
        part = part.strip().rstrip(",")
        if not part:
            continue  # 0.4.x ends its lines with ", "
        key, separator, value = part.partition(": ")
        if separator and value:
            items[key] = value
        elif index == len(parts) - 1:
            return None
        # else: a suffix that is not `key: value` (a device-timer summary): not a number we read
    return items


def _sample(kind: str, items: dict[str, str], timestamp: str | None, offset: int) -> BatchSample:
    usages = [_number(value) for key, value in items.items() if key in _USAGE_ITEMS]
    graph = next((value for key, value in items.items() if key.endswith(_GRAPH_SUFFIX)), None)
    return BatchSample(
        kind=kind,
        seconds=timestamp_seconds(timestamp),
        offset=offset,
        running_requests=_optional(items.get("#running-req"), _count),
        queue_requests=_count(items["#queue-req"]),
        token_usage=max(usages) if usages else None,
        throughput=_optional(items.get(_THROUGHPUT_ITEMS[kind]), _number),
        accept_length=_optional(items.get("accept len"), _number),
        accept_rate=_optional(items.get("accept rate"), _number),
        cuda_graph=_optional(graph, _flag),
    )


def _optional(value: str | None, read: Callable[[str], _T]) -> _T | None:
    return None if value is None else read(value)


def _count(value: str) -> int:
    if not value.isdigit():
        raise ValueError(value)
    return int(value)


def _number(value: str) -> float:
    number = float(value)  # ValueError for text
    if number < 0 or not value[:1].isdigit():  # `-4`, `nan`, `inf`: not what SGLang prints
        raise ValueError(value)
    return number  # digits too many for a float read as inf: `plausible` sets it aside, not the whole line


# The most of each metric a server can print; beyond it a number is not a measurement (a corrupted or forged
# line).  Generous: a thousand times what the largest deployment shows.
PLAUSIBLE_MAX: dict[str, float] = {
    "running_requests": 1e7,
    "queue_requests": 1e9,
    "token_usage": 10.0,  # a fraction of the KV pool
    "throughput": 1e9,  # tokens per second
    "accept_length": 1e3,  # accepted tokens per speculative step: at most the draft tokens plus one
    "accept_rate": 10.0,  # a fraction
    "preemptions": 1e9,
}


def plausible(sample: BatchSample) -> tuple[BatchSample, tuple[str, str] | None]:
    """The sample with every number beyond PLAUSIBLE_MAX (or not finite) read as not printed, so that it can
    neither overflow the arithmetic of a detector or series nor break a run of batches that a finding needs;
    and the first such (metric, value), to say so."""
    absurd = {
        metric: value
        for metric, limit in PLAUSIBLE_MAX.items()
        if (value := getattr(sample, metric)) is not None and not 0 <= value <= limit  # also NaN
    }
    if not absurd:
        return sample, None
    metric, value = next(iter(absurd.items()))
    shown = f"{value:g}" if isinstance(value, float) else str(value)
    missing: dict[str, Any] = dict.fromkeys(absurd)
    return replace(sample, **missing), (metric, shown if len(shown) <= 24 else shown[:20] + "…")


def _flag(value: str) -> bool:
    if value not in _BOOLEANS:
        raise ValueError(value)
    return _BOOLEANS[value]


# --- timestamps ---------------------------------------------------------------------------------------------

# Year-less times (journald's `Nov 30 12:00:01`, vLLM's `03-25 21:13:53`) are placed in this year: a leap
# year, so that `Feb 29` exists.  Differences within one log stay right unless it runs across a new year.
YEARLESS_YEAR = 2000


def timestamp_seconds(timestamp: str | None) -> float | None:
    """`LogLine.meta.timestamp` as seconds since the epoch, or None when there is none or it does not parse.

    A time without a zone (SGLang's own `2025-01-01 12:00:00`, the server's local time) is read as UTC: the
    detectors compare times within one log, where the zone cancels out."""
    if not timestamp:
        return None
    return _seconds(timestamp)


@lru_cache(maxsize=4096)  # batch lines come many per second: most calls repeat the previous timestamp
def _seconds(timestamp: str) -> float | None:
    text = timestamp.strip().replace(",", ".")
    if text.endswith("Z"):
        text = text[:-1] + "+00:00"
    text = _six_digit_fraction(text)
    moment = _parse_iso(text) or _parse_yearless(text)
    if moment is None:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


# More than six fraction digits (a container runtime's nanoseconds): datetime takes microseconds.
_LONG_FRACTION = compile_lazily(r"(\.\d{6})\d+")


def _six_digit_fraction(text: str) -> str:
    return _LONG_FRACTION.sub(r"\1", text, count=1) if "." in text else text


def _parse_iso(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None


def _parse_yearless(text: str) -> datetime | None:
    for layout in ("%b %d %H:%M:%S", "%m-%d %H:%M:%S", "%b %d %H:%M:%S.%f", "%m-%d %H:%M:%S.%f"):
        try:
            return datetime.strptime(f"{YEARLESS_YEAR} {' '.join(text.split())}", f"%Y {layout}")
        except ValueError:
            continue
    return None
