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


def cut_traceback(cut_at: int | None, message: str = MESSAGE, kind: str = "ValueError", filename: str = LOADER) -> str:
    """Real CPython's traceback of the check raised under the engine's file name, cut `cut_at` characters into the
    message (None: whole)."""
    code = compile(f"def _verify_model_compatibility():\n    raise {kind}({message!r})\n_verify_model_compatibility()\n",
                   filename, "exec")
    try:
        exec(code, {})  # noqa: S102 - the test's own statement
    except Exception as error:  # noqa: BLE001 - the statement's own exception
        printed = "".join(traceback.format_exception(error))
    if cut_at is None:
        return printed
    return printed[: printed.index(f"{kind}: ") + len(f"{kind}: ") + cut_at] + "\n"


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


def test_the_check_s_suggested_mode_is_the_one_offered() -> None:
    """The Prequant check says "Please try with pipeline parallelism.": that mode, read from the check, is offered."""
    diagnosis = first_diagnosis(launch("--tensor-parallel-size 2") + cut_traceback(len("Prequant B")))
    assert diagnosis.fix is not None
    assert "Run bitsandbytes without tensor parallelism: with pipeline parallelism (the check's own message" \
        in diagnosis.fix.summary


MXFP4 = "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/quantization/mxfp4.py"


def test_a_backend_s_check_is_not_read_as_the_method_s_refusal() -> None:
    """REVIEW5 M1: vLLM's Mxfp4 method refuses EP for some backends only (mxfp4.py: "Incompatible Mxfp4 backend ({})
    for EP"); a cut of it with mxfp4 and expert parallelism is not "mxfp4 with expert parallelism is refused"."""
    log = ("vllm serve openai/gpt-oss-120b --quantization mxfp4 --enable-expert-parallel\n"
           + cut_traceback(len("Incompatible Mxfp4 b"), "Incompatible Mxfp4 backend (triton) for EP",
                           "NotImplementedError", MXFP4))
    assert first_diagnosis(log).pattern != "rule-cut-quantization-parallel"


CONFIG = "/usr/local/lib/python3.12/dist-packages/vllm/config/model.py"
BOTH = "BitAndBytes quantization with TP or PP is not supported yet."


@pytest.mark.parametrize(("parallel", "mode"), [("-tp 2", "tensor"), ("--pipeline-parallel-size 2", "pipeline")])
def test_a_check_refusing_two_modes_names_both_and_offers_neither(parallel: str, mode: str) -> None:
    """REVIEW5 M2: vLLM's ModelConfig refuses bitsandbytes with TP and with PP: the report names both, and offers one
    GPU, never "the parallel mode the check's message names" (the other refused one)."""
    log = launch(parallel) + cut_traceback(len("BitAndBytes q"), BOTH, filename=CONFIG)
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-cut-quantization-parallel"
    assert "bitsandbytes with tensor parallelism or pipeline parallelism" in diagnosis.title
    assert f"{mode} parallelism" in diagnosis.root_cause
    assert diagnosis.fix is not None
    assert "without tensor parallelism or pipeline parallelism: on one GPU;" in diagnosis.fix.summary
    assert "parallel mode the check's message names" not in diagnosis.fix.summary
