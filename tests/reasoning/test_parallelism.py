"""Parallelism arithmetic (issue 28, class 5): a degree that does not divide a model's size gets the degrees that do.

The logs are our own text in the engines' real wordings: each test cites the raise site in the oracle venvs
(facts/divisibility.toml lists them) or the thread whose shape it follows."""

from __future__ import annotations

import shlex

from logsleuth.api import DiagnoseOptions
from tests.reasoning.diagnosed import app_traceback, category_of, first_diagnosis

# sglang/srt/layers/quantization/fp8.py (0.5.9 line 293): a dense layer of a block-FP8 checkpoint over 32 GPUs; the
# numbers of sgl-project/sglang#3345 (intermediate 18432 / tp 32 = 576, not a multiple of 128).
SGLANG_BLOCK_N = """\
$ python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp-size 32 --nnodes 4 --node-rank 0 --dist-init-addr 10.1.0.5:5000 --trust-remote-code
[2026-02-01 08:00:00] server_args=ServerArgs(model_path='/models/DeepSeek-R1', tp_size=32, nnodes=4, node_rank=0, ...)
[2026-02-01 08:01:10 TP3] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2900, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/quantization/fp8.py", line 293, in create_weights
    raise ValueError(
ValueError: Weight output_partition_size = 576 is not divisible by weight quantization block_n = 128.
"""


def test_a_block_quantized_partition_gets_the_largest_tp_whose_share_is_whole_blocks() -> None:
    diagnosis = first_diagnosis(SGLANG_BLOCK_N)
    assert diagnosis.basis == "rule" and diagnosis.category == "parallel-config"
    assert diagnosis.fix is not None
    assert [(op.flag, op.value) for op in diagnosis.fix.flags] == [("--tp-size", "16")]  # 18432 / 16 = 1152 = 9 x 128
    assert any("576 per GPU x tp 32 = 18432" in fact for fact in diagnosis.evidence)
    assert any(fact.startswith("tp 1, 2, 3, 4, 6, 8, 9, 12, 16, 18, 24, 36, 48, 72, 144 give whole blocks") for fact in diagnosis.evidence)
    # The corrected command is the user's own launch with the one flag changed.
    assert diagnosis.fix.command is not None
    words = shlex.split(diagnosis.fix.command)
    assert words[words.index("--tp-size") + 1] == "16" and "--dist-init-addr" in words and "32" not in words


# vllm/model_executor/layers/quantization/utils/fp8_utils.py validate_fp8_block_shape_moe (0.33.0 line 1364): a MoE
# FP8 checkpoint whose 768-wide expert layers are split over 4 GPUs (the case of vllm-project/vllm PR#44763).
VLLM_MOE_BLOCK_N = """\
INFO 05-02 10:00:00 [api_server.py:1] vLLM API server version 0.11.2
(Worker_TP1 pid=3301) ERROR 05-02 10:00:30 [multiproc_executor.py:671] WorkerProc failed to start.
(Worker_TP1 pid=3301) ERROR 05-02 10:00:30 [multiproc_executor.py:671] Traceback (most recent call last):
(Worker_TP1 pid=3301) ERROR 05-02 10:00:30 [multiproc_executor.py:671]   File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/quantization/fp8.py", line 696, in create_weights
(Worker_TP1 pid=3301) ERROR 05-02 10:00:30 [multiproc_executor.py:671]     raise ValueError(
(Worker_TP1 pid=3301) ERROR 05-02 10:00:30 [multiproc_executor.py:671] ValueError: The output_size of gate's and up's weight = 192 is not divisible by weight quantization block_n = 128.
"""


