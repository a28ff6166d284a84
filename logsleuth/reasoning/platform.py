"""The accelerator a failure ran on, decided from positive evidence, and NVIDIA-only advice kept off another one's log.

Most advice the patterns, rules and category checks give was written for NVIDIA's CUDA GPUs: nvidia-smi, NVML,
CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, nvcc/ptxas, Xid, the NVIDIA container runtime.  On an Ascend NPU, an AMD
GPU, a TPU, Gaudi, an Intel GPU or vLLM's CPU backend those checks send the user to tools that are not there (split 19's
grading: an NPU's Triton compile failure framed for NVIDIA, a TPU compile-time out-of-memory given nvidia-smi, split
18's and 17's NPU, Gaudi and XPU cases).  The platform is decided only when the failure's own lines, its frames' paths
or the log's device, package and plugin lines name exactly one non-NVIDIA platform (facts/platforms.toml) and nothing
NVIDIA's; otherwise nothing changes.  Then a step naming an NVIDIA tool that has a documented counterpart there names the
counterpart, a step whose check has none is left out, and one general step says why and names the platform's own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from logsleuth.facts.platforms import Platform, platforms
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure, Fix, LaunchInfo
from logsleuth.reasoning.evidence import exception_lines

# What only NVIDIA's stack prints: CUDA's own error names and messages, an NVIDIA GPU's name or architecture, NVML's
# errors, vLLM's CUDA platform line.  Any of them leaves the platform undecided (torch on ROCm says `HIP error`).
_NVIDIA_SHOWS = compile_lazily(
    r"\bCUDA error\b|\bcudaError[A-Z]\w*|\bCUDA_ERROR_[A-Z_]+|\bCUDA out of memory\b|\bNVMLError\w*|\blibnvidia-ml\b"
    r"|\bNVIDIA (?:GeForce|RTX|Tesla|Quadro|TITAN|DGX|Jetson|[ABHL]\d{1,3}\b|G[HB]\d{3})|\bsm_\d{2,3}a?\b"
    r"|Automatically detected platform cuda\b|\bXid\b"
)
# NVIDIA's tools and switches that have a counterpart on another platform (Platform's field of the same role).
_COUNTERPARTS = (
    (compile_lazily(r"\bnvidia-smi(?: -L| -q| topo(?: -\w+)*(?: \w)?)?(?![\w-])"), "smi"),
    (compile_lazily(r"\bCUDA_VISIBLE_DEVICES\b"), "visible"),
    (compile_lazily(r"\bCUDA_LAUNCH_BLOCKING=1\b"), "blocking"),
)
# NVIDIA-only checks with no counterpart of the same name: a step that still names one is left out.
_NVIDIA_ONLY = compile_lazily(
    r"\bNVML\b|\bpynvml\b|\bnvidia-ml-py\b|\bnvcc\b|\bptxas\b|\bXid\b|--gpus(?: all|=)|--runtime[ =]nvidia"
    r"|\bnvidia\.com/gpu\b|\bNVIDIA container\b|\blibcuda\.so|\blibnvidia-ml\b|\bcompute-sanitizer\b|\bcuda-gdb\b"
    r"|\bcompute capability\b|\bTORCH_CUDA_ARCH_LIST\b|\bCUDA_LAUNCH_BLOCKING\b|\bNVIDIA driver\b|\bBlackwell\b"
    r"|\bHopper\b|\bnvidia-smi\b|\bCUDA_VISIBLE_DEVICES\b|(?i:^on an NVIDIA GPU\b)"
)


def _lines(failure: Failure, launch: LaunchInfo) -> Iterator[str]:
    yield from exception_lines(failure)
    for block in failure.exceptions:
        yield from (frame.file for frame in block.frames)
    yield from failure.context
    yield from (*launch.gpu_lines, *launch.driver_lines, *launch.plugin_lines, *launch.package_lines)
    yield from (text for text in (launch.image_version, launch.command, launch.wrapper) if text)


def platform_of(failure: Failure, launch: LaunchInfo) -> tuple[Platform, str] | None:
    """The one non-NVIDIA platform the evidence names, and the words that name it; None when it names none, more than
    one, or anything only NVIDIA's stack prints."""
    found: dict[str, tuple[Platform, str]] = {}
    for line in _lines(failure, launch):
        if _NVIDIA_SHOWS.search(line):
            return None
        for platform in platforms():
            if platform.key not in found and (said := platform.shows.search(line)):
                found[platform.key] = (platform, said.group(0).strip())
    return next(iter(found.values())) if len(found) == 1 else None


