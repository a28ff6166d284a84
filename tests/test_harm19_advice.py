"""Advice that must not mislead (split 18's harmful grades, task harm19): each case runs the real CLI on our own
fixtures (tests/fixtures/patterns/, generated from real CPython tracebacks) or on excerpts cut from them the way
users paste, and checks what the report names and what it must not say."""

from __future__ import annotations

import json
from pathlib import Path

from tests.helpers import run_cli

PATTERNS = Path(__file__).resolve().parent / "fixtures" / "patterns"


def _first(path: Path) -> dict:
    result = run_cli("diagnose", "--format", "json", str(path))
    return json.loads(result.stdout)["failures"][0]["diagnosis"]


def _fix_text(diagnosis: dict) -> str:
    fix = diagnosis["fix"] or {}
    return " ".join([fix.get("summary", ""), *fix.get("steps", [])])


def _cut_from(source: Path, marker: str, tmp_path: Path) -> Path:
    """The fixture's lines from the one holding `marker` on: a paste that starts below a frame's header."""
    lines = source.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if marker in line)
    cut = tmp_path / "cut.log"
    cut.write_text("\n".join(lines[start:]) + "\n")
    return cut


# -- vLLM's sampler warm-up: the same message at two call sites (vllm/v1/worker/gpu_worker.py compile_or_warm_up_model,
#    after the KV cache; gpu_model_runner.py profile_run, before it) -----------------------------------------------------

def test_the_warm_up_after_the_kv_cache_keeps_the_memory_share_as_a_remedy() -> None:
    diagnosis = _first(PATTERNS / "vllm-oom-sampler-warmup" / "positive-0.33.0-after-kv-cache.log")
    assert diagnosis["pattern"] == "vllm-oom-sampler-warmup"
    assert "--gpu-memory-utilization" in _fix_text(diagnosis)
    assert "does not shrink" not in _fix_text(diagnosis)


def test_a_paste_cut_below_the_workers_frame_header_is_still_the_warm_up(tmp_path: Path) -> None:
    source = PATTERNS / "vllm-oom-sampler-warmup" / "positive-0.33.0-after-kv-cache.log"
    diagnosis = _first(_cut_from(source, "self.model_runner._dummy_sampler_run(", tmp_path))
    assert diagnosis["pattern"] == "vllm-oom-sampler-warmup"


def test_the_profiling_run_stays_the_profiling_run() -> None:
    diagnosis = _first(PATTERNS / "vllm-oom-profiling" / "positive-0.33.0-sampler-warmup.log")
    assert diagnosis["pattern"] == "vllm-oom-profiling"
