"""Dev cases for argument and configuration errors (issue 28: the largest class of "advice not useful"): a parser
choice that the user's vLLM release does not list yet, a flag with its value given as one list item, and GGUF weights
read with the config.json of the fp8 checkpoint they came from.

Threads are dev threads (even numbers); the logs are ours, rebuilt with real argparse from the facts each case names.
"""

from __future__ import annotations

from functools import partial

from pattern_fixtures.cases.vllm import model_config_rejected

from .. import paste
from ..blocks import argparse_case
from ..corpus import Expect, Run, WildCase

VLLM = "vllm"

# vLLM 0.10.0's tool call parsers, in the order its invalid-choice message lists them (both GLM-4.5 threads show it)
TOOL_PARSERS_0_10_0 = ["deepseek_v3", "glm4_moe", "granite-20b-fc", "granite", "hermes", "hunyuan_a13b", "internlm", "jamba",
                       "kimi_k2", "llama4_pythonic", "llama4_json", "llama3_json", "minimax", "mistral", "phi4_mini_json",
                       "pythonic", "qwen3_coder", "xlam"]
SERVE_0_10_0 = f"""
parser.prog = "vllm serve"
parser.add_argument("model_tag", nargs="?")
parser.add_argument("--served-model-name", nargs="+")
parser.add_argument("--host", type=str)
parser.add_argument("--port", type=int, default=8000)
parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
parser.add_argument("--dtype", type=str, default="auto", choices=["auto", "half", "float16", "bfloat16", "float", "float32"])
parser.add_argument("--enable-auto-tool-choice", action="store_true")
parser.add_argument("--tool-call-parser", type=str, choices={TOOL_PARSERS_0_10_0!r})
parser.add_argument("--max-model-len", type=int)
parser.add_argument("--trust-remote-code", action="store_true")
"""
GLM_ARGV = ("zai-org/GLM-4.5-Air-FP8", "--served-model-name", "glm-4.5-air", "--tensor-parallel-size", "4",
            "--enable-auto-tool-choice", "--tool-call-parser", "glm45", "--max-model-len", "65536", "--trust-remote-code")
GLM_MESSAGE = ("argument --tool-call-parser: invalid choice: 'glm45' (choose from "
               + ", ".join(repr(name) for name in TOOL_PARSERS_0_10_0) + ")")
# The fix is the listed choice (0.10.0 names GLM-4.5's parser glm4_moe) or no flag change (a later vLLM, which names it glm45).
GLM_EXPECT = Expect("invalid-flag-value", "UsageError", GLM_MESSAGE, fix=(("set --tool-call-parser",), ()))
GLM_RESOLUTION = ("The maintainer: use a newer vLLM (main or nightly then) that lists glm45; 0.10.0 lists the GLM-4.5 "
                  "parser as glm4_moe.")

GGUF_MODEL = "/data/models/DeepSeek-R1-0528-GGUF/DeepSeek-R1-0528-UD-IQ2_XXS-00001-of-00005.gguf"
GGUF_MISMATCH = ("Quantization method specified in the model config (fp8) does not match the quantization method specified "
                 "in the `quantization` argument (gguf).")

CASES = (
    WildCase(thread="https://github.com/zai-org/GLM-4.5/issues/16", kind="vllm-argparse-invalid-choice", style="prose-error",
             parts=(Run(argparse_case(SERVE_0_10_0, GLM_ARGV), primary=True),), engine_version="0.10.0", engine=VLLM,
             expect=GLM_EXPECT,
             facts="vLLM 0.10.0, `vllm serve` of GLM-4.5-Air-FP8 with --enable-auto-tool-choice --tool-call-parser glm45, the "
                   "invalid-choice line with 0.10.0's 18 parsers (glm4_moe among them); the usage line ours",
             resolution=GLM_RESOLUTION,
             paste=(partial(paste.last_lines, count=1), partial(paste.prose, before="I deployed it with vllm 0.10.0 and got:"))),
    WildCase(thread="https://github.com/zai-org/GLM-4.5/issues/58", kind="vllm-argparse-invalid-choice", style="usage-fenced",
             parts=(Run(argparse_case(SERVE_0_10_0, GLM_ARGV), primary=True),), engine_version="0.10.0", engine=VLLM,
             expect=GLM_EXPECT,
             facts="a second report of the same rejection on vLLM 0.10.0 (the version given in the issue), the error line after a "
                   "version note; the usage block and the command ours",
             resolution=GLM_RESOLUTION, paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/22072", kind="vllm-argparse-unrecognized-argument",
             style="compose-list-item",
             parts=(Run(argparse_case(SERVE_0_10_0, ("HuggingFaceTB/SmolLM3-3B", "--dtype auto")), primary=True),),
             engine_version="0.10.0", engine=VLLM,
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: --dtype auto", fix=((),)),
             facts="docker compose `command:` items, `--dtype auto` written as one item (one word to argparse, so not taken as "
                   "--dtype), an image whose entrypoint is `vllm serve`; the usage block ours",
             resolution="One flag and its value per item (or --dtype=auto); the flag itself is vLLM's.",
             paste=(partial(paste.docker_compose, service="vllm"), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/19050", kind="vllm-quantization-config-mismatch",
             style="exception-fenced",
             parts=(Run(model_config_rejected(GGUF_MISMATCH, GGUF_MODEL), primary=True),), engine_version="", engine=VLLM,
             expect=Expect("quantization", fix=((),)),
             facts="`vllm serve` of a DeepSeek-R1-0528 GGUF file with the original checkpoint's config.json beside it, ModelConfig's "
                   "check naming fp8 from the config against gguf; the API server frames and pydantic's wrapper of 0.11.0 ours "
                   "(the thread's release is not named in what we read)",
             resolution="The reporter removed the quantization_config field from config.json, and the model loaded.",
             paste=(paste.fenced,)),
)
