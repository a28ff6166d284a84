"""A multi-GB steady-state log for the `logsleuth health` benchmark, written at disk speed.

Simulating every line of 2 GiB would take minutes, so the run is made of pre-rendered one-hour blocks: a
block is simulated once (run.py), its records rendered with a placeholder for the date and hour, and
each copy only replaces the placeholder (`bytes.replace`, one pass in C).  A queue that must keep growing
across blocks has a second placeholder for its depth.  Planted problems occupy spans in the middle half of
the file, separated by healthy hours; problems that are warning lines (weights, precision) are printed
once, at start-up while the weights load, where a server prints them.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from pathlib import Path

from scripts.health_fixtures import wordings as say
from scripts.health_fixtures.launch import Launch
from scripts.health_fixtures.run import Phase, Record, render, seed, startup, steady
from scripts.health_fixtures.scenarios import PLAIN_TP2, SPEC_TP2, UNKNOWN_NAMES, precision_notes

_HOUR_MARK = "\x00"  # stands for `YYYY-MM-DD HH` in a pre-rendered block
_QUEUE_MARK = "\x01"  # stands for the queue depth in a growing-queue block
_HOUR_MARK_BYTES, _QUEUE_MARK_BYTES = _HOUR_MARK.encode(), _QUEUE_MARK.encode()
_HOUR = 3600.0
_QUEUE_STEP = 40  # requests the queue grows by per hour of a queue-growth span
_WRITE_CHUNK = 8 << 20
STARTED = datetime(2025, 6, 2, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class _Plant:
    phase: Callable[[Phase], Phase] | None  # how an hour of this problem differs from a healthy hour
    speculative: bool = False  # only visible when the run decodes speculatively
    lines: bool = False  # warning lines printed once, at start-up (the weights load)
    growing_queue: bool = False


PLANTS: dict[str, _Plant] = {
    "retraction-storm": _Plant(lambda base: replace(base, running=(58, 58), queue=(3, 6), speed=(0.85, 0.85),
                                                    usage=(0.96, 0.98), retract_every=3)),
    "accept-drop": _Plant(lambda base: replace(base, accept=1.0), speculative=True),
    "queue-growth": _Plant(lambda base: replace(base, running=(48, 48), speed=(0.75, 0.75)), growing_queue=True),
    "throughput-collapse": _Plant(lambda base: replace(base, running=(40, 40), speed=(0.2, 0.2))),
    "cuda-graph-disabled": _Plant(lambda base: replace(base, cuda_graph=False, speed=(1.2, 1.2))),
    "weights-not-initialized": _Plant(None, lines=True),
    "precision-fallback": _Plant(None, lines=True),
}


def write_steady_state(path: Path | str, size_bytes: int, version: str, plant: Sequence[str]) -> None:
    """Write a steady-state SGLang log of about `size_bytes` (cut at a line end, never over it) in `version`'s
    wording, healthy apart from the named problems (`PLANTS`), which sit in the middle of the run."""
    unknown = sorted(set(plant) - set(PLANTS))
    if unknown:
        raise ValueError(f"unknown problems to plant: {', '.join(unknown)} (known: {', '.join(PLANTS)})")
    if version not in say.VERSIONS:
        raise ValueError(f"unknown version {version!r} (known: {', '.join(say.VERSIONS)})")
    speculative = any(PLANTS[name].speculative for name in plant)
    launch = SPEC_TP2 if speculative else PLAIN_TP2
    rng = seed("steady", version, *plant)
    base = Phase(1, running=(32, 40), accept=2.9 if speculative else None)
    head = list(startup(version, launch, (), rng))
    healthy = _block(version, launch, base, rng)
    spans = _spans(size_bytes, [name for name in plant if PLANTS[name].phase is not None])
    blocks = {name: _block(version, launch, _problem_phase(name, base), rng, growing_queue=PLANTS[name].growing_queue)
              for name in dict.fromkeys(spans.values())}
    events = _event_lines(version, [name for name in plant if PLANTS[name].lines])
    tags = say.rank_tags(launch.tp)
    _write(Path(path), size_bytes, render(head, STARTED).encode(), healthy, blocks, spans, (events, tags))


def _problem_phase(name: str, base: Phase) -> Phase:
    change = PLANTS[name].phase
    assert change is not None  # spans hold only problems with a phase
    return change(base)


def _spans(size_bytes: int, names: list[str]) -> dict[tuple[int, int], str]:
    """Byte ranges of the planted problems: the middle half of the file, a healthy gap between two."""
    if not names:
        return {}
    start, width = size_bytes // 4, size_bytes // 2
    part = width // (2 * len(names) - 1)
    return {(start + 2 * index * part, start + (2 * index + 1) * part): name for index, name in enumerate(names)}


def _block(version: str, launch: Launch, phase: Phase, rng: random.Random, *, growing_queue: bool = False) -> bytes:
    """One hour of steady state, with the date-and-hour (and a growing queue's depth) left as placeholders."""
    records: list[Record] = []
    lines = 200
    while not records or records[-1].seconds < _HOUR:
        records = list(steady(version, launch, (replace(phase, lines=lines),), (), rng, 0.0))
        lines *= 2
    records = [record for record in records if record.seconds < _HOUR]
    if growing_queue:
        records = [_queue_placeholder(record) for record in records]
    return _render_hour(records).encode()


def _queue_placeholder(record: Record) -> Record:
    if "#queue-req: 0" not in record.text:
        return record
    return replace(record, text=record.text.replace("#queue-req: 0", f"#queue-req: {_QUEUE_MARK}"))


def _render_hour(records: list[Record]) -> str:
    lines = []
    for record in records:
        if record.tags is None:
            lines.append(record.text)
        else:
            minute, second = divmod(int(record.seconds), 60)
            lines.append(say.header(f"{_HOUR_MARK}:{minute:02d}:{second:02d}", record.tags) + record.text)
    return "\n".join(lines) + "\n"


def _event_lines(version: str, names: list[str]) -> list[str]:
    """The warnings of line-shaped problems, inside a weights load (their text, without the header).
    The target is Llama: its loader warns once per checkpoint name it does not know (all three versions)."""
    if not names:
        return []
    texts = [say.update_weights_begin(22.4)]
    if "weights-not-initialized" in names:
        texts += [say.parameter_not_found(name) for name in UNKNOWN_NAMES]
    if "precision-fallback" in names:
        texts += [note.text for note in precision_notes()[version]]
    return [*texts, say.UPDATE_WEIGHTS_END]


def _write(path: Path, size_bytes: int, head: bytes, healthy: bytes, blocks: dict[str, bytes],
           spans: dict[tuple[int, int], str], events: tuple[list[str], str]) -> None:
    texts, tags = events
    if texts:  # at start-up, where SGLang prints them while it loads the weights
        head += _events(texts, STARTED, tags).encode()
    hour, written, queue = STARTED, 0, 0
    pending: list[bytes] = []
    with path.open("wb") as out:
        data, pending_size = head, 0
        while True:
            room = size_bytes - written
            if len(data) > room:  # the last piece: cut at a line end, never over the size asked for
                pending.append(data[: data.rfind(b"\n", 0, room) + 1])
                break
            pending.append(data)
            pending_size += len(data)
            written += len(data)
            if pending_size >= _WRITE_CHUNK:
                out.writelines(pending)
                pending, pending_size = [], 0
            hour += timedelta(hours=1)
            name = next((name for (low, high), name in spans.items() if low <= written < high), None)
            block = healthy if name is None else blocks[name]
            if _QUEUE_MARK_BYTES in block:
                queue += _QUEUE_STEP
                block = block.replace(_QUEUE_MARK_BYTES, str(queue).encode())
            data = block.replace(_HOUR_MARK_BYTES, hour.strftime("%Y-%m-%d %H").encode())
        out.writelines(pending)


def _events(texts: list[str], hour: datetime, tags: str) -> str:
    clock = (hour + timedelta(minutes=59, seconds=59)).strftime("%Y-%m-%d %H:%M:%S")
    return "".join(say.header(clock, tags) + text + "\n" for text in texts)
