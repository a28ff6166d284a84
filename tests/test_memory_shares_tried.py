"""A memory fix never suggests a GPU memory share the paste shows failed too (issue 28): the user's words or another
launch in the paste name the value (LaunchInfo.memory_shares_seen, ingest/launch.py), and the fix goes past it or
leaves the value to the user (fixes/builders/memory.py past_tried).

Shapes: sgl-project/sglang#4330 (0.84 left no room for the KV cache, 0.85 ran out of CUDA memory: raising the share is
no fix), vllm-project/vllm#188 (the user's lower --gpu-memory-utilization failed the same way).  The failures are the
pattern fixtures' real CPython tracebacks; the lines around them are a user's paste."""

from __future__ import annotations

from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Fix

FIXTURES = Path(__file__).parent / "fixtures" / "patterns"
NOT_ENOUGH = (FIXTURES / "sglang-kv-cache-not-enough-memory" / "positive-0.5.9.log").read_text(encoding="utf-8")
OOM = (FIXTURES / "sglang-gpu-oom" / "positive-0.5.9-sampler.log").read_text(encoding="utf-8")
LAUNCH = "$ python3 -m sglang.launch_server --model-path org/m --mem-fraction-static {share} --port 30000\n"


def _fix(text: str) -> Fix:
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return diagnosis.fix


def _share(fix: Fix) -> str | None:
    return next((op.value for op in fix.flags if op.flag == "--mem-fraction-static"), None)


def test_raising_toward_a_share_that_ran_out_of_memory_leaves_the_value_to_the_user() -> None:
    pasted = LAUNCH.format(share="0.84") + NOT_ENOUGH + "With --mem-fraction-static 0.85 it runs out of CUDA memory instead.\n"
    fix = _fix(pasted)
    assert _share(fix) is None and "--mem-fraction-static" in fix.needs_input, fix
    assert "0.85" in fix.summary and fix.command is None
    assert fix.alternatives, "the other fixes stay"


def test_a_bare_share_in_the_users_words_counts_after_the_flag_was_named() -> None:
    pasted = "With --mem-fraction-static 0.84 the server stops at start-up:\n" + NOT_ENOUGH + \
        "With 0.85 it runs out of CUDA memory instead.\n"
    assert "--mem-fraction-static" in _fix(pasted).needs_input


def test_lowering_goes_past_a_lower_share_that_failed_too() -> None:
    pasted = LAUNCH.format(share="0.85") + "I tried --mem-fraction-static 0.8 as well, same CUDA out of memory.\n" + OOM
    share = _share(_fix(pasted))
    assert share is not None and float(share) < 0.8, share


def test_the_launchs_own_share_alone_changes_nothing() -> None:
    """The look-alike: the only share the paste names is the launch's own."""
    assert _share(_fix(LAUNCH.format(share="0.85") + OOM)) == "0.8"
    assert _share(_fix(LAUNCH.format(share="0.8") + NOT_ENOUGH)) == "0.9"
