"""A failure that names a hardware limit: a dtype, kernel or feature the GPU's architecture lacks, a kernel
binary or a `ptxas` target for another architecture, or a build for another accelerator (issue 28, item 3).

It reasons from the facts in facts/gpus.toml (compute capability per GPU, what each feature needs, the CUDA
toolkit each architecture needs) and from the numbers in the message itself, which win over the table when the
message states them.  The GPU comes from the log when it shows one (facts/gpus.py: `gpus_in`).  The patterns
that name these failures for one engine (common-fp8-unsupported-gpu, *-no-kernel-image, vllm-bf16-unsupported-gpu,
sglang-deepgemm-unsupported-arch, ...) match first; this rule answers what they miss, and a log that shows no
engine, where it gives engine-neutral advice.  One answer leads over a no-kernel-image pattern
(`third_party_kernel_gap`): a third-party kernel library named by the message's own path that the pattern does not
name, when nothing in the paste shows torch lacking the architecture."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from logsleuth.command_line import CommandLine
from logsleuth.facts import gpus as facts
from logsleuth.facts.gpus import Gpu, arch_name
from logsleuth.facts.imports import distributions_of
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.build import build_fix
from logsleuth.fixes.encoder_attention import encoder_fix, in_encoder, llm_backend
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure, Fix, LaunchInfo
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.reasoning.hardware_limits import Limit, compiler_limit_in, kernel_library_in, limit_in

PATTERN_ID = "rule-gpu-arch-unsupported"
CHECK_GPU = facts.CHECK_GPU
CHECK_TORCH = 'python -c "import torch; print(torch.cuda.get_device_capability(), torch.cuda.get_arch_list())"'


def gpu_arch_limit(evidence: Evidence, *, library_only: bool = False) -> Diagnosis | None:
    """Category gpu-arch-unsupported for a failure whose message names a hardware limit (basis "rule").  With
    `library_only`, only the answer that a third-party kernel library's build lacks the architecture, for a library
    the engine's no-kernel-image pattern does not name (the answer that leads over that pattern)."""
    text = _chain_text(evidence.failure)
    limit = limit_in(text) or compiler_limit_in(evidence.failure.context)
    if limit is None:
        return None
    if limit.kind == "needs" and in_encoder(evidence.failure):
        limit = replace(limit, vision=True, message=text)
    if limit.kind == "no-kernel" and not _torch_lacks_arch(evidence):
        limit = replace(limit, library=kernel_library_in(text))
    if library_only and (not limit.library or limit.library in _NAMED_BY_PATTERN.get(evidence.launch.engine or "", ())):
        return None
    gpus = facts.gpus_in([*text.splitlines(), *evidence.failure.context, *evidence.lines, *evidence.launch.gpu_lines])
    gpu = _the_gpu(gpus, limit)
    return _diagnosis(limit, gpu, gpus, evidence)


# The kernel libraries (modules) each engine's no-kernel-image pattern already names in its advice
# (sglang-no-kernel-image: torch, sgl-kernel and flashinfer builds, with the Triton backends; vllm-no-kernel-image:
# the vLLM build, whose wheel carries its flash-attention fork).  Another library named leads over the pattern.
_NAMED_BY_PATTERN = {"sglang": ("sgl_kernel", "flashinfer"), "vllm": ("vllm_flash_attn",)}
# torch's own words that its build has no kernels for this GPU (torch/cuda/__init__.py _check_capability and
# _warn_unsupported_code): then torch lacks the architecture, whatever library's kernel failed first.
_TORCH_LACKS = compile_lazily(
    r"is not compatible with the current PyTorch installation|PyTorch no longer supports this GPU because it is too old"
    r"|which is of compute capability \(CC\) \d{1,2}\.\d\b"
)


def third_party_kernel_gap(evidence: Evidence) -> Diagnosis | None:
    """The rule's answer when the kernel without code for this GPU is a third-party library's, named by the
    message's own path, that the engine's no-kernel-image pattern does not name (xformers, flash-attn; flashinfer
    under vLLM), and torch shows no gap of its own: that library's build is what to change."""
    return gpu_arch_limit(evidence, library_only=True)


