"""GPU memory: running out of it while loading weights, allocating the KV cache, serving, or anywhere else,
and the KV cache that does not fit at all.

Patterns: sglang-gpu-oom-weight-load, sglang-gpu-oom-kv-cache, sglang-gpu-oom-forward, sglang-gpu-oom,
sglang-kv-cache-not-enough-memory.  (Out of memory during CUDA graph capture: cuda_graph.py.)
"""

from __future__ import annotations

from ..engine import Case, Frame
from ..mirror import (
    DECODE,
    ILLEGAL_ACCESS,
    LOAD_BEGIN,
    LOAD_END,
    LOGITS_ALLOC,
    MODEL_RUNNER,
    PREFILL,
    QWEN2,
    QWEN_FORWARD,
    READY,
    RESOURCE_TRACKER,
    VERSIONS,
    attention_kernel_crash,
    forward_frames,
    kv_alloc_frames,
    kv_pool_frames,
    oom,
    raise_frame,
    scheduler_crash,
    to_initialize,
    to_load_weights,
    to_model_runner,
)


def cpu_oom(nbytes: int) -> tuple[str, str]:
    return ("RuntimeError", f"[enforce fail at alloc_cpu.cpp:117] data. DefaultCPUAllocator: not enough memory: you tried to allocate {nbytes} bytes.")


def weight_copy(version: str) -> tuple[Frame, ...]:
    """A linear layer's weight_loader copying a checkpoint tensor onto the GPU."""
    return (
        *to_load_weights(version),
        Frame(QWEN2, "load_weights", "weight_loader(param, loaded_weight, shard_id)", lineno=600),
        Frame("sglang/srt/layers/linear.py", "weight_loader", "param_data.copy_(loaded_weight.to(device=param_data.device))",
              env=(("loaded_weight", "NS(to=__import__('torch').zeros)"),), lineno=412),
    )


def sampler_workspace(device: str) -> tuple[Frame, ...]:
    return (
        *to_initialize("0.5.9", "self.sampler = Sampler()", 520),
        Frame("sglang/srt/layers/sampler.py", "__init__", f"self.workspace = torch.empty((256 * 1024 * 1024,), dtype=torch.uint8, device={device!r})", lineno=44),
    )


# the KV pool sized from what is left after the weights: no room at all (max_total_num_tokens <= 0)
NOT_ENOUGH_MEMORY = {
    "0.4.10.post2": raise_frame(
        MODEL_RUNNER, "init_memory_pool",
        """
        if self.max_total_num_tokens <= 0:
            raise RuntimeError(
                "Not enough memory. Please try to increase --mem-fraction-static."
            )
        """,
        env=(("self", "NS(max_total_num_tokens=-2861)"),), lineno=1153,
    ),
    "0.5.9": raise_frame(
        "sglang/srt/model_executor/model_runner_kv_cache_mixin.py", "init_memory_pool",
        """
        if self.max_total_num_tokens <= 0:
            raise RuntimeError(
                f"Not enough memory. Please try to increase --mem-fraction-static. "
                f"Current value: {self.server_args.mem_fraction_static=}"
            )
        """,
        env=(("self", "NS(max_total_num_tokens=-2861, server_args=NS(mem_fraction_static=0.4))"),), lineno=415,
    ),
    "0.5.23": raise_frame(
        "sglang/srt/model_executor/pool_configurator.py", "__post_init__",
        """
        if self.max_total_num_tokens <= 0:
            msg = "Not enough memory. Please try to increase --mem-fraction-static."
            if self.mem_fraction_static is not None:
                msg += f" Current value: mem_fraction_static={self.mem_fraction_static}"
            raise RuntimeError(msg)
        """,
        env=(("self", "NS(max_total_num_tokens=-2861, mem_fraction_static=0.4)"),), lineno=94,
    ),
}


