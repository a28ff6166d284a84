"""vLLM runtime patterns fix with flag operations whose values come from the message's numbers or the launch
command (logsleuth/fixes/builders/vllm.py, the patterns' `[fix]` tables).

Each case diagnoses a pattern fixture (tests/fixtures/patterns/vllm-*/) with a launch command given as `--cmd`
(the fixtures themselves log none) and checks the fix's operations and values, the alternatives, and the
corrected commands.  tests/vllm_oracle/test_runtime_fixes_pass.py runs every printed command of these cases
through the real `vllm serve` of both oracle releases.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.helpers import run_cli

FIXTURES = Path(__file__).resolve().parent / "fixtures" / "patterns"
MODEL = "{model}"  # replaced by a model directory whose config.json has the case's `model` shape


@dataclass(frozen=True)
class ModelShape:
    """What vLLM's config validation reads of a model: its heads and its context length."""

    heads: int = 32
    kv_heads: int = 8
    max_positions: int = 131072

    def config(self) -> dict[str, Any]:
        return {
            "architectures": ["LlamaForCausalLM"], "model_type": "llama", "torch_dtype": "bfloat16",
            "hidden_size": self.heads * 8, "intermediate_size": self.heads * 16, "num_hidden_layers": 2,
            "num_attention_heads": self.heads, "num_key_value_heads": self.kv_heads,
            "max_position_embeddings": self.max_positions, "rms_norm_eps": 1e-5, "rope_theta": 10000.0,
            "vocab_size": 256, "bos_token_id": 1, "eos_token_id": 2, "hidden_act": "silu",
            "tie_word_embeddings": False,
        }


Op = tuple[str, str, str | None]  # (op, flag, value)


@dataclass(frozen=True)
class Case:
    fixture: str  # pattern directory / log file
    command: str  # with {model}
    ops: tuple[Op, ...]  # the fix's flag operations
    alternatives: tuple[tuple[Op, ...], ...] = ()  # each alternative's flag operations, in order
    model: ModelShape = field(default_factory=ModelShape)

    @property
    def id(self) -> str:
        return self.fixture.replace("/", ":") + (" " + self.command.split(MODEL, 1)[1].strip()).rstrip()


CASES = (
    # vLLM's estimate from the message; FP8 alone would not fit (16 GiB / 2 > 6.93 GiB): no FP8 alternative.
    Case("vllm-max-model-len-exceeds-kv-cache/positive-0.11.0.log", f"vllm serve {MODEL} --max-model-len 131072",
         (("set", "--max-model-len", "56768"),)),
    Case("vllm-max-model-len-exceeds-kv-cache/positive-0.33.0.log", f"vllm serve {MODEL} --max-model-len 131072",
         (("set", "--max-model-len", "34816"),)),
    # V0: the KV cache's 23648 tokens; twice that holds 32768, so FP8 is an alternative.
    Case("vllm-max-model-len-exceeds-kv-cache-v0/positive-0.6.6.post1.log", f"vllm serve {MODEL} --max-model-len 32768",
         (("set", "--max-model-len", "23648"),), ((("set", "--kv-cache-dtype", "fp8"),),),
         ModelShape(max_positions=32768)),
    Case("vllm-max-model-len-exceeds-derived/positive-0.11.0.log", f"vllm serve {MODEL} --max-model-len 262144",
         (("set", "--max-model-len", "131072"),), ((("remove", "--max-model-len", None),),)),
    Case("vllm-max-model-len-exceeds-derived/positive-0.6.6.post1.log", f"vllm serve {MODEL} --max-model-len 131072",
         (("set", "--max-model-len", "32768"),), ((("remove", "--max-model-len", None),),),
         ModelShape(max_positions=32768)),
    # 59.32 / 79.19 GiB free = 0.749: 0.74; 18.42 / 23.53 = 0.783: 0.78.
    Case("vllm-free-memory-below-utilization/positive-0.11.0.log", f"vllm serve {MODEL}",
         (("set", "--gpu-memory-utilization", "0.74"),)),
    Case("vllm-free-memory-below-utilization/positive-0.33.0.log", f"vllm serve {MODEL} --gpu-memory-utilization 0.9",
         (("set", "--gpu-memory-utilization", "0.78"),)),
    # The adapter's rank 64 from the message; 64 is one of 0.11.0's --max-lora-rank choices.
    Case("vllm-lora-rank-above-max/positive-0.11.0.log", f"vllm serve {MODEL} --enable-lora",
         (("set", "--max-lora-rank", "64"),)),
    Case("vllm-bf16-unsupported-gpu/positive-0.11.0.log", f"vllm serve {MODEL}", (("set", "--dtype", "half"),)),
    Case("vllm-bf16-unsupported-gpu/positive-0.6.6.post1-no-space.log", f"vllm serve {MODEL} --dtype bfloat16",
         (("set", "--dtype", "half"),)),
    # vLLM's default port is 8000, not SGLang's 30000.
    Case("vllm-port-in-use/positive-0.11.0-apiserver.log", f"vllm serve {MODEL}", (("set", "--port", "8001"),)),
    Case("vllm-port-in-use/positive-0.11.0-apiserver.log", f"vllm serve {MODEL} --port 9000",
         (("set", "--port", "9001"),)),
    # 28 heads, 8 asked: 7 divides 28 but not the KV heads or hidden sizes of such models; 4 does.
    Case("vllm-tp-heads-divisible/positive-0.11.0-apiserver.log", f"vllm serve {MODEL} --tensor-parallel-size 8",
         (("set", "--tensor-parallel-size", "4"),), model=ModelShape(heads=28, kv_heads=4)),
    Case("vllm-tp-heads-divisible/positive-0.11.0-apiserver.log", f"vllm serve {MODEL} -tp 8",
         (("set", "-tp", "4"),), model=ModelShape(heads=28, kv_heads=4)),
    # capture_model runs after the KV cache is allocated: a lower utilization is an alternative there.
    Case("vllm-oom-cuda-graph/positive-0.11.0.log", f"vllm serve {MODEL} --gpu-memory-utilization 0.95",
         (("add", "--enforce-eager", None),), ((("set", "--gpu-memory-utilization", "0.9"),),)),
    Case("vllm-oom-cuda-graph/positive-0.33.0-profiling-graph-memory.log", f"vllm serve {MODEL}",
         (("add", "--enforce-eager", None),)),
    # V1 profiles --max-num-batched-tokens tokens; the sampler's warm-up names its 256 dummy requests.
    Case("vllm-oom-profiling/positive-0.11.0.log", f"vllm serve {MODEL} --max-num-batched-tokens 8192 --max-num-seqs 256",
         (("set", "--max-num-batched-tokens", "4096"),), ((("set", "--max-num-seqs", "128"),),)),
    Case("vllm-oom-profiling/positive-0.33.0-sampler-warmup.log", f"vllm serve {MODEL}",
         (("set", "--max-num-seqs", "128"),)),
    Case("vllm-oom-weight-load/positive-0.11.0-linear-weights.log", f"CUDA_VISIBLE_DEVICES=0,1 vllm serve {MODEL}",
         (("set", "--tensor-parallel-size", "2"),)),
)


