"""cuda-error's check for 'CUDA error: invalid argument' at a plain torch call (facts/categories.toml, split 19's B-01:
a companion native library's release) holds only where the failing statement is such a call: an allocation, a copy
to the GPU, emptying the cache.  A kernel launch (a Triton `kernel[grid](…)`, a custom op) chose its own grid, shared
memory and arguments, the usual cause of its own 'invalid argument', so the check is dropped there (review of branch
cuda20, item 10)."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure

# the check's own opening words (facts/categories.toml, cuda-error's checks_when)
COMPANION_CHECK = "'invalid argument' (cudaErrorInvalidValue) at a plain torch call"
_PLAIN_CALL = compile_lazily(
    r"\btorch\.(?:empty|zeros|ones|full|tensor|as_tensor|rand|randn|arange)\w*\(|\.to\(|\.cuda\(|\bempty_cache\(|"
    r"\.copy_\(|\.pin_memory\(|\.(?:empty|zeros|ones|full)_like\("
)


def at_a_plain_call(failure: Failure) -> bool:
    """The innermost frame's statement is a torch allocation, copy or cache call."""
    frames = failure.final.frames
    return bool(frames) and _PLAIN_CALL.search(frames[-1].source or "") is not None


def without_companion_check(checks: tuple[str, ...], failure: Failure) -> tuple[str, ...]:
    """`checks` without the companion-library check unless the failure is at a plain torch call."""
    if at_a_plain_call(failure):
        return checks
    return tuple(check for check in checks if not check.startswith(COMPANION_CHECK))
