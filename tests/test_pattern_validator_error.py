"""A pattern written for a ValueError's words matches that ValueError raised inside a pydantic validator, as
pydantic prints it (`ValidationError: 1 validation error for X` / `  Value error, <the message>`): vLLM's config
classes are pydantic dataclasses, so transformers' refusal of an unknown model_type reaches users so.  Since the
ValidationError is named as such when its `Value error, ` line is pasted alone (stop 50), the pattern keyed on
ValueError no longer fired there; with the header it never had.

The text below is what pydantic 2.14.4 printed (the vLLM 0.33.0 oracle environment) for a pydantic dataclass whose
validator raises transformers' message (transformers AutoConfig.from_pretrained, cited by the pattern)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)
REFUSAL = (
    "The checkpoint you are trying to load has model type `qwen3_next` but Transformers does not recognize this "
    "architecture. This could be because of an issue with the checkpoint, or because your version of Transformers is "
    "out of date."
)
VALUE_LINE = (
    f"  Value error, {REFUSAL} [type=value_error, input_value=ArgsKwargs((), {{'model': '/models/x'}}), "
    "input_type=ArgsKwargs]\n"
)
WITH_HEADER = (
    "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
    + VALUE_LINE
    + "    For further information visit https://errors.pydantic.dev/2.14/v/value_error\n"
)


@pytest.mark.parametrize("paste", [WITH_HEADER, VALUE_LINE], ids=["with-header", "value-line-alone"])
def test_a_validators_value_error_meets_the_pattern_for_its_words(paste: str) -> None:
    group = diagnose_text(paste, OPTIONS).failures[0]
    assert group.failure.final.type.endswith("ValidationError")  # the exception raised stays pydantic's
    assert group.diagnosis is not None
    assert group.diagnosis.pattern == "common-transformers-unknown-model-type"
    assert "qwen3_next" in group.diagnosis.root_cause


def test_another_validation_error_is_no_value_error() -> None:
    """The look-alike: a field's own refusal (a literal_error) carries no validator's ValueError: the pattern keyed on
    ValueError stays off, whatever words follow."""
    paste = (
        "pydantic_core._pydantic_core.ValidationError: 1 validation error for ModelConfig\n"
        "model_type\n"
        f"  Input should be 'a' or 'b' [type=literal_error, input_value='{REFUSAL}', input_type=str]\n"
    )
    group = diagnose_text(paste, OPTIONS).failures[0]
    assert group.diagnosis is None or group.diagnosis.pattern != "common-transformers-unknown-model-type"
