"""The lines that say where a server's start-up is: its readiness line, the engine's first output, the API server's
polls for its engine cores.  A leaf module: the launch tracker (launch.py) and the traceback scanner (through
tracebacks/grammar.py and startup_waits.py) both read them."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily

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
