"""The engines' programs other than their server that take the server's launch arguments.

A benchmark or a simpler server of the engine parses the same arguments as the server, so its command shows the
engine, its settings and, for a fix, the launch the user typed (sgl-project/sglang#4599: `python -m
sglang.bench_offline_throughput --model-path=… --enable-dp-attention …`; sgl-project/sglang#10062: `python -m
sglang.bench_one_batch --model-path … --enable-piecewise-cuda-graph --tp 2`).  Whether a corrected command may be
printed for one depends on which of the server's flags its parser adds:

- SGLang's offline benchmarks add every flag of the server (`ServerArgs.add_cli_args(parser)`, then their own
  BenchArgs: sglang/bench_offline_throughput.py and bench_one_batch.py in 0.4.10.post2 and 0.5.9,
  sglang/benchmark/offline_throughput.py and one_batch.py in 0.5.23; `sglang.bench_latency` was bench_one_batch's
  name before late 2024).  A fix whose flags are all in the release's catalog edits their command as it edits
  `sglang.launch_server`'s.
- vLLM's `vllm bench throughput|latency` and `python -m vllm.entrypoints.api_server` add the engine's arguments only
  (`AsyncEngineArgs.add_cli_args` / `EngineArgs.add_cli_args`: vllm/benchmarks/throughput.py, latency.py,
  vllm/entrypoints/api_server.py in 0.11.2; the first two in 0.33.0), not the OpenAI server's own, and the
  catalogs are `vllm serve`'s parser: which of a fix's flags such a program takes is not known, so no corrected
  command is printed for it, only the flag change.

vLLM's offline `LLM(...)` is Python, not a command: not read here.
"""

from __future__ import annotations

from typing import Literal

from logsleuth.lazyre import compile_lazily

# SGLang's modules run with `python -m` whose parser adds all of ServerArgs' flags.
SGLANG_SERVER_FLAG_MODULES = (
    "sglang.bench_offline_throughput",
    "sglang.bench_one_batch",
    "sglang.bench_latency",
    "sglang.benchmark.offline_throughput",
    "sglang.benchmark.one_batch",
)
# vLLM's programs whose parser adds the engine's arguments and not the OpenAI server's.
VLLM_ENGINE_FLAG_PROGRAMS = ("vllm bench throughput", "vllm bench latency", "vllm.entrypoints.api_server")

# The entry point words of such a program in a command: `python3 -m sglang.bench_one_batch`, `vllm bench latency`.
OTHER_ENTRY_POINT = compile_lazily(
    r"(?:^|(?<=[\s/]))(?:(?P<module>sglang\.bench_(?:offline_throughput|one_batch|latency)|sglang\.benchmark\.(?:offline_throughput|one_batch)"
    r"|vllm\.entrypoints\.api_server)(?![\w.])|vllm\s+bench\s+(?P<bench>throughput|latency)\b)"
)

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
