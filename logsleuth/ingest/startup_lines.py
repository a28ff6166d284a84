"""The lines that say where a server's start-up is: its readiness line, the engine's first output, the API server's
polls for its engine cores.  A leaf module: the launch tracker (launch.py) and the traceback scanner (through
tracebacks/grammar.py and startup_waits.py) both read them."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import LineMeta

# The line a server prints once it serves (SGLang's; uvicorn's, which is vLLM's): the start-up is over.  The scanner
# reads it too (errors logged before it were survived).
READY_LINE = compile_lazily(r"The server is fired up and ready to roll!|Application startup complete")

# Lines an engine prints only once it is up, when no server prints a readiness line after them (an offline `LLM()` or
# `Engine()` run): vLLM's generate progress bar (entrypoints/llm.py `_run_engine`, tqdm desc "Processed prompts"), the
# engine core's `init engine (profile, create kv cache, warmup model) took N seconds` (v1/engine/core.py), and the
# `Generated text:` the offline examples of both engines print (vllm examples/offline_inference, sglang
# examples/runtime/engine).  With enforce_eager or --disable-cuda-graph the KV cache is the last start-up stage, and
# these follow it at once.
ENGINE_UP_WORDS = ("Processed prompts", "Generated text", "init engine (")
ENGINE_UP_LINE = compile_lazily(
    r"\bProcessed prompts: |\bGenerated text: |\binit engine \(profile, create kv cache, warmup model\) took "
)

# vLLM's API server polling for its engine cores' handshake (v1/engine/utils.py wait_for_engine_startup, 0.9 to 0.33;
# v1/utils.py before): one DEBUG line per 10-second poll that saw no event (startup_waits.py reads a run of them).
WAITING_WORDS = "core engine proc"
WAITING_LINE = compile_lazily(
    r"^(?:.{0,300}?\s)?(?P<msg>Waiting for (?:(?P<local>\d{1,5}) local, (?P<remote>\d{1,5}) remote |\d{1,5} )"
    r"core engine proc\(s\) to (?P<what>start|connect)\b[^\n]{0,300})$"
)
MAX_WAITING_LINE = 1000  # longer lines are not the poll's line (its prefix and message are short)


def engine_up(text: str) -> bool:
    """Whether a line is one an engine prints only once it is up (ENGINE_UP_LINE)."""
    return any(word in text for word in ENGINE_UP_WORDS) and ENGINE_UP_LINE.search(text) is not None


def is_waiting_line(text: str) -> bool:
    """Whether a line is the API server's poll for its engine cores (WAITING_LINE)."""
    return WAITING_WORDS in text and len(text) <= MAX_WAITING_LINE and WAITING_LINE.match(text) is not None


# -- the start-up's other lines (ingest/startup_trail.py) ------------------------------------------------------------

# Lines an engine prints only once it serves: SGLang's batch lines (scheduler_metrics_mixin.py "Prefill batch. …",
# "Decode batch. …"; 0.1.x's router/model_rpc.py "new fill batch. #seq: …" and "#running-req: …, gen throughput
# (token/s): …"), vLLM's metrics line (v1/metrics/loggers.py, V0 engine/metrics.py "Avg prompt throughput: …") and its
# per-request records (entrypoints/logger.py "Received request %s: …", V0 engine/async_llm_engine.py "Added request
# %s." and "Finished request %s."), and uvicorn's access lines (ACCESS_LINE).
SERVING_WORDS = ("Prefill batch", "Decode batch", "new fill batch", "gen throughput (token/s)", "Avg prompt throughput",
                 "Received request ", "Added request ", "Finished request ")
# uvicorn's access line for any answered request (`INFO:     127.0.0.1:40312 - "GET /health HTTP/1.1" 200 OK`): the
# HTTP server runs, whatever the route (SGLang's own warm-up `GET /get_model_info` comes before its readiness line).
ACCESS_LINE = compile_lazily(r'"(?:GET|POST|PUT|DELETE|PATCH|HEAD|OPTIONS) /[^\s"]{0,300} HTTP/\d(?:\.\d)?" \d{3}\b')

NCCL_INIT = "NCCL init"
DOWNLOADING = "downloading"
WAITING_READY = "waiting for the engine to signal ready"
WAITING_CORES = "waiting for the engine core processes to start"
WAITING_STAGES = frozenset({WAITING_READY, WAITING_CORES})
CONFIGURING = "configuring the engine"
LOADING = "loading weights"
# The stage a start-up's progress bar shows (ingest/stages.py PROGRESS_BARS labels).
PROGRESS_STAGES = {"checkpoint shards": LOADING, "CUDA graph batches": "capturing CUDA graphs"}

# Per-rank distributed set-up, both engines (SGLang copied vLLM's communicators): pynccl_wrapper.py "Found nccl from
# library %s", pynccl.py "vLLM is using nccl==%s" ("sglang is using nccl==%s"), custom_all_reduce.py "Custom allreduce
# is disabled because …", shm_broadcast.py "vLLM message queue communication handle: %s" ("Message queue communication
# handle: …" in SGLang); NCCL's own NCCL_DEBUG=INFO lines ("host:pid:tid [dev] NCCL INFO …", "NCCL version 2.x").
_NCCL_INIT_WORDS = ("Found nccl from library", "is using nccl==", "Custom allreduce is disabled",
                    "essage queue communication handle", " NCCL INFO ", "NCCL version ")
