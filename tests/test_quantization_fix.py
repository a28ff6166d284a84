"""The fix for a checkpoint's quantization tensor the model has no parameter for (patterns *-weight-key-quant-scale,
fixes/builders/quantization.py): it never removes or changes a flag the launch does not give (issue 28, stop 38's
blind split: a launch without --quantization was told to drop one).  The traceback is the pattern's own fixture,
printed by real CPython (scripts/pattern_fixtures); the launch line above it is what changes between the tests."""

from __future__ import annotations

from pathlib import Path

from tests.reasoning.diagnosed import first_diagnosis

FIXTURE = Path(__file__).parent / "fixtures" / "patterns" / "sglang-weight-key-quant-scale" / "positive-0.5.9-fp8-scale.log"
TRACEBACK = "".join(FIXTURE.read_text().splitlines(keepends=True)[1:])  # without the generated-by line


def test_a_launch_without_quantization_is_not_told_to_drop_it_and_the_method_is_asked_for() -> None:
    log = "python3 -m sglang.launch_server --model-path /models/Qwen3-8B-FP8 --tp 2\n" + TRACEBACK
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "sglang-weight-key-quant-scale"
    assert diagnosis.fix is not None and not diagnosis.fix.flags
    assert "gives no --quantization" in diagnosis.fix.summary and "Nothing to remove" in diagnosis.fix.summary
    assert "without it" not in diagnosis.fix.summary
    assert any("quant_method" in need for need in diagnosis.fix.needs_input)


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
