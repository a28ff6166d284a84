"""The accelerator a failure ran on, decided from positive evidence, and NVIDIA-only advice kept off another one's log.

Most advice the patterns, rules and category checks give was written for NVIDIA's CUDA GPUs: nvidia-smi, NVML,
CUDA_VISIBLE_DEVICES, CUDA_LAUNCH_BLOCKING, nvcc/ptxas, Xid, the NVIDIA container runtime.  On an Ascend NPU, an AMD
GPU, a TPU, Gaudi, an Intel GPU or vLLM's CPU backend those checks send the user to tools that are not there (split 19's
grading: an NPU's Triton compile failure framed for NVIDIA, a TPU compile-time out-of-memory given nvidia-smi, split
18's and 17's NPU, Gaudi and XPU cases).  The platform is decided only from signs that its stack ran
(facts/platforms.toml): the failure's own lines (its runtime's error names), its frames' paths, the launch's device,
package, plugin and driver lines, vLLM's platform line, the command, image and wrapper; never from the warnings before
the failure, and never from a bare platform noun (a refusal names the platform it requires when it is not on it).  Any
sign of NVIDIA's (a GPU facts/gpus.toml knows with a compute capability, CUDA's or NVML's errors, vLLM's `platform
cuda` line), anywhere in those lines or the warnings, decides nothing.  Then a step, summary or alternative that names
an NVIDIA-only check is left out (never rewritten: its text may quote the user's launch), the root cause is said to
be NVIDIA's terms, an alternative's CUDA_LAUNCH_BLOCKING becomes the platform's own switch, and one general step names
the platform's own documented tools."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace

from logsleuth.facts.gpus import gpus_in
from logsleuth.facts.platforms import Platform, platforms
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure, Fix, LaunchInfo
from logsleuth.reasoning.evidence import exception_lines

# What only NVIDIA's stack prints besides its GPUs' names (facts/gpus.toml, read through gpus_in): CUDA's and NVML's
# own error names and messages, an NVIDIA architecture, vLLM's CUDA platform line, an Xid.  Any of them decides no
# other platform (torch on ROCm says `HIP error`, never `CUDA error`).
_NVIDIA_SHOWS = compile_lazily(
    r"\bCUDA error\b|\bcudaError[A-Z]\w*|\bCUDA_ERROR_[A-Z_]+|\bCUDA out of memory\b|\bNVMLError\w*|\blibnvidia-ml\b"
    r"|\bsm_\d{2,3}a?\b|Automatically detected platform cuda\b|\bXid\b"
)
# The brands NVIDIA prints its GPUs' names under (nvidia-smi, torch), for a GPU facts/gpus.toml has no row for.
_NVIDIA_BRANDS = ("NVIDIA", "Tesla", "Quadro", "GeForce")
# NVIDIA-only checks: a text that names one is left out on another platform (unless that platform's stack reads the
# name too: Platform.honours).  Each alternative is one name, so a platform can honour it.
_NVIDIA_ONLY = {
    name: compile_lazily(regex) for name, regex in (
        ("CUDA_VISIBLE_DEVICES", r"\bCUDA_VISIBLE_DEVICES\b"),
        ("nvidia", r"\bNVML\b|\bpynvml\b|\bnvidia-ml-py\b|\bnvcc\b|\bptxas\b|\bXid\b|--gpus(?: all|=)|--runtime[ =]nvidia"
                   r"|\bnvidia\.com/gpu\b|\bNVIDIA container\b|\blibcuda\.so|\blibnvidia-ml\b|\bcompute-sanitizer\b"
                   r"|\bcuda-gdb\b|\bcompute capability\b|\bTORCH_CUDA_ARCH_LIST\b|\bCUDA_LAUNCH_BLOCKING\b|\bNVIDIA driver\b"
                   r"|\bBlackwell\b|\bHopper\b|\bnvidia-smi\b|\bon an NVIDIA GPU\b"),
    )
}
# vLLM's and torch's synchronous-launch switch for CUDA, in a fix's environment: the platform's own (Platform.blocking).
_BLOCKING = "CUDA_LAUNCH_BLOCKING"


def _lines(failure: Failure, launch: LaunchInfo) -> Iterator[str]:
    """The lines a platform is decided from: the failure's own, its frames' paths and what the launch showed."""
    yield from exception_lines(failure)
    for block in failure.exceptions:
        yield from (frame.file for frame in block.frames)
    yield from (*launch.gpu_lines, *launch.driver_lines, *launch.plugin_lines, *launch.package_lines)
    yield from (text for text in (launch.platform_line, launch.image_version, launch.command, launch.wrapper) if text)


def shows_nvidia(lines: Iterable[str]) -> bool:
    """The lines show NVIDIA's stack: a GPU with a compute capability, CUDA's or NVML's errors, vLLM's CUDA line."""
    lines = tuple(lines)
    return (any(_NVIDIA_SHOWS.search(line) for line in lines)
            or any(gpu.capability is not None or gpu.name.startswith(_NVIDIA_BRANDS) for gpu in gpus_in(lines)))


def platform_of(failure: Failure, launch: LaunchInfo) -> tuple[Platform, str] | None:
    """The one non-NVIDIA platform the evidence shows ran, and the words that show it; None when it shows none, more
    than one, or anything of NVIDIA's (in those lines or the warnings before the failure)."""
    lines = tuple(_lines(failure, launch))
    if shows_nvidia((*lines, *failure.context)):
        return None
    found: dict[str, tuple[Platform, str]] = {}
    for line in lines:
        for platform in platforms():
            if platform.key not in found and (said := platform.shows.search(line)):
                found[platform.key] = (platform, said.group(0).strip())
    if not found and any(gpu.gfx for gpu in gpus_in(lines)):  # an AMD GPU by its name in the table (no gfx printed)
        rocm = next(platform for platform in platforms() if platform.key == "rocm")
        found["rocm"] = (rocm, next(gpu.name or gpu.gfx or "" for gpu in gpus_in(lines) if gpu.gfx))
    return next(iter(found.values())) if len(found) == 1 else None


