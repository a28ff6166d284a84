"""Simulate a server run and write it in one version's wording: startup, then steady-state lines.

The numbers follow from a few quantities per phase (running requests, queue, accept length, speed), so the
lines agree with each other: throughput is requests × per-request speed, a line comes every
`--decode-log-interval` (40) decode steps, so the gap between two lines is 40 × tokens per step / throughput.
Everything random comes from one `random.Random` seeded by the fixture's name: the output is reproducible.
"""

from __future__ import annotations

import random
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timedelta

from scripts.health_fixtures import wordings as say
from scripts.health_fixtures.launch import (
    NUM_DRAFT_TOKENS,
    PORT,
    Launch,
    args_note_prefixed,
    command_line,
    server_args_line,
)

DECODE_LOG_INTERVAL = 40  # SGLang's --decode-log-interval default: a Decode batch line per 40 decode steps
POOL_TOKENS = 210_000  # the KV pool (`KV Cache is allocated. #tokens: ...`)
SPEED_PER_REQUEST = 22.0  # decode tokens/s of one request at a moderate batch (an 8B model on an L40S), CUDA graphs on
NO_GRAPH_SPEED = 0.45  # the same without CUDA graphs: kernel launches dominate small decode steps...
NO_GRAPH_SPEED_LARGE = 0.85  # ...and matter much less from this batch size on
LARGE_BATCH = 64
DRAFT_OVERHEAD = 1.2  # one speculative step (draft + verify) costs this many plain decode steps
CONTEXT_TOKENS = 1100  # mean tokens held in the KV cache per running request


@dataclass(frozen=True, slots=True)
class Phase:
    """A stretch of the run: quantities ramp linearly from their first to their second value."""

    lines: int  # Decode batch lines in this phase
    running: tuple[int, int] = (24, 40)
    queue: tuple[int, int] = (0, 0)
    accept: float | None = None  # mean accept length with speculative decoding; None without
    speed: tuple[float, float] = (1.0, 1.0)  # factor on the per-request decode speed
    cuda_graph: bool = True
    usage: tuple[float, float] | None = None  # KV pool fill; None: from running requests × context
    retract_every: int = 0  # a "KV cache pool is full" retraction after every Nth decode line (0: none)


@dataclass(frozen=True, slots=True)
class Note:
    """A line a problem adds to the log: where in the run, and whether a scheduler rank prints it."""

    stage: str  # "args" (while ServerArgs is built), "load" (while the target loads), "after:<n>" (after decode line n)
    text: str
    ranked: bool = True  # printed by the scheduler (TP-tagged) rather than the main process


@dataclass(frozen=True, slots=True)
class Record:
    seconds: float  # since the run started
    text: str
    tags: str | None  # the rank tags of an SGLang record; None: not an SGLang record (script, uvicorn)


@dataclass
class _Clock:
    seconds: float = 0.0

    def tick(self, seconds: float) -> float:
        self.seconds += seconds
        return self.seconds


def seed(*names: str) -> random.Random:
    return random.Random(zlib.crc32("/".join(names).encode()))


def startup(version: str, launch: Launch, notes: tuple[Note, ...], rng: random.Random) -> Iterator[Record]:
    """The launch up to "ready": script lines, server_args, loading, the pool, uvicorn."""
    clock = _Clock()
    tags = say.rank_tags(launch.tp)
    for line in say.version_lines(version):
        yield Record(clock.seconds, line, None)
    yield Record(clock.tick(1.0), command_line(version, launch), None)
    for note in _at(notes, "args"):
        prefixed = args_note_prefixed(version)
        yield Record(clock.tick(0.4), note.text, "" if prefixed else None)
    yield Record(clock.tick(2.1), server_args_line(version, launch), "")
    for rank in range(launch.tp):
        yield Record(clock.tick(0.3), say.INIT_DISTRIBUTED, say.rank_tags(launch.tp, rank))
    available = 78.2
    yield Record(clock.tick(3.2), say.load_weight_begin(available), tags)
    for note in _at(notes, "load"):
        yield Record(clock.tick(0.05), note.text, tags if note.ranked else "")
    used = 15.1 / launch.tp
    yield Record(clock.tick(21.0 + rng.random()), say.load_weight_end(
        version, launch.model_class, _dtype(launch), 21.4, available - used, used), tags)
    available -= used
    if launch.draft_class is not None:
        yield Record(clock.tick(0.6), say.load_weight_begin(available), tags)
        yield Record(clock.tick(1.8), say.load_weight_end(
            version, launch.draft_class, _dtype(launch), 1.9, available - 0.9, 0.9), tags)
        available -= 0.9
    yield Record(clock.tick(1.2), say.kv_cache_allocated(POOL_TOKENS, 12.84), tags)
    yield Record(clock.tick(0.1), say.memory_pool_end(available - 25.7), tags)
    yield Record(clock.tick(4.0), say.uvicorn_running(PORT), None)
    yield Record(clock.tick(1.5), say.access_line("127.0.0.1", 40816, "/generate"), None)
    yield Record(clock.tick(0.5), say.READY, "")


def _dtype(launch: Launch) -> str:
    for _flag, name, value in launch.flags:
        if name == "dtype":
            return f"torch.{value}"
    return "torch.bfloat16"


def _at(notes: tuple[Note, ...], stage: str) -> list[Note]:
    return [note for note in notes if note.stage == stage]


