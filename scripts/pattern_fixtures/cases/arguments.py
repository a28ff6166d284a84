"""Launch arguments SGLang rejects: argparse usage errors, and ServerArgs validation (the parallel
layout, LoRA, speculative decoding, settings that exclude each other or are out of range).

Patterns: sglang-tp-nnodes-divisible, sglang-pp-with-speculative, sglang-dp-attention-tp-divisible,
sglang-dp-lm-head-needs-dp-attention, sglang-multinode-dp-needs-dp-attention,
sglang-dp-attention-needs-dp-size, sglang-lora-config, sglang-eagle-partial-spec-args,
sglang-unknown-spec-algorithm, sglang-eagle-missing-topk, sglang-chunked-prefill-page-size,
sglang-negative-base-gpu-id, sglang-hicache-radix-conflict, sglang-swa-ratio-range,
sglang-served-model-name-colon, sglang-schedule-conservativeness, sglang-tokenizer-batching-conflict,
sglang-encoder-language-only-conflict; near misses for the argument rules recorded from real SGLang
(sglang-eagle-topk-page-size, sglang-rejection-sampling-topk, sglang-priority-scheduling-policy,
sglang-retraction-policy-priority, sglang-grpc-port-conflict, sglang-pp-spec-prefill-only,
sglang-ambiguous-option); near misses for sglang-invalid-choice, sglang-invalid-int-value,
sglang-missing-model-path, sglang-store-true-with-value, sglang-unrecognized-arguments (their
positives are recorded from real SGLang runs: tests/fixtures/sglang/).
"""

from __future__ import annotations

import textwrap

from ..engine import Case, Frame
from ..mirror import (
    SERVER_ARGS,
    VALIDATION_HOOK,
    launch_crash,
    raise_frame,
    server_args_chain,
    to_server_args,
)


def server_args_error(pattern: str, name: str, version: str, function: str, body: str, state: str, lineno: int,
                      *, path: str = "", via: tuple[Frame, ...] = ()) -> Case:
    """The launch failing in the argument validation: `function` (at `lineno` of `path`, by default
    server_args.py, in 0.5.23 validation_hook.py) fails on `body` while ServerArgs holds `state`
    (`self`; in 0.5.23 `cfg`).  It is called by __post_init__, or through the frames `via`."""
    if version == "0.5.23":
        chain, default_path, holder = server_args_chain(version), VALIDATION_HOOK, "cfg"
    else:
        chain, default_path, holder = server_args_chain(version, via[0].function if via else function), SERVER_ARGS, "self"
    failing = raise_frame(path or default_path, function, body, env=((holder, state),), lineno=lineno)
    return launch_crash(pattern, name, (*chain, *via, failing))


# -- argparse: near misses of the usage-error patterns ---------------------------------------

SGLANG_PARSER = textwrap.dedent("""
    parser.add_argument("--model-path", "--model", type=str, required=True)
    parser.add_argument("--port", type=int, default=30000)
    parser.add_argument("--tp-size", "--tensor-parallel-size", type=int, default=1)
    parser.add_argument("--attention-backend", type=str, choices=["triton", "torch_native", "fa3", "flashinfer", "flashmla"])
    parser.add_argument("--disable-cuda-graph", action="store_true")
    parser.add_argument("--disable-radix-cache", action="store_true")
    parser.add_argument("--mem-fraction-static", type=float)
""")
MODEL = ("--model-path", "Qwen/Qwen2.5-7B-Instruct")
# (pattern, fixture name, the command line)
USAGE_ERRORS = (
    ("sglang-invalid-choice", "negative-unrecognized", (*MODEL, "--gpu-memory-utilization", "0.9")),
    ("sglang-invalid-int-value", "negative-invalid-choice", (*MODEL, "--attention-backend", "flash_attn")),
    ("sglang-missing-model-path", "negative-expected-one-argument", ("--model-path",)),
    ("sglang-store-true-with-value", "negative-expected-one-argument", (*MODEL, "--port")),
    ("sglang-unrecognized-arguments", "negative-ambiguous-option", (*MODEL, "--disable")),
    ("sglang-ambiguous-option", "positive-typed-prefix", (*MODEL, "--disable")),
    ("sglang-ambiguous-option", "negative-expected-one-argument", (*MODEL, "--tp-size")),
)

# -- the parallel layout ------------------------------------------------------------------------

NNODES = """
    assert (
        self.tp_size * self.pp_size
    ) % self.nnodes == 0, "tp_size must be divisible by number of nodes"
    """