def _torch_lacks_arch(evidence: Evidence) -> bool:
    """torch's own warning that its build lacks this GPU (in the failure, the lines kept around it, or the launch's
    GPU lines, where the warning's GPU name puts it), or the kernel raised in torch's own frames: torch's build is
    then the first to change, not a library's."""
    failure = evidence.failure
    texts = [*exception_lines(failure), *failure.context, *evidence.lines, *evidence.launch.gpu_lines]
    if any(_TORCH_LACKS.search(text) for text in texts):
        return True
    frames = failure.exceptions[-1].frames if failure.exceptions else ()
    # torch/_ops.py only dispatches to an op another library registered: the frame under it is not torch's kernel
    own = [frame.file.replace("\\", "/") for frame in frames if not frame.file.replace("\\", "/").endswith("torch/_ops.py")]
    return bool(own) and "/torch/" in own[-1]


def _chain_text(failure: Failure) -> str:
    return "\n".join(part for part in [failure.header or "", *exception_lines(failure)] if part)


def _the_gpu(gpus: list[Gpu], limit: Limit) -> Gpu | None:
    """The GPU the failure ran on: the first the log shows that the limit excludes (a GPU that meets the
    requirement is not the one that failed, so it is not named).  For a compiler's limit, the GPU as shown."""
    if limit.kind in ("ptxas", "build"):
        return gpus[0] if gpus else None
    if limit.kind == "not-compiled" and limit.arch is not None:  # the message's capability is the GPU's own
        return next((gpu for gpu in gpus if gpu.capability == limit.arch), None)
    for gpu in gpus:
        if gpu.capability is None:
            if gpu.gfx is not None or gpu.name:
                return gpu
            continue
        if limit.requirement is not None and limit.requirement.runs_on(gpu.capability):
            continue
        return gpu
    return None


# The HIP runtime's own words in the failure: the GPU is AMD's, and NVIDIA's tools are no check of it.
_HIP_WORDS = compile_lazily(r"\bhipError[A-Z]|\bHIP error\b")


def _on_rocm(failure: Failure) -> bool:
    return any(_HIP_WORDS.search(line) for line in exception_lines(failure))


def _diagnosis(limit: Limit, gpu: Gpu | None, gpus: list[Gpu], evidence: Evidence) -> Diagnosis:
    launch = evidence.launch
    if gpu is not None:
        shown = [f"GPU: {gpu.describe()}"]
    elif gpus:  # every GPU the log shows meets the requirement: the failing process may have run on another
        shown = [f"GPU: the log shows {gpus[0].describe()}, which meets this; the failing process may use another GPU"]
    else:
        shown = ["GPU: not shown in the log"]
    if limit.kind == "needs":
        title, cause, fix_data, said = _needs(limit, gpu, launch)
    elif limit.kind == "no-kernel":
        title, cause, fix_data, said = _no_kernel(limit, gpu, evidence)
    elif limit.kind == "not-compiled":
        title, cause, fix_data, said = _not_compiled(limit, gpu)
    elif limit.kind == "ptxas":
        title, cause, fix_data, said = _ptxas(limit)
    else:
        title, cause, fix_data, said = _other_build(limit, launch)
    if (limit.kind in ("needs", "no-kernel") and (gpu is None or (gpu.capability is None and gpu.gfx is None))
            and not _on_rocm(evidence.failure)):  # (nvidia-smi is no check on an AMD GPU: HIP's hipErrorNoBinaryForGpu)
        fix_data.setdefault("steps", []).append(f"check the GPU and its compute capability where the server runs: {CHECK_GPU}")
    fix = build_fix(fix_data, evidence.failure, {}, launch) if launch.engine else _plain_fix(fix_data)
    return Diagnosis(
        pattern=PATTERN_ID,
        title=title,
        category="gpu-arch-unsupported",
        root_cause=cause,
        fix=fix,
        references=tuple(dict.fromkeys(facts.facts().sources[key] for key in said if key in facts.facts().sources)),
        engine=launch.engine,
        engine_version=launch.engine_version,
        basis="rule",
        evidence=(*shown, *_requirement_evidence(limit)),
    )


