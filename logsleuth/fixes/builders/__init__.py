"""Fix builders, by failure family.  BUILDERS maps a pattern's `[fix] builder = "name"` to its function: the
one registry, written out here (no builder registers itself on import).

A builder's module is imported when its function is first looked up: most diagnoses build no fix with a builder (or
one), and importing all eleven modules, with the catalogs and tables they read, cost ~14 ms of every run.  The
pattern loader only needs the names."""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping

from logsleuth.fixes.context import Builder

# builder name -> (its module in this package, its function there)
_WHERE: dict[str, tuple[str, str]] = {
    "eagle_partial_spec_args": ("speculative", "eagle_partial_spec_args"),
    "eagle_missing_topk": ("speculative", "eagle_missing_topk"),
    "multi_layer_draft_tokens": ("speculative", "multi_layer_draft_tokens"),
    "eagle_chain": ("speculative", "eagle_chain"),
    "unrecognized_arguments": ("arguments", "unrecognized_arguments"),
    "command_for_other_engine": ("arguments", "command_for_other_engine"),
    "ambiguous_option": ("arguments", "ambiguous_option"),
    "invalid_choice": ("arguments", "invalid_choice"),
    "invalid_value": ("arguments", "invalid_value"),
    "store_true_with_value": ("arguments", "store_true_with_value"),
    "missing_required": ("arguments", "missing_required"),
    "replace_in_value": ("arguments", "replace_in_value"),
    "nearest_choice_for_flag": ("arguments", "nearest_choice_for_flag"),
    "divisible_sizes": ("parallel", "divisible_sizes"),
    "pp_incompatible": ("parallel", "pp_incompatible"),
    "divisors_text": ("parallel", "divisors_text"),
    "mem_fraction": ("memory", "mem_fraction"),
    "kv_room_beside_draft": ("memory", "kv_room_beside_draft"),
    "fewer_running_requests": ("memory", "fewer_running_requests"),
    "free_port": ("ports", "free_port"),
    "grpc_port": ("ports", "grpc_port"),
    "enable_priority_scheduling": ("scheduling", "enable_priority_scheduling"),
    "lora_config": ("lora", "lora_config"),
    "vllm_lora_rank": ("lora", "vllm_lora_rank"),
    "checkpoint_quantization": ("quantization", "checkpoint_quantization"),
    "fp8_unsupported_gpu": ("fp8", "fp8_unsupported_gpu"),
    "vllm_kv_cache_max_model_len": ("vllm", "kv_cache_max_model_len"),
    "vllm_utilization_within_free": ("vllm", "utilization_within_free"),
    "vllm_profiling_oom": ("vllm", "profiling_oom"),
    "vllm_weight_load_oom": ("vllm", "weight_load_oom"),
    "vllm_cuda_graph_oom": ("vllm", "cuda_graph_oom"),
    "vllm_unrecognized_arguments": ("vllm_arguments", "vllm_unrecognized_arguments"),
    "vllm_invalid_value": ("vllm_arguments", "vllm_invalid_value"),
    "vllm_switch_given_value": ("vllm_arguments", "vllm_switch_given_value"),
    "vllm_config_choice": ("vllm_arguments", "vllm_config_choice"),
    "vllm_half_precision": ("dtype", "vllm_half_precision"),
    "vllm_config_out_of_range": ("vllm_arguments", "vllm_config_out_of_range"),
}


class _Builders(Mapping[str, Builder]):
    """The registry: its names known without importing anything, each function imported at its first lookup."""

    def __getitem__(self, name: str) -> Builder:
        module, function = _WHERE[name]
        found: Builder = getattr(importlib.import_module(f"{__name__}.{module}"), function)
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(_WHERE)

    def __len__(self) -> int:
        return len(_WHERE)

    def __contains__(self, name: object) -> bool:
        return name in _WHERE


BUILDERS: Mapping[str, Builder] = _Builders()
