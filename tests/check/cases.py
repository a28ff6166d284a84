"""Real mistakes, as data: the flags, the SGLang version, the flag that fails (None: all pass) and words its reason
must hold.  Removed flags come from diffing the shipped catalogs (0.5.9 has them, 0.5.23 does not)."""

from __future__ import annotations

from typing import NamedTuple


class Case(NamedTuple):
    id: str
    version: str
    args: tuple[str, ...]
    failing: str | None  # the flag (or stray word) marked ✗; None when every flag passes
    reason: str  # words the failing verdict's reason holds (or the passing one's, when failing is None)
    suggestion: str | None = None


MODEL = ("--model-path", "/models/llama")
EAGLE = ("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/draft")

CASES = [
    # flags from vLLM: SGLang accepts --tensor-parallel-size (an alias of --tp-size), not the others
    Case("vllm-tensor-parallel-size", "0.5.9", (*MODEL, "--tensor-parallel-size", "2"), None, "accepts too"),
    Case("vllm-max-model-len", "0.5.9", (*MODEL, "--max-model-len", "8192"), "--max-model-len",
         "vLLM's flag; SGLang's is --context-length", "--context-length"),
    Case("vllm-gpu-memory-utilization", "0.5.23", (*MODEL, "--gpu-memory-utilization", "0.9"),
         "--gpu-memory-utilization", "SGLang's is --mem-fraction-static", "--mem-fraction-static"),
    Case("vllm-num-speculative-tokens", "0.5.9", (*MODEL, "--num-speculative-tokens", "4"),
         "--num-speculative-tokens", "--speculative-num-steps"),
    Case("vllm-positional-model", "0.5.9", ("/models/llama", "--tp-size", "2"), "/models/llama",
         "no positional argument", "--model-path /models/llama"),
    # flags removed in 0.5.23
    Case("removed-enable-piecewise-cuda-graph", "0.5.23", (*MODEL, "--enable-piecewise-cuda-graph"),
         "--enable-piecewise-cuda-graph", "SGLang 0.5.9 had it, SGLang 0.5.23 does not"),
    Case("removed-torchao-config", "0.5.23", (*MODEL, "--torchao-config", "int4wo-128"), "--torchao-config",
         "SGLang 0.5.9 had it"),
    Case("removed-hybrid-kvcache-ratio", "0.5.23", (*MODEL, "--hybrid-kvcache-ratio", "0.5"),
         "--hybrid-kvcache-ratio", "use --swa-full-tokens-ratio", "--swa-full-tokens-ratio"),
    Case("split-cuda-graph-max-bs", "0.5.23", (*MODEL, "--cuda-graph-max-bs", "16"), "--cuda-graph-max-bs",
         "stands for is --cuda-graph-max-bs-decode", "--cuda-graph-max-bs-decode"),
    Case("still-there-in-0.5.9", "0.5.9", (*MODEL, "--cuda-graph-max-bs", "16"), None, "flag exists in SGLang 0.5.9"),
    Case("newer-than-version", "0.5.9", (*MODEL, "--cuda-graph-max-bs-decode", "16"), "--cuda-graph-max-bs-decode",
         "first appears in SGLang 0.5.23"),
    # bad choices, types and arity
    Case("bad-choice-case", "0.5.9", (*MODEL, "--speculative-algorithm", "eagle3"), "--speculative-algorithm",
         "did you mean EAGLE3", "--speculative-algorithm EAGLE3"),
    Case("bad-choice-dtype", "0.5.9", (*MODEL, "--kv-cache-dtype", "fp8"), "--kv-cache-dtype", "fp8_e4m3"),
    # a parser names the model family's format: no suggestion by spelling (stop 39's blind split: qwen3 is not qwen25)
    Case("bad-choice-parser", "0.4.3", (*MODEL, "--tool-call-parser", "qwen3"), "--tool-call-parser",
         "is not a choice of --tool-call-parser: llama3, mistral, qwen25"),
    Case("bad-int", "0.5.9", (*MODEL, "--tp-size", "2.0"), "--tp-size", "takes an int", "--tp-size 2"),
    Case("bad-float", "0.5.23", (*MODEL, "--mem-fraction-static", "high"), "--mem-fraction-static", "takes a float"),
    Case("switch-given-value", "0.5.9", (*MODEL, "--enable-torch-compile", "true"), "true",
         "--enable-torch-compile is a switch"),
    Case("switch-equals-false", "0.5.9", (*MODEL, "--disable-radix-cache=false"), "--disable-radix-cache",
         "to turn it off, leave it out"),
    Case("missing-value", "0.5.9", (*MODEL, "--tp-size", "--dp-size", "2"), "--tp-size", "needs a value"),
    Case("typo", "0.5.9", (*MODEL, "--chunked-prefil-size", "4096"), "--chunked-prefil-size",
         "did you mean --chunked-prefill-size", "--chunked-prefill-size"),
    Case("underscores", "0.5.9", (*MODEL, "--mem_fraction_static", "0.8"), "--mem_fraction_static",
         "did you mean --mem-fraction-static"),
    Case("ambiguous-tokenizer", "0.5.9", (*MODEL, "--tokenizer", "/t"), "--tokenizer", "beginning of several"),
    Case("deprecated-accepted", "0.5.23", (*MODEL, "--disable-cuda-graph"), None, "deprecated in SGLang 0.5.23"),
    # the seed: the speculative sizes in part pass flag by flag; the trap is checked in test_traps
    Case("seed-flags-pass", "0.5.9", (*MODEL, *EAGLE, "--speculative-num-draft-tokens", "16",
                                      "--speculative-eagle-topk", "1"), None, "flag exists in SGLang 0.5.9"),
]