def nvidia_only(text: str, platform: Platform) -> bool:
    """The text names a check that holds only on NVIDIA's stack, not on this platform; a text that also names the
    platform's own tool (`nvidia-smi -L (rocm-smi on AMD)`) already says both."""
    if any(tool in text for tool in _own_tools(platform)):
        return False
    return any(name not in platform.honours and pattern.search(text) for name, pattern in _NVIDIA_ONLY.items())


_TOOL = compile_lazily(r"\b[a-z]+-smi\b|\b[A-Z][A-Z]+_[A-Z_]*[A-Z]\b")


def _own_tools(platform: Platform) -> list[str]:
    """The platform's own tools and switches its row names (amd-smi, rocm-smi, HIP_VISIBLE_DEVICES, ...)."""
    return _TOOL.findall(" ".join((platform.smi, platform.visible, platform.blocking)))


# The general categories where the device's own stack is what to check: its memory for an out-of-memory, else the
# versions of its stack that must match (a runtime, a compiler or an operator failing on the device).
_STACK_CATEGORIES = frozenset({"gpu-oom", "dependency-version", "gpu-arch-unsupported", "cuda-error",
                               "illegal-memory-access"})


# General categories whose failure may be the device runtime's or not: its versions only when the failure says so.
_RUNTIME_CATEGORIES = frozenset({"engine-bug", "unclassified"})


def _in_failure(platform: Platform, failure: Failure) -> bool:
    """The platform's own words are in the failure's lines or its frames' paths (its runtime or package failed)."""
    frames = (frame.file for block in failure.exceptions for frame in block.frames)
    return any(platform.shows.search(line) for line in (*exception_lines(failure), *frames))


