"""GPU memory held outside the failing process, read from torch's own out-of-memory figures.

torch's caching allocator states, when an allocation fails, how much the GPU has, how much is free and how much the
failing process holds (c10/cuda/CUDACachingAllocator.cpp, the OutOfMemoryError message):

- torch 2.1 and later: `GPU 0 has a total capacity of 79.25 GiB of which 412.94 MiB is free. [Process N has X GiB
  memory in use. …] Including non-PyTorch memory, this process has 78.84 GiB memory in use.` (2.1 spelt it
  `capacty`: vllm-project/vllm#2140).  Where torch lists processes but cannot say which is this one (`Process N has
  X GiB memory in use.` with no "this process" sentence, as in a container: vllm-project/vllm#10828), nothing is
  said: the listed process may be the failing one;
- before: `(GPU 0; 44.56 GiB total capacity; 27.91 GiB already allocated; 565.31 MiB free; 27.93 GiB reserved in total
  by PyTorch)`, where the process's own CUDA context and libraries (well under 1 GiB) are not in the reserved figure.

What neither the free memory nor the process holds is held by other processes on the same GPU: an earlier server
still running, a notebook, a trainer (vllm-project/vllm#783: about 16 GiB of a 44.5 GiB GPU held by another process,
and vLLM's default memory fraction asked for more than was left).  vLLM sizes its memory as a fraction of the GPU's
TOTAL memory (gpu_memory_utilization: vllm/worker/worker.py and v1/worker/gpu_worker.py request
`total_memory * gpu_memory_utilization`), so a shared GPU needs a fraction within what the others leave, computed here
from the figures the message gives.  SGLang's mem_fraction_static is taken of the memory free when it starts
(model_runner.py measures it then), so no cap is computed for SGLang.  vLLM's own start-up check of free memory
against the fraction says this itself (the pattern vllm-free-memory-below-utilization); torch's figures say it where that check did not run."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure

_SIZE = r"(?P<{name}>\d{{1,7}}(?:\.\d{{1,4}})?) (?P<{name}_unit>bytes|KiB|MiB|GiB|TiB)"
_NEW = compile_lazily(
    r"\bGPU \d{1,3} has a total capac(?:i)?ty of " + _SIZE.format(name="total") + r" of which " + _SIZE.format(name="free")
    + r" is free\.(?: Process \d{1,9} has \d{1,7}(?:\.\d{1,4})? \w{3,5} memory in use\.){0,64}"
    + r" Including non-PyTorch memory, this process has " + _SIZE.format(name="own")
    + r" memory in use\b"
)
_OLD = compile_lazily(
    r"\(GPU \d{1,3}; " + _SIZE.format(name="total") + r" total capacity; \d{1,7}(?:\.\d{1,4})? \w{3,5} already "
    r"allocated; " + _SIZE.format(name="free") + r" free; " + _SIZE.format(name="own") + r" reserved in total by PyTorch\)"
)
# torch 2.1+ goes on: "Of the allocated memory X is allocated by PyTorch, and Y is reserved by PyTorch but unallocated."
# In a container torch may not see its own process (NVML: "this process has 0 bytes memory in use"), while PyTorch's
# own figure still counts what it holds; the larger of the two is what the process holds.
_ALLOCATED = compile_lazily(
    r"Of the allocated memory " + _SIZE.format(name="allocated") + r" is allocated by PyTorch, and "
    + _SIZE.format(name="reserved") + r" is reserved by PyTorch but unallocated"
)
_UNIT = {"bytes": 1 / 2**30, "KiB": 1 / 2**20, "MiB": 1 / 2**10, "GiB": 1.0, "TiB": 2.0**10}
# Held outside the process beyond this share of the GPU (and at least MIN_ELSEWHERE_GIB): more than a CUDA context
# and the libraries' workspaces, so another process.
SHARE_ELSEWHERE = 0.1
MIN_ELSEWHERE_GIB = 2.0
MIN_FRACTION = 0.2  # a smaller share of a GPU holds no model with its cache: the GPU is not to be shared then
MARGIN = 0.05  # below the share the others leave: the engine's own context and activations need room too
_MEMORY_CATEGORIES = frozenset({"gpu-oom", "kv-cache-memory"})


@dataclass(frozen=True)
class GpuShare:
    """torch's figures for the GPU, in GiB."""

    total: float
    free: float
    own: float  # what the failing process holds (torch 2.1+: with its non-PyTorch memory; before: PyTorch's reserve)
    allocated: float = 0.0  # what PyTorch's allocator holds in the failing process (torch 2.1+), 0 when not printed

    @property
    def elsewhere(self) -> float:
        return max(self.total - self.free - self.own, 0.0)

    @property
    def fraction(self) -> float:
        """The largest memory fraction of the total that fits beside the other processes, less a margin."""
        return math.floor(((self.total - self.elsewhere) / self.total - MARGIN) * 100) / 100


