"""General guidance that names the feature whose code failed and the knob a limit message names (stop 46).

A limit the message states with its figure (reasoning/message_limits.py): vLLM's hybrid models' check
`max_num_seqs (N) exceeds available Mamba cache blocks (M). ... Please lower max_num_seqs to at most M ...`
(vllm-project/vllm#38632, NVIDIA-NeMo/RL#2620, vllm-project/vllm#49064) is told to set --max-num-seqs to M or less.
A failure in an optional feature's code that the launch turned on (reasoning/feature_code.py, facts/feature_code.toml):
SGLang's hierarchical KV cache (`hiradix_cache.py`, sgl-project/sglang#5410), vLLM's DeepGEMM behind
VLLM_USE_DEEP_GEMM=1.  The tracebacks are printed by real CPython from mirrored modules."""

from __future__ import annotations

from logsleuth.models import Diagnosis
from tests.helpers import diagnose_without_patterns, real_traceback
from tests.reasoning.diagnosed import first_diagnosis

MAMBA = ("ValueError: max_num_seqs (1024) exceeds available Mamba cache blocks (658). Each decode sequence requires "
         "one Mamba cache block, so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most 658 or "
         "increase gpu_memory_utilization.\n")

WRITING_CHECK = """
    class HiRadixCache:
        def __init__(self):
            self.ongoing_write_through = {}

        def writing_check(self):
            ack_id = 37
            self.dec_lock_ref(self.ongoing_write_through[ack_id])

    HiRadixCache().writing_check()
"""

DEEP_GEMM = """
    def m_grouped_fp8_gemm(shape):
        raise RuntimeError(f"DeepGEMM: unsupported shape {shape} for this GPU")

    m_grouped_fp8_gemm((7, 4096))
"""


def check_steps(diagnosis: Diagnosis) -> tuple[str, ...]:
    assert diagnosis.basis == "general" and diagnosis.fix is not None
    return diagnosis.fix.steps


def _steps(log: str) -> tuple[str, ...]:
    diagnosis = first_diagnosis(log)
    assert diagnosis.basis == "general" and diagnosis.fix is not None
    return diagnosis.fix.steps


def test_a_limit_with_its_figure_sets_the_flag_within_it() -> None:
    steps = _steps(MAMBA)
    assert "max_num_seqs must be at most 658 (it is 1024 now, per the message)" in steps[0]
    assert "Set --max-num-seqs to 658 or less" in steps[0]


def test_the_launch_s_own_value_is_named() -> None:
    log = "vllm serve /models/qwen --max-num-seqs 1024 --max-model-len 132000\n" + MAMBA
    assert "your launch gives --max-num-seqs 1024" in _steps(log)[0]


def test_at_least_comes_from_the_words() -> None:
    log = ("python3 -m sglang.launch_server --model-path /models/qwen --cuda-graph-max-bs 8\n"
           "AssertionError: cuda_graph_max_bs must be at least 16 when the draft worker captures its graphs\n")
    step = next(s for s in _steps(log) if "the message states the limit" in s)
    assert "cuda_graph_max_bs must be at least 16" in step and "your launch gives --cuda-graph-max-bs 8" in step
    assert "Set --cuda-graph-max-bs to 16 or more" in step


def test_a_name_no_release_s_flag_has_and_the_message_does_not_tell_to_change_is_no_setting() -> None:
    log = "vllm serve /models/llama\nValueError: num_lookup_slots (9) exceeds the table's capacity (8).\n"
    assert not any("the message states the limit" in step for step in _steps(log))


def test_a_failure_in_the_code_of_a_feature_the_launch_turned_on_says_so_first() -> None:
    log = ("python3 -m sglang.launch_server --model-path /models/qwen --enable-hierarchical-cache --port 30000\n"
           + real_traceback(WRITING_CHECK, "sglang/srt/mem_cache/hiradix_cache.py"))
    first = _steps(log)[0]
    assert first.startswith("General guidance: the check that failed is in the code of the hierarchical KV cache")
    assert "`--enable-hierarchical-cache`" in first and "Launching without it" in first


def test_the_feature_s_own_module_implies_its_flag_when_the_paste_shows_no_launch() -> None:
    first = _steps(real_traceback(WRITING_CHECK, "sglang/srt/mem_cache/hiradix_cache.py"))[0]
    assert "runs only when the launch turns it on with `--enable-hierarchical-cache`" in first
    assert "the paste does not show the launch" in first


def test_a_launch_that_does_not_turn_the_feature_on_gets_no_feature_step() -> None:
    log = ("python3 -m sglang.launch_server --model-path /models/qwen --port 30000\n"
           + real_traceback(WRITING_CHECK, "sglang/srt/mem_cache/hiradix_cache.py"))
    assert not any("hierarchical KV cache" in step for step in _steps(log))


def test_an_engine_environment_switch_counts() -> None:
    log = ("VLLM_USE_DEEP_GEMM=1 vllm serve /models/qwen3-moe-fp8 --tensor-parallel-size 2\n"
           + real_traceback(DEEP_GEMM, "vllm/model_executor/layers/fused_moe/deep_gemm_moe.py"))
    step = next(s for s in _steps(log) if "DeepGEMM" in s and "General guidance" in s)
    assert "`VLLM_USE_DEEP_GEMM=1`" in step and "unset or set to 0" in step


def test_the_figure_first_turns_the_direction_round() -> None:
    # vLLM's LoRA check (vllm/lora/peft_helper.py validate_legal), read here without the pattern that knows it:
    # the figure is the adapter's, the setting must come up to it.
    found = diagnose_without_patterns("vllm serve /models/llama --enable-lora\n"
                                      "ValueError: LoRA rank 64 is greater than max_lora_rank 16.\n")
    step = next(s for s in check_steps(found) if "the message states the limit" in s)
    assert "max_lora_rank must be at least 64" in step and "Set --max-lora-rank to 64 or more" in step


def test_a_platform_s_own_limit_told_with_or_lower() -> None:
    # tenstorrent/tt-inference-server#3120: the plugin's limit, its instruction capitalised and ending "or lower".
    log = ("ValueError: TT-LLama8B and TT-Llama11B do not support max_model_len greater than 32768 on N150 (received "
           "65536). Set --max_model_len to 32768 or lower in vLLM.\n")
    step = next(s for s in _steps(log) if "the message states the limit" in s)
    assert "--max_model_len must be at most 32768" in step and "to 32768 or less" in step


def test_a_flag_the_launch_does_not_give_is_said_with_the_releases_that_have_it() -> None:
    """No release named and the flag not in the launch: the step says which releases have it (stop 46's review)."""
    log = ("python3 -m sglang.launch_server --model-path /models/qwen\n"
           "AssertionError: cuda_graph_max_bs must be at least 16 when the draft worker captures its graphs\n")
    step = next(s for s in _steps(log) if "the message states the limit" in s)
    assert "Set --cuda-graph-max-bs (a flag of SGLang " in step and ") to 16 or more" in step


def test_the_implied_flags_are_each_said_with_the_releases_that_have_them() -> None:
    """vLLM's speculative code runs under --speculative-config in later releases and --speculative-model in earlier
    ones: with no launch and no release shown, each is named with its releases, neither as the user's (stop 46's
    review: the first of the row's flags was named alone, a flag older releases lack)."""
    first = _steps(real_traceback(WRITING_CHECK, "vllm/spec_decode/spec_decode_worker.py"))[0]
    assert "`--speculative-config` (vLLM " in first and " or `--speculative-model` (vLLM " in first
    assert "the paste does not show the launch" in first
