"""A message the paste cut short that opens one of the engine's checks refusing a quantization with a parallel mode,
in a launch that gives both (reasoning/quantized_parallel.py).

Thread: vllm-project/vllm#14449 (`ValueError: Prequant B`, the launch giving --quantization bitsandbytes and
--tensor-parallel-size 2).  The traceback is real CPython's, raised under vLLM's loader file name with the check's
message (vllm/model_executor/model_loader/bitsandbytes_loader.py), then cut inside its message as the paste cut it."""

from __future__ import annotations

import traceback

import pytest

from tests.reasoning.diagnosed import first_diagnosis

LOADER = "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/model_loader/bitsandbytes_loader.py"
MESSAGE = "Prequant BitsAndBytes models with tensor parallelism is not supported. Please try with pipeline parallelism."


def cut_traceback(cut_at: int) -> str:
    code = compile(f"def _verify_model_compatibility():\n    raise ValueError({MESSAGE!r})\n_verify_model_compatibility()\n",
                   LOADER, "exec")
    try:
        exec(code, {})  # noqa: S102 - the test's own statement
    except ValueError as error:
        printed = "".join(traceback.format_exception(error))
    return printed[: printed.index("ValueError: ") + len("ValueError: ") + cut_at] + "\n"


def launch(parallel: str) -> str:
    return f"vllm serve unsloth/QwQ-32B-bnb-4bit --load-format bitsandbytes --quantization bitsandbytes {parallel}\n"


def test_the_cut_check_and_the_launch_name_the_combination() -> None:
    diagnosis = first_diagnosis(launch("--tensor-parallel-size 2") + cut_traceback(len("Prequant B")))
    assert diagnosis.pattern == "rule-cut-quantization-parallel" and diagnosis.category == "quantization"
    assert "bitsandbytes with tensor parallelism" in diagnosis.root_cause and MESSAGE in diagnosis.root_cause


@pytest.mark.parametrize("parallel", [
    "--tensor-parallel-size 1",  # no parallel mode turned on
    "--pipeline-parallel-size 2",  # the mode the check suggests, not the one it refuses
])
def test_a_launch_without_the_refused_mode_is_not_read_so(parallel: str) -> None:
    diagnosis = first_diagnosis(launch(parallel) + cut_traceback(len("Prequant B")))
    assert diagnosis.pattern != "rule-cut-quantization-parallel"


def test_too_few_words_tell_nothing() -> None:
    diagnosis = first_diagnosis(launch("--tensor-parallel-size 2") + cut_traceback(len("Pre")))
    assert diagnosis.pattern != "rule-cut-quantization-parallel"