def test_a_moe_block_failure_without_the_launch_command_names_the_flag_in_words_and_expert_parallelism() -> None:
    options = DiagnoseOptions(include_user_patterns=False, command="vllm serve Qwen/Qwen3-30B-A3B-FP8 -tp 4 --port 8001")
    diagnosis = first_diagnosis(VLLM_MOE_BLOCK_N, options)
    assert diagnosis.basis == "rule" and diagnosis.engine == "vllm"
    fix = diagnosis.fix
    assert fix is not None
    # 768 / 2 = 384 = 3 x 128; the command spells the flag -tp, so the fix changes that word
    assert [(op.flag, op.value) for op in fix.flags] == [("-tp", "2")]
    assert fix.command == "vllm serve Qwen/Qwen3-30B-A3B-FP8 -tp 2 --port 8001"
    assert any("--enable-expert-parallel" in step for step in fix.steps)
    assert not any("--ep-size" in text for text in (fix.summary, *fix.steps))  # no SGLang flag for vLLM

    without_command = first_diagnosis(VLLM_MOE_BLOCK_N)
    assert without_command.fix is not None and without_command.fix.command is None
    assert "tensor-parallel size" in without_command.fix.summary and "--tensor-parallel-size" in without_command.fix.summary


# SGLang's model code checks heads with a bare assert (sglang/srt/models/qwen2.py line 122, llama.py line 139 in
# 0.5.9): the head count comes from the config the log printed, the degree from server_args.
SGLANG_HEADS_ASSERT = """\
[2026-03-01 09:00:00] server_args=ServerArgs(model_path='/models/llama-13b', tp_size=16, port=30000, ...)
[2026-03-01 09:00:05 TP0] WARNING model config: {"num_attention_heads": 40, "num_key_value_heads": 40, "hidden_size": 5120}
[2026-03-01 09:00:10 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2900, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/models/llama.py", line 139, in __init__
    assert self.total_num_heads % tp_size == 0
AssertionError
"""


def test_a_bare_heads_assert_reads_the_heads_from_the_printed_config() -> None:
    diagnosis = first_diagnosis(SGLANG_HEADS_ASSERT)
    assert diagnosis.basis == "rule" and diagnosis.category == "parallel-config"
    assert "tp 1, 2, 4, 5, 8, 10 divide 40 attention heads; 16 does not" in diagnosis.evidence
    assert diagnosis.fix is not None
    assert [(op.flag, op.value) for op in diagnosis.fix.flags] == [("--tp-size", "8")]


def test_an_earlier_launchs_config_sizes_nothing_of_the_launch_that_failed() -> None:
    """An earlier launch in the same log printed another model's heads (40, an INFO line): the failing launch (tp 16) prints none,
    so no division is stated and no --tp-size is set from the other model's heads (review of advice17, H1)."""
    earlier = ("[2026-03-01 08:00:00] server_args=ServerArgs(model_path='/models/llama-13b', tp_size=4, port=30000)\n"
               '[2026-03-01 08:00:05 TP0] model config: {"num_attention_heads": 40, "num_key_value_heads": 40}\n'
               "[2026-03-01 08:10:00 TP0] The server is fired up and ready to roll!\n")
    failing = SGLANG_HEADS_ASSERT.replace("/models/llama-13b", "/models/other-model").splitlines(keepends=True)
    diagnosis = first_diagnosis(earlier + failing[0] + "".join(failing[2:]))
    assert not any("40 attention heads" in line for line in diagnosis.evidence)
    assert diagnosis.fix is None or ("--tp-size", "8") not in [(op.flag, op.value) for op in diagnosis.fix.flags]


# vllm/models/deepseek_v4/nvidia/model.py (0.33.0 line 357), the shape of vllm-project/vllm#52435: vLLM has no EP size
# flag (the EP size is tp x dp with --enable-expert-parallel), so the degree is given in words.
VLLM_EXPERTS = """\
INFO 08-15 14:56:15 [api_server.py:1] vLLM API server version 0.33.0
(EngineCore pid=415) ERROR 08-15 14:57:00 [core.py:1] EngineCore failed to start.
(EngineCore pid=415) ERROR 08-15 14:57:00 [core.py:1] Traceback (most recent call last):
(EngineCore pid=415) ERROR 08-15 14:57:00 [core.py:1]   File "/usr/local/lib/python3.12/dist-packages/vllm/models/deepseek_v4/nvidia/model.py", line 356, in __init__
(EngineCore pid=415) ERROR 08-15 14:57:00 [core.py:1]     assert self.n_physical_experts % self.ep_size == 0, (
(EngineCore pid=415) ERROR 08-15 14:57:00 [core.py:1] AssertionError: n_physical_experts=256 must be divisible by ep_size=3. Adjust num_redundant_experts.
"""