def diagnose(case: Case, model_dir: str) -> dict[str, Any]:
    """The primary failure's diagnosis for the case's fixture and command."""
    result = run_cli("diagnose", str(FIXTURES / case.fixture), "--format", "json",
                     "--cmd", case.command.replace(MODEL, model_dir))
    report = json.loads(result.stdout)
    diagnosis: dict[str, Any] = report["failures"][0]["diagnosis"]
    return diagnosis


def ops_of(fix: dict[str, Any]) -> tuple[Op, ...]:
    return tuple((f["op"], f["flag"], f["value"]) for f in fix["flags"])


def printed_commands(fix: dict[str, Any]) -> list[str]:
    """Every corrected command the fix prints: its own and its alternatives'."""
    return [c for f in (fix, *fix["alternatives"]) if (c := f.get("command"))]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_fix_has_the_flag_operations_and_values(case: Case) -> None:
    diagnosis = diagnose(case, "/models/m")
    assert diagnosis["pattern"] == case.fixture.split("/")[0]
    fix = diagnosis["fix"]
    assert ops_of(fix) == case.ops
    assert tuple(ops_of(alt) for alt in fix["alternatives"]) == case.alternatives
    assert fix["needs_input"] == []
    # Each printed command is the original with the fix's operations applied.
    assert fix["command"] is not None
    for op, flag, value in case.ops:
        if op == "set":
            assert f"{flag} {value}" in fix["command"]
        elif op == "add":
            assert flag in fix["command"].split()


def _fixture_fix(fixture: str, command: str | None = None) -> dict[str, Any]:
    args = ["diagnose", str(FIXTURES / fixture), "--format", "json"] + (["--cmd", command] if command else [])
    fix: dict[str, Any] = json.loads(run_cli(*args).stdout)["failures"][0]["diagnosis"]["fix"]
    return fix


def test_a_value_nothing_gives_is_left_to_the_user() -> None:
    # No CUDA_VISIBLE_DEVICES in the command: how many GPUs there are is the user's to say.
    fix = _fixture_fix("vllm-oom-weight-load/positive-0.33.0.log", "vllm serve /models/m")
    assert ops_of(fix) == (("set", "--tensor-parallel-size", None),)
    assert fix["needs_input"] == ["--tensor-parallel-size"] and fix["command"] is None
    # One visible GPU for tensor-parallel size 1: no GPUs to double it onto.
    fix = _fixture_fix("vllm-oom-weight-load/positive-0.33.0.log", "CUDA_VISIBLE_DEVICES=3 vllm serve /models/m")
    assert fix["needs_input"] == ["--tensor-parallel-size"]


def test_values_from_the_message_stand_without_a_command() -> None:
    fix = _fixture_fix("vllm-free-memory-below-utilization/positive-0.33.0.log")
    assert ops_of(fix) == (("set", "--gpu-memory-utilization", "0.78"),) and fix["command"] is None
    fix = _fixture_fix("vllm-max-model-len-exceeds-kv-cache/positive-0.33.0.log")
    assert ops_of(fix) == (("set", "--max-model-len", "34816"),)


def test_an_fp8_cache_already_is_not_offered_again() -> None:
    fix = _fixture_fix("vllm-max-model-len-exceeds-kv-cache-v0/positive-0.6.6.post1.log",
                       "vllm serve /models/m --kv-cache-dtype fp8_e5m2")
    assert fix["alternatives"] == []


def test_an_eager_launch_gets_no_second_enforce_eager() -> None:
    fix = _fixture_fix("vllm-oom-cuda-graph/positive-0.11.0.log", "vllm serve /models/m --enforce-eager")
    assert ("add", "--enforce-eager", None) not in ops_of(fix)


def test_a_utilization_at_the_floor_is_not_lowered() -> None:
    fix = _fixture_fix("vllm-oom-cuda-graph/positive-0.11.0.log", "vllm serve /models/m --gpu-memory-utilization 0.5")
    # Already at the floor: no lower utilization is offered, eager mode stays.
    assert ops_of(fix) == (("add", "--enforce-eager", None),) and fix["alternatives"] == []
