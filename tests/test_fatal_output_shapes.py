"""Shapes of fatal output the last blind split missed (issue 28; task S of stop 38): an exception line a reader
retyped in lower case, with no traceback.  CPython prints an exception's class name as the class spells it, so
a lower-cased `valueerror: …` is a person's retyping: its type is restored from the classes logsleuth knows, and
the line is the failure only of a paste that shows no other."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.tracebacks.grammar import retyped_failure

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def primary(log: str) -> tuple[str, str, str | None]:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    group = report.failures[0]
    block = group.failure.exceptions[-1]
    return block.type, " ".join(block.message.split()), group.diagnosis.category if group.diagnosis else None


@pytest.mark.parametrize(
    ("line", "restored"),
    [
        ("valueerror: loading /models/internvl2-8b requires you to execute the configuration file in that repo",
         "ValueError: loading /models/internvl2-8b requires you to execute the configuration file in that repo"),
        ("runtimeerror: cuda error: out of memory", "RuntimeError: cuda error: out of memory"),
        ("then torch.outofmemoryerror: cuda out of memory. tried to allocate 20.00 mib",
         "torch.OutOfMemoryError: cuda out of memory. tried to allocate 20.00 mib"),
        ("modulenotfounderror: no module named 'vllm._c'", "ModuleNotFoundError: no module named 'vllm._c'"),
    ],
)
def test_a_lower_cased_exception_line_gets_its_type_back(line: str, restored: str) -> None:
    assert retyped_failure(line) == restored


@pytest.mark.parametrize("line", [
    "rendererror: the widget failed",  # no class logsleuth knows
    "error: something",  # no type
    "ValueError: already typed",  # the grammar reads it as it is
])
def test_only_a_known_type_is_restored(line: str) -> None:
    assert retyped_failure(line) is None


def test_a_retyped_line_alone_is_the_failure_and_its_words_name_the_category() -> None:
    log = ("INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "the server stops right after loading, the error is:\n"
           "runtimeerror: cuda error: out of memory\n")
    assert primary(log) == ("RuntimeError", "cuda error: out of memory", "gpu-oom")


def test_a_retyped_line_yields_to_a_real_traceback() -> None:
    log = ("I also saw runtimeerror: cuda error: out of memory once, but now:\n"
           "Traceback (most recent call last):\n"
           '  File "/opt/venv/lib/python3.11/site-packages/sglang/launch_server.py", line 14, in <module>\n'
           "    launch_server(server_args)\n"
           "KeyError: 'qwen3'\n")
    assert primary(log)[:2] == ("KeyError", "'qwen3'")


def test_prose_in_lower_case_is_no_failure() -> None:
    log = ("INFO 05-01 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "the server started, no error: it answers requests\n"
           "INFO:     Application startup complete.\n")
    assert not diagnose_text(log, OPTIONS).failures
