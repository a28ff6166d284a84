"""Launch stages of an SGLang or vLLM server, recognised from its log lines (for `watch`), and what else the
launch log tells while it loads: progress bars, memory figures, the server's URL, and the health lines of a
running server.

SGLang strings checked in the 0.4.10.post2, 0.5.9 and 0.5.23 wheels; not every version prints every stage
(0.5.23 has no "Init torch distributed"), so stages only move forward.  vLLM's stages share the keys (so
`is_later` orders both) but have their own lines: see VLLM_STAGES.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ProgressReading


@dataclass(frozen=True)
class Stage:
    """A launch stage watch shows: its key, label and the line that starts it."""
    key: str
    label: str
    pattern: re.Pattern[str]
    # What usually keeps a launch in this stage when it stops moving (`watch --stall`): shown with the stall.
    stall_advice: str = ""


_DISTRIBUTED_ADVICE = (
    "NCCL/torch distributed init waits for every rank: a rank that did not start, a wrong --nnodes, --node-rank or "
    "--dist-init-addr, a blocked port between nodes, or a wrong NCCL_SOCKET_IFNAME (NCCL_DEBUG=INFO shows which)."
)
_WEIGHTS_ADVICE = (
    "Loading weights: a first launch downloads the model (watch the HF cache directory grow; HF_HUB_OFFLINE=1 "
    "if it is already there), a slow network file system, or a rank that died without a traceback."
)
_CUDA_GRAPH_ADVICE = (
    "CUDA graph capture is slow for large --cuda-graph-max-bs and can hang on a GPU out of memory or an NCCL "
    "collective of a rank that died: try a smaller --cuda-graph-max-bs, or --disable-cuda-graph to confirm."
)
_HTTP_ADVICE = (
    "The HTTP server is up but the warm-up request has not finished: the port may be taken, or the first "
    "forward pass is slow (a large --chunked-prefill-size) or stuck."
)


def _stages(*rows: tuple[str, str, str, str]) -> tuple[Stage, ...]:
    """(key, label, pattern, stall advice) rows as Stages."""
    return tuple(Stage(key, label, re.compile(pattern), advice) for key, label, pattern, advice in rows)


STAGES = _stages(
    ("args", "arguments parsed", r"\bserver_args=", _DISTRIBUTED_ADVICE),
    ("distributed", "initialising torch distributed", r"Init torch distributed begin", _DISTRIBUTED_ADVICE),
    ("weights", "loading weights", r"Load weight begin", _WEIGHTS_ADVICE),
    ("weights-loaded", "weights loaded", r"Load weight end", "Sizing the KV cache: a rank may be stuck in an "
     "NCCL collective of a peer that died."),
    ("kv-cache", "KV cache allocated", r"KV Cache is allocated|Memory pool end", _CUDA_GRAPH_ADVICE),
    # 0.5.23 logs no "Capture cuda graph" line: its capture bar (decode_cuda_graph_runner.py) is the sign.
    ("cuda-graph", "capturing CUDA graphs", r"Capture cuda graph (?:begin|bs|num tokens)|Capturing batches \(",
     _CUDA_GRAPH_ADVICE),
    ("cuda-graph-done", "CUDA graphs captured", r"Capture cuda graph end", _HTTP_ADVICE),
    ("http", "HTTP server starting", r"Uvicorn running on|Application startup complete", _HTTP_ADVICE),
    ("ready", "ready", r"The server is fired up and ready to roll!", ""),
)
_INDEX = {stage.key: index for index, stage in enumerate(STAGES)}

_VLLM_CUDA_GRAPH_ADVICE = (
    "CUDA graph capture (or torch.compile before it) can take minutes on a first launch and hangs on a GPU out of "
    "memory or an NCCL collective of a worker that died: --enforce-eager confirms whether capture is the problem."
)
# vLLM's start-up lines, by the same keys.  Its API server only starts once the engine is ready (no warm-up
# request as in SGLang), so uvicorn's "Application startup complete." is vLLM's "ready".  Wordings:
# "non-default args: …" (entrypoints/utils.py, 0.9+); "Initializing a V1 LLM engine (v…) with config" (v1/engine/
# core.py) or "Initializing an LLM engine (v…)" (V0 llm_engine.py; before 0.2.2 "Initializing an LLM engine with
# config: …", no version); "Starting to load model …" and "Model loading
# took … GiB and … seconds" (worker/gpu_model_runner.py; V0 "Loading model weights took … GB"); "GPU KV cache
# size: N tokens" (v1/core/kv_cache_utils.py; V0 "# GPU blocks: N" / "# cuda blocks: N"); the capture bar
# "Capturing CUDA graph shapes" (0.8-0.10) / "Capturing CUDA graphs (…)" (0.11+), V0 "Capturing cudagraphs for
# decoding"; "Graph capturing finished in N secs"; "Starting vLLM API server [N] on http://…" (api_server.py).
VLLM_STAGES = _stages(
    ("args", "arguments parsed", r"non-default args: |Initializing an? (?:V1 )?LLM engine (?:\(v|with config: )",
     _WEIGHTS_ADVICE),
    ("weights", "loading weights", r"Starting to load model ", _WEIGHTS_ADVICE),
    ("weights-loaded", "weights loaded", r"Model loading took [\d.]+ GiB|Loading model weights took ",
     "Profiling memory and sizing the KV cache: torch.compile runs here on a first launch (minutes), or a "
     "worker is stuck in an NCCL collective of a peer that died."),
    ("kv-cache", "KV cache allocated", r"GPU KV cache size: |# (?:GPU|cuda) blocks: \d+", _VLLM_CUDA_GRAPH_ADVICE),
    ("cuda-graph", "capturing CUDA graphs", r"Capturing CUDA graph|Capturing cudagraphs", _VLLM_CUDA_GRAPH_ADVICE),
    ("cuda-graph-done", "CUDA graphs captured", r"Graph capturing finished in ",
     "The engine is up and the API server is starting: the port may be taken (look for 'Address already in "
     "use')."),
    ("http", "HTTP server starting", r"Starting vLLM API server\b", "The API server is starting: the port may "
     "be taken, or --host names an address this machine does not have."),
    ("ready", "ready", r"Application startup complete", ""),
)
# Cheap pre-check: every stage line contains one of these words.
_WORDS = ("server_args=", "Init torch", "Load weight", "KV Cache", "Memory pool", "Capture cuda", "Capturing batches",
          "Uvicorn", "Application startup", "fired up")
_VLLM_WORDS = ("non-default args", "LLM engine (v", "LLM engine with config", "load model", "Model loading", "model weights took",
               "KV cache size", " blocks: ", "Capturing", "Graph capturing", "vLLM API server", "Application startup")
# Before any stage line: what a launch that is stuck before printing its arguments usually waits for.
START_ADVICE = "Nothing from the server yet: it may still be importing (minutes on a cold file system), or it " \
    "writes its log elsewhere."


def stage_of(text: str, engine: str | None = None) -> Stage | None:
    """The stage `text` announces, in the stage lines of `engine` (SGLang's when unknown)."""
    words, stages = (_VLLM_WORDS, VLLM_STAGES) if engine == "vllm" else (_WORDS, STAGES)
    if not any(word in text for word in words):
        return None
    for stage in stages:
        if stage.pattern.search(text):
            return stage
    return None


def past_its_arguments(text: str) -> bool:
    """Whether a line announces a launch stage past the arguments (distributed set-up, weights, KV cache, CUDA graphs,
    the HTTP server) in either engine's stage lines: the start-up was still moving when it was printed."""
    return any((stage := stage_of(text, engine)) is not None and stage.key != "args" for engine in ("sglang", "vllm"))


def is_later(new: Stage, current: Stage | None) -> bool:
    return current is None or _INDEX[new.key] > _INDEX[current.key]


# -- progress bars ------------------------------------------------------------------------------------------




# SGLang's weight loaders draw tqdm bars with BAR_FORMAT "{desc}: {percentage:3.0f}% Completed | {n_fmt}/{total_fmt}
# [...]" (desc "Loading safetensors checkpoint shards", "Loading pt checkpoint shards", ...); the CUDA graph
# runner uses tqdm's default format with desc f"Capturing batches ({bs=} {avail_mem=:.2f} GB)".
PROGRESS_BARS: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("checkpoint shards", re.compile(
        r"(?P<desc>Loading [\w ]*?checkpoint shards|Loading safetensors[\w ]*?): *(?P<percent>\d{1,3})% Completed "
        r"\| *(?P<done>\d+)/(?P<total>\d+)")),
    ("CUDA graph batches", re.compile(
        r"Capturing batches \((?P<detail>[^)]*)\): *(?P<percent>\d{1,3})%\|[^|]*\| *(?P<done>\d+)/(?P<total>\d+)")),
)


