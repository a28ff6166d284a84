"""A program of one engine run as a module names that engine, over the other engine's frames it imported (split 6:
an SGLang reproduction line above frames in vLLM's quantization layers, which SGLang 0.3-0.5 ran, was named vLLM)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import real_traceback

OPTIONS = DiagnoseOptions(include_user_patterns=False)
# a vLLM quantization layer's frame (SGLang 0.3-0.5 imported vLLM's quantization code), real CPython output
QUANT_FRAMES = real_traceback(
    "def apply(x):\n    raise RuntimeError('Error Internal')\n\napply(1)\n",
    "site-packages/vllm/model_executor/layers/quantization/fp8.py",
)


@pytest.mark.parametrize(("line", "engine"), [
    ("python3 -m sglang.bench_one_batch --model-path m --quantization fp8", "sglang"),
    ("$ python3 -m sglang", "sglang"),  # a reproduction line the paste cut
    ("python -m vllm.entrypoints.api_server --model m", "vllm"),
    ("", "vllm"),  # no program shown: the frames decide
    # a benchmark client may drive either engine: it names none, the frames decide
    ("python3 -m sglang.bench_serving --backend vllm --num-prompts 10", "vllm"),
    ("python -m pip install sglang", "vllm"),  # pip ran, not the engine
])
def test_a_module_of_one_engine_run_names_it(line: str, engine: str) -> None:
    log = (line + "\n" if line else "") + QUANT_FRAMES
    assert diagnose_text(log, OPTIONS).launch.engine == engine
