"""Simulate a vLLM server run and write it in one release's wording: start-up, then the periodic stats lines.

The stat logger prints one line per interval (vllm_wordings.interval_seconds), so a phase is a number of
intervals.  The numbers follow from a few quantities per phase and agree with each other: generation
throughput is running requests × per-request speed (× accepted tokens per step over the draft's cost when
speculative), a speculative line's drafts are the tokens generated divided by the acceptance length, and
V0's speculative counts are totals since start.  Everything random comes from one `random.Random` seeded by
the fixture's name (run.seed): the output is reproducible.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scripts.health_fixtures import vllm_wordings as say
from scripts.health_fixtures.run import DRAFT_OVERHEAD, SPEED_PER_REQUEST

POOL_TOKENS = 180_000  # KV cache tokens (the GPU blocks × block size)
CONTEXT_TOKENS = 1100  # mean tokens a running request holds
SPEC_TOKENS = {"v0": 4, "v1": 3}  # --num-speculative-tokens (V0) / num_speculative_tokens (V1)


@dataclass(frozen=True, slots=True)
class Launch:
    """What the fixture server runs: the target, speculative decoding (method, draft) and other flags."""

    model: str
    method: str | None = None  # V1 `method` of --speculative-config; V0: "draft_model" (--speculative-model)
    draft: str | None = None
    tp: int = 1
    enforce_eager: bool = False
    flags: tuple[str, ...] = ()  # further words of the command line

    @property
    def speculative(self) -> bool:
        return self.method is not None


def spec_tokens(release: str) -> int:
    return SPEC_TOKENS["v0" if say.is_v0(release) else "v1"]


def command_line(release: str, launch: Launch) -> str:
    """`+ vllm serve …` as `bash -x` shows it: V0 names the draft with --speculative-model and
    --num-speculative-tokens (vLLM v0.6.6.post1 engine/arg_utils.py), V1 with --speculative-config, a JSON
    object (v0.8.5 and later engine/arg_utils.py)."""
    words = ["+ vllm serve", launch.model]
    if launch.tp > 1:
        words += ["--tensor-parallel-size", str(launch.tp)]
    if launch.speculative:
        k = spec_tokens(release)
        if say.is_v0(release):
            words += ["--speculative-model", str(launch.draft), "--num-speculative-tokens", str(k)]
        else:
            model = "" if launch.draft is None else f', "model": "{launch.draft}"'
            words += ["--speculative-config", f"'{{\"method\": \"{launch.method}\"{model}, \"num_speculative_tokens\": {k}}}'"]
    if launch.enforce_eager:
        words.append("--enforce-eager")
    words += [*launch.flags, "--port", str(say.PORT)]
    return " ".join(words)


@dataclass(frozen=True, slots=True)
class Phase:
    """A stretch of the run, in stats lines; quantities ramp linearly from their first to their second value."""

    lines: int
    running: tuple[int, int] = (24, 40)
    queue: tuple[int, int] = (0, 0)
    accept: float | None = None  # mean tokens per speculative step, the bonus token included
    speed: tuple[float, float] = (1.0, 1.0)
    usage: tuple[float, float] | None = None  # KV cache fill; None: from running requests × context
    preemptions: tuple[int, int] = (0, 0)  # requests preempted per interval (drawn in this range)


@dataclass(frozen=True, slots=True)
class Note:
    stage: str  # "start" (before the engine's config), "load" (while it loads), "after:<n>" (after stats line n)
    text: str
    call: str  # the logging call it is (vllm_wordings._CALLS), for its header
    level: str = "WARNING"


@dataclass(frozen=True, slots=True)
class Record:
    seconds: float
    text: str
    call: str | None  # None: not a vLLM record (a script line, uvicorn)
    level: str = "INFO"


@dataclass
class _State:
    release: str
    launch: Launch
    rng: random.Random
    seconds: float = 0.0
    preempted: int = 0  # V0: preemptions so far (a warning at the 1st, 51st, …)
    totals: list[int] = field(default_factory=lambda: [0, 0, 0])  # V0: accepted, drafted, emitted since start


def startup(release: str, launch: Launch, notes: tuple[Note, ...]) -> Iterator[Record]:
    """The launch up to uvicorn's start: the command, the version, the engine's config, uvicorn."""
    yield Record(0.0, command_line(release, launch), None)
    yield Record(3.0, say.version_line(release, launch.model), "version")
    for note in notes:
        if note.stage == "start":
            yield Record(3.2, note.text, note.call, note.level)
    if launch.enforce_eager and say.has_call(release, "eager"):
        yield Record(3.3, say.EAGER_MODE, "eager")
    draft = launch.draft if launch.method != "ngram" else None
    speculative = say.speculative_repr(release, launch.method, draft, spec_tokens(release))
    config = say.EngineConfig(launch.model, speculative, launch.tp, launch.enforce_eager)
    yield Record(5.1, say.engine_line(release, config), "engine")
    for note in notes:
        if note.stage == "load":  # while the engine loads the weights
            yield Record(41.0, note.text, note.call, note.level)
    yield Record(61.0, say.uvicorn_running(), None)


def steady(release: str, launch: Launch, phases: tuple[Phase, ...], notes: tuple[Note, ...],
           rng: random.Random, start: float) -> Iterator[Record]:
    """Stats lines (and what else a serving server prints) phase after phase."""
    state = _State(release, launch, rng, start)
    line = 0
    for phase in phases:
        for index in range(phase.lines):
            share = index / max(phase.lines - 1, 1)
            yield from _interval(state, phase, share)
            line += 1
            for note in notes:
                if note.stage == f"after:{line}":
                    yield Record(state.seconds + 0.4, note.text, note.call, note.level)


def _ramp(pair: tuple[float, float], share: float) -> float:
    return pair[0] + (pair[1] - pair[0]) * share


def _interval(state: _State, phase: Phase, share: float) -> Iterator[Record]:
    rng, release = state.rng, state.release
    interval = say.interval_seconds(release)
    start = state.seconds
    state.seconds += interval + rng.uniform(0.0, 0.04)
    running = max(1, round(_ramp(phase.running, share) * rng.uniform(0.93, 1.07)))
    queue = max(0, round(_ramp(phase.queue, share) + rng.uniform(-2, 2))) if phase.queue != (0, 0) else 0
    if phase.usage is not None:
        usage = min(_ramp(phase.usage, share) * rng.uniform(0.995, 1.005), 1.0)
    else:
        usage = min(running * CONTEXT_TOKENS * rng.uniform(0.9, 1.1) / POOL_TOKENS, 1.0)
    accept = None if phase.accept is None else max(1.0, phase.accept + rng.uniform(-0.06, 0.06))
    if accept is not None and phase.accept is not None and phase.accept <= 1.05:
        accept = phase.accept + rng.uniform(0.0, 0.02)  # a draft that contributes nothing
    speed = SPEED_PER_REQUEST * _ramp(phase.speed, share)
    if accept is not None:
        speed *= accept / DRAFT_OVERHEAD
    throughput = running * speed * rng.uniform(0.96, 1.04)
    preemptions = rng.randint(*phase.preemptions) if phase.preemptions != (0, 0) else 0
    for _ in range(rng.choice((0, 1, 1, 2))):  # requests finishing between two lines
        at = start + rng.uniform(0.0, interval)
        client = f"10.0.{rng.randint(1, 9)}.{rng.randint(2, 250)}"
        yield Record(at, say.access_line(client, rng.randint(32768, 60999), "/v1/chat/completions"), None)
    if say.is_v0(release):
        yield from _v0_preemptions(state, preemptions, start, interval)
    stats = say.Stats(
        prompt_throughput=rng.uniform(150.0, 1800.0), generation_throughput=throughput, running=running,
        waiting=queue, kv_usage=usage, preemptions=preemptions, prefix_hit_rate=rng.uniform(0.05, 0.4),
    )
    yield Record(state.seconds, say.stats_line(release, stats), "stats")
    if accept is not None:
        yield _spec_record(state, throughput * interval, accept, interval)


def _v0_preemptions(state: _State, count: int, start: float, interval: float) -> Iterator[Record]:
    for _ in range(count):
        state.preempted += 1
        if (state.preempted - 1) % say.PREEMPTION_WARNING_EVERY == 0:
            request = f"chatcmpl-{state.rng.getrandbits(128):032x}"
            at = start + state.rng.uniform(0.0, interval)
            yield Record(at, say.preempted_line(request, state.preempted), "preempted", "WARNING")


def _spec_record(state: _State, generated: float, accept: float, interval: float) -> Record:
    k = spec_tokens(state.release)
    drafts = max(1, round(generated / accept))
    per_position = _per_position(accept - 1.0, k)
    if say.is_v0(state.release):
        accepted = round(drafts * (accept - 1.0))
        for index, value in enumerate((accepted, drafts * k, round(generated))):
            state.totals[index] += value
        totals = say.SpecTotals(k, *state.totals)
        return Record(state.seconds, say.spec_line_v0(totals), "spec")
    spec = say.Spec(drafts, k, per_position, interval)
    return Record(state.seconds, say.spec_line(state.release, spec), "spec")


def _per_position(mean_accepted: float, k: int) -> tuple[float, ...]:
    """Acceptance rates by draft position, falling geometrically (r, r², …) and adding up to `mean_accepted`
    (tokens accepted per draft, the bonus token not counted)."""
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if sum(middle ** (i + 1) for i in range(k)) < mean_accepted:
            low = middle
        else:
            high = middle
    return tuple(round(low ** (i + 1), 3) for i in range(k))


def render(release: str, records: list[Record], started: datetime, pids: tuple[int, int] = (4121, 4388)) -> str:
    """Records as log lines, in time order (a record keeps its place among those of the same second)."""
    lines = []
    for record in sorted(records, key=lambda r: r.seconds):
        if record.call is None:
            text = record.text
            if release == "0.11.2" and record.text.startswith("INFO:  "):  # uvicorn writes to the decorated stdout
                text = f"\x1b[1;36m({say.API_SERVER} pid={pids[0]})\x1b[0;0m {text}"
            lines.append(text)
            continue
        clock = (started + timedelta(seconds=record.seconds)).strftime("%m-%d %H:%M:%S")
        pid = pids[1] if say.process_of(record.call) == say.ENGINE_CORE else pids[0]
        lines.append(say.header(release, record.call, record.level, clock, pid) + record.text)
    return "\n".join(lines) + "\n"