def _plain_fix(data: dict[str, Any]) -> Fix:
    """A fix with no flag operations, for a log that shows no engine (no engine's flag is named as an op)."""
    return Fix(summary=data["summary"], steps=tuple(data.get("steps", ())))


def _requirement_evidence(limit: Limit) -> list[str]:
    lines = []
    if limit.requirement is not None and limit.requirement.stated:
        what = " and ".join(row.what for row in limit.features) or (
            f"{limit.quantization} quantization" if limit.quantization else "this code"
        )
        said = "the message" if limit.requirement.said_by == "message" else "facts/gpus.toml"
        lines.append(f"{what} needs {limit.requirement.describe()} ({said})")
    if limit.kind == "not-compiled" and limit.arch is not None:
        lines.append(f"the message: no compiled {limit.kernel} for {arch_name(limit.arch)} (the GPU's own capability)")
        if limit.below:
            return lines
    if limit.arch is not None and limit.kind in ("ptxas", "no-kernel", "not-compiled"):
        toolkit = facts.toolkit_for((limit.arch[0], limit.arch[1]))
        if toolkit:
            lines.append(f"{arch_name(limit.arch)} needs CUDA {toolkit.cuda} or newer to compile for it")
    return lines


def _needs(limit: Limit, gpu: Gpu | None, launch: LaunchInfo) -> tuple[str, str, dict[str, Any], list[str]]:
    assert limit.requirement is not None
    keys = {row.key for row in limit.features}
    need = limit.requirement.describe()
    what = " and ".join(row.what for row in limit.features) or (
        f"{limit.quantization} quantization" if limit.quantization else "The failing kernel or feature"
    )
    # a GPU known only by its capability describes itself as "the GPU (compute capability 7.0)"
    on = (f"the {gpu.describe()}" if gpu.name else gpu.describe()) if gpu else "this GPU"
    cause = f"{what} needs {need}, and {on} does not have it."
    if limit.backend:
        what = f"the {limit.backend} attention backend"
        cause = f"The launch selected {what}, and it does not support {on}'s compute capability" + (
            f" (it needs {need})." if limit.requirement.stated else "."
        )
    said = [row.source for row in limit.features]
    if limit.floor and limit.requirement.minimum is not None:
        return (*_below_floor(facts.show(limit.requirement.minimum), on, launch), said)
    if "bf16" in keys:
        return "bfloat16 on a GPU without bfloat16 support", cause, _float16_fix(launch), said
    if "fp8" in keys:
        fix = _fp8_fix(launch, need)
        row = facts.feature("fp8")
        if row and row.note and row.note_source and (gpu is None or gpu.capability is None or gpu.capability >= (8, 0)):
            fix["steps"].append(f"note: {row.note}")
            said.extend(["vllm-marlin-fp8", "sglang-marlin-fp8"])
        return "FP8 compute on a GPU without FP8 support", cause, fix, said
    if limit.backend or keys & {"fa2", "fa3", "flashmla", "trtllm"}:
        stated = need if limit.requirement.stated else ""
        fix = _attention_fix(launch, what, stated, vision=limit.message if limit.vision else None)
        return f"{what[:1].upper()}{what[1:]}: not for this GPU's architecture", cause, fix, said
    if "deepgemm" in keys:
        return "DeepGEMM: not for this GPU's architecture", cause, _deepgemm_fix(launch, need), said
    if limit.quantization:
        summary = f"Serve a checkpoint whose quantization this GPU supports (or the unquantized model), or use a GPU with {need}."
        steps = ["if the launch passes --quantization while the checkpoint is not quantized that way, drop that flag"]
        return "Quantization kernels this GPU's architecture lacks", cause, {"summary": summary, "steps": steps}, said
    summary = f"Run this on a GPU with {need}, or turn off the option or checkpoint feature that selected this kernel."
    return "A kernel or feature this GPU's architecture lacks", cause, {"summary": summary, "steps": []}, said


