"""What a failure's message says the hardware lacks: the requirement in its own numbers and words (a minimum
capability, a window, only some architectures), a kernel binary or compiler target for another architecture, or
a build for another accelerator.  The hardware rule (hardware.py) reads it; the table (facts/gpus.toml) fills in
what a named feature needs when the message states no number.

Every regex is bounded (no nested quantifiers; the free text between words is at most a few dozen characters)."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from logsleuth.facts import gpus as facts
from logsleuth.facts.gpus import Capability, Feature, arch_name, show
from logsleuth.lazyre import compile_lazily

ANY_MINOR = -1  # "SM12x": any minor revision of that major

# Wordings that say the hardware is the limit (the rule's gate: a message without one is not this rule's).
_HARDWARE_LIMIT = compile_lazily(
    r"not supported (?:on|in|for|by) (?:this|the current|your|the) (?:GPU|architecture|arch\b|device|hardware)"
    r"|not supported on CUDA arch|unsupported (?:GPU |CUDA )?arch(?:itecture)?\b"
    r"|not supported on [^.\n]{0,30}?(?:\bSM ?\d|\bsm_?\d|Hopper|Blackwell|Ampere|Ada\b|Volta|Turing)"
    r"|only (?:supported|available|implemented) (?:on|for) [^.\n]{0,40}?(?:GPU|device|\bSM|sm_|Hopper|Blackwell|Ampere|Ada\b|capability)"
    r"|only supports? (?:Ampere|Hopper|Blackwell|Ada|Turing|Volta)"
    r"|requires? [^.\n]{0,30}?(?:\bSM ?[>=<]*\d|\bsm_?\d|Hopper|Blackwell|Ampere|compute capability)"
    r"|\b(?:SM|sm_?)\d{2,3}[af]?[- ]only|compute capability (?:of at least|>=|≥)"
    r"|(?:Min(?:imum)?|Required) capability: |(?:Device|GPU)s? does not support",
    re.IGNORECASE,
)
# A program's floor for any GPU, not a feature's need: "GPUs with compute capability below 7.0 are not supported."
# (vLLM's setup.py up to 0.2.x, raised while it builds or installs for the GPUs it sees: vllm-project/vllm#1284 on a
# Tesla P100, #1431 on a Tesla P4).  No dtype, backend or flag gets past it: the GPU is below what the program runs on.
_FLOOR = compile_lazily(
    r"\bGPUs? with (?:a )?(?:compute|cuda) capability (?:below|less than|lower than|<) ?(?P<floor>\d{1,2}\.\d)"
    r" (?:are|is) not supported\b",
    re.IGNORECASE,
)
_NO_KERNEL = compile_lazily(
    r"no kernel image is available for execution on the device|cudaErrorNoKernelImageForDevice|hipErrorNoBinaryForGpu"
    r"|Unable to find code object for all current devices|invalid device function"
    r"|with CUDA capability sm_(?P<sm>\d{2,3}) is not compatible with the current PyTorch installation"
    # torch's other warnings that its build has no kernels for this GPU (torch/cuda/__init__.py _check_capability's
    # old_gpu_warn, and _warn_unsupported_code of torch 2.8 and later, printed only when no CC of the build runs here)
    r"|PyTorch no longer supports this GPU because it is too old"
    r"|which is of compute capability \(CC\) (?P<cc>\d{1,2}\.\d)\b"
)
# A kernel the release compiled for some architectures only, asked for on another: vLLM's CUTLASS entry points
# (csrc/quantization/cutlass_w8a8/scaled_mm_entry.cu: TORCH_CHECK_NOT_IMPLEMENTED(false, "No compiled
# cutlass_scaled_mm for CUDA device capability: ", version_num), and its MoE data and grouped-GEMM entries with the
# same words; vllm-project/vllm#24921 on sm_120).  The number is the GPU's own capability, not the requirement.
_NOT_COMPILED = compile_lazily(
    r"\bNo compiled (?P<kernel>\w{1,60})\b(?P<between>[^\n]{0,120}?)\bCUDA device capability: ?(?P<cap>\d{2,3})\b"
)
# The fall-through's words when no branch the build has is for this or an older GPU ("for a compute capability less
# than CUDA device capability: 70"): the kernel's builds start above this GPU.
_BELOW = compile_lazily(r"\bless than\b")
# A third-party kernel library whose own build lacks the architecture, named by its path in the message (a C++
# check's source file, a .so), never by the Python frames alone (they show who called the kernel, not whose kernel
# it is): xformers' bundled FlashAttention (vllm-project/vllm#20998: `CUDA error (…/xformers-0.0.30/third_party/
# flash-attention/hopper/…): no kernel image`), flash-attn, flashinfer, sgl-kernel.  Its wheel is built for a list
# of architectures of its own.  The path's spelling -> the module it is; the distribution that installs the module
# is read from facts/imports.toml.
_LIBRARY_MODULES = {
    "xformers": "xformers", "flash_attn": "flash_attn", "flash-attention": "flash_attn", "flash_attn_2_cuda": "flash_attn",
    "vllm_flash_attn": "vllm_flash_attn", "flashinfer": "flashinfer", "sgl_kernel": "sgl_kernel", "sgl-kernel": "sgl_kernel",
}
# A directory of that name (its package, or a source tree `xformers-0.0.30/`), or flash-attn's extension module: an
# engine's own file named after the library (vllm/attention/backends/flash_attn.py, flashinfer_backend.py) is not it.
_KERNEL_LIBRARY = compile_lazily(r"(?:^|[/\\\s(])(?P<name>" + "|".join(sorted(_LIBRARY_MODULES, key=len, reverse=True))
                                 + r")(?:[-/\\]|\.cpython)")
_PTXAS = compile_lazily(
    r"ptxas fatal\s*:\s*Value '(?P<ptxas>sm_\d{2,3}[af]?)' is not defined for option 'gpu-name'"
    r"|nvcc fatal\s*:\s*Unsupported gpu architecture '(?P<nvcc>compute_\d{2,3}[af]?)'"
)
# vLLM's attention selector (vllm/platforms/cuda.py; the reason from AttentionBackend.validate_configuration in
# vllm/v1/attention/backend.py 0.33.0, vllm/attention/backends/abstract.py 0.11.2).
_SELECTED_BACKEND = compile_lazily(
    r"Selected backend (?:\w+\.)?(?P<backend>[A-Z][A-Z0-9_]{1,40}) is not valid for this configuration\. Reason: "
    r"[^\n]{0,300}?compute capability not supported"
)
_OTHER_BUILD = compile_lazily(r"Torch not compiled with (?P<missing>CUDA|XPU) enabled|No HIP GPUs are available")

# The requirement's numbers, as the message states them.
_MINIMUM = compile_lazily(
    r"capability (?:of at least|>=|≥) ?(?P<dot>\d{1,2}\.\d)|capability (?P<dot2>\d{1,2}\.\d)\+? or (?:newer|higher|above|later)"
    r"|capability >= ?(?P<int0>\d{2,3})\b|(?:Min(?:imum)?) capability: (?:', ')?(?P<int>\d{2,3})\b"
    r"|capability (?:of )?(?P<int2>\d{2,3}) (?:and (?:above|newer|later)|or (?:higher|newer|above|later))"
    r"|CUDA arch < ?(?P<below>\d{2,3})\b|\bSM ?>= ?(?P<sm>\d{2,3}|\d{1,2}\.\d)",
    re.IGNORECASE,
)
_QUANTIZATION_METHOD = compile_lazily(r"quantization (?:method|scheme) (?P<name>[\w-]{1,40})", re.IGNORECASE)
_NAMED_QUANTIZATION = compile_lazily(r"\b(?P<name>[A-Z0-9][\w-]{1,40}) quantization\b")  # "MXFP4 quantization", "AWQ quantization"
_MAXIMUM = compile_lazily(r"\bSM ?<= ?(?P<sm>\d{2,3}|\d{1,2}\.\d)", re.IGNORECASE)
_EXACT = compile_lazily(  # only this architecture: "Required capability: 90" (match_exact), "requires compute capability of 90"
    r"Required capability: (?:', ')?(?P<int>\d{2,3})\b|requires? (?:GPU )?compute capability (?:of )?(?P<int2>\d{2,3})\b(?! and| or)"
)
_ARCH_TOKEN = compile_lazily(r"\b(?:SM|sm_?)(?P<digits>\d{2,3})(?P<x>x)?[af]?\b|\bSM ?(?P<major>\d{1,2})\.(?:x|\d)\b")
# What names the GPU, not the requirement: "got SM8.x", "Current capability: 75", "not supported on Blackwell GPUs".
# (No leading ",?\s*": the words left behind are harmless, and a search from inside a long run of spaces
# would cost time quadratic in its length.)
_GOT = compile_lazily(r"\bgot\b[^\n]*|\bCurrent capability: [\d.]+|\bnot supported on [^.\n]*", re.IGNORECASE)
_FAMILIES: dict[str, tuple[Capability, ...]] = {
    "volta": ((7, 0),),
    "turing": ((7, 5),),
    "ampere": ((8, ANY_MINOR),),
    "ada": ((8, 9),),
    "hopper": ((9, 0),),
    "blackwell": ((10, ANY_MINOR), (12, ANY_MINOR)),
}
_NEWER = compile_lazily(r"or (?:newer|later|above|higher)|and (?:newer|later|above)|\bat least\b", re.IGNORECASE)


@dataclass(frozen=True)
class Requirement:
    """What the failing code needs: a minimum capability, a maximum, or only some architectures."""

    minimum: Capability | None = None
    maximum: Capability | None = None
    archs: tuple[Capability, ...] = ()
    said_by: str = "message"  # "message" (its numbers) or a facts source key (the table's row)

    @property
    def stated(self) -> bool:
        return bool(self.archs) or self.minimum is not None or self.maximum is not None

    def runs_on(self, capability: Capability) -> bool:
        if not self.stated:
            return False  # the message says this GPU is not supported, not what is
        if self.archs:
            return any(arch[0] == capability[0] and arch[1] in (capability[1], ANY_MINOR) for arch in self.archs)
        if self.minimum is not None and capability < self.minimum:
            return False
        return self.maximum is None or capability <= self.maximum

    def describe(self) -> str:
        if self.archs:
            return " or ".join(f"sm_{a[0]}x" if a[1] == ANY_MINOR else arch_name(a) for a in self.archs)
        parts = []
        if self.minimum is not None:
            parts.append(f"compute capability {show(self.minimum)} or newer")
        if self.maximum is not None:
            parts.append(f"at most {show(self.maximum)}")
        return " and ".join(parts) or "another GPU architecture"


@dataclass(frozen=True)
class Limit:
    """The hardware limit a failure names."""

    kind: Literal["needs", "no-kernel", "not-compiled", "ptxas", "build"]
    features: tuple[Feature, ...] = ()
    requirement: Requirement | None = None
    arch: Capability | None = None  # the architecture a no-kernel or ptxas message names
    arch_text: str = ""  # as printed: "sm_120a"
    build: str = ""  # the missing backend: "CUDA", "XPU", "HIP"
    quantization: str = ""  # the quantization the message names ("awq", "MXFP4"), when it names one
    backend: str = ""  # the attention backend a selector rejected for this GPU ("FLASHMLA")
    kernel: str = ""  # the kernel a not-compiled message names ("get_cutlass_moe_mm_data")
    library: str = ""  # the module of the third-party kernel library whose build lacks the architecture ("xformers")
    below: bool = False  # a not-compiled message saying the kernel is compiled only for capabilities above the GPU's
    vision: bool = False  # raised by the vision encoder's attention (SGLang: --mm-attention-backend), not the LLM's
    message: str = ""  # for a vision limit, the failing message: a backend it refuses the LLM's launch may use too
    floor: bool = False  # the program's minimum for any GPU (its own floor check), not one feature's need


def compiler_limit_in(lines: Sequence[str]) -> Limit | None:
    """A compiler's own line printed above the exception it causes (a build's CalledProcessError)."""
    context = "\n".join(lines)
    match = _PTXAS.search(context) if "fatal" in context else None
    return limit_in(match[0]) if match else None


def limit_in(text: str) -> Limit | None:
    """The hardware limit the failure's text names, or None (then this rule does not apply)."""
    match = _PTXAS.search(text)
    if match:
        arch_text = match["ptxas"] or match["nvcc"]
        return Limit("ptxas", arch=facts.parse_capability(arch_text), arch_text=arch_text)
    match = _NOT_COMPILED.search(text)
    if match:
        arch = facts.parse_capability(match["cap"])
        return Limit("not-compiled", arch=arch, arch_text=f"sm_{match['cap']}", kernel=match["kernel"],
                     below=_BELOW.search(match["between"]) is not None)
    match = _NO_KERNEL.search(text)
    if match:
        arch = facts.parse_capability(match["sm"] or match["cc"] or "")
        return Limit("no-kernel", arch=arch, arch_text=f"sm_{arch[0]}{arch[1]}" if arch else "")
    match = _OTHER_BUILD.search(text)
    if match:
        return Limit("build", build=match["missing"] or "HIP")
    match = _FLOOR.search(text)
    if match:
        return Limit("needs", requirement=Requirement(minimum=_capability(match["floor"])), floor=True)
    selected = _SELECTED_BACKEND.search(text)
    if not selected and not _HARDWARE_LIMIT.search(text):
        return None
    features = tuple(facts.features_named_in(text))
    requirement = _stated_requirement(text)
    if requirement is None and features:
        row = features[0]
        requirement = Requirement(minimum=row.minimum, archs=row.archs, said_by=row.source)
    if requirement is None and selected:
        requirement = Requirement()  # rejected for this GPU; what it needs is not said
    if requirement is None:
        return None
    method = _QUANTIZATION_METHOD.search(text) or _NAMED_QUANTIZATION.search(text)
    quantization = method["name"] if method and method["name"] not in ("The", "This") else ""
    backend = selected["backend"] if selected else ""
    return Limit("needs", features=features, requirement=requirement, quantization=quantization, backend=backend)