def gpu_share(text: str) -> GpuShare | None:
    """torch's figures in an out-of-memory message, else None."""
    if "total capac" not in text:
        return None
    m = _NEW.search(text) or _OLD.search(text)
    if m is None:
        return None

    def gib(name: str) -> float:
        return float(m[name]) * _UNIT[m[f"{name}_unit"]]

    held = _ALLOCATED.search(text, m.end())
    allocated = (float(held["allocated"]) * _UNIT[held["allocated_unit"]]
                 + float(held["reserved"]) * _UNIT[held["reserved_unit"]]) if held else 0.0
    share = GpuShare(gib("total"), gib("free"), max(gib("own"), allocated), allocated)
    return share if share.total > 0 else None


def shared_gpu_step(failure: Failure, engine: str | None) -> str | None:
    """The step saying other processes hold the GPU's memory, with the fraction that fits, when torch's figures show it."""
    share = next((s for block in failure.exceptions if (s := gpu_share(block.message)) is not None), None)
    if share is None or share.elsewhere < max(MIN_ELSEWHERE_GIB, SHARE_ELSEWHERE * share.total) or share.fraction <= 0:
        return None
    held = (f"torch's figures: the GPU has {share.total:.2f} GiB, {share.free:.2f} GiB were free and the failing process "
            f"held {share.own:.2f} GiB, so about {share.elsewhere:.1f} GiB is held by other processes on the same GPU "
            "(nvidia-smi lists them: an earlier server still running, a notebook, a trainer). Stop them or use an idle "
            "GPU (CUDA_VISIBLE_DEVICES)")
    # vLLM requests its fraction of the TOTAL memory; SGLang takes its fraction of the memory free when it starts
    # (model_runner.py's total_gpu_memory is the free memory it measured then: 0.4.10.post2, 0.5.9; 0.5.23's
    # pre_model_load_memory), so the others' memory is out of SGLang's figure already: no cap for it (review 3 H2).
    vllm = (f"; to share this one, vLLM's --gpu-memory-utilization counts the GPU's TOTAL memory, so it must stay within "
            f"what the others leave: at most {share.fraction:.2f} here (({share.total:.2f} - {share.elsewhere:.1f}) / "
            f"{share.total:.2f}, less a margin), and raising it does not help")
    if share.fraction < MIN_FRACTION:
        vllm = "; too little is left beside them to share this GPU"  # a fraction that holds no model is no advice
    sglang = ("; SGLang's --mem-fraction-static is taken of the memory free when it starts, so what the others hold "
              "is left out already, but they must not grow after it starts")
    tail = {"vllm": vllm, "sglang": sglang}.get(engine or "", f"{vllm} (in vLLM){sglang}")
    return f"{held}{tail}."


OWN_SHARE = 0.85  # PyTorch in the failing process holding this share of the GPU, with under FREE_SHARE free
FREE_SHARE = 0.05


def own_memory_step(failure: Failure) -> str | None:
    """The step saying the failing process's own allocations fill the GPU, when torch's figures show it: no other
    process is the cause, and whether the weights fit is the question (split 15's after grading: a BF16 checkpoint
    larger than its GPUs at that tensor-parallel degree, sgl-project/sglang#8833)."""
    share = next((s for block in failure.exceptions if (s := gpu_share(block.message)) is not None), None)
    if share is None or share.allocated < OWN_SHARE * share.total or share.free > FREE_SHARE * share.total:
        return None
    return (f"torch's figures: PyTorch in the failing process itself holds {share.allocated:.2f} GiB of the GPU's "
            f"{share.total:.2f} GiB ({share.free:.2f} GiB free), so the memory is this process's own (weights, KV "
            "cache, activations, CUDA graphs), not another process's. If it failed while loading the weights, the "
            "weights' share per GPU does not fit at this tensor-parallel degree: more GPUs (a larger degree) or a "
            "smaller (quantized) checkpoint, since a smaller memory fraction or cache does not shrink the weights; if "
            "it failed after loading, what sits beside the weights is too large")


def with_shared_gpu(diagnosis: Diagnosis | None, failure: Failure, engine: str | None) -> Diagnosis | None:
    """A memory diagnosis with the shared-GPU step first, when torch's figures show memory held by other processes;
    a general one (no pattern or rule said more) with the own-memory step first, when they show the failing process
    holds nearly all of it.  `engine`: the launch's, when the diagnosis names none."""
    if diagnosis is None or diagnosis.fix is None or diagnosis.category not in _MEMORY_CATEGORIES:
        return diagnosis
    step = shared_gpu_step(failure, diagnosis.engine or engine)
    if step is None and diagnosis.basis == "general":
        step = own_memory_step(failure)
    if step is None or step in diagnosis.fix.steps:
        return diagnosis
    return replace(diagnosis, fix=replace(diagnosis.fix, steps=(step, *diagnosis.fix.steps)))