NNODES_0523 = """
    if cfg.ep_join_mode != "scale":
        assert (cfg.tp_size * cfg.pp_size) % cfg.nnodes == 0, (
            "tp_size must be divisible by number of nodes"
        )
    """
MULTINODE_DP = """
    assert not (
        self.dp_size > 1 and self.nnodes != 1 and not self.enable_dp_attention
    ), "multi-node data parallel is not supported unless dp attention!"
    """
MULTINODE_DP_STATE = "NS(dp_size=2, nnodes=2, enable_dp_attention=False)"
DP_LM_HEAD = """
    if self.enable_dp_lm_head:
        assert (
            self.enable_dp_attention
        ), "Please enable dp attention when setting enable_dp_lm_head. "
    """
DP_LM_HEAD_STATE = "NS(enable_dp_lm_head=True, enable_dp_attention=False)"
# 0.4.10.post2 makes this check in __post_init__ itself (its assert at server_args.py:459, the raise site index).
DP_SIZE = """
    if self.enable_dp_attention:
        self.schedule_conservativeness = self.schedule_conservativeness * 0.3
        assert (
            self.dp_size > 1
        ), "Please set a dp-size > 1. You can use 1 < dp-size <= tp-size "
    """
DP_SIZE_LINE = 459 - 4  # __post_init__'s first line, so that its assert lands at 459
PP = """
    if self.pp_size > 1:
        assert (
            self.disable_overlap_schedule
            and self.speculative_algorithm is None
            and not self.enable_mixed_chunk
        ), "Pipeline parallelism is not compatible with overlap schedule, speculative decoding, mixed chunked prefill."
    """
PP_0523 = """
    assert cfg.disable_overlap_schedule, (
        "Pipeline parallelism is not compatible with overlap schedule"
    )
    if cfg.speculative_algorithm is not None:
        assert (
            cfg.speculative_algorithm.upper() == "EAGLE"
            and not cfg.enable_multi_layer_eagle
        ), (
            "Pipeline parallelism currently only supports EAGLE "
            "(non-multi-layer) speculative decoding"
        )
    """
PP_0523_VIA = (Frame(VALIDATION_HOOK, "check_server_args", "check_pipeline_parallel_compat(cfg)", lineno=186),)
PP_MICRO_BATCH = """
    assert cfg.pp_max_micro_batch_size is None or cfg.pp_max_micro_batch_size >= 1, (
        "pp_max_micro_batch_size must be a positive integer or None (for auto-compute). "
        f"Got: {cfg.pp_max_micro_batch_size}"
    )
    """
TP_NOT_DIVISIBLE = server_args_error("sglang-tp-nnodes-divisible", "positive-0.5.9", "0.5.9", "check_server_args", NNODES, "NS(tp_size=4, pp_size=1, nnodes=3)", 5131)

# -- LoRA -------------------------------------------------------------------------------------------

LORA_MISSING = """
    assert self.lora_paths or (
        self.max_lora_rank and self.lora_target_modules
    ), "When no initial --lora-paths is provided, you need to specify both --max-lora-rank and --lora-target-modules for LoRA initialization."
    """
LORA_LOADED = """
    if self.max_loaded_loras is not None:
        assert self.max_loaded_loras >= self.max_loras_per_batch, (
            "max_loaded_loras should be greater than or equal to max_loras_per_batch. "
            f"max_loaded_loras={self.max_loaded_loras}, max_loras_per_batch={self.max_loras_per_batch}"
        )
    """


def lora_error(name: str, version: str, body: str, state: str, lineno: int) -> Case:
    """check_server_args calling check_lora_server_args (0.5.23: the LoRA hook, on `cfg`)."""
    if version == "0.5.23":
        via = Frame(VALIDATION_HOOK, "check_server_args", "check_lora_server_args(server_args)", lineno=230)
        return server_args_error("sglang-lora-config", name, version, "check_lora_server_args", body.replace("self.", "cfg."), state, lineno,
                                 path="sglang/srt/arg_groups/lora_hook.py", via=(via,))
    via = Frame(SERVER_ARGS, "check_server_args", "self.check_lora_server_args()", lineno=5160)
    return server_args_error("sglang-lora-config", name, version, "check_lora_server_args", body, state, lineno, via=(via,))


# -- speculative decoding and other settings ------------------------------------------------------