def _for_platform(text: str, platform: Platform) -> str | None:
    """`text` with NVIDIA's tools named by the platform's counterparts; None when a check in it has none there.  A text
    that already names the platform's own (`nvidia-smi (or rocm-smi)`) is kept as it is."""
    if platform.shows.search(text) or (platform.smi and platform.smi.split()[0] in text):
        return text
    for pattern, role in _COUNTERPARTS:
        if pattern.search(text):
            counterpart: str = getattr(platform, role)
            if not counterpart:
                return None
            text = pattern.sub(counterpart.split(" (")[0], text)
    return None if _NVIDIA_ONLY.search(text) else text


# The general categories where the device's own stack is what to check: its memory for an out-of-memory, else the
# versions of its stack that must match (a runtime, a compiler or an operator failing on the device).
_STACK_CATEGORIES = frozenset({"gpu-oom", "dependency-version", "gpu-arch-unsupported", "cuda-error", "unclassified",
                               "illegal-memory-access", "engine-bug"})


def platform_step(platform: Platform, said: str, left_out: bool, renamed: bool, category: str = "") -> str:
    """The general step that names the platform the log shows and its own tools (and, for a category its stack
    decides, its memory check or the versions of its stack that must match)."""
    own = [f"{platform.smi} lists the devices and their memory" if platform.smi else "",
           f"{platform.visible} chooses the visible devices" if platform.visible else "",
           f"{platform.blocking}, for one debugging run, reports a device error at the call that made it"
           if platform.blocking else ""]
    tools = "; ".join(part for part in own if part)
    why = ("the checks made with NVIDIA's own tools do not apply there and are left out" if left_out
           else "where a check above names an NVIDIA tool, its counterpart is named" if renamed
           else "NVIDIA's own tools do not apply there")
    stack = (f" Memory: {platform.memory}." if category == "gpu-oom"
             else f" Versions that must match: {platform.versions}." if category in _STACK_CATEGORIES else "")
    return (f"General guidance: the log shows {platform.name} (it names {said}), not an NVIDIA GPU: {why}. "
            + (f"Its own: {tools}." if tools else "Its own tools and the engine's documentation for it apply.")
            + stack)


def with_platform(diagnosis: Diagnosis | None, failure: Failure, launch: LaunchInfo) -> Diagnosis | None:
    """The diagnosis with its NVIDIA-only advice rewritten for the non-NVIDIA platform the log shows, if it shows one."""
    if diagnosis is None or diagnosis.fix is None:
        return diagnosis
    decided = platform_of(failure, launch)
    if decided is None:
        return diagnosis
    platform, said = decided
    if platform.fallback:  # (vLLM's CPU platform is also what a GPU launch that found no GPU falls back to)
        return diagnosis
    fix, changed, left_out = _fix_for(diagnosis.fix, platform)
    cause = _for_platform(diagnosis.root_cause, platform)
    if cause is None:  # a cause told in NVIDIA's terms: said as such, never claimed for this platform
        cause = (f"{diagnosis.root_cause.rstrip()} (This explanation names NVIDIA's stack; the log shows "
                 f"{platform.name}, where the same failure is its own stack's: its driver, runtime and device package.)")
    general = diagnosis.basis == "general" and diagnosis.category in _STACK_CATEGORIES
    if not changed and cause == diagnosis.root_cause and not general:
        return diagnosis
    step = platform_step(platform, said, left_out, changed, diagnosis.category)
    if step not in fix.steps:
        fix = replace(fix, steps=(*fix.steps, step))
    references = (*diagnosis.references, *(s for s in platform.sources[:1] if s not in diagnosis.references))
    return replace(diagnosis, fix=fix, root_cause=cause, references=references)


def _fix_for(fix: Fix, platform: Platform) -> tuple[Fix, bool, bool]:
    """The fix with its steps and summary for the platform, whether anything changed, whether a step was left out."""
    steps = [(step, _for_platform(step, platform)) for step in fix.steps]
    kept = tuple(new for _, new in steps if new is not None)
    summary = _for_platform(fix.summary, platform)
    if summary is None:
        summary = f"Check the {platform.name}'s own stack where the engine runs (below); NVIDIA's checks do not apply."
    alternatives = tuple(_fix_for(alternative, platform)[0] for alternative in fix.alternatives)
    changed = kept != fix.steps or summary != fix.summary or alternatives != fix.alternatives
    left_out = len(kept) < len(fix.steps)
    return replace(fix, steps=kept, summary=summary, alternatives=alternatives), changed, left_out