def platform_step(platform: Platform, said: str, left_out: bool, category: str = "") -> str:
    """The general step that names the platform the log shows and its own tools (and, for a category its stack
    decides, its memory check or the versions of its stack that must match; where no device was found, its device
    package's import)."""
    visible = (f"{platform.visible} (or {' and '.join(platform.honours)}: its stack reads both; set both only to the "
               "same value)" if platform.honours else platform.visible)
    own = [f"{platform.smi} lists the devices and their memory" if platform.smi else "",
           f"{visible} chooses the visible devices" if platform.visible else "",
           f"{platform.blocking}, for one debugging run, reports a device error at the call that made it"
           if platform.blocking else ""]
    tools = "; ".join(part for part in own if part)
    why = ("the checks made with NVIDIA's own tools do not apply there and are left out" if left_out
           else "NVIDIA's own tools do not apply there")
    stack = (f" Memory: {platform.memory}." if category == "gpu-oom"
             else f" Versions that must match: {platform.versions}." if category in _STACK_CATEGORIES | _RUNTIME_CATEGORIES
             else f" Its device package: {platform.package}." if category == "orchestration" and platform.package
             else "")
    return (f"General guidance: the log shows {platform.name} (it names {said}), not an NVIDIA GPU: {why}. "
            + (f"Its own: {tools}." if tools else "Its own tools and the engine's documentation for it apply.")
            + stack)


def with_platform(diagnosis: Diagnosis | None, failure: Failure, launch: LaunchInfo) -> Diagnosis | None:
    """The diagnosis with its NVIDIA-only advice left out for the non-NVIDIA platform the log shows, if it shows one."""
    if diagnosis is None or diagnosis.fix is None:
        return diagnosis
    decided = platform_of(failure, launch)
    if decided is None:
        return diagnosis
    platform, said = decided
    if platform.fallback:  # (vLLM's CPU platform is also what a GPU launch that found no GPU falls back to)
        return diagnosis
    fix, left_out = _fix_for(diagnosis.fix, platform)
    cause = diagnosis.root_cause
    if nvidia_only(cause, platform):  # a cause told in NVIDIA's terms: said as such, never claimed for this platform
        cause = (f"{cause.rstrip()} (This explanation names NVIDIA's stack; the log shows {platform.name}, where the "
                 "same failure is its own stack's: its driver, runtime and device package.)")
    # an engine bug or an unclassified failure is the platform's stack's only when its words are the failure's own
    category = ("" if diagnosis.category in _RUNTIME_CATEGORIES and not _in_failure(platform, failure)
                else diagnosis.category)
    general = diagnosis.basis == "general" and category in _STACK_CATEGORIES | _RUNTIME_CATEGORIES
    if fix == diagnosis.fix and cause == diagnosis.root_cause and not general:
        return diagnosis
    step = platform_step(platform, said, left_out, category)
    if step not in fix.steps:
        fix = replace(fix, steps=(*fix.steps, step))
    references = (*diagnosis.references, *(s for s in platform.sources[:1] if s not in diagnosis.references))
    return replace(diagnosis, fix=fix, root_cause=cause, references=references)


def _fix_for(fix: Fix, platform: Platform) -> tuple[Fix, bool]:
    """The fix without its NVIDIA-only steps and alternatives (a summary that names one said plainly instead), its
    environment's CUDA_LAUNCH_BLOCKING as the platform's own switch; and whether a check was left out."""
    kept = tuple(step for step in fix.steps if not nvidia_only(step, platform))
    summary = fix.summary
    if nvidia_only(summary, platform):
        summary = f"Check the {platform.name}'s own stack where the engine runs (below); NVIDIA's checks do not apply."
    env = _env_for(fix.env, platform)
    alternatives = tuple(_fix_for(alternative, platform)[0] for alternative in fix.alternatives
                         if not nvidia_only(alternative.summary, platform) and _env_for(alternative.env, platform) is not None)
    left_out = len(kept) < len(fix.steps) or len(alternatives) < len(fix.alternatives) or env is None
    return replace(fix, steps=kept, summary=summary, env=env or (), alternatives=alternatives), left_out


def _env_for(env: tuple[tuple[str, str], ...], platform: Platform) -> tuple[tuple[str, str], ...] | None:
    """The environment with CUDA_LAUNCH_BLOCKING as the platform's own switch; None when it has none, or when another
    NVIDIA-only variable is set."""
    out = []
    for name, value in env:
        if name == _BLOCKING:
            if not platform.blocking:
                return None
            name, _, value = platform.blocking.partition("=")
        elif nvidia_only(name, platform):
            return None
        out.append((name, value))
    return tuple(out)
