"""vLLM's CPU backend and a KV cache too small for --max-model-len (vllm-project/vllm#29233).

On the CPU backend the KV cache's size is VLLM_CPU_KVCACHE_SPACE (GiB, 4 by default: vllm/platforms/cpu.py), so
the advice names it there and not --gpu-memory-utilization or an FP8 cache; a GPU run keeps its advice.  The logs
are the project's generated pattern fixture with a start-up line of the oracle's own CPU run (vLLM 0.11.2) or a
GPU line before it: real engine lines, no hand-written failure.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from logsleuth.facts.gpus import shows_cpu_platform
from tests.helpers import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures"
FAILURE = FIXTURES / "patterns" / "vllm-max-model-len-exceeds-kv-cache" / "positive-0.11.0.log"
CPU_RUN = FIXTURES / "vllm" / "0.11.2" / "bad_kv_cache_dtype_cpu_fix.log"


def _cpu_start_up_line() -> str:
    return next(line for line in CPU_RUN.read_text().splitlines() if "VLLM_CPU_KVCACHE_SPACE" in line)


def _fix_of(tmp_path: Path, *lines_before: str) -> dict[str, Any]:
    log = tmp_path / "run.log"
    # The start-up lines sit far above the failure, as in a real run.
    filler = [f"(APIServer pid=7) INFO 12-01 09:10:50 [loader.py:12] loading shard {i}" for i in range(60)]
    log.write_text("\n".join([*lines_before, *filler, FAILURE.read_text()]))
    report = json.loads(run_cli("diagnose", str(log), "--format", "json").stdout)
    diagnosis: dict[str, Any] = report["failures"][0]["diagnosis"]
    assert diagnosis["pattern"] == "vllm-max-model-len-exceeds-kv-cache"
    fix: dict[str, Any] = diagnosis["fix"]
    return fix


def _all_text(fix: dict[str, Any]) -> str:
    return json.dumps(fix)


def test_a_cpu_run_is_told_the_cpu_kv_space(tmp_path: Path) -> None:
    fix = _fix_of(tmp_path, _cpu_start_up_line())
    assert [(f["op"], f["flag"], f["value"]) for f in fix["flags"]] == [("set", "--max-model-len", "56768")]
    # 16.00 GiB needed: 17 whole GiB of CPU KV space keep the full length.
    assert [alt["env"] for alt in fix["alternatives"]] == [{"VLLM_CPU_KVCACHE_SPACE": "17"}]
    text = _all_text(fix)
    assert "--kv-cache-dtype" not in text and "a higher --gpu-memory-utilization" not in text


def test_a_gpu_run_keeps_the_gpu_advice(tmp_path: Path) -> None:
    fix = _fix_of(tmp_path, "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-0)")
    text = _all_text(fix)
    assert "a higher --gpu-memory-utilization" in text and "VLLM_CPU_KVCACHE_SPACE" not in text
    assert fix["steps"][-1].startswith("to keep the full length instead")  # no CPU note under a GPU


def test_an_unknown_device_keeps_the_gpu_advice_with_a_labelled_note(tmp_path: Path) -> None:
    fix = _fix_of(tmp_path)
    assert "a higher --gpu-memory-utilization" in _all_text(fix)
    assert fix["steps"][-1].startswith("general guidance: on vLLM's CPU backend")
    assert all("env" not in alt or not alt["env"] for alt in fix["alternatives"])


@pytest.mark.parametrize("line", [
    "(APIServer pid=1) DEBUG 12-01 09:10:49 [__init__.py:226] Automatically detected platform cpu.",
    "(EngineCore_DP0 pid=2) INFO 11-18 13:44:01 [cpu_worker.py:91] OMP threads binding of Process 2:",
])
def test_cpu_start_up_lines_show_the_platform(line: str) -> None:
    assert shows_cpu_platform(line)


@pytest.mark.parametrize("line", [
    "INFO 12-01 09:10:49 [__init__.py:226] Automatically detected platform cuda.",
    "vllm serve /models/m --cpu-offload-gb 10 --swap-space 4",
    "INFO 12-01 09:10:50 [config.py:1200] CPU blocks: 2048",
])
def test_look_alikes_do_not_show_the_cpu_platform(line: str) -> None:
    assert not shows_cpu_platform(line)
