"""Launch commands written for the other engine: vLLM's flags given to SGLang, SGLang's flags given to vLLM.

Patterns: sglang-vllm-command-for-sglang, vllm-sglang-command-for-vllm (their translations: tests/test_cross_engine.py,
and through the real engines: its `oracle` tests).

Both are argparse errors printed by real CPython argparse from a mirror of each engine's parser.  SGLang's is the
one sglang-unrecognized-arguments' near misses use (arguments.py).  vLLM's mirrors the shape that makes vLLM 0.11.2
and 0.33.0 report unknown flags from the top-level parser, `vllm: error: unrecognized arguments: ...`
(vllm/entrypoints/cli/main.py: a `vllm` parser whose `serve` subcommand takes an optional positional model_tag;
the wording checked against both releases' real `vllm serve`).
"""

from __future__ import annotations

import textwrap

from ..engine import Case
from .arguments import MODEL, SGLANG_PARSER

# vLLM's `vllm serve`: flags of the serve subparser, the errors of the top-level one.
VLLM_PARSER = textwrap.dedent("""
    parser = argparse.ArgumentParser(prog="vllm")
    parser.add_argument("-v", "--version", action="version", version="0.33.0")
    commands = parser.add_subparsers(dest="subparser")
    serve = commands.add_parser("serve", usage="vllm serve [model_tag] [options]")
    serve.add_argument("model_tag", nargs="?")
    serve.add_argument("--model", type=str)
    serve.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
    serve.add_argument("--max-model-len", type=str)
    serve.add_argument("--gpu-memory-utilization", type=float, default=0.92)
    serve.add_argument("--trust-remote-code", action=argparse.BooleanOptionalAction, default=False)
    serve.add_argument("--port", type=int, default=8000)
""")

VLLM_MODEL = "Qwen/Qwen3-8B"


def _sglang(name: str, *argv: str) -> Case:
    return Case("sglang-vllm-command-for-sglang", name, (), mode="argparse", ranks="", parser=SGLANG_PARSER, argv=(*MODEL, *argv))


def _vllm(name: str, *argv: str) -> Case:
    return Case("vllm-sglang-command-for-vllm", name, (), mode="argparse", ranks="", parser=VLLM_PARSER, argv=("serve", *argv))


CASES = (
    _sglang("positive-vllm-flags", "--tensor-parallel-size", "2", "--max-model-len", "8192", "--gpu-memory-utilization", "0.9"),
    _sglang("positive-short-tp", "-tp", "2", "--max-num-seqs", "64", "--enforce-eager"),
    # One vLLM flag in an SGLang command: sglang-unrecognized-arguments renames it.
    _sglang("negative-one-vllm-flag", "--gpu-memory-utilization", "0.9"),
    _vllm("positive-sglang-flags", "--model-path", VLLM_MODEL, "--tp-size", "2", "--mem-fraction-static", "0.85", "--context-length", "8192"),
    _vllm("positive-positional-model", VLLM_MODEL, "--tp-size", "2", "--disable-radix-cache"),
    # One SGLang flag in a vLLM command: a vLLM argument error of its own, not a command written for SGLang.
    _vllm("negative-one-sglang-flag", VLLM_MODEL, "--mem-fraction-static", "0.85"),
)
