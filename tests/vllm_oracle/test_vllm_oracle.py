"""The real `vllm serve` of both releases (the oracle venvs of scripts/oracle_vllm/setup.sh): the stop hook
passes a good command, and a fixture's failing command still fails with the same error (make test-oracle)."""

from __future__ import annotations

import sys
import tomllib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "scripts" / "oracle_vllm"))
import run as vllm_oracle  # noqa: E402

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("version", vllm_oracle.VERSIONS)
def test_a_valid_command_passes_validation(version: str) -> None:
    result = vllm_oracle.run_command_string(version, "vllm serve {tiny_llama} --max-model-len 2048")
    assert result.passed, result.output[-2000:]


@pytest.mark.parametrize("version", vllm_oracle.VERSIONS)
def test_a_fixture_command_still_fails_the_same_way(version: str) -> None:
    meta = tomllib.loads((REPO / "tests/fixtures/vllm" / version / "bad_choice_dtype.toml").read_text())
    result = vllm_oracle.run_command_string(version, meta["command"])
    assert not result.passed and result.returncode == 2
    assert meta["error"] in result.output
