"""NCCL's "unhandled cuda error" whose last error is `Cuda failure 'invalid argument'` (issue 28, stop 56; split 19's
D-04, split 17's F-04): a step said only when the failure's own lines show that last error, with the NCCL release the
paste prints compared with the one that fixed such a failure.

NCCL prints its last error after the result (`ncclUnhandledCudaError: Call to CUDA function failed.` / `Last error:` /
`Cuda failure 'invalid argument'`, newer releases `Cuda failure 1 'invalid argument'`; NCCL's CUDACHECK in
src/include/checks.h).  'invalid argument' there was NCCL's peer-to-peer path registering or opening another GPU's
memory in vllm-project/vllm#3688 (NCCL 2.18.1, fixed by NVIDIA/nccl commit 4365458: 2.19.3 ran) and NVIDIA-NeMo/RL#722
(the legacy CUDA IPC path); NVLS (src/transport/nvls.cc) prints the same status.  vLLM sets NCCL_CUMEM_ENABLE=0 itself on
import unless the environment sets it (vllm/env_override.py), so that setting is rarely the user's; NCCL_CUMEM_ENABLE=1
is the test of the other path, at a memory cost with CUDA graphs and all-reduce (NVIDIA/nccl#1234)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure
from logsleuth.reasoning.evidence import exception_lines
from logsleuth.versions import version_key

_INVALID_ARGUMENT = compile_lazily(r"Cuda failure (?:\d{1,4} )?'invalid argument'")
_NVLS = compile_lazily(r"\bnvls\.cc\b|\bNVLS\b")
_CUMEM = compile_lazily(r"\bncclCuMem")
# the NCCL release a line prints: torch's `…, NCCL version 2.18.1`, vLLM's `vLLM is using nccl==2.18.1`
_NCCL_RELEASE = compile_lazily(r"\bNCCL version (?P<version>\d\.\d{1,2}\.\d{1,2})\b|\bnccl==(?P<version2>\d\.\d{1,2}\.\d{1,2})\b")
_FIXED_IN = "2.19.3"


def nccl_invalid_argument_steps(texts: Iterable[str], engine: str | None) -> tuple[str, ...]:
    """The step for NCCL's last error 'invalid argument' (none when the lines do not show it, or show it in
    ncclCuMem's functions, which the nccl row's own ncclCuMem check reads)."""
    texts = [text for text in texts if text]
    said = next((text for text in texts if _INVALID_ARGUMENT.search(text)), None)
    if said is None or _CUMEM.search(said):
        return ()
    release = next((m["version"] or m["version2"] for text in texts if (m := _NCCL_RELEASE.search(text))), None)
    nvls = _NVLS.search(said) is not None
    parts = ["NCCL's last error is \"Cuda failure 'invalid argument'\": NCCL could not register or open another GPU's "
             "memory on its " + ("NVLS path (nvls.cc): NCCL_NVLS_ENABLE=0 in the server's environment tests that path"
                                 if nvls else "peer-to-peer path (CUDA IPC or cuMem handles)")]
    older = version_key(release or "")
    if release and older is not None and older < (version_key(_FIXED_IN) or older):
        parts.append(f"The paste shows NCCL {release}, older than {_FIXED_IN}, which fixed such a failure of 2.18.1 "
                     "(NVIDIA/nccl commit 4365458, vllm-project/vllm#3688): a torch or nvidia-nccl wheel with a newer "
                     "NCCL tests that")
    if not nvls:
        parts.append("vLLM sets NCCL_CUMEM_ENABLE=0 itself on import unless the environment sets it "
                     "(vllm/env_override.py), so NCCL uses legacy CUDA IPC there; NCCL_CUMEM_ENABLE=1 in the server's "
                     "environment tests the cuMem path instead, at a memory cost with CUDA graphs and all-reduce "
                     "(NVIDIA/nccl#1234)" if engine in (None, "vllm") else
                     "NCCL_CUMEM_ENABLE in the server's environment (0: legacy CUDA IPC, 1: cuMem) tests the other path, "
                     "at a memory cost with CUDA graphs and all-reduce when cuMem is on (NVIDIA/nccl#1234)")
    return (". ".join(parts) + ".",)


def with_nccl_last_error(diagnosis: Diagnosis, failure: Failure, lines: Iterable[str] = ()) -> Diagnosis:
    """`diagnosis` with the 'invalid argument' step first among its fix's steps, when the failure's lines show it."""
    steps = nccl_invalid_argument_steps([*exception_lines(failure), *failure.context, *lines], diagnosis.engine)
    if not steps or diagnosis.fix is None:
        return diagnosis
    return replace(diagnosis, fix=replace(diagnosis.fix, steps=(*steps, *diagnosis.fix.steps)))
