"""Embed real CPython failure text into logs the way SGLang, vLLM, Ray and collectors write them.

A `Case` names one log: which failure (shape and variant), how its lines are prefixed
(`inner` style, then an `outer` wrapper added by whoever collected the log), how many
ranks print it, and whether the bytes carry ANSI colour and CRLF line ends.  `build`
returns the log text and what the parser must find in it.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from logsleuth.tracebacks.raising_statement import imported_type, raised_type, statement_message

# plain: unprefixed, ranks interleaved by CPython's write units (a frame's File, source and
# caret lines are one write); plain_lines: unprefixed, interleaved at any line.
INNER_STYLES = ("plain", "plain_lines", "sglang", "vllm", "vllm_old", "ray", "ray_sglang")
OUTER_STYLES = ("none", "ts", "kts", "quote", "quote_ts")
VARIANTS = ("whole", "trunc_start", "trunc_end", "bare")
TAGS = ("DP", "PP", "ATTN_CP", "MOE_DP", "TP", "EP")
BARE_TYPES = ("Error", "Exception")  # final types a bare line can be recognised by

Block = dict[str, Any]


@dataclass(frozen=True)
class Case:
    shape: str
    variant: str
    inner: str
    outer: str
    ranks: int
    ansi: bool
    crlf: bool
    seed: int

    @property
    def id(self) -> str:
        flags = ("-ansi" if self.ansi else "") + ("-crlf" if self.crlf else "")
        return f"{self.shape}-{self.variant}-{self.inner}-{self.outer}-r{self.ranks}{flags}-{self.seed}"


@dataclass(frozen=True)
class Expected:
    kind: str
    exceptions: list[Block]
    truncated: bool
    count: int  # failures in the log: one per rank
    header: str | None  # text before "Traceback" on the first line, when the style puts one there
    ranks: frozenset[str]  # rank labels (SGLang tags) the failures must carry, when the style has them
    pids: frozenset[int]


# -- variants of one failure ------------------------------------------------------------------------


def _is_frame_line(text: str) -> bool:
    return text.startswith('  File "')


def _first_exception_index(lines: list[str], start: int = 0) -> int:
    for index in range(start, len(lines)):
        if lines[index] and not lines[index][0].isspace() and index > start:
            return index
    return len(lines)


def variant_ok(raw: dict[str, Any], variant: str) -> bool:
    """Which variants make sense for a failure (only tracebacks can be cut, only some final lines stand alone)."""
    if variant == "whole":
        return True
    if raw["kind"] != "traceback":
        return False
    lines = raw["text"].splitlines()
    blocks = raw["exceptions"]
    if variant == "trunc_start":
        return lines[0].startswith("Traceback") and not blocks[0]["members"] and len(blocks[0]["frames"]) >= 2
    if variant == "trunc_end":
        last = blocks[-1]
        return not last["members"] and not any(b["members"] for b in blocks) and len(last["frames"]) >= 1
    if variant == "bare":
        last = blocks[-1]
        return len(blocks) == 1 and not last["members"] and last["type"].endswith(BARE_TYPES)
    return False


def derive(raw: dict[str, Any], variant: str, rng: random.Random) -> tuple[list[str], list[Block], bool]:
    """The lines one rank prints, the expected blocks, and whether the failure is truncated."""
    lines = raw["text"].splitlines()
    blocks = [dict(block) for block in raw["exceptions"]]
    if variant == "whole":
        return lines, blocks, False
    if variant == "trunc_start":
        # The excerpt starts at the k-th `File` line of the oldest traceback.
        end = _first_exception_index(lines, 1)
        frame_lines = [i for i in range(end) if _is_frame_line(lines[i])]
        k = rng.randrange(1, len(frame_lines))
        blocks[0] = {**blocks[0], "frames": blocks[0]["frames"][k:]}
        return lines[frame_lines[k] :], blocks, True
    if variant == "trunc_end":
        # The log ends inside the newest traceback, after its j-th `File` line (and maybe its source line).
        start = max(i for i, text in enumerate(lines) if text.startswith("Traceback (most recent call last):"))
        frame_lines = [i for i in range(start, len(lines)) if _is_frame_line(lines[i])]
        j = rng.randrange(len(frame_lines))
        cut = frame_lines[j] + 1
        if cut < len(lines) and lines[cut].startswith("    ") and rng.random() < 0.5:
            cut += 1
        frames = [list(frame) for frame in blocks[-1]["frames"][: j + 1]]
        frames[-1][3] = 0  # a `[Previous line repeated]` line after the cut is gone
        # a cut right after the raising statement (`raise X(…)`, `assert …`): that statement names the type, and its
        # message when it spells it as one plain literal; an import statement names ImportError
        # (logsleuth/tracebacks/raising_statement.py)
        statement = lines[cut - 1] if cut - 1 > frame_lines[j] and j == len(frame_lines) - 1 else ""
        raised = raised_type(statement)
        kind = raised or imported_type(statement) or ""
        message = statement_message(statement) if raised else ""
        blocks[-1] = {**blocks[-1], "type": kind, "message": message, "frames": frames}
        return lines[:cut], blocks, True
    if variant == "bare":
        start = _first_exception_index(lines, 1) if lines[0].startswith("Traceback") else 0
        last = blocks[-1]
        return lines[start:], [{**last, "frames": [], "relation": None}], False
    raise ValueError(variant)


# -- noise ------------------------------------------------------------------------------------------

_SGLANG_NOISE = (
    "Load weight begin. avail mem=78.84 GB",
    "Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=63.61 GB, mem usage=15.23 GB.",
    "KV Cache is allocated. #tokens: 412345, K size: 23.56 GB, V size: 23.56 GB",
    "Decode batch. #running-req: 3, #token: 1234, token usage: 0.05, gen throughput (token/s): 123.45, #queue-req: 0,",
    "Prefill batch. #new-seq: 1, #new-token: 512, #cached-token: 0, token usage: 0.00, #running-req: 0, #queue-req: 0,",
    "Capture cuda graph begin. This can take up to several minutes.",
    "Init torch distributed begin.",
)
_PLAIN_NOISE_BEFORE = (
    "Loading safetensors checkpoint shards:   0% Completed | 0/2 [00:00<?, ?it/s]\r"
    "Loading safetensors checkpoint shards:  50% Completed | 1/2 [00:01<00:01,  1.20s/it]",
    "Capturing batches (bs=4 avail_mem=20.13 GB): 100%|##########| 3/3 [00:02<00:00,  1.31it/s]",
    "WARNING: The model has a chat template; using it.",
)
_RECORD_NOISE = (
    'INFO:     127.0.0.1:40178 - "GET /v1/models HTTP/1.1" 200 OK',
    "INFO:     Shutting down",
    "WARNING 03-25 21:13:55 [config.py:120] Casting torch.bfloat16 to torch.float16.",
    "2025-04-23 21:31:45,123 - INFO - server stopped",
)
_VLLM_NOISE = (
    ("INFO", "gpu_model_runner.py:1200", "Loading weights took 3.21 seconds"),
    ("INFO", "api_server.py:1024", "Started server process [100]"),
    ("WARNING", "config.py:120", "Casting torch.bfloat16 to torch.float16."),
    ("INFO", "core.py:58", "Initializing a V1 LLM engine (v0.8.2) with config: model='m'"),
)


def _sglang_header(rng: random.Random, rank: int, seconds: int) -> str:
    tags = [tag for tag in TAGS if tag != "TP" and rng.random() < 0.3]
    chosen = [*tags, "TP"]
    rng.shuffle(chosen)
    values = " ".join(f"{tag}{rank if tag == 'TP' else rng.randrange(4)}" for tag in chosen)
    millis = f".{rng.randrange(1000):03d}" if rng.random() < 0.3 else ""
    return f"[2025-04-23 21:31:{seconds % 60:02d}{millis} {values}] "


@dataclass
class _Rank:
    """One process printing the failure."""

    rank: int
    pid: int
    prefix: str  # what every line of this process carries (vLLM/Ray), "" otherwise
    lines: list[str]


def _process_prefix(case: Case, rank: int, pid: int, rng: random.Random) -> str:
    if case.inner in ("vllm", "vllm_old"):
        name = rng.choice((f"VllmWorker rank={rank}", "VllmWorkerProcess", f"Worker_TP{rank}", f"EngineCore_DP{rank}"))
        where = "[multiproc_executor.py:374]" if case.inner == "vllm" else "multiproc_executor.py:374]"
        process = f"({name} pid={pid})"
        if case.ansi:
            process = f"\x1b[1;36m{process}\x1b[0;0m"
        return f"{process} ERROR 03-25 21:13:53 {where} "
    if case.inner == "ray":
        return f"(RayWorkerWrapper pid={pid}, ip=10.0.0.{rank + 1}) "
    if case.inner == "ray_sglang":
        return f"(WorkerDict pid={pid}) "
    return ""


def _noise(case: Case, rng: random.Random, after: bool) -> str:
    """A log line that is no failure, in the style of the log.  Lines printed after a
    failure are log records (a bare continuation line would extend its message)."""
    second = rng.randrange(60)
    if case.inner in ("sglang", "ray_sglang"):
        line = _sglang_header(rng, rng.randrange(8), second) + rng.choice(_SGLANG_NOISE)
        return f"(WorkerDict pid={rng.randrange(100, 200)}) {line}" if case.inner == "ray_sglang" else line
    if case.inner in ("vllm", "vllm_old", "ray"):
        level, where, text = rng.choice(_VLLM_NOISE)
        where = f"[{where}]" if case.inner != "vllm_old" else f"{where}]"
        name = rng.choice(("APIServer pid=100", "EngineCore_DP0 pid=101", "RayWorkerWrapper pid=102, ip=10.0.0.9"))
        return f"({name}) {level} 03-25 21:13:{second:02d} {where} {text}"
    return rng.choice(_RECORD_NOISE if after else _PLAIN_NOISE_BEFORE + _RECORD_NOISE)  # plain, plain_lines


# -- assembling the log -----------------------------------------------------------------------------


def _raw_output(kind: str, case: Case) -> bool:
    """faulthandler and argparse write straight to stderr, past SGLang's and vLLM's loggers."""
    return kind in ("fatal", "usage") and case.inner not in ("ray", "plain", "plain_lines")


def _rank_lines(case: Case, kind: str, lines: list[str], rank: int, rng: random.Random) -> tuple[list[str], str | None]:
    """The failure as one rank prints it, and the header expected before `Traceback`."""
    if _raw_output(kind, case):
        return list(lines), None
    sglang = case.inner in ("sglang", "ray_sglang")
    if sglang and case.variant != "trunc_start":
        header = _sglang_header(rng, rank, 41)
        if lines[0].lstrip().startswith(("Traceback", "+ Exception Group")):
            return [f"{header}Scheduler hit an exception: {lines[0]}", *lines[1:]], "Scheduler hit an exception:"
        return [header + lines[0], *lines[1:]], None
    if case.inner in ("vllm", "vllm_old") and lines[0].startswith("Traceback"):
        return ["WorkerProc hit an exception.", *lines], None
    return list(lines), None


_SEPARATORS = (
    "The above exception was the direct cause of the following exception:",
    "During handling of the above exception, another exception occurred:",
)


def write_units(lines: list[str]) -> list[list[str]]:
    """Group lines the way CPython writes them: `traceback.print_exception` writes each frame
    (File line, source line, caret lines; inside group margins too) as one string, the
    exception line with its whole multi-line message as one, and a chain separator with the
    blank lines around it as one."""
    units: list[list[str]] = []
    in_message = False
    for index, text in enumerate(lines):
        body = text.lstrip(" ")
        body = body[1:] if body.startswith("|") and text.startswith(" ") else text
        following = lines[index + 1] if index + 1 < len(lines) else ""
        if text in _SEPARATORS or (not text and following in _SEPARATORS):
            joins = bool(units) and units[-1][-1] == "" and len(units[-1]) == 1 and text in _SEPARATORS
            joins = joins or (bool(units) and units[-1][-1] in _SEPARATORS)
            in_message = False
        elif not text and units and units[-1][-1] in _SEPARATORS:
            joins = True  # the blank line after a separator
        elif in_message and not text.startswith((" ", "Traceback")):
            joins = True  # more lines of the message
        else:
            joins = bool(units) and body.startswith("    ") and not body.lstrip().startswith("File ")
            in_message = bool(text) and not text.startswith((" ", "Traceback"))
        if joins:
            units[-1].append(text)
        else:
            units.append([text])
    return units


def _interleave(streams: list[list[str]], rng: random.Random, noise: list[str] | None = None,
                units: bool = False) -> list[str]:
    """Merge keeping each stream's order; a stream writes 1-3 lines (or write units) at a time."""
    queues = [list(reversed(write_units(s) if units else [[t] for t in s])) for s in streams if s]
    extra = list(noise or ())
    merged: list[str] = []
    while queues:
        if extra and rng.random() < 0.1:
            merged.append(extra.pop())
        queue = rng.choice(queues)
        for _ in range(rng.randint(1, 3)):
            if queue:
                merged.extend(queue.pop())
        queues = [q for q in queues if q]
    return merged + extra