def to_pool_sizing(version: str) -> tuple[Frame, ...]:
    """Down to the call that sizes the KV pool (the frame NOT_ENOUGH_MEMORY raises in is next)."""
    if version != "0.5.23":
        return kv_pool_frames(version)[:-2]  # ModelRunner.initialize calling init_memory_pool
    return (
        *to_model_runner(version),
        Frame(MODEL_RUNNER, "alloc_memory_pool", "result = self.kv_cache_configurator.configure(available_bytes)", lineno=982),
        Frame("sglang/srt/model_executor/kv_cache_configurator.py", "configure", "return self.pool_configurator.calculate_pool_sizes(available_bytes, page_size=self.page_size)", lineno=180),
        Frame("sglang/srt/model_executor/pool_configurator.py", "calculate_pool_sizes", "return MemoryPoolConfig(max_total_num_tokens=max_total_num_tokens)", lineno=647),
    )


def not_enough_memory(name: str, version: str, **fields: object) -> Case:
    return scheduler_crash("sglang-kv-cache-not-enough-memory", name, (*to_pool_sizing(version), NOT_ENOUGH_MEMORY[version]),
                           before=(LOAD_BEGIN, LOAD_END), **fields)


CASES = (
    *(scheduler_crash("sglang-gpu-oom-weight-load", f"positive-{version}", weight_copy(version), before=(LOAD_BEGIN,),
                      torch_error=oom("3.50 GiB", total="23.55 GiB", free="2.12 GiB", used="21.41 GiB"))
      for version in VERSIONS),
    scheduler_crash("sglang-gpu-oom-weight-load", "negative-cpu-oom", weight_copy("0.5.9"), before=(LOAD_BEGIN,), torch_error=cpu_oom(3758096384)),

    *(scheduler_crash("sglang-gpu-oom-kv-cache", f"positive-{version}", kv_alloc_frames(version), before=(LOAD_BEGIN, LOAD_END),
                      torch_error=oom("1.75 GiB", free="1.12 GiB"))
      for version in VERSIONS),
    scheduler_crash("sglang-gpu-oom-kv-cache", "negative-weight-load", weight_copy("0.5.9"), before=(LOAD_BEGIN,), torch_error=oom("3.50 GiB")),

    *(scheduler_crash("sglang-gpu-oom-forward", f"positive-{version}-{mode}", (*forward_frames(version, mode), QWEN_FORWARD, LOGITS_ALLOC),
                      before=(READY, PREFILL, DECODE), torch_error=oom("4.64 GiB", free="3.98 GiB"))
      for version, mode in (("0.5.9", "decode"), ("0.4.10.post2", "extend"), ("0.5.23", "decode"))),
    attention_kernel_crash("sglang-gpu-oom-forward", "negative-illegal-memory-access", "0.5.9", ILLEGAL_ACCESS),

    # somewhere else: e.g. a sampler buffer, a custom kernel workspace
    scheduler_crash("sglang-gpu-oom", "positive-0.5.9-sampler", sampler_workspace("cuda"), before=(LOAD_BEGIN,), torch_error=oom("256.00 MiB", free="101.19 MiB")),
    scheduler_crash("sglang-gpu-oom", "negative-cpu-oom", sampler_workspace("cpu"), before=(LOAD_BEGIN,), torch_error=cpu_oom(268435456)),

    *(not_enough_memory(f"positive-{version}", version) for version in VERSIONS),
    scheduler_crash("sglang-kv-cache-not-enough-memory", "negative-kv-oom", kv_alloc_frames("0.5.9"), before=(LOAD_END,), torch_error=oom("1.75 GiB")),
    # the real failure first, the resource tracker's KeyError last: the real failure must win
    not_enough_memory("positive-0.5.9-with-resource-tracker-red-herring", "0.5.9", raw_after=("Killed",),
                      then=(Case("", "", (RESOURCE_TRACKER,), mode="plain", ranks="", stamp="2026-03-14 09:27:03"),)),
)