def test_experts_over_an_expert_parallel_size_get_the_divisors_and_no_flag_vllm_lacks() -> None:
    diagnosis = first_diagnosis(VLLM_EXPERTS)
    assert diagnosis.basis == "rule" and diagnosis.category == "parallel-config"
    assert "ep 1, 2 divide 256 experts; 3 does not" in diagnosis.evidence
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and fix.command is None
    assert "of 2" in fix.summary and "--enable-expert-parallel" in fix.summary and "--ep-size" not in fix.summary


# A message that names no engine's model size is not this rule's (a bare divisibility of something else).
def test_a_divisibility_message_about_something_else_is_left_alone() -> None:
    assert category_of(app_traceback("ValueError: batch size 30 must be divisible by micro batch 4")) != "parallel-config"


# The other branch of SGLang's KV-head check (sglang/srt/models/qwen2.py line 132 in 0.5.9): fewer KV heads than
# GPUs, each copied, so the degree must be a multiple of them.  No config in the log: the advice says where to look.
SGLANG_KV_REPLICA_ASSERT = """\
[2026-03-02 09:00:00] server_args=ServerArgs(model_path='/models/qwen2-7b', tp_size=12, port=30000, ...)
[2026-03-02 09:00:10 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/models/qwen2.py", line 132, in __init__
    assert tp_size % self.total_num_kv_heads == 0
AssertionError
"""


def test_the_kv_copy_branch_without_the_config_says_divide_or_multiple_and_where_the_number_is() -> None:
    diagnosis = first_diagnosis(SGLANG_KV_REPLICA_ASSERT)
    assert diagnosis.basis == "rule" and diagnosis.category == "parallel-config"
    assert any("the model's KV heads are not in the log" in fact for fact in diagnosis.evidence)
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and fix.command is None  # no number to set without the head count
    assert "multiple" in fix.summary and "num_key_value_heads" in fix.summary and "--tp-size" in fix.summary


# sglang/srt/model_executor/model_runner.py check_quantized_moe_compatibility (0.5.9 line 724): the MoE layers are
# split over tp / ep GPUs; 1536 / 16 = 96 is not a multiple of 128.  The message names tp 16 itself.
SGLANG_QUANTIZED_MOE = """\
[2026-03-03 09:00:10 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_executor/model_runner.py", line 722, in check_quantized_moe_compatibility
    raise ValueError(
ValueError: For quantized MoE models, please make sure (moe_intermediate_size=1536 / moe_tp_size=16) % weight_block_size_n=128 == 0 where moe_tp_size is equal to tp_size (16) divided by ep_size (1). You can fix this by setting arguments `--tp` and `--ep` correctly.
"""


def test_a_quantized_moe_split_raises_the_expert_parallel_size_until_it_fits() -> None:
    diagnosis = first_diagnosis(SGLANG_QUANTIZED_MOE)
    assert diagnosis.basis == "rule" and diagnosis.category == "parallel-config"
    # moe_tp must leave 1536 / moe_tp a multiple of 128: 1, 2, 3, 4, 6, 12; the largest power of two under 16 is 4
    assert any(fact.startswith("moe_tp 1, 2, 3, 4, 6, 12 give whole blocks") for fact in diagnosis.evidence)
    fix = diagnosis.fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--ep-size", "4")]
    assert "16 / 4 = 4" in fix.summary


# sglang/srt/layers/quantization/fp8.py Fp8MoEMethod.create_weights (0.5.9 line 729): with --ep-size 2 the MoE layers
# are split over 16 / 2 = 8 GPUs, so 96 per GPU is 768 in all; the way out is more expert parallelism, not less TP.
SGLANG_MOE_WEIGHT_WITH_EP = """\
$ python3 -m sglang.launch_server --model-path /models/moe-fp8 --tp-size 16 --ep-size 2 --nnodes 2 --node-rank 0 --dist-init-addr 10.1.0.5:5000
[2026-03-04 09:00:10 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/quantization/fp8.py", line 729, in create_weights
    raise ValueError(
ValueError: The output_size of gate's and up's weight = 96 is not divisible by weight quantization block_n = 128.
"""


