"""A pydantic ValidationError's `Value error, …` line is the engine's own ValueError (pydantic_display.py
`validator_error`, `checked_as`): vLLM's config classes are pydantic dataclasses, so their checks reach users wrapped in
`ValidationError: 1 validation error for <Config>`.  The reasoning reads what follows `Value error, ` as the
message: the instructions quoted from it, who said them, the text rules and category rows search."""

from __future__ import annotations

from logsleuth.models import ExceptionBlock, Failure
from logsleuth.pydantic_display import checked_as, validator_error
from logsleuth.reasoning.evidence import exception_lines
from tests.reasoning.diagnosed import first_diagnosis

VALIDATION_ERROR = "pydantic_core._pydantic_core.ValidationError"
DISPLAY = " [type=value_error, input_value=ArgsKwargs((), {'model': ...}), input_type=ArgsKwargs]"
URL = "\n    For further information visit https://errors.pydantic.dev/2.11/v/value_error"
# vllm/config/parallel.py's world-size check (its wording in 0.10-0.11), inside the ParallelConfig it validates.
WORLD_SIZE = ("World size (8) is larger than the number of available GPUs (4) in this node. If this is intentional "
              "and you are using: - ray, set '--distributed-executor-backend ray'.")


def _block(message: str, type_name: str = VALIDATION_ERROR) -> ExceptionBlock:
    return ExceptionBlock(type=type_name, message=message)


def test_the_validator_message_is_what_follows_value_error() -> None:
    block = _block(f"1 validation error for ParallelConfig\n  Value error, {WORLD_SIZE}{DISPLAY}{URL}")
    assert validator_error(block) == WORLD_SIZE


def test_a_message_over_several_lines_ends_at_pydantic_display() -> None:
    block = _block("1 validation error for ModelConfig\n  Value error, Invalid repository ID: '/m'.\n"
                   "Please verify the following requirements:\n1. Provide a valid Hugging Face repository ID.\n"
                   f"{DISPLAY}{URL}")
    assert validator_error(block) == ("Invalid repository ID: '/m'.\nPlease verify the following requirements:\n"
                                      "1. Provide a valid Hugging Face repository ID.")


def test_the_rules_read_it_as_the_engine_valueerror() -> None:
    failure = Failure(kind="traceback", line=1, offset=0, end_offset=0,
                      exceptions=(_block(f"1 validation error for ParallelConfig\n  Value error, {WORLD_SIZE}{DISPLAY}"),))
    assert exception_lines(failure)[-1] == f"ValueError: {WORLD_SIZE}"


def test_the_check_is_read_as_its_valueerror_and_any_other_block_as_itself() -> None:
    wrapped = _block(f"1 validation error for ParallelConfig\n  Value error, {WORLD_SIZE}{DISPLAY}{URL}")
    assert checked_as(wrapped) == ("ValueError", WORLD_SIZE)
    other = _block("1 validation error for Settings\nport\n  Input should be a valid integer [type=int_parsing]")
    assert checked_as(other) == (VALIDATION_ERROR, other.message)


def test_only_the_validator_error_adds_a_line() -> None:
    plain = Failure(kind="traceback", line=1, offset=0, end_offset=0,
                    exceptions=(_block("tp must divide heads", "ValueError"),))
    assert exception_lines(plain) == ["ValueError: tp must divide heads"]


def test_look_alikes_are_not_validator_errors() -> None:
    # the words quoted inside another message, another exception type, a ValidationError of another kind
    assert validator_error(_block("the field said 'Value error, bad' [type=value_error]")) is None
    assert validator_error(_block("Value error, x", "ValueError")) is None
    assert validator_error(_block("1 validation error for Settings\nport\n  Input should be a valid integer "
                                  "[type=int_parsing, input_value='x', input_type=str]")) is None


def test_the_engine_said_it_not_pydantic() -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/arg_utils.py", line 1290, in create_engine_config\n'
           "    parallel_config = ParallelConfig(\n"
           '  File "/usr/local/lib/python3.12/dist-packages/pydantic/_internal/_dataclasses.py", line 123, in __init__\n'
           "    s.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)\n"
           f"{VALIDATION_ERROR}: 1 validation error for ParallelConfig\n  Value error, {WORLD_SIZE}{DISPLAY}{URL}\n")
    said = first_diagnosis(log).engine_says
    quoted = [words for words in said if "--distributed-executor-backend" in words.text]
    assert quoted and quoted[0].speaker is None
    assert not any("[type=" in words.text or "Value error" in words.text for words in said)