def _below_floor(floor: str, on: str, launch: LaunchInfo) -> tuple[str, str, dict[str, Any]]:
    """The program's own floor check for any GPU (limit.floor): no dtype, backend or flag gets past it, so the fix is a
    GPU that meets it, and for vLLM what its releases' documented floors say (facts/gpus.toml `vllm-cuda`: none ran
    below 7.0, so no older release is offered)."""
    cause = (f"The program's own check refuses every GPU below compute capability {floor} (a floor for all its "
             f"kernels, not one feature's need), and {on} is below it: no setting gets past this check.")
    summary = (f"Run on a GPU with compute capability {floor} or newer: no dtype, attention backend, quantization or "
               "other flag makes this release run on an older GPU.")
    steps = ["on a host that mixes GPUs, CUDA_VISIBLE_DEVICES can leave the older ones out"]
    if launch.engine in (None, "vllm"):
        lower, recent = facts.feature("vllm-cuda"), facts.feature("vllm-cuda-0.31.0")
        if lower is not None and lower.minimum is not None and recent is not None and recent.minimum is not None:
            since = recent.key.rsplit("-", 1)[-1]
            steps.append(("if this is vLLM: " if launch.engine is None else "")
                         + f"vLLM's documented floor is compute capability {facts.show(lower.minimum)} in every release "
                         f"({facts.show(recent.minimum)} from {since}): no vLLM release runs on a GPU below "
                         f"{facts.show(lower.minimum)}")
    return "A GPU below the minimum compute capability the program supports", cause, {"summary": summary, "steps": steps}


def _float16_fix(launch: LaunchInfo) -> dict[str, Any]:
    steps = [
        "float16 has a smaller range than bfloat16: a model trained in bfloat16 can overflow (inf/NaN, garbled "
        "output); check a few outputs, and fall back to float32 (twice the memory) if it does",
    ]
    catalog = catalogs.load(launch.engine, launch.engine_version) if launch.engine else None
    info = catalog.find("--dtype") if catalog else None
    if info is not None and "float16" in info.choices:
        return {
            "summary": "Run the model in float16 (--dtype float16): bfloat16 needs compute capability 8.0 or newer.",
            "flags": [{"op": "set", "flag": "--dtype", "value": "float16"}],
            "steps": steps,
        }
    engines = [
        f"{label} {', '.join(found)}"
        for name, label in (("sglang", "SGLang"), ("vllm", "vLLM"))
        if (found := _releases_with(name, "--dtype", "float16"))
    ]
    if engines:
        steps.insert(0, "--dtype float16 sets it in " + "; ".join(engines) + " (the releases in logsleuth's catalogs)")
    return {"summary": "Run the model in float16 instead of bfloat16: bfloat16 needs compute capability 8.0 or newer.", "steps": steps}


def _releases_with(engine: str, flag: str, choice: str) -> list[str]:
    return [
        version
        for version in catalogs.versions_with(engine, flag)
        if (catalog := catalogs.load(engine, version)) and (info := catalog.find(flag)) and choice in info.choices
    ]


def _fp8_fix(launch: LaunchInfo, need: str) -> dict[str, Any]:
    flags = []
    command = _command(launch)
    for flag in ("--quantization", "--kv-cache-dtype"):
        value = command.value(flag) if command else None
        if value and "fp8" in value.lower():
            flags.append({"op": "remove", "flag": flag})
    # (not "an FP8 checkpoint needs such a GPU": the engines run one weight-only through Marlin from 8.0, the note
    # `_needs` adds; split 18 D-04 was graded harmful for saying it cannot run)
    steps = ["FP8 compute kernels (an FP8 KV cache, FP8 activations) need such a GPU; an FP8 checkpoint's weights "
             "need it only where the release has no weight-only (Marlin) path for them"]
    if flags:
        steps.insert(0, "the launch asks for FP8 itself: drop " + " and ".join(f["flag"] for f in flags))
    return {
        "summary": f"Serve a checkpoint without FP8 compute on this GPU (BF16/FP16, or INT8/INT4 such as AWQ or GPTQ), or use a GPU with {need}.",
        "flags": flags,
        "steps": steps,
    }