def progress_in(text: str) -> ProgressReading | None:
    """The latest progress bar reading in `text` (a chunk of the log: tqdm redraws a bar with `\\r`, so several
    readings may sit on one line)."""
    if "%" not in text:
        return None
    latest: tuple[int, ProgressReading] | None = None
    for label, pattern in PROGRESS_BARS:
        for match in pattern.finditer(text):
            groups = match.groupdict()
            reading = ProgressReading(label, min(100, int(groups["percent"])), int(groups["done"]), int(groups["total"]),
                               (groups.get("detail") or "").strip())
            if latest is None or match.start() >= latest[0]:
                latest = (match.start(), reading)
    return latest[1] if latest else None


# -- memory figures ----------------------------------------------------------------------------------------

# (name shown, pattern): the last value each one printed wins.  From model_runner.py ("Load weight end. …
# mem usage=… GB", "avail mem=… GB" on several lines) and memory_pool.py ("KV Cache is allocated. #tokens: N,
# K size: … GB, V size: … GB" or "KV size: … GB").
MEMORY_FIGURES: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("weights", re.compile(r"Load weight end\..*?mem usage=(?P<value>[\d.]+ ?GB)")),
    ("KV cache tokens", re.compile(r"KV Cache is allocated\. #tokens: (?P<value>\d+)")),
    ("KV cache", re.compile(r"KV Cache is allocated\..*?(?:\bKV size: (?P<value>[\d.]+ ?GB)|"
                            r"K size: (?P<k>[\d.]+) ?GB, V size: (?P<v>[\d.]+) ?GB)")),
    ("avail mem", re.compile(r"avail(?: mem=|_mem=)(?P<value>[\d.]+ ?GB)")),
)


