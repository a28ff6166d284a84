"""A launch line whose next line is its tail, wrapped where the log printed it (a terminal or a paste cuts a long
line at its width, also inside a value: `--gpu-memory-utilization 0` then `.9 --max-model-len=…`).  The command read
from the first line alone is not what ran: a corrected command rebuilt from it would change the user's values, so the
fix gives its flag changes only.  The failure is vLLM's own refusal of bfloat16 on a GPU older than Ampere
(vllm/worker/worker.py _check_if_gpu_supports_dtype, its exact wording)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

REFUSAL = (
    "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla T4 GPU has "
    "compute capability 7.5. You can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: "
    "--dtype=half.\n"
)
LAUNCH = "$ vllm serve my-org/small-model --tensor-parallel-size 2 --gpu-memory-utilization 0"


def _fix(log: str):  # type: ignore[no-untyped-def]
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis.fix


@pytest.mark.parametrize("tail", [".9 --max-model-len=17370 --port 8001", "--max-model-len 4096", "  --port 8001"])
def test_a_launch_line_wrapped_onto_the_next_gives_no_corrected_command(tail: str) -> None:
    fix = _fix(f"{LAUNCH}\n{tail}\n{REFUSAL}")
    assert fix.command is None
    assert any("goes on at the next line" in step for step in fix.steps)
    assert any(op.flag == "--dtype" for op in fix.flags)  # the change itself is still given


@pytest.mark.parametrize("after", [
    "INFO 03-14 20:19:50 [api_server.py:912] vLLM API server version 0.8.0",
    "Then it fails with:",
    "vllm serve my-org/other-model --port 8002",
])
def test_a_launch_line_followed_by_other_words_keeps_its_corrected_command(after: str) -> None:
    """A log record, a sentence or another command after the launch line is not its tail."""
    fix = _fix(f"{LAUNCH}.9\n{after}\n{REFUSAL}")
    assert fix.command is not None and "--dtype half" in fix.command


def test_a_long_line_after_a_launch_is_read_in_linear_time() -> None:
    """Runs of flag-like words and spaces after a launch line stay cheap (the tail pattern's runs are bounded)."""
    from tests.test_fuzz import no_hang

    line = "x " + "--a " * 2000 + "b" * 300
    with no_hang():  # a hang guard, not a timing
        fix = _fix(f"{LAUNCH}.9\n{line}\n{REFUSAL}")
    assert fix.command is not None