# A download's tqdm bar: huggingface_hub's "Downloading (…)config.json: 100%|…" (before 0.17), "Fetching 4 files:
# 50%|…" and the file's own name ("model-00001-of-00004.safetensors: 12%|…", 0.17 and later).
_DOWNLOAD_BAR = compile_lazily(
    r"^\s*(?:Downloading\b[^:]{0,120}|Fetching \d+ files|[\w./()\u2026-]{1,200}\.(?:safetensors|bin|json|model|gguf|pt|txt"
    r"|py|tiktoken)): {0,4}\d{1,3}%\|")
# A wrapper's or front-end's wait for the engine it started: NVIDIA Dynamo's "Waiting for sglang0 to signal that it's
# ready" (dynamo-run's embedded engine, ai-dynamo/dynamo#480), "Waiting for the server to be ready" and the like.
_WAIT_READY = compile_lazily(
    r"\b[Ww]aiting for (?:the )?[\w.-]{1,40}(?: (?:engine|server|worker|process|model))? to (?:signal (?:that )?"
    r"(?:it'?s |it is )?|be(?:come)? )?ready\b")
# glog: "WARNING: Logging before InitGoogleLogging() is written to STDERR" (glog src/logging.cc), printed at a native
# library's first log line, which is its set-up; its INFO and WARNING lines ("I0924 06:55:08.151127   204 file.cpp:76]").
_GLOG_BEFORE_INIT = "Logging before InitGoogleLogging()"
_GLOG_LINE = compile_lazily(r"^[IW]\d{4} \d\d:\d\d:\d\d\.\d{6} +\d+ [\w.-]{1,80}:\d+\] ")
# vLLM's records name the file that logged them (LineMeta.logged_from): the files that log only while the engine is
# set up, by the stage they show (not shm_broadcast.py: its "No available shared memory broadcast block found" warns of
# workers hanging while the server serves; its set-up line is in _NCCL_INIT_WORDS) ("" keeps the stage known): engine config (config.py, arg_utils.py, cli_args.py),
# distributed set-up, weight download and loading, the attention backend's choice, the platform's detection.
_STARTUP_FILES = {
    "config.py": CONFIGURING, "arg_utils.py": CONFIGURING, "cli_args.py": CONFIGURING,
    "parallel_state.py": NCCL_INIT, "pynccl.py": NCCL_INIT, "pynccl_wrapper.py": NCCL_INIT,
    "custom_all_reduce.py": NCCL_INIT, "custom_all_reduce_utils.py": NCCL_INIT,
    "weight_utils.py": LOADING, "default_loader.py": LOADING, "loader.py": LOADING,
    "selector.py": "", "cuda.py": "",
}


def serves(text: str) -> bool:
    """Whether a line is one an engine prints only once it serves (SERVING_WORDS, ACCESS_LINE)."""
    return any(word in text for word in SERVING_WORDS) or (" HTTP/" in text and ACCESS_LINE.search(text) is not None)


# The platform vLLM detected (vllm/platforms/__init__.py "Automatically detected platform %s."): "cuda", "rocm", "tpu",
# "xpu", "hpu", "cpu", "neuron", or an out-of-tree plugin's name.
PLATFORM_LINE = compile_lazily(r"\bAutomatically detected platform (?P<name>\w[\w-]{0,39})")
# The platforms whose collectives are NCCL's (RCCL on ROCm honours NCCL_DEBUG too) and that capture CUDA/HIP graphs.
NCCL_PLATFORMS = frozenset({"cuda", "rocm"})


# A parallel degree in a settings dump (vLLM's `non-default args: {…, 'tensor_parallel_size': 4}`, its config's
# `tensor_parallel_size=4`, SGLang's `server_args=ServerArgs(…, tp_size=2, …)`).
_DEGREE = compile_lazily(r"""\b(?:tensor_parallel_size|pipeline_parallel_size|tp_size|pp_size)['"]?\s{0,3}[:=]\s{0,3}(\d{1,4})\b""")


def parallel_degrees(text: str) -> list[int]:
    """The tensor- and pipeline-parallel degrees a settings dump shows."""
    return [int(found) for found in _DEGREE.findall(text)] if "parallel_size" in text or "p_size" in text else []


def platform_named(text: str) -> str | None:
    """The platform a line says the engine detected (PLATFORM_LINE), or None."""
    found = PLATFORM_LINE.search(text) if "detected platform" in text else None
    return found["name"].lower() if found else None


def engine_own(stage: str, meta: LineMeta) -> bool:
    """Whether a start-up line of startup_stage is the engine's own (its distributed set-up, its API server's polls, a
    vLLM start-up module's record), which may open a start-up by itself; a download bar, a wait for some server to be
    ready or a native library's glog line may be any program's, and only continue one the engine's lines began."""
    return stage in (NCCL_INIT, WAITING_CORES) or (meta.header == "vllm" and meta.logged_from in _STARTUP_FILES)


def startup_stage(text: str, meta: LineMeta) -> str | None:
    """The start-up stage a line shows when it is a start-up line of this module ("" when it shows none), else None."""
    if any(word in text for word in _NCCL_INIT_WORDS):
        return NCCL_INIT
    if "%|" in text and _DOWNLOAD_BAR.match(text):
        return DOWNLOADING
    if is_waiting_line(text):
        return WAITING_CORES
    if "aiting for" in text and "ready" in text and len(text) <= MAX_WAITING_LINE and _WAIT_READY.search(text):
        return WAITING_READY
    if _GLOG_BEFORE_INIT in text or (text[:1] in "IW" and _GLOG_LINE.match(text)):
        return ""
    if meta.header == "vllm" and meta.logged_from in _STARTUP_FILES and meta.level in ("INFO", "DEBUG", "WARNING"):
        return _STARTUP_FILES[meta.logged_from]
    return None
