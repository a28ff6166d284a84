"""A launch that hides every GPU from the process it starts (issue 28: reason from the launch's own facts).

CUDA reads CUDA_VISIBLE_DEVICES before the first device call: an empty value, or a first index that is invalid
(`-1`), leaves no device visible ("If one of the indices is invalid, only the devices whose index precedes the
invalid index are visible": the CUDA C Programming Guide, CUDA Environment Variables).  ROCm reads
HIP_VISIBLE_DEVICES and ROCR_VISIBLE_DEVICES the same way, and the NVIDIA container toolkit mounts no GPU for
NVIDIA_VISIBLE_DEVICES `void` or `none`.  The engine then finds no GPU and fails, or takes its code path for hosts
without one (another platform, CPU-only imports), so what fails next says nothing of the engine's dependencies or
settings: a missing module on that path is not one the release failed to install.

Only the launch's own words decide: an assignment in front of the command the log or --cmd shows, else the paste's
shell setting one for what it runs (facts/gpus.py visibility_assignments; an environment dump's line sets nothing;
NVIDIA_VISIBLE_DEVICES only as a container's `-e`).  And only for a failure hidden GPUs explain: the device runtime
finding none, or an import on the no-GPU path; never for a launch that asks for another device (`--device cpu`)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from logsleuth.command_line import CommandLine
from logsleuth.facts.gpus import VISIBILITY_VARIABLES, visibility_assignments
from logsleuth.facts.message_templates import short_type
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-launch-hides-gpus"
CATEGORY = "cuda-error"

# Values that leave no GPU (lower-cased, stripped): CUDA's and ROCm's an empty list or an invalid first index; the
# container toolkit's `void` and `none` (NVIDIA Container Toolkit docs, "GPU Enumeration").
_NONE_VISIBLE = {"", "-1"}
_TOOLKIT_NONE = {"", "void", "none"}

# The failures hidden GPUs explain: the device runtime finding none (CUDA's "no CUDA-capable device is detected",
# torch's "No CUDA GPUs are available", "Found no NVIDIA driver", a device count of 0, an invalid ordinal, the engine
# finding no platform), or an import on the engine's path for hosts without a GPU.  Any other failure keeps the
# readings that fit it (a hidden GPU is then no cause of a shape mismatch or a refused flag).
_DEVICE_WORDS = compile_lazily(
    r"no CUDA-capable device|No CUDA GPUs are available|no NVIDIA driver|CUDA driver initialization failed"
    r"|invalid device ordinal|device count(?: is|:)? 0|(?:No|no) (?:HIP|ROCm|AMD) GPUs?|No platform detected"
    r"|Failed to infer device type|torch\.cuda\.is_available\(\)|cudaGetDeviceCount|hipGetDeviceCount"
    r"|no accelerator|device_count\(\) (?:==|returned) 0",
    re.IGNORECASE,
)
_IMPORT_FAILURES = ("ModuleNotFoundError", "ImportError")
# A launch that asks for another device on purpose: `--device cpu` (vLLM up to 0.10, SGLang's --device), the target
# device vLLM's build or VLLM_TARGET_DEVICE names.
_OTHER_DEVICE = compile_lazily(r"(?:^|\s)--device[= ](?:cpu|xpu|tpu|hpu|neuron|npu|mps)\b|VLLM_TARGET_DEVICE=(?!cuda)\w")


def _hides(name: str, value: str) -> bool:
    first = value.split(",")[0].strip().lower()
    if name == "NVIDIA_VISIBLE_DEVICES":
        return first in _TOOLKIT_NONE
    return first in _NONE_VISIBLE or first.startswith("-")


def _explained_by_hidden_gpus(evidence: Evidence) -> bool:
    final = evidence.failure.final
    if any(short_type(block.type) in _IMPORT_FAILURES for block in evidence.failure.exceptions):
        return True
    return bool(_DEVICE_WORDS.search(f"{final.type}: {final.message}"))


def hiding_assignment(command: str | None) -> tuple[str, str] | None:
    """The assignment in front of `command` that leaves no GPU visible: (name, value), else None."""
    if not command:
        return None
    try:
        environment = CommandLine.parse(command).environment
    except ValueError:
        return None  # a command line logsleuth cannot split: nothing to read from it
    for name in VISIBILITY_VARIABLES:
        if name == "NVIDIA_VISIBLE_DEVICES":
            continue  # the container toolkit reads it when a container is made (`-e`), not from a command's prefix
        value = environment.get(name)
        if value is not None and _hides(name, value):
            return name, value
    return None


def hiding_shell_line(lines: Sequence[str]) -> tuple[str, str] | None:
    """The paste's shell leaving no GPU visible (`export CUDA_VISIBLE_DEVICES=`, `… -e CUDA_VISIBLE_DEVICES=-1`,
    a prefix on a command the tracker does not take for the launch): the last value each variable is given decides."""
    last: dict[str, str] = {}
    for line in lines:
        last.update(visibility_assignments(line))
    return next(((name, value) for name, value in last.items() if _hides(name, value)), None)


def launch_hides_gpus(evidence: Evidence) -> Diagnosis | None:
    if not _explained_by_hidden_gpus(evidence) or _OTHER_DEVICE.search(evidence.launch.command or ""):
        return None
    hidden = hiding_assignment(evidence.launch.command)
    where = "in front of the command"
    if hidden is None:
        hidden, where = hiding_shell_line(evidence.launch.gpu_lines), "in the shell that ran it"
    if hidden is None:
        return None
    name, value = hidden
    engine = evidence.launch.engine
    engine_name = ENGINE_NAMES.get(engine or "", "The engine")
    shown = f"{name}={value}" if value else f"{name}= (empty)"
    root_cause = (f"The launch sets {shown} {where}, which leaves no GPU visible to the process it "
                  f"starts. {engine_name} then finds no GPU and fails, or takes its code path for hosts without one, "
                  "so the error below most likely follows from the hidden GPUs, not from a missing package or a "
                  "setting (unless the server is meant to run without a GPU).")
    fix = Fix(
        summary=(f"If the server is meant to run on GPUs, launch with them visible: leave {name} out, or set it to the GPU indices the server should "
                 "use (e.g. 0,1), then read what the launch says."),
        steps=(f"nvidia-smi -L (rocm-smi on AMD) lists the GPUs of the host, and their indices for {name}",),
    )
    return Diagnosis(
        pattern=RULE_ID,
        title=f"The launch hides every GPU ({shown})",
        category=CATEGORY,
        root_cause=root_cause,
        fix=fix,
        engine=engine,
        engine_version=evidence.launch.named_version,
        basis="rule",
        evidence=(f"the launch: {shown} {where}", f"the failure: {evidence.failure.final.type}"),
    )
