"""The NVIDIA container runtime refusing to start a container (issue 28: a container-runtime refusal).

libnvidia-container checks the image's CUDA requirement (its NVIDIA_REQUIRE_CUDA variable) against the CUDA the
host's driver supports before anything in the container runs; when the driver is older it refuses with
"nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer
version, or use an earlier cuda container" (the CDI mode of nvidia-container-runtime: "requirements not met:
unsatisfied condition: cuda>=12.9 (cuda=12.6)", the host's CUDA in parentheses).  No engine flag or package changes
that: the host's driver, or the image, does.  No image tag is named: the log gives none that fits the host."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-container-cuda-requirement"
# The container never started: the host (its driver) against the image (its CUDA), a refusal of the container runtime
# before any CUDA call of the engine's, so orchestration, not a CUDA error of the engine's (split 14's truth for
# vllm-project/vllm#5635: orchestration, dependency-version).
CATEGORY = "orchestration"
_UNSATISFIED = compile_lazily(
    r"unsatisfied condition: cuda\s*>=\s*(?P<needed>\d+(?:\.\d+)*)(?:\s*\(cuda\s*=\s*(?P<host>\d+(?:\.\d+)*)\))?")
SOURCES = (
    "NVIDIA/nvidia-container-toolkit#152: 'requirement error: unsatisfied condition: cuda>=X.Y, please update your "
    "driver to a newer version, or use an earlier cuda container' (the host driver is older than the image's CUDA)",
    "NVIDIA/libnvidia-container: the CLI checks the image's NVIDIA_REQUIRE_CUDA against the driver's CUDA version "
    "before the container starts",
)


def container_cuda_requirement(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_UNSATISFIED)
    if found is None:
        return None
    needed, host = found["needed"], found["host"]
    host_words = f" (CUDA {host}, the runtime says)" if host else ""
    root_cause = (f"The NVIDIA container runtime refused to start the container: the image requires CUDA {needed} or "
                  f"newer, and the host's NVIDIA driver supports an older CUDA{host_words}. Nothing in the container ran: "
                  "no engine flag or Python package changes this, the host's driver or the image does.")
    fix = Fix(
        summary=(f"Update the host's NVIDIA driver to one that supports CUDA {needed}, or run an image built for the CUDA "
                 "the host's driver supports (general guidance: pick the image by the CUDA version its tag or page names)."),
        steps=("nvidia-smi on the host shows the driver version and the highest CUDA it supports ('CUDA Version')",
               "a driver update needs the host's administrator and usually a reboot; a GPU cloud image or node pool "
               "with a newer driver is the other way"),
    )
    return Diagnosis(
        pattern=RULE_ID, title=f"The host's NVIDIA driver is older than the image's CUDA (cuda>={needed})",
        category=CATEGORY, root_cause=root_cause, fix=fix, references=SOURCES,
        engine=evidence.launch.engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the container runtime's words: {found.group(0)}",))
