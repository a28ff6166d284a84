"""The failure each group's log printed next (api._following_lines, read by reasoning/wrapper_death.py as
Evidence.following): the next group that shares a source, never one of another log printed in between."""

from __future__ import annotations

from logsleuth.api import _following_lines
from logsleuth.models import ExceptionBlock, Failure, FailureGroup


def _group(message: str, *sources: str) -> FailureGroup:
    failure = Failure(kind="traceback", line=1, offset=0, end_offset=0,
                      exceptions=(ExceptionBlock(type="RuntimeError", message=message),))
    return FailureGroup(fingerprint=message, failure=failure, count=1, sources=sources)


def test_the_next_failure_of_the_same_log_past_those_of_other_logs() -> None:
    groups = [_group("a1", "a.log"), _group("b1", "b.log"), _group("b2", "b.log"), _group("a2", "a.log"),
              _group("both", "a.log", "b.log"), _group("c1", "c.log")]
    assert _following_lines(groups) == [
        ("RuntimeError: a2",),    # b1 and b2 were printed by another log
        ("RuntimeError: b2",),
        ("RuntimeError: both",),  # a group seen in several logs follows each of them
        ("RuntimeError: both",),
        (),                       # nothing after it in a.log or b.log
        (),
    ]


def test_a_validator_error_is_followed_as_the_rules_read_it() -> None:
    wrapped = Failure(kind="traceback", line=1, offset=0, end_offset=0, exceptions=(ExceptionBlock(
        type="pydantic_core._pydantic_core.ValidationError",
        message="1 validation error for ModelConfig\n  Value error, max_model_len 4096 exceeds 2048 [type=value_error]"),))
    groups = [_group("wrapper", "a.log"), FailureGroup(fingerprint="w", failure=wrapped, count=1, sources=("a.log",))]
    assert _following_lines(groups)[0][-1] == "ValueError: max_model_len 4096 exceeds 2048"
