"""The engines' programs other than their server that take the server's launch arguments.

A benchmark or a simpler server of the engine parses the same arguments as the server, so its command shows the
engine, its settings and, for a fix, the launch the user typed (sgl-project/sglang#4599: `python -m
sglang.bench_offline_throughput --model-path=… --enable-dp-attention …`; sgl-project/sglang#10062: `python -m
sglang.bench_one_batch --model-path … --enable-piecewise-cuda-graph --tp 2`).  Whether a corrected command may be
printed for one depends on which of the server's flags its parser adds:

- SGLang's offline benchmarks add every flag of the server (`ServerArgs.add_cli_args(parser)`, then their own
  BenchArgs: sglang/bench_offline_throughput.py and bench_one_batch.py in 0.4.10.post2 and 0.5.9,
  sglang/benchmark/offline_throughput.py and one_batch.py in 0.5.23).  A fix whose flags are all in the release's
  catalog edits their command as it edits `sglang.launch_server`'s.
- vLLM's `vllm bench throughput|latency` and `python -m vllm.entrypoints.api_server` add the engine's arguments only
  (`AsyncEngineArgs.add_cli_args` / `EngineArgs.add_cli_args`: vllm/benchmarks/throughput.py, latency.py,
  vllm/entrypoints/api_server.py in 0.11.2; the first two in 0.33.0), not the OpenAI server's own, and the
  catalogs are `vllm serve`'s parser: which of a fix's flags such a program takes is not known, so no corrected
  command is printed for it, only the flag change.

vLLM's offline `LLM(...)` is Python, not a command: not read here.
"""

from __future__ import annotations

import re
from typing import Literal

from logsleuth.lazyre import compile_lazily

# SGLang's modules run with `python -m` whose parser adds all of ServerArgs' flags.
SGLANG_SERVER_FLAG_MODULES = (
    "sglang.bench_offline_throughput",
    "sglang.bench_one_batch",
    "sglang.benchmark.offline_throughput",
    "sglang.benchmark.one_batch",
)
# vLLM's modules run with `python -m` whose parser adds the engine's arguments and not the OpenAI server's.
VLLM_ENGINE_FLAG_MODULES = ("vllm.entrypoints.api_server",)
_MODULES = "|".join(re.escape(module) for module in (*SGLANG_SERVER_FLAG_MODULES, *VLLM_ENGINE_FLAG_MODULES))

# The entry point words of such a program in a command: `python3 -m sglang.bench_one_batch`, `vllm bench latency`.
OTHER_ENTRY_POINT = compile_lazily(
    rf"(?:^|(?<=[\s/]))(?:(?P<module>{_MODULES})(?![\w.])|vllm\s+bench\s+(?P<bench>throughput|latency)\b)"
)

# Each program's own flags beside the server's or the engine's (its BenchArgs, read from the wheels' add_argument
# calls: sglang/bench_one_batch.py and bench_offline_throughput.py in 0.4.10.post2 and 0.5.9, sglang/benchmark/one_batch.py
# and offline_throughput.py in 0.5.23, vllm/benchmarks/latency.py and throughput.py in 0.11.2 and 0.33.0): a word of
# them in a command is a flag, not a word the paste cut (fixes/cut_command.py).
_ONE_BATCH_FLAGS = frozenset({
    "--run-name", "--batch-size", "--input-len", "--output-len", "--prompt-filename", "--result-filename",
    "--correctness-test", "--cut-len", "--log-decode-step", "--profile", "--profile-record-shapes",
    "--profile-activities", "--profile-stage", "--profile-filename-prefix", "--profile-prefix", "--profile-start-step",
    "--profile-steps",
})
_OFFLINE_THROUGHPUT_FLAGS = frozenset({
    "--backend", "--result-filename", "--dataset-name", "--dataset-path", "--num-prompts", "--sharegpt-output-len",
    "--sharegpt-context-len", "--random-input-len", "--random-output-len", "--random-range-ratio", "--gsp-num-groups",
    "--gsp-prompts-per-group", "--gsp-system-prompt-len", "--gsp-question-len", "--gsp-output-len", "--seed",
    "--disable-ignore-eos", "--extra-request-body", "--apply-chat-template", "--profile", "--profile-activities",
    "--profile-steps", "--skip-warmup", "--do-not-exit", "--prompt-suffix", "--return-logprob", "--logprob-start-len",
})
_VLLM_LATENCY_FLAGS = frozenset({
    "--input-len", "--output-len", "--batch-size", "--n", "--use-beam-search", "--num-iters-warmup", "--num-iters",
    "--profile", "--output-json", "--disable-detokenize",
})
_VLLM_THROUGHPUT_FLAGS = frozenset({
    "--backend", "--dataset-name", "--dataset", "--dataset-path", "--no-oversample", "--enable-multimodal-chat",
    "--custom-output-len", "--input-len", "--output-len", "--n", "--num-prompts", "--num-warmups", "--hf-max-batch-size",
    "--hf-enable-torch-compile", "--output-json", "--async-engine", "--prequeue-requests", "--disable-detokenize",
    "--disable-frontend-multiprocessing", "--lora-path", "--lora-assignment", "--prefix-len", "--random-range-ratio",
    "--hf-subset", "--hf-split", "--hf-name", "--profile", "--prefix-repetition-prefix-len",
    "--prefix-repetition-suffix-len", "--prefix-repetition-num-prefixes", "--prefix-repetition-output-len",
    "--asr-min-audio-len-sec", "--asr-max-audio-len-sec",
})
_OWN_FLAGS = {
    "python -m sglang.bench_one_batch": _ONE_BATCH_FLAGS,
    "python -m sglang.benchmark.one_batch": _ONE_BATCH_FLAGS,
    "python -m sglang.bench_offline_throughput": _OFFLINE_THROUGHPUT_FLAGS,
    "python -m sglang.benchmark.offline_throughput": _OFFLINE_THROUGHPUT_FLAGS,
    "vllm bench latency": _VLLM_LATENCY_FLAGS,
    "vllm bench throughput": _VLLM_THROUGHPUT_FLAGS,
}


def own_flags(program: str) -> frozenset[str]:
    """The flags `program` (as other_entry_point names it) adds beside the server's or the engine's."""
    return _OWN_FLAGS.get(program, frozenset())


Flags = Literal["server", "engine"]


def other_entry_point(command: str) -> tuple[str, Flags] | None:
    """(the program, which of the server's flags its parser takes: all of them, "server", or the engine's only,
    "engine") when `command` runs one of the programs above, else None (the server itself, or no engine program)."""
    head = command.split(" --", 1)[0]
    m = OTHER_ENTRY_POINT.search(head)
    if m is None:
        return None
    if m["bench"]:
        return f"vllm bench {m['bench']}", "engine"
    module = m["module"]
    return f"python -m {module}", "engine" if module.startswith("vllm") else "server"
