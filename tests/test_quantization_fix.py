"""The fix for a checkpoint's quantization tensor the model has no parameter for (patterns *-weight-key-quant-scale,
fixes/builders/quantization.py): it never removes or changes a flag the launch does not give (issue 28, stop 38's
blind split: a launch without --quantization was told to drop one).  The traceback is the pattern's own fixture,
printed by real CPython (scripts/pattern_fixtures); the launch line above it is what changes between the tests."""

from __future__ import annotations

from pathlib import Path

from tests.reasoning.diagnosed import first_diagnosis

FIXTURE = Path(__file__).parent / "fixtures" / "patterns" / "sglang-weight-key-quant-scale" / "positive-0.5.9-fp8-scale.log"
TRACEBACK = "".join(FIXTURE.read_text().splitlines(keepends=True)[1:])  # without the generated-by line


def test_a_launch_without_quantization_is_told_to_pass_the_method_not_to_drop_one() -> None:
    """Issue 28, stop 39 class 6: a quantized checkpoint's tensors on a launch without --quantization.  The engine
    detects the method only from config.json's quantization_config; without one it builds the model unquantized.
    The method is passed explicitly: here block FP8's weight_scale_inv, which only the fp8 method reads."""
    log = "python3 -m sglang.launch_server --model-path /models/Qwen3-8B-FP8 --tp 2\n" + TRACEBACK
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "sglang-weight-key-quant-scale"
    fix = diagnosis.fix
    assert fix is not None and "gives no --quantization" in fix.summary and "quantization_config" in fix.summary
    assert "without it" not in fix.summary  # nothing the launch does not give is removed
    assert [(op.op, op.flag, op.value) for op in fix.flags] == [("set", "--quantization", "fp8")]
    assert fix.command == "python3 -m sglang.launch_server --model-path /models/Qwen3-8B-FP8 --tp 2 --quantization fp8"


def test_an_fp8_name_does_not_pick_among_the_fp8_methods() -> None:
    """nvidia/Llama-3.1-8B-Instruct-FP8 is a ModelOpt checkpoint: a per-tensor weight_scale with an FP8 name is asked for."""
    log = ("python3 -m sglang.launch_server --model-path nvidia/Llama-3.1-8B-Instruct-FP8\n"
           + TRACEBACK.replace("w13_weight_scale_inv'", "w13_weight_scale'"))
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--quantization", None)]
    assert any("modelopt" in need for need in fix.needs_input)


def test_a_model_name_without_a_method_asks_for_it_among_those_the_tensor_points_to() -> None:
    log = "python3 -m sglang.launch_server --model-path /models/my-finetune --tp 2\n" + TRACEBACK.replace("weight_scale_inv'", "weight_scale'")
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--quantization", None)]
    assert fix.command is None  # a half-filled command would not run
    (need,) = [need for need in fix.needs_input if "quantization method" in need]
    assert "fp8" in need and "compressed-tensors" in need and "modelopt" in need


def test_packed_int4_tensors_point_to_awq_or_gptq() -> None:
    log = ("python3 -m sglang.launch_server --model-path /models/Qwen2.5-72B-Instruct-AWQ --tp 4\n"
           + TRACEBACK.replace("w13_weight_scale_inv'", "w13_qweight'"))
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--quantization", "awq")]


def test_block_fp8_scales_point_to_fp8_alone() -> None:
    log = "python3 -m sglang.launch_server --model-path /models/my-finetune --tp 2\n" + TRACEBACK  # w13_weight_scale_inv
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--quantization", "fp8")]
    assert "the only method its tensors point to" in fix.summary


def test_vllm_names_no_method_its_catalog_does_not_list() -> None:
    """vLLM's catalog lists no choices for --quantization: the method is asked for, no flag operation is made."""
    vllm = Path(__file__).parent / "fixtures" / "patterns" / "vllm-weight-key-quant-scale" / "positive-0.11.0.log"
    log = "vllm serve /models/Qwen2.5-7B-Instruct-AWQ\n" + "".join(vllm.read_text().splitlines(keepends=True)[1:])
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "vllm-weight-key-quant-scale" and diagnosis.fix is not None
    assert not diagnosis.fix.flags and "gives no --quantization" in diagnosis.fix.summary
    assert any("quantization method" in need for need in diagnosis.fix.needs_input)


def test_a_launch_whose_quantization_overrides_the_checkpoint_is_told_to_drop_it() -> None:
    log = "python3 -m sglang.launch_server --model-path /models/Qwen3-8B-FP8 --tp 2 --quantization w8a8_int8\n" + TRACEBACK
    diagnosis = first_diagnosis(log)
    assert diagnosis.fix is not None and "--quantization w8a8_int8 overrides" in diagnosis.fix.summary
    assert not diagnosis.fix.needs_input


def test_the_settings_dump_decides_when_the_command_is_not_shown() -> None:
    log = "[2026-03-14 09:26:50] server_args=ServerArgs(model_path='/models/Qwen3-8B-FP8', quantization=None, tp_size=2)\n" + TRACEBACK
    diagnosis = first_diagnosis(log)
    assert diagnosis.fix is not None and "gives no --quantization" in diagnosis.fix.summary


def test_with_no_launch_in_the_log_the_advice_stays_conditional() -> None:
    diagnosis = first_diagnosis(TRACEBACK)
    assert diagnosis.fix is not None and "if the launch gives a --quantization" in diagnosis.fix.summary
