"""vLLM refusing a LoRA adapter above --max-lora-rank (patterns/vllm/lora-rank-above-max.toml): the value comes
from the adapter's rank in vLLM's message and the choices of the user's release; a release nobody names leaves
the value to the user.  The wordings are the ones the class reaches users in: the raise itself, the API server's
`Call to add_lora method failed` (gpustack/gpustack#5438), the engine core's `Worker failed with error '...'`
(hiyouga/LlamaFactory#9512)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "patterns" / "vllm-lora-rank-above-max"
API_SERVER = ("(APIServer pid=1) Exception: Call to add_lora method failed: LoRA rank 64 is greater than "
              "max_lora_rank 16.\n")
ENGINE_CORE = ("(EngineCore_DP0 pid=7) ERROR 11-19 12:54:26 [core.py:710] RuntimeError: Worker failed with error "
               "'LoRA rank 32 is greater than max_lora_rank 16.', please check the stack trace above for the root cause\n")


def _diagnosis(tmp_path: Path, text: str, *args: str) -> dict:
    log = tmp_path / "server.log"
    log.write_text(text)
    report = json.loads(run_cli("diagnose", str(log), "--format", "json", *args).stdout)
    return report["failures"][0]["diagnosis"]


def test_the_release_named_sets_the_smallest_accepted_rank() -> None:
    result = run_cli("diagnose", str(FIXTURES / "positive-0.11.0.log"), "--format", "json",
                     "--cmd", "vllm serve /models/m --enable-lora")
    fix = json.loads(result.stdout)["failures"][0]["diagnosis"]["fix"]
    assert [(op["op"], op["flag"], op["value"]) for op in fix["flags"]] == [("set", "--max-lora-rank", "64")]
    assert fix["command"] == "vllm serve /models/m --enable-lora --max-lora-rank 64"


@pytest.mark.parametrize(("text", "rank"), [(API_SERVER, "64"), (ENGINE_CORE, "32")])
def test_an_unnamed_release_leaves_the_value_to_the_user(tmp_path: Path, text: str, rank: str) -> None:
    diagnosis = _diagnosis(tmp_path, text)
    assert diagnosis["pattern"] == "vllm-lora-rank-above-max"
    assert diagnosis["fix"]["needs_input"] == ["--max-lora-rank"]
    assert diagnosis["fix"]["flags"] == [] and diagnosis["fix"]["command"] is None
    assert f"rank, {rank}" in diagnosis["fix"]["summary"]


def test_a_rank_above_every_choice_of_the_release_gets_no_flag(tmp_path: Path) -> None:
    text = API_SERVER.replace("LoRA rank 64", "LoRA rank 1024")
    diagnosis = _diagnosis(tmp_path, text, "--engine-version", "0.11.2")
    assert diagnosis["fix"]["flags"] == []
    assert "up to 512" in diagnosis["fix"]["summary"]


def test_the_bias_check_of_the_same_function_is_not_it() -> None:
    result = run_cli("diagnose", str(FIXTURES / "negative-0.11.0-bias.log"), "--format", "json")
    diagnosis = json.loads(result.stdout)["failures"][0]["diagnosis"]
    assert diagnosis["pattern"] != "vllm-lora-rank-above-max"