def test_a_moe_weight_under_expert_parallelism_raises_ep_not_lowers_tp() -> None:
    diagnosis = first_diagnosis(SGLANG_MOE_WEIGHT_WITH_EP)
    assert any("96 per GPU x moe_tp 8 = 768" in fact for fact in diagnosis.evidence)
    fix = diagnosis.fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--ep-size", "8")]  # 768 / (16 / 8) = 384
    assert fix.command is not None and "--tp-size 16" in fix.command and "--ep-size 8" in fix.command


# Stop 38's blind split (issue 28): the KV-heads check pasted as its last frame and the assert alone, and the same
# check's other spellings across model files and releases (the raise site index; facts/divisibility.toml's sources).
KV_ASSERT_LAST_FRAME = """\
python3 -m sglang.launch_server --model-path /models/ling-lite --tp 8
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/models/bailing_moe.py", line 231, in __init__
    assert self.total_kv_heads % attn_tp_size == 0
AssertionError
"""


def test_the_kv_heads_assert_alone_with_its_frame_is_the_divisibility_rule_in_any_spelling() -> None:
    for spelling in ("self.total_kv_heads % attn_tp_size", "self.total_num_key_value_heads % tp_size",
                     "self.num_total_kv_heads % self.tp_size", "self.total_num_kv_heads % tp_world_size",
                     "self.multi_query_group_num % tp_size"):
        log = KV_ASSERT_LAST_FRAME.replace("self.total_kv_heads % attn_tp_size", spelling)
        diagnosis = first_diagnosis(log)
        assert (diagnosis.basis, diagnosis.category) == ("rule", "parallel-config"), spelling
        assert diagnosis.fix is not None and "--tp-size" in diagnosis.fix.summary, spelling


def test_the_strict_kv_heads_assert_offers_no_multiple_the_copy_branch_does() -> None:
    # `assert total_num_kv_heads % tp_size == 0` is unconditional in older model files (no branch that copies heads):
    # only a size that divides the KV heads passes it; `assert tp_size % total_num_kv_heads == 0` is the copy branch.
    strict = first_diagnosis(KV_ASSERT_LAST_FRAME.replace("self.total_kv_heads % attn_tp_size", "self.total_num_kv_heads % tp_size"))
    copies = first_diagnosis(KV_ASSERT_LAST_FRAME.replace("self.total_kv_heads % attn_tp_size", "tp_size % self.total_num_kv_heads"))
    assert strict.fix is not None and copies.fix is not None
    assert "divides the model's KV heads" in strict.fix.summary and "multiple" not in strict.fix.summary + strict.root_cause
    assert "multiple of them" in copies.fix.summary