def _attention_fix(launch: LaunchInfo, what: str, need: str, *, vision: str | None = None) -> dict[str, Any]:
    """`vision`: the failing message, when the failing attention is a multimodal encoder's (in_encoder)."""
    summary = (
        f"Use an attention backend that runs on this GPU: {what} needs {need}."
        if need
        else f"Use an attention backend that supports this GPU instead of {what}."
    )
    if vision is not None:
        return encoder_fix(launch.engine, launch.named_version, summary, llm_backend(launch), vision)
    if launch.engine == "sglang":
        catalog = catalogs.load("sglang", launch.engine_version)
        info = catalog.find("--attention-backend") if catalog else None
        if info is not None and "triton" in info.choices:
            return {
                "summary": summary + " The triton backend is compiled for the GPU at run time.",
                "flags": [{"op": "set", "flag": "--attention-backend", "value": "triton"}],
                "steps": [],
            }
    if launch.engine == "vllm":
        exact = launch.engine_version if (launch.engine, launch.engine_version) in catalogs.available() else None
        catalog = catalogs.load("vllm", exact) if exact else None
        if catalog is not None and catalog.find("--attention-backend") is not None:
            return {
                "summary": summary + " vLLM's Triton backend runs on any CUDA GPU it supports.",
                "flags": [{"op": "set", "flag": "--attention-backend", "value": "TRITON_ATTN"}],
                "steps": [],
            }
        steps = [
            "vLLM 0.33.0 takes --attention-backend TRITON_ATTN; vLLM 0.11.2 reads VLLM_ATTENTION_BACKEND=TRITON_ATTN "
            "(check which your release has: vllm serve --help)"
        ]
        return {"summary": summary, "steps": steps}
    return {"summary": summary, "steps": ["if the launch chose this backend, choose another; otherwise the engine picked it for the model: a newer release may pick one that fits this GPU"]}


def _deepgemm_fix(launch: LaunchInfo, need: str) -> dict[str, Any]:
    steps = ["a model whose kernels exist only in DeepGEMM needs a GPU with " + need]
    if launch.engine == "sglang":
        return {
            "summary": "Turn off DeepGEMM so SGLang uses its other kernels.",
            "env": {"SGLANG_ENABLE_JIT_DEEPGEMM": "0", "SGL_ENABLE_JIT_DEEPGEMM": "0"},
            "steps": ["SGLang 0.4.x reads SGL_ENABLE_JIT_DEEPGEMM, 0.5.x SGLANG_ENABLE_JIT_DEEPGEMM", *steps],
        }
    return {"summary": f"Turn off DeepGEMM (it needs {need}) or run on such a GPU.", "steps": steps}


def _not_compiled(limit: Limit, gpu: Gpu | None) -> tuple[str, str, dict[str, Any], list[str]]:
    """A kernel the installed build has no compiled branch for on this GPU (the message names it and the GPU's
    capability).  A build compiles each architecture's branch only when it was made for it (its CUDA toolkit and
    architecture list), so what the message proves is this build's gap, not the release's."""
    assert limit.arch is not None
    name = arch_name(limit.arch)
    on = gpu.describe() if gpu else f"this GPU ({name})"
    form = "another quantization of its checkpoint, or the unquantized model"
    if limit.below:
        cause = (f"The installed build has no compiled {limit.kernel} for {on}: the message says its kernels are "
                 f"compiled for capabilities above {name} only, so the path that needs it (the model's quantization or "
                 "the feature that chose it) cannot run on this GPU.")
        summary = (f"Serve the model in a form that does not take {limit.kernel} ({form}), or run it on a GPU newer "
                   f"than {name}.")
    else:
        toolkit = facts.toolkit_for(limit.arch)
        made_with = f", made with CUDA {toolkit.cuda} or newer" if toolkit else ""
        cause = (f"The installed build has no compiled {limit.kernel} for {on}: a build compiles each architecture's "
                 "kernels only when it is made for that architecture (the CUDA toolkit and architecture list it was "
                 "built with) and the release's source has the kernel for it; the message shows that this build has "
                 "none, not which of the two it lacks.")
        summary = (f"Serve the model in a form that does not take {limit.kernel} ({form}), or install a build that "
                   f"includes {name} for this kernel: a release whose source has it for {name}, built for that "
                   f"architecture{made_with} (its wheel for this GPU, or a build from source).")
    steps = ["the quantization or feature that selects this kernel is in the launch or the checkpoint's config "
             "(quantization_config): the same model in another format takes another kernel"]
    return f"No compiled {limit.kernel} for this GPU's architecture in this build", cause, {"summary": summary, "steps": steps}, []


