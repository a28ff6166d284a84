"""Every wild case: each family module holds a table `CASES`; `FAMILIES` lists the modules.

A new family module must be added to FAMILIES (all_cases() refuses to run while one is missing).
Importing this package runs nothing but the tables' definitions."""

from __future__ import annotations

import pkgutil

from ..corpus import WildCase
from . import (
    arguments,
    cuda_graph,
    dependencies,
    dev_advice5,
    dev_advice6,
    dev_args,
    dev_cat2,
    dev_cat3,
    dev_cat4,
    dev_cat6,
    dev_category,
    dev_detect,
    dev_found3,
    dev_found4,
    dev_found5,
    dev_found6,
    dev_found7,
    dev_found10,
    dev_packages,
    dev_s38,
    dev_sweep10,
    dev_vllm2,
    features,
    hangs,
    heldout,
    kernels,
    memory,
    models,
    native_crashes,
    nccl,
    ports,
    vllm,
    weights,
)

FAMILIES = (memory, hangs, nccl, kernels, native_crashes, cuda_graph, weights, models, dependencies, arguments, features, ports, heldout, vllm,
            dev_category, dev_detect, dev_vllm2, dev_cat2, dev_args, dev_packages, dev_s38, dev_cat3, dev_found3, dev_found4,
            dev_found5, dev_advice5, dev_cat4, dev_found6, dev_cat6, dev_advice6, dev_found7, dev_sweep10,
            dev_found10)


def all_cases() -> list[WildCase]:
    unlisted = {info.name for info in pkgutil.iter_modules(__path__)} - {family.__name__.rpartition(".")[2] for family in FAMILIES}
    if unlisted:
        raise SystemExit(f"wild_fixtures/cases/__init__.py: FAMILIES does not list {sorted(unlisted)}")
    return [case for family in FAMILIES for case in family.CASES]
