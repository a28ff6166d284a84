"""Every corrected command logsleuth prints for the vLLM runtime patterns (the cases of tests/test_vllm_fixes.py)
passes the real `vllm serve` validation of both oracle releases (scripts/oracle_vllm: argparse and
EngineArgs.create_engine_config, on vLLM's CPU platform).

What the CPU run cannot check is the point of the fix itself (whether the KV cache then fits, the port is free,
the GPU has the memory): those need a GPU.  What it does check is that the printed command is one vLLM
accepts: the flags exist, the values parse and are in range, --max-model-len is within the model's own
length, the tensor-parallel size divides the heads.
"""

from __future__ import annotations

import json
import shlex
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.test_vllm_fixes import CASES, Case, diagnose, printed_commands

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts" / "oracle_vllm"))
import run as vllm_oracle  # noqa: E402

pytestmark = pytest.mark.oracle

# vLLM 0.11.2's CpuPlatform.check_and_update_config refuses an FP8 KV cache next to chunked prefill and prefix
# caching (vllm/platforms/cpu.py); the CUDA platform has no such check.  A command stopped by it alone is run
# again with both turned off, so the rest of it is still validated on 0.11.2.
CPU_ONLY_FP8_CHECK = "Chunked-prefill and prefix-cache on the CPU backend is not compatible with FP8 KV cache"
CPU_FP8_WORKAROUND = " --no-enable-chunked-prefill --no-enable-prefix-caching"


def _model_dir(case: Case, root: Path) -> Path:
    directory = root / f"model-{case.model.heads}h-{case.model.kv_heads}kv-{case.model.max_positions}"
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "config.json").write_text(json.dumps(case.model.config()))
    return directory


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_every_printed_command_passes_vllm_validation(case: Case, tmp_path: Path) -> None:
    model = _model_dir(case, tmp_path)
    commands = printed_commands(diagnose(case, str(model))["fix"])
    assert commands, "the case has a launch command: the fix must print a corrected one"
    # The two releases are checked side by side: each check is one `vllm serve` start-up that keeps one core
    # busy for seconds, and CI has two cores.
    with ThreadPoolExecutor(max_workers=len(vllm_oracle.VERSIONS)) as pool:
        rejections = pool.map(lambda version: rejected_commands(version, commands), vllm_oracle.VERSIONS)
    rejected = [rejection for per_version in rejections for rejection in per_version]
    assert not rejected, "\n\n".join(rejected)


def rejected_commands(version: str, commands: list[str]) -> list[str]:
    """Each command the real vLLM ``version`` refuses, with the end of its output."""
    rejected = []
    for command in commands:
        env, serve = split_env(command)
        result = vllm_oracle.run_command_string(version, serve, extra_env=env)
        if not result.passed and version == "0.11.2" and CPU_ONLY_FP8_CHECK in result.output:
            result = vllm_oracle.run_command_string(version, serve + CPU_FP8_WORKAROUND, extra_env=env)
        if not result.passed:
            rejected.append(f"vllm {version} refused: {command}\n{result.output[-3000:]}")
    return rejected


def split_env(command: str) -> tuple[dict[str, str], str]:
    """`CUDA_VISIBLE_DEVICES=0,1 vllm serve …` -> ({"CUDA_VISIBLE_DEVICES": "0,1"}, "vllm serve …")."""
    words = shlex.split(command)
    env: dict[str, str] = {}
    while words and "=" in words[0] and not words[0].startswith("-"):
        name, _, value = words.pop(0).partition("=")
        env[name] = value
    return env, shlex.join(words)