def _library_lacks_arch(limit: Limit, gpu: Gpu | None, evidence: Evidence) -> tuple[str, str, dict[str, Any], list[str]]:
    """The kernel without code for this GPU is a third-party library's, its path in the message names it: that
    library's build lacks the architecture."""
    module = limit.library
    arch = limit.arch or (gpu.capability if gpu else None)
    on = gpu.describe() if gpu else (arch_name(arch) if arch else "this GPU's architecture")
    distributions = distributions_of(module)
    installed = " or ".join(distributions) if distributions else ""
    cause = (f"The kernel with no code for {on} is from {module} (its path in the message names it): the installed "
             f"{module} was built without this architecture.")
    summary = (f"Install a build of {installed or module} that includes this GPU's architecture (its release notes or "
               f"wheel index list the architectures it is built for), or run without {module} on this GPU where the "
               "engine offers another kernel path for the part that called it.")
    shows = (f"pip show {installed}" if len(distributions) == 1 else
             f"pip show of {installed}" if distributions else f"pip list (the distribution that installs {module})")
    steps = [f"{shows} gives the installed build; the frames above say which part of the model called it (the "
             "language model, a vision encoder)", CHECK_TORCH]
    data: dict[str, Any] = {"summary": summary, "steps": steps}
    avoid = _avoiding(module, evidence)
    if avoid is not None:
        data["alternatives"] = [avoid]
    return f"No {module} kernel for this GPU's architecture", cause, data, []


# The engines' LLM attention backends: the modules --attention-backend chooses among.  A library called from
# elsewhere (a sampler, a vision encoder's attention, rotary embeddings) keeps its kernels whatever that flag says.
_ATTENTION_BACKEND_FILE = compile_lazily(r"vllm/(?:v1/)?attention/backends/|sglang/srt/layers/attention/(?!vision\.py)")


def _avoiding(module: str, evidence: Evidence) -> dict[str, Any] | None:
    """The release's own choice that takes another library's kernels (its flags checked in the release's catalog):
    the attention backend, only when the library was called from one of the engine's attention backends.  None
    otherwise: there is no such choice to name."""
    launch = evidence.launch
    if module not in ("flashinfer", "flash_attn") or not launch.engine:
        return None
    frames = [frame.file.replace("\\", "/") for block in evidence.failure.exceptions for frame in block.frames]
    if not any(_ATTENTION_BACKEND_FILE.search(file) for file in frames):
        return None
    choice = _attention_fix(launch, f"{module}'s attention kernels", "")
    return choice if choice.get("flags") else None


