"""The CUDA each torch release that an engine pins is built with on PyPI (torch_builds.json, written by
scripts/facts/torch_builds.py from each wheel's METADATA), and what that means for a GPU the log shows.

A fix that pins torch==V must not lead into a second failure: when the GPU's architecture is known only to a newer
CUDA toolkit (facts/gpus.toml [[toolkit]]) than V's wheel was built with, that wheel has no kernels for it."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from logsleuth.facts.gpus import arch_name, gpus_in, toolkit_for
from logsleuth.versions import version_key

DATA = Path(__file__).with_name("torch_builds.json")


@lru_cache(maxsize=1)
def _builds() -> dict[str, dict[str, str | None]]:
    builds: dict[str, dict[str, str | None]] = json.loads(DATA.read_text(encoding="utf-8"))["builds"]
    return builds


def cuda_of(torch_version: str) -> str | None:
    """`12.4` for torch 2.6.0 (its PyPI wheel's CUDA runtime); None when the table does not hold that release."""
    row = _builds().get(torch_version)
    return row["cuda"] if row else None


@dataclass(frozen=True)
class MissingKernels:
    """A torch release whose PyPI wheel cannot hold kernels for the GPU a log shows."""

    torch: str  # 2.6.0
    built_with: str  # the CUDA of its wheel: 12.4
    needs: str  # the first CUDA toolkit that compiles for the GPU: 12.8
    gpu: str  # as the log shows it, with its capability
    arch: str  # sm_120

    def sentence(self) -> str:
        return (
            f"torch {self.torch}'s PyPI wheel is built with CUDA {self.built_with}, and the GPU this log shows "
            f"({self.gpu}) needs CUDA {self.needs} or newer, the first toolkit that compiles for {self.arch} "
            "(logsleuth/facts/torch_builds.json, gpus.toml): that wheel has no kernels for it"
        )


def _older(cuda: str, than: str) -> bool:
    built, needed = version_key(cuda), version_key(than)
    return built is not None and needed is not None and built < needed


def lacks_the_gpu(requirement: str, lines: Iterable[str]) -> MissingKernels | None:
    """Why `torch==V` would not run on the GPU the lines show, or None (another requirement, a release the table
    lacks, no GPU shown, or a build whose CUDA knows its architecture)."""
    name, _, version = requirement.partition("==")
    cuda = cuda_of(version) if name.strip().lower() == "torch" else None
    if cuda is None:
        return None
    for gpu in gpus_in(lines):
        toolkit = toolkit_for(gpu.capability) if gpu.capability else None
        if toolkit is not None and gpu.capability is not None and _older(cuda, toolkit.cuda):
            return MissingKernels(version, cuda, toolkit.cuda, gpu.describe(), arch_name(gpu.capability))
    return None
