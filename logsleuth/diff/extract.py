"""A log's launches, read once from a `Source`: what each one logged about itself.

One pass over the normalized lines (the same normalizer and `LaunchTracker` as `diagnose`): the tracker finds
where each launch starts (its command or `server_args=` line); the lines that matter to a diff are kept as facts
with their offsets and handed to the launch they belong to afterwards.

Which launch a fact belongs to:
- the server's own lines (stages, memory, the model it loaded, `environment defaults:`) belong to the launch
  whose span holds them;
- what a launch script prints before it starts the server (`export NAME=value`, `NAME=value` lines of an env
  dump, the engine's version) belongs to the next launch after it, or to the last launch when none follows.
"""

from __future__ import annotations

import bisect
import shlex
from dataclasses import dataclass, field
from datetime import datetime
from typing import cast

from logsleuth.errors import UsageError
from logsleuth.ingest.launch import LaunchTracker
from logsleuth.ingest.normalize import normalize_chunks
from logsleuth.ingest.stages import memory_in, stage_of
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LogLine
from logsleuth.sources.base import Source

# `export NAME=value` (a script, `bash -x` prints `+ export …`), `declare -x NAME="value"` (bash's `export -p`).
_EXPORT = compile_lazily(r"^\+*\s*(?:export|declare -x)\s+(?P<name>[A-Za-z_][A-Za-z0-9_]*)=(?P<value>.*)$")
# A line of an environment dump (`env`, `printenv`) for the variables that steer an inference server; any other
# `NAME=value` line is too common in logs to be read as the environment.
_ENV_LINE = compile_lazily(
    r"^(?P<name>(?:SGLANG|SGL|VLLM|CUDA|NCCL|HF|HUGGING_FACE|TRANSFORMERS|TORCH|PYTORCH|NVIDIA|OMP|GLOO|TRITON|"
    r"FLASHINFER|MASTER|WORLD|LOCAL|NVSHMEM|UCX|MC|TOKENIZERS)_[A-Z0-9_]*|WORLD_SIZE|RANK|LOCAL_RANK)=(?P<value>\S.*)?$"
)
# SGLang 0.5.23 (arg_groups/muse_spark_hook.py): "<Arch> environment defaults: NAME=value NAME=value".
_ENGINE_ENV = compile_lazily(r"\benvironment defaults: (?P<pairs>(?:[A-Z_][A-Z0-9_]*=\S*\s*)+)$")
# model_runner.py "Load weight end. elapsed=…, type=LlamaForCausalLM, dtype=torch.bfloat16, …" (0.5.23 drops
# dtype); the scheduler's "max_total_num_tokens=…, context_len=4096, …"; memory_pool.py "KV Cache is allocated.
# dtype: torch.float8_e4m3fn, …" (0.5.23).
_LOADED_TYPE = compile_lazily(r"Load weight end\..*?\btype=(?P<value>[\w.]+)")
_LOADED_DTYPE = compile_lazily(r"Load weight end\..*?\bdtype=(?P<value>[\w.]+)")
_CONTEXT_LEN = compile_lazily(r"\bmax_total_num_tokens=\d+,.*?\bcontext_len=(?P<value>\d+)")
_KV_DTYPE = compile_lazily(r"KV Cache is allocated\. dtype: (?P<value>[\w.]+)")
_FIRST_AVAIL = compile_lazily(r"Load weight begin\. avail mem=(?P<value>[\d.]+ ?GB)")


@dataclass
class Launch:
    """What one launch logged.  Times are the log's own (`2026-05-04 10:00:03`)."""

    number: int  # 1-based
    start: int  # byte offset of its first line (its command or server_args line)
    end: int  # where the next launch starts, or the end of the log
    command: str | None = None
    server_args: str | None = None
    engine: str | None = None
    version: str | None = None
    version_hint: str | None = None  # guessed from how it logs (0.5.23 logs a dict), when no version line
    env: dict[str, tuple[str, str]] = field(default_factory=dict)  # name -> (value, where the log said it)
    stage_times: dict[str, datetime] = field(default_factory=dict)  # stage key -> its first line's time
    stages: list[str] = field(default_factory=list)  # stage keys in the order reached
    model: dict[str, str] = field(default_factory=dict)  # architecture, dtype, ... as the log reports them
    memory: dict[str, str] = field(default_factory=dict)  # name -> "12.80 GB"
    ranks: set[str] = field(default_factory=set)  # TP0, TP1, ... that logged


@dataclass
class _Fact:
    """One fact line of a launch (version, command, server_args...) and where it stood."""
    offset: int
    preamble: bool  # printed before the server started: belongs to the next launch
    kind: str
    name: str
    value: object


@dataclass
class ReadLaunches:
    """A log's launches, read once, and the size read."""
    launches: list[Launch]
    size: int


def _time_of(line: LogLine) -> datetime | None:
    stamp = line.meta.timestamp
    if not stamp or not stamp[:4].isdigit():
        return None
    try:
        return datetime.fromisoformat(stamp.replace(",", ".").replace("Z", "")[:26]).replace(tzinfo=None)
    except ValueError:
        return None