def _outer(case: Case, lines: list[str], rng: random.Random) -> list[str]:
    out: list[str] = []
    for index, text in enumerate(lines):
        if case.outer in ("ts", "quote_ts"):
            text = f"[2025-11-06T02:10:{index % 60:02d}.{rng.randrange(1000):03d}Z] {text}"
        elif case.outer == "kts":
            text = f"2025-11-06T02:10:{index % 60:02d}.{rng.randrange(10**9):09d}Z {text}"
        if case.outer in ("quote", "quote_ts"):
            text = f"> {text}" if text else ">"
        out.append(text)
    return out


def _colour(lines: list[str], rng: random.Random) -> list[str]:
    out = []
    for text in lines:
        roll = rng.random()
        if roll < 0.2:
            text = f"\x1b[31m{text}\x1b[0m"
        elif roll < 0.25:
            text = f"\x1b]8;;https://example.com\x07{text}\x1b]8;;\x1b\\"
        elif roll < 0.3:
            text = f"\x1b[2K{text}\x1b[?25h"
        out.append(text)
    return out


def build(case: Case, raw: dict[str, Any]) -> tuple[str, Expected]:
    rng = random.Random(case.seed)
    kind = raw["kind"]
    lines, blocks, truncated = derive(raw, case.variant, rng)
    ranks: list[_Rank] = []
    header: str | None = None
    rank_labels: set[str] = set()
    for rank in rng.sample(range(8), case.ranks):
        pid = 1000 + rank * 7 + rng.randrange(5)
        own, header = _rank_lines(case, kind, lines, rank, rng)
        if own and own[0].startswith("[2025-04-23"):
            rank_labels.add(own[0].split("]", 1)[0])
        prefix = _process_prefix(case, rank, pid, rng) if not _raw_output(kind, case) else ""
        ranks.append(_Rank(rank, pid, prefix, [prefix + text for text in own]))

    before = [_noise(case, rng, after=False) for _ in range(rng.randint(1, 4))]
    after = [] if truncated and case.variant == "trunc_end" else [_noise(case, rng, after=True) for _ in range(3)]
    body: list[str] = []
    prefixed = any(r.prefix for r in ranks)
    if prefixed:
        # Every line names its process: any interleaving, with other processes' lines in between.
        body = _interleave([r.lines for r in ranks], rng, [_noise(case, rng, True) for _ in range(3)])
    elif case.inner == "sglang" and not _raw_output(kind, case):
        # One log record per rank, each whole; other records between them.
        for r in ranks:
            body.extend(r.lines)
            if rng.random() < 0.5 and r is not ranks[-1]:
                body.append(_noise(case, rng, after=True))
    elif kind == "fatal" or kind == "usage":
        for r in ranks:  # processes crash one after another; dumps do not interleave
            body.extend(r.lines)
    else:
        # Identical tracebacks on one stderr: by write units (what CPython does), or at any line.
        body = _interleave([r.lines for r in ranks], rng, units=case.inner == "plain")
    log_lines = _outer(case, before + body + after, rng)
    if case.ansi:
        log_lines = _colour(log_lines, rng)
    text = ("\r\n" if case.crlf else "\n").join(log_lines)
    if not truncated or case.variant != "trunc_end" or rng.random() < 0.5:
        text += "\r\n" if case.crlf else "\n"
    pids = frozenset(r.pid for r in ranks) if prefixed else frozenset()
    expected = Expected(
        kind="bare" if case.variant == "bare" else kind,
        exceptions=blocks,
        truncated=truncated,
        count=len(ranks),
        header=header if case.variant != "trunc_start" else None,
        ranks=frozenset(label.split(" ", 2)[-1] for label in rank_labels),
        pids=pids,
    )
    return text, expected


def generate_cases(shapes: dict[str, dict[str, Any]], seed: int, per_combination: int) -> list[Case]:
    """Every shape x variant x inner style, each `per_combination` times with random wrappers."""
    rng = random.Random(seed)
    cases: list[Case] = []
    for shape in sorted(shapes):
        raw = shapes[shape]
        for variant in VARIANTS:
            if not variant_ok(raw, variant):
                continue
            for inner in INNER_STYLES:
                for _ in range(per_combination):
                    ranks = rng.choice((1, 1, 2, 3, 4, 8))
                    # A cut excerpt of unprefixed or record-prefixed ranks cuts one rank's traceback,
                    # not all of them at the same line (ranks on per-line prefixes may all be cut).
                    if raw["kind"] == "usage" or (inner in ("sglang", "plain", "plain_lines") and variant.startswith("trunc")):
                        ranks = 1
                    cases.append(
                        Case(
                            shape=shape,
                            variant=variant,
                            inner=inner,
                            outer=rng.choice(OUTER_STYLES),
                            ranks=ranks,
                            ansi=rng.random() < 0.3,
                            crlf=rng.random() < 0.25,
                            seed=rng.randrange(10**6),
                        )
                    )
    return cases