SPEC_TOPK_PAGE = """
    if self.speculative_eagle_topk > 1 and self.page_size > 1 and self.attention_backend != "flashinfer":
        raise ValueError(
            "speculative_eagle_topk > 1 with page_size > 1 is unstable and produces incorrect results for paged attention backends. This combination is only supported for the 'flashinfer' backend."
        )
    """
SPEC_V2_TOPK = """
    if self.speculative_eagle_topk > 1:
        raise ValueError(
            "Spec v2 currently only supports topk = 1 for speculative decoding."
        )
    """
EAGLE_TOPK_PAGE = """
    if self.speculative_eagle_topk > 1 and self.page_size > 1:
        self.disable_overlap_schedule = True
    """
PAGE_SIZE = """
    if self.page_size > 1:
        self.disable_overlap_schedule = True
    """
CHUNKED_PREFILL = """
    if self.chunked_prefill_size > 0 and self.disaggregation_mode != "decode":
        assert (
            self.chunked_prefill_size % self.page_size == 0
        ), "chunked_prefill_size must be divisible by page_size"
    """
BASE_GPU_ID = '\nassert self.base_gpu_id >= 0, "base_gpu_id must be non-negative"\n'
GPU_ID_STEP = '\nassert self.gpu_id_step >= 1, "gpu_id_step must be positive"\n'

# Settings that exclude each other or are out of range: (the check, the state failing it, its line).
# Each pattern's near miss is the next one's failure.
CONFLICTS = {
    "sglang-hicache-radix-conflict": ("""
    if self.enable_hierarchical_cache and self.disable_radix_cache:
        raise ValueError(
            "The arguments enable-hierarchical-cache and disable-radix-cache are mutually exclusive and cannot be used at the same time. Please use only one of them."
        )
    """, "NS(enable_hierarchical_cache=True, disable_radix_cache=True)", 1900),
    "sglang-swa-ratio-range": ("""
    if not (0 < self.swa_full_tokens_ratio <= 1.0):
        raise ValueError("--swa-full-tokens-ratio should be in range (0, 1.0].")
    """, "NS(swa_full_tokens_ratio=1.5)", 5160),
    "sglang-served-model-name-colon": ("""
    assert ":" not in self.served_model_name, (
        "served_model_name cannot contain a colon (':') character. The colon is reserved for the "
        f"'model:adapter' syntax used in LoRA adapter specification. Invalid value: '{self.served_model_name}'"
    )
    """, "NS(served_model_name='meta-llama:tiny')", 5153),
    "sglang-schedule-conservativeness": ("""
    assert self.schedule_conservativeness >= 0, "schedule_conservativeness must be non-negative"
    """, "NS(schedule_conservativeness=-0.5)", 5150),
    "sglang-tokenizer-batching-conflict": ("""
    if self.enable_tokenizer_batch_encode and self.enable_dynamic_batch_tokenizer:
        raise ValueError(
            "Cannot enable both --enable-tokenizer-batch-encode and --enable-dynamic-batch-tokenizer. Please choose one tokenizer batching approach."
        )
    """, "NS(enable_tokenizer_batch_encode=True, enable_dynamic_batch_tokenizer=True)", 5170),
    "sglang-encoder-language-only-conflict": ("""
    if self.encoder_only and self.language_only:
        raise ValueError("Cannot set --encoder-only and --language-only together")
    """, "NS(encoder_only=True, language_only=True)", 5175),
}
_NEXT_CONFLICT = dict(zip(CONFLICTS, [*list(CONFLICTS)[1:], next(iter(CONFLICTS))], strict=True))
# Where each check stands in the releases its near misses are written for, when not in check_server_args at the
# line CONFLICTS gives: (file, function, the line of its raise or assert), as the raise site index reads the
# release's wheel.  0.5.23 runs its checks as hooks on `cfg` (sglang/srt/arg_groups/).
CONFLICT_SITES = {
    ("sglang-hicache-radix-conflict", "0.5.9"): (SERVER_ARGS, "_handle_cache_compatibility", 2686),
    ("sglang-swa-ratio-range", "0.5.9"): (SERVER_ARGS, "_handle_cache_compatibility", 2704),
    ("sglang-tokenizer-batching-conflict", "0.5.9"): (SERVER_ARGS, "_handle_tokenizer_batching", 2648),
    ("sglang-encoder-language-only-conflict", "0.5.9"): (SERVER_ARGS, "_handle_encoder_disaggregation", 2579),
    ("sglang-schedule-conservativeness", "0.5.23"): (VALIDATION_HOOK, "check_server_args", 314),
    ("sglang-tokenizer-batching-conflict", "0.5.23"): ("sglang/srt/arg_groups/serving_hook.py", "handle_tokenizer_batching", 757),
    ("sglang-encoder-language-only-conflict", "0.5.23"): ("sglang/srt/arg_groups/pd_disaggregation_hook.py",
                                                          "handle_encoder_disaggregation", 310),
}


