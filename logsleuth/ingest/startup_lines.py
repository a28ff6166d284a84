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
# "Decode batch. …"), vLLM's metrics line (v1/metrics/loggers.py, V0 engine/metrics.py "Avg prompt throughput: …"),
# uvicorn's access lines for the API's routes.
SERVING_WORDS = ("Prefill batch", "Decode batch", "Avg prompt throughput", '"POST /', '"GET /v1')

NCCL_INIT = "NCCL init"
DOWNLOADING = "downloading"
WAITING_READY = "waiting for the engine to signal ready"
WAITING_CORES = "waiting for the engine core processes to start"
WAITING_STAGES = frozenset({WAITING_READY, WAITING_CORES})
CONFIGURING = "configuring the engine"
LOADING = "loading weights"

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
# set up, by the stage they show ("" keeps the stage known): engine config (config.py, arg_utils.py, cli_args.py),
# distributed set-up, weight download and loading, the attention backend's choice, the platform's detection.
_STARTUP_FILES = {
    "config.py": CONFIGURING, "arg_utils.py": CONFIGURING, "cli_args.py": CONFIGURING,
    "parallel_state.py": NCCL_INIT, "pynccl.py": NCCL_INIT, "pynccl_wrapper.py": NCCL_INIT,
    "custom_all_reduce.py": NCCL_INIT, "custom_all_reduce_utils.py": NCCL_INIT, "shm_broadcast.py": NCCL_INIT,
    "weight_utils.py": LOADING, "default_loader.py": LOADING, "loader.py": LOADING,
    "selector.py": "", "cuda.py": "",
}


def serves(text: str) -> bool:
    """Whether a line is one an engine prints only once it serves (SERVING_WORDS)."""
    return any(word in text for word in SERVING_WORDS)


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
