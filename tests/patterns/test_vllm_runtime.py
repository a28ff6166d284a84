"""vLLM runtime patterns beyond "the fixture is diagnosed as its pattern": the divisors a fix computes from the
message, and the root failure ranked before the engine's death it caused (fixtures: cases/vllm_runtime.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet, load_patterns
from logsleuth.models import Report

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "patterns"


@pytest.fixture(scope="module")
def bundled() -> PatternSet:
    return load_patterns(include_user=False, strict=True)


def _report(name: str, patterns: PatternSet) -> Report:
    text = (FIXTURES / name).read_text(encoding="utf-8")
    return diagnose_text(text, DiagnoseOptions(include_user_patterns=False), patterns=patterns)


def test_the_heads_fix_names_the_divisors_of_the_head_count(bundled: PatternSet) -> None:
    """28 heads, TP 8: 28's divisors are named, and the flag goes to 4, the largest power of two below 8 that
    divides 28 (7 divides the heads but rarely the KV heads and MLP sizes, so it would fail at load)."""
    report = _report("vllm-tp-heads-divisible/positive-0.11.0-apiserver.log", bundled)
    fix = report.failures[0].diagnosis.fix if report.failures[0].diagnosis else None
    assert fix is not None
    assert "1, 2, 4, 7, 14, 28" in fix.summary
    assert [(op.op, op.flag, op.value) for op in fix.flags] == [("set", "--tensor-parallel-size", "4")]


def test_a_workers_nccl_error_ranks_before_the_engine_death_it_caused(bundled: PatternSet) -> None:
    """Worker NCCL error -> engine core's fatal error -> the client's EngineDeadError: the worker's error leads."""
    report = _report("vllm-nccl-error/positive-0.11.0-serving-engine-dead.log", bundled)
    diagnosed = [group.diagnosis.pattern if group.diagnosis else None for group in report.failures]
    assert diagnosed[0] == "vllm-nccl-error"
    assert report.failures[0].failure.final.message.startswith("NCCL error: unhandled cuda error")
    assert diagnosed[-1] == "vllm-engine-core-died"


def test_the_graph_pattern_wins_over_profiling_for_a_capture_inside_profiling(bundled: PatternSet) -> None:
    """0.33.0 captures graphs inside determine_available_memory: both OOM patterns match, the graph one wins."""
    report = _report("vllm-oom-cuda-graph/positive-0.33.0-profiling-graph-memory.log", bundled)
    frames = {frame.function for frame in report.failures[0].failure.final.frames}
    assert {"determine_available_memory", "profile_cudagraph_memory"} <= frames
    assert report.failures[0].diagnosis is not None
    assert report.failures[0].diagnosis.pattern == "vllm-oom-cuda-graph"