def _no_kernel(limit: Limit, gpu: Gpu | None, evidence: Evidence) -> tuple[str, str, dict[str, Any], list[str]]:
    launch = evidence.launch
    if limit.library and not (gpu is not None and gpu.gfx is not None):
        return _library_lacks_arch(limit, gpu, evidence)
    arch = limit.arch or (gpu.capability if gpu else None)
    engine = {"sglang": "SGLang (and sgl-kernel, flashinfer)", "vllm": "vLLM"}.get(launch.engine or "", "the engine")
    said: list[str] = []
    if gpu is not None and gpu.gfx is not None:
        cause = f"A compiled kernel has no code for {gpu.describe()}: the installed ROCm builds were made for other gfx targets."
        summary = f"Install torch and {engine} builds for ROCm that include {gpu.gfx}."
        return "No kernel built for this GPU architecture", cause, {"summary": summary, "steps": [CHECK_TORCH]}, said
    if arch is None:
        cause = "A compiled CUDA kernel (torch, the engine's ops or an attention library) has no code for this GPU's architecture."
        summary = f"Install torch and {engine} builds compiled for this GPU's architecture."
        return "No kernel built for this GPU architecture", cause, {"summary": summary, "steps": [CHECK_TORCH]}, said
    toolkit = facts.toolkit_for(arch)
    name = arch_name(arch)
    on = gpu.describe() if gpu else name
    cause = f"A compiled CUDA kernel has no code for {on}: the installed wheels were built for other architectures."
    summary = f"Install torch and {engine} builds that include {name}"
    if toolkit:
        summary += f" (built with CUDA {toolkit.cuda} or newer, e.g. the cu{toolkit.cuda.replace('.', '')}+ wheels)"
        said.append(toolkit.source)
    return "No kernel built for this GPU architecture", cause, {"summary": summary + ".", "steps": [CHECK_TORCH]}, said


def _ptxas(limit: Limit) -> tuple[str, str, dict[str, Any], list[str]]:
    toolkit = facts.toolkit_for(limit.arch) if limit.arch else None
    cause = f"The CUDA compiler (ptxas/nvcc) that ran does not know {limit.arch_text}: its CUDA toolkit is older than that architecture."
    if toolkit is None:
        return "CUDA toolkit too old for this GPU", cause, {"summary": "Use a CUDA toolkit new enough for this GPU architecture.", "steps": []}, []
    summary = f"Compile with the ptxas/nvcc of CUDA toolkit {toolkit.cuda} or newer: the one that ran predates {limit.arch_text}."
    steps = [
        "Triton compiles with the ptxas it bundles (triton/backends/nvidia/bin/ptxas): point TRITON_PTXAS_PATH at the "
        f"ptxas of an installed CUDA {toolkit.cuda}+ toolkit, or install a Triton release whose bundled ptxas knows {limit.arch_text}",
        "a build or JIT that runs nvcc (flashinfer, DeepGEMM, a source build) uses the toolkit under CUDA_HOME: its nvcc --version must be "
        f"{toolkit.cuda} or newer",
    ]
    return "CUDA toolkit too old for this GPU", cause, {"summary": summary, "steps": steps}, [toolkit.source]


def _other_build(limit: Limit, launch: LaunchInfo) -> tuple[str, str, dict[str, Any], list[str]]:
    check = 'python -c "import torch; print(torch.__version__, torch.version.cuda, torch.version.hip)"'
    if limit.build == "HIP":
        cause = (
            "The installed torch is a ROCm (HIP) build and sees no AMD GPU it can use: the process cannot reach the "
            "GPU, the ROCm build has no support for this GPU's gfx target, or the machine's GPUs are NVIDIA's."
        )
        summary = "Let this ROCm build of torch reach a GPU it supports, or install the CUDA build on an NVIDIA machine."
        steps = [
            check,
            "a container needs /dev/kfd and /dev/dri, and the user the video and render groups",
            "rocminfo lists the GPU's gfx target: the torch and engine builds must support it",
        ]
        return "torch built for another accelerator", cause, {"summary": summary, "steps": steps}, []
    cause = f"The installed torch has no {limit.build} support (a CPU-only or other-accelerator build), so the engine cannot use the GPU."
    summary = f"Install a {limit.build} build of torch, of the version the engine release requires."
    return "torch built for another accelerator", cause, {"summary": summary, "steps": [check]}, []


def _command(launch: LaunchInfo) -> CommandLine | None:
    if not launch.command:
        return None
    try:
        return CommandLine.parse(launch.command, trusted=launch.command_source == "user")
    except ValueError:
        return None