def _unquoted(value: str) -> str:
    try:
        words = shlex.split(value)
    except ValueError:
        return value.strip("'\"")
    return words[0] if len(words) == 1 else value


def _version_in(line: LogLine) -> tuple[str, str] | None:
    """(engine, version) a line names, as the launch tracker reads it (`sglang==0.5.9`, `sglang version 0.5.9`)."""
    if ("sglang" not in line.text and "vllm" not in line.text) or not any(ch.isdigit() for ch in line.text):
        return None
    tracker = LaunchTracker()
    tracker.observe(line._replace(text=line.text[:2048]))
    return (tracker.engine or "sglang", tracker.engine_version) if tracker.engine_version else None


def _facts_of(line: LogLine) -> list[_Fact]:
    text, offset = line.text, line.offset
    facts: list[_Fact] = []
    if "=" in text:
        if (m := _EXPORT.match(text)) or (m := _ENV_LINE.match(text)):
            facts.append(_Fact(offset, True, "env", m["name"], (_unquoted(m["value"] or ""), "export or env line")))
        elif "environment defaults:" in text and (m := _ENGINE_ENV.search(text)):
            for pair in m["pairs"].split():
                name, _, value = pair.partition("=")
                facts.append(_Fact(offset, False, "env", name, (value, "set by SGLang")))
    if (found := _version_in(line)) is not None:
        facts.append(_Fact(offset, True, "version", found[0], found[1]))
    if (stage := stage_of(text)) is not None:
        facts.append(_Fact(offset, False, "stage", stage.key, _time_of(line)))
    for name, pattern in (("architecture", _LOADED_TYPE), ("dtype", _LOADED_DTYPE), ("context length", _CONTEXT_LEN),
                          ("KV cache dtype", _KV_DTYPE)):
        if (m := pattern.search(text)) is not None:
            facts.append(_Fact(offset, False, "model", name, m["value"]))
    if "mem" in text or "KV Cache" in text:
        figures = memory_in(text)
        if (m := _FIRST_AVAIL.search(text)) is not None:
            figures["free at start"] = m["value"].replace("GB", " GB").replace("  ", " ")
        figures.pop("avail mem", None)  # printed at every step: only the one before loading says what was free
        facts.extend(_Fact(offset, False, "memory", name, value) for name, value in figures.items())
    for tag, number in line.meta.ranks:
        if tag == "TP":
            facts.append(_Fact(offset, False, "rank", f"TP{number}", None))
    return facts


def read_launches(source: Source) -> ReadLaunches:
    """Every launch of the source, oldest first (an empty list when it holds none)."""
    size = source.size()
    tracker = LaunchTracker()
    facts: list[_Fact] = []
    for line in normalize_chunks(source.read_range(0, size), host=source.host):
        tracker.observe(line)
        facts.extend(_facts_of(line))
    starts = list(tracker.markers)
    if not starts and any(fact.kind in ("stage", "version") for fact in facts):
        starts = [0]  # a log cut before its command: one launch
    launches = [Launch(index + 1, start, starts[index + 1] if index + 1 < len(starts) else size)
                for index, start in enumerate(starts)]
    for launch in launches:
        logged = tracker.launches.get(launch.start)
        if logged is not None:
            launch.command, launch.server_args = logged.command, logged.server_args
        if launch.server_args and launch.server_args.startswith("{"):
            launch.version_hint = "0.5.23"  # as LaunchTracker reads a dict dump
    for fact in facts:
        if launches:
            _add(_owner(launches, starts, fact), fact)
    return ReadLaunches(launches, size)


def _owner(launches: list[Launch], starts: list[int], fact: _Fact) -> Launch:
    if fact.preamble:
        index = bisect.bisect_right(starts, fact.offset)  # the first launch starting after it
        return launches[min(index, len(launches) - 1)]
    index = bisect.bisect_right(starts, fact.offset) - 1
    return launches[max(index, 0)]


def _add(launch: Launch, fact: _Fact) -> None:
    if fact.kind == "env":
        value, origin = cast("tuple[str, str]", fact.value)
        launch.env[fact.name] = (value, origin)
    elif fact.kind == "version":
        launch.engine, launch.version = fact.name, str(fact.value)
    elif fact.kind == "stage":
        if fact.name not in launch.stages:
            launch.stages.append(fact.name)
            if isinstance(fact.value, datetime):
                launch.stage_times[fact.name] = fact.value
    elif fact.kind == "model":
        launch.model.setdefault(fact.name, str(fact.value))
    elif fact.kind == "memory":
        launch.memory.setdefault(fact.name, str(fact.value))
    elif fact.kind == "rank":
        launch.ranks.add(fact.name)


def pick(launches: list[Launch], number: int, side: str, source: str) -> Launch:
    """Launch `number` (1 = the first in the log, -1 = the latest)."""
    count = len(launches)
    if count == 0:
        raise UsageError(f"{side} ({source}) holds no launch: no launch command, server_args, version or stage line")
    if number == 0 or not -count <= number <= count:
        span = "1" if count == 1 else f"1..{count}, or -1..-{count}"
        raise UsageError(f"--launch {number}: {side} ({source}) has {count} launch{'es' if count != 1 else ''} ({span})")
    return launches[number - 1 if number > 0 else count + number]
