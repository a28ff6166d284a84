"""Fix builders, by failure family.  BUILDERS maps a pattern's `[fix] builder = "name"` to its function: the
one registry, written out here (no builder registers itself on import)."""

from __future__ import annotations

from logsleuth.fixes.builders import arguments, lora, memory, parallel, ports, scheduling, speculative
from logsleuth.fixes.context import Builder

BUILDERS: dict[str, Builder] = {
    "eagle_partial_spec_args": speculative.eagle_partial_spec_args,
    "eagle_missing_topk": speculative.eagle_missing_topk,
    "multi_layer_draft_tokens": speculative.multi_layer_draft_tokens,
    "eagle_chain": speculative.eagle_chain,
    "unrecognized_arguments": arguments.unrecognized_arguments,
    "ambiguous_option": arguments.ambiguous_option,
    "invalid_choice": arguments.invalid_choice,
    "invalid_value": arguments.invalid_value,
    "store_true_with_value": arguments.store_true_with_value,
    "missing_required": arguments.missing_required,
    "replace_in_value": arguments.replace_in_value,
    "nearest_choice_for_flag": arguments.nearest_choice_for_flag,
    "divisible_sizes": parallel.divisible_sizes,
    "pp_incompatible": parallel.pp_incompatible,
    "mem_fraction": memory.mem_fraction,
    "fewer_running_requests": memory.fewer_running_requests,
    "free_port": ports.free_port,
    "grpc_port": ports.grpc_port,
    "enable_priority_scheduling": scheduling.enable_priority_scheduling,
    "lora_config": lora.lora_config,
}
