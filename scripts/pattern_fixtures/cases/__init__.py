"""Every runtime-failure case: each family module holds a table `CASES`, and `FAMILIES` lists them all.

A new family module must be added to FAMILIES (all_cases() refuses to run while one is missing)."""

from __future__ import annotations

from pathlib import Path

from ..engine import Case
from . import (
    arguments,
    cross_engine,
    cuda_graph,
    dependencies,
    gpu_faults,
    host_limits,
    kernels,
    memory,
    model_config,
    nccl,
    process,
    runtime_env,
    runtime_facts,
    vllm,
    vllm_lora,
    vllm_models,
    vllm_runtime,
    weights,
)

FAMILIES = (
    memory, cuda_graph, kernels, nccl, weights, model_config, dependencies, process, arguments, gpu_faults, runtime_env,
    runtime_facts, vllm, vllm_runtime, vllm_models, vllm_lora, cross_engine, host_limits,
)


def all_cases() -> list[Case]:
    listed = {family.__name__.rpartition(".")[2] for family in FAMILIES}
    present = {path.stem for path in Path(__file__).parent.glob("*.py")} - {"__init__"}
    if present != listed:
        raise SystemExit(f"pattern_fixtures/cases/__init__.py: FAMILIES does not list {sorted(present - listed)}")
    return [case for family in FAMILIES for case in family.CASES]