def memory_in(text: str) -> dict[str, str]:
    """The memory figures a log line reports, by name."""
    if "mem" not in text and "KV Cache" not in text:
        return {}
    found: dict[str, str] = {}
    for name, pattern in MEMORY_FIGURES:
        match = pattern.search(text)
        if match is None:
            continue
        value = match.group("value") if "value" in match.groupdict() else None
        if value is None and match.groupdict().get("k"):
            value = f"{float(match['k']) + float(match['v']):.2f} GB"  # K and V pools together
        if value:
            found[name] = value.replace("GB", " GB").replace("  ", " ")
    return found


# -- the server's address ----------------------------------------------------------------------------------

# uvicorn: "Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)"; SGLang with reuseport workers:
# "Uvicorn running on 0.0.0.0:30000 with 4 SO_REUSEPORT workers".
_UVICORN_URL = compile_lazily(r"Uvicorn running on (?:(?P<scheme>https?)://)?(?P<host>\[[^\]]+\]|[^\s:/]+):(?P<port>\d+)")


def url_in(text: str) -> str | None:
    match = _UVICORN_URL.search(text) if "Uvicorn running" in text else None
    if match is None:
        return None
    return f"{match['scheme'] or 'http'}://{match['host']}:{match['port']}"


def url_from_server_args(pairs: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> str | None:
    """http://HOST:PORT from server_args' host and port (values as printed: `'127.0.0.1'`, `30000`)."""
    values = {name: value.strip("'\"") for name, value in pairs}
    host, port = values.get("host"), values.get("port")
    if not host or not port or not port.isdigit():
        return None
    host = f"[{host}]" if ":" in host else host
    return f"http://{host}:{port}"


# The addresses a server binds to listen on every interface: no one can open them.
_EVERY_ADDRESS = frozenset({"0.0.0.0", "::", ""})


def openable_url(url: str, host: str | None) -> str:
    """The server's URL as a user can open it: where it bound every address (`http://0.0.0.0:30000`), the host
    the watched log is on (a remote log's host, as the user named it), else this machine's 127.0.0.1.  Any other
    address is the server's own and is kept (a loopback address on another host is reachable only there)."""
    scheme, separator, rest = url.partition("://")
    if not separator:
        return url
    address, colon, port = rest.rpartition(":")
    if not colon or not port.isdigit():  # no port (an IPv6 address without one ends in `]`)
        address, port = rest, ""
    if address.strip("[]") not in _EVERY_ADDRESS:
        return url
    name = host or "127.0.0.1"
    name = f"[{name}]" if ":" in name else name
    return f"{scheme}://{name}" + (f":{port}" if port else "")


def ranks_declared(pairs: list[tuple[str, str]] | tuple[tuple[str, str], ...]) -> int | None:
    """How many scheduler processes (ranks) write this log, from server_args: tp × dp × pp over the nodes.
    With DP attention the DP groups are inside the TP group (tp_size counts them)."""
    values = {name: value.strip("'\"") for name, value in pairs}

    def number(name: str) -> int:
        value = values.get(name, "1")
        return int(value) if value.isdigit() and int(value) > 0 else 1

    if "tp_size" not in values:
        return None
    dp = 1 if values.get("enable_dp_attention") == "True" else number("dp_size")
    total = number("tp_size") * dp * number("pp_size")
    return max(1, total // number("nnodes"))


# -- a running server's health (watch --then-follow) -------------------------------------------------------

# scheduler.py: "KV cache pool is full. Retract requests. #retracted_reqs: …"
KV_POOL_FULL = "KV cache pool is full. Retract requests"
# scheduler_metrics_mixin.py (0.5.9) / metrics_reporter.py (0.5.23): "Decode batch[…], #running-req: N, …
# accept len: 1.02, accept rate: 0.34, … gen throughput (token/s): F, #queue-req: N"
DECODE_BATCH = compile_lazily(r"Decode batch\b.*?#running-req: (?P<running>\d+)")
ACCEPT_LEN = compile_lazily(r"(?<!block )\baccept len: (?P<value>\d+(?:\.\d+)?)")
QUEUE_REQ = compile_lazily(r"#queue-req: (?P<value>\d+)")