def test_the_kv_heads_messages_of_other_model_files_get_the_degrees_that_fit() -> None:
    launch = "vllm serve /models/m --tensor-parallel-size 8\n"
    cases = {
        # vllm/model_executor/models/param2moe.py: the strict split
        "ValueError: num_key_value_heads (4) must be divisible by tensor-parallel world size (8).": "4",
        # vllm/model_executor/models/mimo_v2.py: the copy branch, the degree printed first
        "ValueError: tp_size=12 must be divisible by num_kv_heads=8.": "8",
    }
    for message, degree in cases.items():
        diagnosis = first_diagnosis(launch + message + "\n")
        assert (diagnosis.basis, diagnosis.category) == ("rule", "parallel-config"), message
        assert diagnosis.fix is not None and [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [
            ("set", "--tensor-parallel-size", degree)], message


def test_the_kv_heads_check_without_numbers_reads_the_launch_and_says_where_the_size_is() -> None:
    # sglang/srt/models/nanbeige.py: 'num_key_value_heads must be divisible by tp_size.'
    diagnosis = first_diagnosis("python3 -m sglang.launch_server --model-path /models/m --tp 8\n"
                                "AssertionError: num_key_value_heads must be divisible by tp_size.\n")
    assert (diagnosis.basis, diagnosis.category) == ("rule", "parallel-config")
    assert diagnosis.fix is not None and "num_key_value_heads" in diagnosis.fix.summary


# The engines' shared helper, printed by real CPython: vllm/distributed/utils.py and sglang/srt/distributed/utils.py
# ensure_divisibility, whose message names no size; the launch's degree says which side of it is the GPUs.
ENSURE_DIVISIBILITY = '''
def ensure_divisibility(numerator, denominator):
    assert numerator % denominator == 0, "{} is not divisible by {}".format(numerator, denominator)

ensure_divisibility(NUMERATOR, DENOMINATOR)
'''


def _helper_failure(numerator: int, denominator: int, path: str) -> str:
    from tests.helpers import real_traceback

    code = ENSURE_DIVISIBILITY.replace("NUMERATOR", str(numerator)).replace("DENOMINATOR", str(denominator))
    return real_traceback(code, path)


def test_the_shared_divisibility_helper_reads_the_degree_from_the_launch() -> None:
    split = first_diagnosis("vllm serve Qwen/Qwen2.5-7B-Instruct --tensor-parallel-size 3\n"
                            + _helper_failure(28, 3, "vllm/distributed/utils.py"))
    assert (split.pattern, split.category) == ("rule-parallelism-ensure-divisibility", "parallel-config")
    assert split.fix is not None and [(op.flag, op.value) for op in split.fix.flags] == [("--tensor-parallel-size", "2")]
    copies = first_diagnosis("python -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --tp 6\n"
                             + _helper_failure(6, 4, "sglang/srt/distributed/utils.py"))
    assert copies.pattern == "rule-parallelism-ensure-divisibility" and "KV heads" in copies.root_cause
    assert copies.fix is not None and [(op.flag, op.value) for op in copies.fix.flags] == [("--tp-size", "4")]


def test_the_shared_divisibility_helper_without_the_degree_in_the_log_claims_no_arithmetic() -> None:
    assert category_of(_helper_failure(28, 3, "vllm/distributed/utils.py")) is None


def test_a_release_without_pipeline_parallelism_is_not_offered_it() -> None:
    # SGLang's catalogs have --pp-size from 0.4.7 on: a 0.4.6 launch keeps its GPUs with data parallelism only
    log = KV_ASSERT_LAST_FRAME.replace("self.total_kv_heads % attn_tp_size", "self.total_num_kv_heads % tp_size")
    old = first_diagnosis("[2025-03-01 10:00:00] sglang version: 0.4.6\n" + log)
    new = first_diagnosis("[2025-03-01 10:00:00] sglang version: 0.5.9\n" + log)
    assert old.fix is not None and new.fix is not None
    assert not any("pipeline parallelism (tensor" in step for step in old.fix.steps)
    assert any("data parallelism" in step for step in old.fix.steps)
    assert any("pipeline parallelism (tensor" in step for step in new.fix.steps)


# A divisibility check whose message names no size and no check the rules know (a linear layer's own words), in a
# launch whose model config is printed at INFO level, as SGLang and transformers print it: general guidance, with the
# division of each printed size by the launch's degree (QKVParallelLinear and MergedColumnParallelLinear split the
# heads and the intermediate size with divide(): sglang/srt/layers/linear.py, vllm/model_executor/layers/linear.py).
GENERAL_SPLIT = """\
[2026-03-01 10:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=6, ep_size=1, port=30000)
[2026-03-01 10:00:01] Model config: {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8}
[2026-03-01 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2000, in run_scheduler_process
    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/linear.py", line 300, in __init__
    self.output_size_per_partition = split_size(output_size, tp_size)
ValueError: the output size is not divisible by the tensor parallel size
"""


def _arithmetic_step(log: str) -> str:
    diagnosis = first_diagnosis(log)
    assert diagnosis.basis == "general" and diagnosis.category == "parallel-config", diagnosis
    assert diagnosis.fix is not None and diagnosis.fix.command is None and not diagnosis.fix.flags  # options, no command
    return next((step for step in diagnosis.fix.steps if "config the log prints" in step), "")


def test_general_guidance_states_the_division_from_the_printed_config() -> None:
    step = _arithmetic_step(GENERAL_SPLIT)
    assert "num_attention_heads 32 / tensor-parallel size 6 = 5.33 (not whole)" in step, step
    assert "num_key_value_heads 8 / tensor-parallel size 6 = 1.33 (not whole, nor a multiple)" in step
    assert "The division that fails: attention heads 32 by 6; KV heads 8 by 6; intermediate size 14336 by 6." in step
    assert step.endswith(": 1, 2, 4, 8, 16, 32."), step


def test_a_block_quantized_intermediate_size_is_checked_against_its_block() -> None:
    """18432 / 32 = 576 divides, but is no whole number of 128-wide blocks (sgl-project/sglang#3345's numbers)."""
    log = (GENERAL_SPLIT.replace("tp_size=6", "tp_size=32").replace('"intermediate_size": 14336', '"intermediate_size": 18432')
           .replace('"num_key_value_heads": 8}', '"num_key_value_heads": 8, "quantization_config": {"weight_block_size": [128, 128]}}'))
    step = _arithmetic_step(log)
    assert "intermediate_size 18432 / tensor-parallel size 32 = 576 (not a multiple of the quantization block)" in step, step
    assert "The division that fails: intermediate size 18432 by 32." in step
    assert step.endswith(": 1, 2, 4, 8, 16."), step  # 18432 / 16 = 1152 = 9 x 128; 32 fails


def test_sizes_printed_twice_with_different_values_are_not_used() -> None:
    """A multimodal config prints the text model's and the vision tower's heads under one name: which the failing
    check read is unknown, so neither is divided."""
    log = GENERAL_SPLIT.replace(
        '[2026-03-01 10:00:05 TP0]', '[2026-03-01 10:00:02] vision_config: {"num_attention_heads": 16}\n[2026-03-01 10:00:05 TP0]', 1)
    step = _arithmetic_step(log)
    assert "num_attention_heads" not in step and "num_key_value_heads 8" in step, step


def test_a_bare_heads_assert_reads_an_info_config_line() -> None:
    """The same bare assert as above with the config printed at INFO level, as engines print it: the launch keeps the
    model size lines (ingest/launch.py MODEL_SIZE_KEYS), not only the lines kept as the failure's context."""
    diagnosis = first_diagnosis(SGLANG_HEADS_ASSERT.replace("TP0] WARNING model config", "TP0] model config"))
    assert "tp 1, 2, 4, 5, 8, 10 divide 40 attention heads; 16 does not" in diagnosis.evidence, diagnosis.evidence


def _sized_launch(config: str, tp: int, ep: int) -> str:
    """A SGLang launch printing its model config, then failing a partition check no rule names (general guidance)."""
    return (f"[2026-03-01 10:00:00] server_args=ServerArgs(model_path='/models/m', tp_size={tp}, ep_size={ep}, port=30000)\n"
            f"[2026-03-01 10:00:01] Model config: {config}\n"
            "[2026-03-01 10:00:05 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
            '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2000, in run_scheduler_process\n'
            "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)\n"
            '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/layers/linear.py", line 300, in __init__\n'
            "    raise ValueError('the partition is not divisible')\n"
            "ValueError: the partition is not divisible\n")


def _guidance(log: str) -> str:
    diagnosis = first_diagnosis(log)
    return " ".join(step for step in (*diagnosis.evidence, *(diagnosis.fix.steps if diagnosis.fix else ())))


def test_a_moe_config_gets_no_intermediate_size_division_nor_expert_sizes() -> None:
    """A MoE model's expert weights split over tp / ep, and vLLM spreads a remainder of experts: neither is stated
    (review of advice17, M3/M4: 'lower the TP' for 1536 / 8 was the opposite of expert parallelism)."""
    config = ('{"intermediate_size": 1536, "num_attention_heads": 48, "num_key_value_heads": 8, "num_local_experts": 256, '
              '"quantization_config": {"weight_block_size": [128, 128]}}')
    text = _guidance(_sized_launch(config, tp=8, ep=8))
    assert "num_attention_heads 48" in text
    assert "intermediate_size 1536" not in text and "Expert-parallel sizes" not in text


def test_kv_heads_copied_over_more_gpus_are_not_said_to_divide() -> None:
    """8 KV heads over tp 16: copied where the model's code copies them, a failure where it splits them strictly;
    never 'Each of these divides' (review of advice17, M5)."""
    config = '{"intermediate_size": 14336, "num_attention_heads": 32, "num_key_value_heads": 8}'
    text = _guidance(_sized_launch(config, tp=16, ep=1))
    assert "num_key_value_heads 8" in text and "Each of these divides" not in text
    assert "KV heads do not divide" in text