def conflict_error(pattern: str, near_miss: str, version: str) -> Case:
    """`pattern`'s near miss: the `near_miss` check failing in `version`, in the function and at the line that
    release has it (CONFLICT_SITES), else in check_server_args at CONFLICTS' line."""
    body, state, lineno = CONFLICTS[near_miss]
    path, function = "", "check_server_args"
    if (near_miss, version) in CONFLICT_SITES:
        path, function, raised_at = CONFLICT_SITES[near_miss, version]
        lines = textwrap.dedent(body).split("\n")
        lineno = raised_at - 1 - next(n for n, line in enumerate(lines) if line.lstrip().startswith(("raise ", "assert ")))
    if version == "0.5.23":
        body = body.replace("self.", "cfg.")
    return server_args_error(pattern, f"negative-{near_miss.removeprefix('sglang-')}", version, function, body, state, lineno, path=path)

CASES = (
    *(Case(pattern, name, (), mode="argparse", ranks="", parser=SGLANG_PARSER, argv=argv) for pattern, name, argv in USAGE_ERRORS),

    TP_NOT_DIVISIBLE,
    server_args_error("sglang-tp-nnodes-divisible", "positive-0.4.10.post2", "0.4.10.post2", "check_server_args", NNODES, "NS(tp_size=8, pp_size=1, nnodes=3)", 1910),
    server_args_error("sglang-tp-nnodes-divisible", "positive-0.5.23", "0.5.23", "check_server_args", NNODES_0523,
                      "NS(ep_join_mode='static', tp_size=16, pp_size=1, nnodes=3)", 172),
    server_args_error("sglang-tp-nnodes-divisible", "negative-multi-node-dp", "0.5.9", "check_server_args", MULTINODE_DP, MULTINODE_DP_STATE, 5145),
    TP_NOT_DIVISIBLE.named("sglang-dp-attention-tp-divisible", "negative-tp-nnodes"),

    *(server_args_error("sglang-pp-with-speculative", f"positive-{version}", version, "check_server_args", PP,
                        "NS(pp_size=2, disable_overlap_schedule=False, speculative_algorithm='EAGLE3', enable_mixed_chunk=False)", 5135)
      for version in ("0.4.10.post2", "0.5.9")),
    *(server_args_error("sglang-pp-with-speculative", name, "0.5.23", "check_pipeline_parallel_compat", PP_0523, state, 119, via=PP_0523_VIA)
      for name, state in (
          ("positive-0.5.23-overlap-first", "NS(disable_overlap_schedule=False, speculative_algorithm='EAGLE3', enable_multi_layer_eagle=False)"),
          ("positive-0.5.23-overlap", "NS(disable_overlap_schedule=False, speculative_algorithm=None, enable_multi_layer_eagle=False)"),
          ("positive-0.5.23-eagle-only", "NS(disable_overlap_schedule=True, speculative_algorithm='EAGLE3', enable_multi_layer_eagle=False)"),
      )),
    server_args_error("sglang-pp-with-speculative", "negative-0.5.23-micro-batch", "0.5.23", "check_server_args", PP_MICRO_BATCH, "NS(pp_max_micro_batch_size=0)", 183),

    server_args_error("sglang-dp-lm-head-needs-dp-attention", "positive-0.5.9", "0.5.9", "_handle_data_parallelism", DP_LM_HEAD, DP_LM_HEAD_STATE, 2122),
    server_args_error("sglang-dp-lm-head-needs-dp-attention", "negative-multinode-dp", "0.5.9", "check_server_args", MULTINODE_DP, MULTINODE_DP_STATE, 5143),
    server_args_error("sglang-multinode-dp-needs-dp-attention", "positive-0.5.9", "0.5.9", "check_server_args", MULTINODE_DP, MULTINODE_DP_STATE, 5143),
    server_args_error("sglang-multinode-dp-needs-dp-attention", "negative-dp-lm-head", "0.5.9", "_handle_data_parallelism", DP_LM_HEAD, DP_LM_HEAD_STATE, 2122),
    launch_crash("sglang-dp-attention-needs-dp-size", "positive-0.4.10.post2", (
        *to_server_args("0.4.10.post2"),
        raise_frame(SERVER_ARGS, "__post_init__", DP_SIZE, env=(("self", "NS(enable_dp_attention=True, dp_size=1, schedule_conservativeness=1.0)"),),
                    lineno=DP_SIZE_LINE))),
    server_args_error("sglang-dp-attention-needs-dp-size", "negative-dp-lm-head", "0.5.9", "_handle_data_parallelism", DP_LM_HEAD, DP_LM_HEAD_STATE, 2122),

    *(lora_error(f"positive-{version}", version, LORA_MISSING, "NS(lora_paths=None, max_lora_rank=None, lora_target_modules=None)", 5404)
      for version in ("0.4.10.post2", "0.5.9")),
    lora_error("positive-0.5.23", "0.5.23", LORA_MISSING, "NS(lora_paths=None, max_lora_rank=64, lora_target_modules=None)", 150),
    lora_error("positive-0.5.9-max-loaded", "0.5.9", LORA_LOADED, "NS(max_loaded_loras=2, max_loras_per_batch=8)", 5410),
    lora_error("positive-0.5.23-max-loaded", "0.5.23", LORA_LOADED, "NS(max_loaded_loras=4, max_loras_per_batch=8)", 156),
    TP_NOT_DIVISIBLE.named("sglang-lora-config", "negative-tp-nnodes"),

    server_args_error("sglang-eagle-partial-spec-args", "negative-topk-page-size", "0.5.9", "_handle_speculative_decoding", SPEC_TOPK_PAGE,
                      "NS(speculative_eagle_topk=4, page_size=16, attention_backend='fa3')", 2460),
    server_args_error("sglang-unknown-spec-algorithm", "negative-spec-v2-topk", "0.5.9", "_handle_speculative_decoding", SPEC_V2_TOPK,
                      "NS(speculative_eagle_topk=4)", 2395),
    server_args_error("sglang-eagle-missing-topk", "positive-0.5.9", "0.5.9", "_handle_speculative_decoding", EAGLE_TOPK_PAGE,
                      "NS(speculative_eagle_topk=None, page_size=1)", 2452),
    server_args_error("sglang-eagle-missing-topk", "negative-page-size-none", "0.5.9", "_handle_speculative_decoding", PAGE_SIZE,
                      "NS(speculative_eagle_topk=4, page_size=None)", 2452),

    server_args_error("sglang-chunked-prefill-page-size", "positive-0.5.9", "0.5.9", "check_server_args", CHUNKED_PREFILL,
                      "NS(chunked_prefill_size=1000, page_size=16, disaggregation_mode='null')", 5179),
    server_args_error("sglang-chunked-prefill-page-size", "negative-base-gpu-id", "0.5.9", "check_server_args", BASE_GPU_ID, "NS(base_gpu_id=-1)", 5147),
    server_args_error("sglang-negative-base-gpu-id", "positive-0.5.9", "0.5.9", "check_server_args", BASE_GPU_ID, "NS(base_gpu_id=-1)", 5147),
    server_args_error("sglang-negative-base-gpu-id", "negative-gpu-id-step", "0.5.9", "check_server_args", GPU_ID_STEP, "NS(gpu_id_step=0)", 5148),

    *(conflict_error(pattern, near_miss, "0.5.9") for pattern, near_miss in _NEXT_CONFLICT.items()),

    # Near misses of the rules whose positives are real SGLang runs (tests/fixtures/sglang/), each on a
    # version the rule applies to: another top-k check, other conflicting settings, another PP check.
    *(server_args_error(pattern, "negative-spec-v2-topk", version, "_handle_speculative_decoding", SPEC_V2_TOPK, "NS(speculative_eagle_topk=4)", 2395)
      for pattern, version in (("sglang-eagle-topk-page-size", "0.5.9"), ("sglang-rejection-sampling-topk", "0.5.23"))),
    *(conflict_error(pattern, near_miss, "0.5.23")
      for pattern, near_miss in (
          ("sglang-priority-scheduling-policy", "sglang-schedule-conservativeness"),
          ("sglang-retraction-policy-priority", "sglang-tokenizer-batching-conflict"),
          ("sglang-grpc-port-conflict", "sglang-encoder-language-only-conflict"),
      )),
    server_args_error("sglang-pp-spec-prefill-only", "negative-0.5.23-micro-batch", "0.5.23", "check_server_args", PP_MICRO_BATCH, "NS(pp_max_micro_batch_size=0)", 183),
)