def kernel_library_in(text: str) -> str:
    """The module of the third-party kernel library a path in this text (the failure's message) names, or ""."""
    found = _KERNEL_LIBRARY.search(text)
    return _LIBRARY_MODULES[found["name"]] if found else ""


def _stated_requirement(text: str) -> Requirement | None:
    """The requirement in the message's own numbers and words (the GPU's own, after "got", left out)."""
    wanted = _GOT.sub("", text)
    exact = _EXACT.search(wanted)
    if exact:
        return Requirement(archs=(_capability(exact["int"] or exact["int2"]),))
    minimum = _MINIMUM.search(wanted)
    maximum = _MAXIMUM.search(wanted)
    if minimum or maximum:
        low = None
        if minimum:
            raw = next(value for value in minimum.groupdict().values() if value)
            low = _capability(raw)
        return Requirement(minimum=low, maximum=_capability(maximum["sm"]) if maximum else None)
    archs: list[Capability] = []
    for token in _ARCH_TOKEN.finditer(wanted):
        if token["major"]:
            arch = (int(token["major"]), ANY_MINOR if ".x" in token[0] else int(token[0][-1]))
        elif token["x"]:
            arch = (int(token["digits"]), ANY_MINOR)
        else:
            arch = _capability(token["digits"])
        if arch not in archs:
            archs.append(arch)
    if not archs:
        lowered = wanted.lower()
        for word, family in _FAMILIES.items():
            if re.search(rf"\b{word}\b", lowered):
                archs.extend(arch for arch in family if arch not in archs)
    if not archs:
        return None
    if _NEWER.search(wanted) and len(archs) == 1:
        return Requirement(minimum=(archs[0][0], max(archs[0][1], 0)))
    return Requirement(archs=tuple(archs))


def _capability(raw: str) -> Capability:
    parsed = facts.parse_capability(raw)
    return parsed if parsed is not None else (0, 0)