@dataclass
class _Steady:
    """The steady state's running numbers between two lines."""

    version: str
    launch: Launch
    rng: random.Random
    tags: str
    since_prefill: int = 0
    next_prefill: int = 3
    last_prefill: float = 0.0  # when the previous prefill line was printed
    ratio: float = 0.3  # the scheduler's new_token_ratio


def steady(version: str, launch: Launch, phases: tuple[Phase, ...], notes: tuple[Note, ...],
           rng: random.Random, start: float) -> Iterator[Record]:
    """Decode and prefill batch lines (and what else a serving server prints) phase after phase."""
    state = _Steady(version, launch, rng, say.rank_tags(launch.tp), last_prefill=start)
    clock = _Clock(start)
    line = 0
    for phase in phases:
        for index in range(phase.lines):
            share = index / max(phase.lines - 1, 1)
            yield from _decode_step(state, phase, share, clock)
            line += 1
            if phase.retract_every and line % phase.retract_every == 0:
                yield _retraction(state, clock)
            for note in _at(notes, f"after:{line}"):
                yield Record(clock.tick(0.2), note.text, state.tags if note.ranked else "")


def _ramp(pair: tuple[float, float], share: float) -> float:
    return pair[0] + (pair[1] - pair[0]) * share


def _decode_step(state: _Steady, phase: Phase, share: float, clock: _Clock) -> Iterator[Record]:
    rng = state.rng
    running = max(1, round(_ramp(phase.running, share) * rng.uniform(0.93, 1.07)))
    queue = max(0, round(_ramp(phase.queue, share) + rng.uniform(-2, 2))) if phase.queue != (0, 0) else 0
    tokens = round(running * CONTEXT_TOKENS * rng.uniform(0.9, 1.1))
    if phase.usage is not None:  # a pool filled by long contexts: the token count follows the fill
        tokens = round(min(_ramp(phase.usage, share) * rng.uniform(0.995, 1.005), 0.99) * POOL_TOKENS)
    usage = tokens / POOL_TOKENS
    graph = phase.cuda_graph and (state.launch.cuda_graph_max_bs is None or running <= state.launch.cuda_graph_max_bs)
    accept = None if phase.accept is None else max(1.0, phase.accept + rng.uniform(-0.06, 0.06))
    if accept is not None and phase.accept is not None and phase.accept <= 1.05:
        accept = phase.accept + rng.uniform(0.0, 0.02)  # a draft that contributes nothing: 1.00 to 1.02
    per_step = accept if accept is not None else 1.0
    no_graph = NO_GRAPH_SPEED if running < LARGE_BATCH else NO_GRAPH_SPEED_LARGE
    speed = SPEED_PER_REQUEST * _ramp(phase.speed, share) * (1.0 if graph else no_graph)
    if accept is not None:
        speed *= accept / DRAFT_OVERHEAD
    throughput = running * speed * rng.uniform(0.96, 1.04)
    gap = DECODE_LOG_INTERVAL * running * per_step / throughput
    state.since_prefill += 1
    waited = 0.0
    if state.since_prefill >= state.next_prefill:  # new requests joined between two decode lines
        waited = gap * rng.uniform(0.2, 0.8)
        yield _prefill(state, running, queue, usage, clock, waited)
    rate = None if accept is None else say.accept_rate(state.version, accept, NUM_DRAFT_TOKENS)
    stats = say.DecodeStats(running, tokens, usage, accept, rate, graph, throughput, queue)
    yield Record(clock.tick(gap - waited), say.decode_line(state.version, stats), state.tags)
    for _ in range(rng.choice((0, 0, 1))):
        client = f"10.0.{rng.randint(1, 9)}.{rng.randint(2, 250)}"
        yield Record(clock.seconds, say.access_line(client, rng.randint(32768, 60999), "/v1/chat/completions"), None)


def _prefill(state: _Steady, running: int, queue: int, usage: float, clock: _Clock, wait: float) -> Record:
    rng = state.rng
    new_seqs = rng.randint(1, 3)
    new_tokens = sum(rng.randint(250, 1400) for _ in range(new_seqs))
    cached = rng.choice((0, rng.randint(16, new_tokens // 2)))
    now = clock.tick(wait)
    gap, state.last_prefill = max(now - state.last_prefill, 1e-3), now  # SGLang: tokens since the last prefill line
    stats = say.PrefillStats(new_seqs, new_tokens, cached, usage, running, queue, new_tokens / gap, False)
    state.since_prefill, state.next_prefill = 0, rng.randint(2, 4)
    return Record(clock.seconds, say.prefill_line(state.version, stats), state.tags)


def _retraction(state: _Steady, clock: _Clock) -> Record:
    rng = state.rng
    retracted = rng.randint(1, 6)
    old, state.ratio = state.ratio, min(1.0, rng.uniform(0.6, 0.9))
    text = say.retract_line(state.version, retracted, retracted * rng.randint(700, 1500), old, state.ratio)
    state.ratio = rng.uniform(0.25, 0.45)  # it decays again before the next retraction
    return Record(clock.tick(0.05), text, state.tags)


def render(records: Iterator[Record] | list[Record], started: datetime) -> str:
    """Records as log lines: SGLang's `[time tags] ` header on its own records."""
    lines = []
    for record in records:
        if record.tags is None:
            lines.append(record.text)
        else:
            clock = (started + timedelta(seconds=record.seconds)).strftime("%Y-%m-%d %H:%M:%S")
            lines.append(say.header(clock, record.tags) + record.text)
    return "\n".join(lines) + "\n"
