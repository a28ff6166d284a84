"""The CUDA each torch release that an engine pins is built with on PyPI (torch_builds.json, written by
scripts/facts/torch_builds.py from each wheel's METADATA), and what that means for a GPU the log shows.

A fix that pins torch==V must not lead into a second failure: when the GPU's architecture is known only to a newer
CUDA toolkit (facts/gpus.toml [[toolkit]]) than V's wheel was built with, that wheel has no kernels for it."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from logsleuth.facts.gpus import arch_name, gpus_in, toolkit_for
from logsleuth.lazyre import compile_lazily
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


# The versions an environment dump or nvidia-smi prints of the host driver and of torch's CUDA: nvidia-smi's header
# (`| NVIDIA-SMI 535.104.05   Driver Version: 535.104.05   CUDA Version: 12.2 |`: the newest CUDA the driver supports),
# torch's collect_env (vLLM's and SGLang's issue templates ask for it: `Nvidia driver version: 535.104.05`, `PyTorch
# version: 2.3.0+cu121`, `CUDA used to build PyTorch: 12.1`), a pip listing (`torch==2.3.0+cu121`).
_VERSION_WORDS = ("Driver Version", "driver version", "PyTorch", "torch==", "torch ", "too old (found version")
_DRIVER_AND_CUDA = compile_lazily(r"Driver Version: (?P<driver>\d{3,4}\.\d{1,3}(?:\.\d{1,3})?)\s{1,40}CUDA Version: (?P<cuda>\d{2}\.\d)\b")
_DRIVER_ALONE = compile_lazily(r"\b(?i:nvidia) driver version: (?P<driver>\d{3,4}\.\d{1,3}(?:\.\d{1,3})?)\b")
# torch/cuda/__init__.py _check_driver: `The NVIDIA driver on your system is too old (found version 11040)`, the driver's
# newest CUDA as cudaDriverGetVersion gives it (1000 × major + 10 × minor)
_DRIVER_FOUND = compile_lazily(r"driver on your system is too old \(found version (?P<found>\d{4,5})\)")
_TORCH_BUILT = compile_lazily(r"CUDA used to build PyTorch: (?P<cuda>\d{2}\.\d)\b")
# torch's release and its local tag: +cu121 (CUDA 12.1), +cu92 (9.2), +rocm6.2, +cpu, +xpu.  pip's resolver line
# (`vllm 0.6.3 requires torch==2.4.0, but you have torch 2.6.0+cu126 which is incompatible.`) names what another
# package requires first and the installed torch after `you have`.
_TORCH = compile_lazily(
    r"(?:PyTorch version: |\byou have torch |\btorch==|\btorch )(?P<version>\d\.\d{1,2}\.\d{1,2})"
    r"(?:\+(?P<tag>cu|rocm|cpu|xpu)(?P<num>\d{2,3}|\d\.\d{1,2}(?:\.\d{1,2})?)?)?\b"
)
_INSTALLED = "you have torch "


def shows_cuda_versions(text: str) -> bool:
    """The line shows the host driver's version or the CUDA torch was built for (a cheap test first: early lines)."""
    return any(word in text for word in _VERSION_WORDS) and len(text) <= 2000 and any(
        pattern.search(text) for pattern in (_DRIVER_AND_CUDA, _DRIVER_ALONE, _DRIVER_FOUND, _TORCH_BUILT, _TORCH))


@dataclass(frozen=True)
class CudaVersions:
    """The host driver's version and the newest CUDA it supports, and torch's release and the CUDA it was built for,
    as the lines show them (each None when they do not); `torch_platform`: a torch build for no CUDA (its +rocm…,
    +cpu or +xpu tag), whose CUDA is None."""

    driver: str | None = None
    driver_cuda: str | None = None
    torch: str | None = None
    torch_cuda: str | None = None
    torch_platform: str | None = None


def _torch_on(line: str) -> re.Match[str] | None:
    """The installed torch a line names: pip's `you have torch X` on its resolver line, never what it `requires`."""
    if _INSTALLED in line:
        return _TORCH.search(line, line.index(_INSTALLED))
    if "requires torch" in line:
        return None
    return _TORCH.search(line)


def cuda_versions_in(lines: Iterable[str]) -> CudaVersions:
    """The first of each version the lines show; torch's CUDA from its +cuXYZ tag, collect_env's line, or else (no
    local tag) its PyPI wheel's (the table above); none for a +rocm, +cpu or +xpu build."""
    driver = driver_cuda = torch = torch_cuda = built = platform = None
    for line in lines:
        if not shows_cuda_versions(line):
            continue
        if driver is None and (m := _DRIVER_AND_CUDA.search(line) or _DRIVER_ALONE.search(line)):
            driver = m["driver"]
            driver_cuda = m.groupdict().get("cuda")
        if driver_cuda is None and (m := _DRIVER_FOUND.search(line)):
            found = int(m["found"])
            driver_cuda = f"{found // 1000}.{found % 1000 // 10}"
        if built is None and (m := _TORCH_BUILT.search(line)):
            built = m["cuda"]
        if torch is None and (m := _torch_on(line)):
            torch = m["version"]
            if m["tag"] == "cu" and m["num"] and m["num"].isdigit():
                torch_cuda = f"{m['num'][:-1]}.{m['num'][-1]}"
            elif m["tag"]:
                platform = m["tag"]
    if platform is not None:
        return CudaVersions(driver, driver_cuda, torch, None, platform)
    if torch is not None and torch_cuda is None:
        torch_cuda = built or cuda_of(torch)
    return CudaVersions(driver, driver_cuda, torch, torch_cuda or built)
