"""vLLM refusing a LoRA adapter whose rank is above --max-lora-rank (default 16).

Pattern: vllm-lora-rank-above-max.

The check is vLLM's: WorkerLoRAManager._load_adapter (vllm/lora/worker_manager.py, 0.5.5 to 0.6.6.post1) raised
`LoRA rank R is greater than max_lora_rank M.` itself; from 0.7.3 PEFTHelper.validate_legal
(vllm/lora/peft_helper.py) appends the same sentence to its list of errors and raises them joined.  The frames
here follow 0.11.0 (the raise at line 127 of peft_helper.py).  Threads that show the class: gpustack/gpustack#5438
(the API server's `Call to add_lora method failed: ...`), hiyouga/LlamaFactory#9512 (the engine core's `Worker
failed with error '...'`).
"""

from __future__ import annotations

from ..engine import Case, Frame
from ..mirror import failing_at, frame_at
from .vllm import engine_crash

LORA_RANK = "vllm-lora-rank-above-max"
WORKER_MANAGER = "vllm/lora/worker_manager.py"
PEFT_HELPER = "vllm/lora/peft_helper.py"

# vllm/lora/peft_helper.py PEFTHelper.validate_legal (0.11.0): the rank check, then the bias one, then the raise.
_VALIDATE_LEGAL = '''
error_msg = self._validate_features()
if self.r > lora_config.max_lora_rank:
    error_msg.append(
        f"LoRA rank {self.r} is greater than max_lora_rank"
        f" {lora_config.max_lora_rank}."
    )
if self.bias != "none" and not lora_config.bias_enabled:
    error_msg.append("Adapter bias cannot be used without bias_enabled.")
if error_msg:
    raise ValueError(f"{' '.join(error_msg)}")
'''


def rank_check(rank: int, max_rank: int, bias: str = "none") -> tuple[Frame, ...]:
    """The worker's adapter load calling PEFTHelper.validate_legal with an adapter of `rank`."""
    return (
        frame_at(WORKER_MANAGER, "_load_adapter", "peft_helper.validate_legal(self.lora_config)", 114,
                 env=(("peft_helper", "HOP:validate_legal"), ("self", f"NS(lora_config=NS(max_lora_rank={max_rank}, bias_enabled=False))"))),
        failing_at(PEFT_HELPER, "validate_legal", _VALIDATE_LEGAL, 127, env=(
            ("self", f"NS(r={rank}, bias={bias!r}, _validate_features=lambda: [])"),
            ("lora_config", f"NS(max_lora_rank={max_rank}, bias_enabled=False)"))),
    )


# The engine core names its release when it starts (vllm/v1/engine/core.py EngineCore.__init__, 0.11.0).
_STARTED = (("INFO", "vllm/v1/engine/core.py", 77,
             "Initializing a V1 LLM engine (v0.11.0) with config: model='/models/m', enable_lora=True"),)


def _case(name: str, frames: tuple[Frame, ...]) -> Case:
    """The engine core process dying on it, as vLLM's `run_engine_core` logs and re-raises a failure (the frames
    between it and the worker's adapter load are left out)."""
    return engine_crash(LORA_RANK, name, "0.11.0", frames, records=_STARTED)


CASES = (
    _case("positive-0.11.0", rank_check(64, 16)),
    # The same check refusing the adapter's bias, not its rank: another failure.
    _case("negative-0.11.0-bias", rank_check(8, 16, bias="all")),
)
