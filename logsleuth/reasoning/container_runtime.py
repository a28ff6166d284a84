"""The NVIDIA container runtime refusing to start a container (issue 28: a container-runtime refusal).

libnvidia-container checks the image's CUDA requirement (its NVIDIA_REQUIRE_CUDA variable) against the CUDA the
host's driver supports before anything in the container runs; when the driver is older it refuses with
"nvidia-container-cli: requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer
version, or use an earlier cuda container" (the CDI mode of nvidia-container-runtime: "requirements not met:
unsatisfied condition: cuda>=12.9 (cuda=12.6)", the host's CUDA in parentheses).  No engine flag or package changes
that: the host's driver, or the image, does.  No image tag is named: the log gives none that fits the host.

It also holds rule-container-gpu-access (`container_gpu_access`): docker's daemon with no device driver for `--gpus`
(the NVIDIA container toolkit not set up for it) and the NVIDIA runtime refusing to set the container up in its own
words (the host's driver libraries not found, its spec for the container not built)."""

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


GPU_ACCESS_RULE_ID = "rule-container-gpu-access"
# docker's daemon: no device driver it knows serves the container's GPU request (moby daemon/devices.go
# incompatibleDeviceRequest; the NVIDIA driver registers only where the toolkit's hook is on the daemon's PATH,
# daemon/nvidia_linux.go).
_NO_DEVICE_DRIVER = compile_lazily(r'could not select device driver "(?P<driver>[^"\n]{0,80})" with capabilities: '
                                   r'(?P<caps>\[(?:\[[\w, ]{0,80}\])*\])')
# The NVIDIA runtime or its hook failing while it sets the container up, in the runtime's own words: the hook's CLI
# (libnvidia-container: `nvidia-container-cli: initialization error: load library failed: libnvidia-ml.so.1: …`),
# the runtime's wrapper (nvidia-container-toolkit internal/runtime: `failed to create NVIDIA Container Runtime: …`,
# `failed to construct OCI spec modi(fier) …`).  The condition `cuda>=X` read by container_cuda_requirement first.
_NVIDIA_RUNTIME = compile_lazily(
    r"nvidia-container-cli: (?P<cli>[\w ]{0,40}error)(?::\s*(?P<cli_said>[^\n]{0,200}))?"
    r"|failed to create NVIDIA Container Runtime(?::\s*(?P<runtime_said>[^\n]{0,200}))?"
)
_LIBRARY = compile_lazily(r"load library failed:\s*(?P<library>lib[\w.+-]{1,60}\.so(?:\.\d+)*)")
GPU_ACCESS_SOURCES = (
    "moby daemon/devices.go (incompatibleDeviceRequest): 'could not select device driver %q with capabilities: %v'; "
    "daemon/nvidia_linux.go registers the 'nvidia' device driver only when the NVIDIA container toolkit's hook is "
    "installed where the daemon runs",
    "NVIDIA/nvidia-container-toolkit (internal/runtime): 'failed to create NVIDIA Container Runtime: …', 'failed to "
    "construct OCI spec modifier: …'; libnvidia-container (nvidia-container-cli): 'initialization error: load library "
    "failed: libnvidia-ml.so.1 …' when the host's driver libraries are not found (NVIDIA-AI-IOT/jetson-ai-lab#421, "
    "NVIDIA/nvidia-container-toolkit#152)",
)


def container_gpu_access(evidence: Evidence) -> Diagnosis | None:
    """docker or the NVIDIA container runtime refusing to give a container its GPUs, before the engine ran: the
    daemon with no GPU device driver (the toolkit not set up for it), or the NVIDIA runtime failing in its own
    words (the host's driver libraries not found, its spec for the container not built)."""
    if (found := evidence.first_match(_NO_DEVICE_DRIVER)) is not None:
        return _no_device_driver(evidence, found.group(0))
    if (found := evidence.first_match(_NVIDIA_RUNTIME)) is not None:
        return _nvidia_runtime_refusal(evidence, found.group(0))
    return None


def _no_device_driver(evidence: Evidence, words: str) -> Diagnosis:
    root_cause = ("docker refused the container's GPU request (--gpus) before anything in it ran: its daemon knows no "
                  "device driver for GPUs. docker gets one from the NVIDIA container toolkit, installed where the daemon "
                  "runs; without it, or before the daemon was restarted after installing it, every --gpus request is "
                  "refused. No engine flag or Python package changes this.")
    fix = Fix(
        summary=("Install the NVIDIA container toolkit on the host that runs the docker daemon, configure docker's "
                 "runtime for it and restart the daemon (general guidance: NVIDIA's installation guide for the "
                 "toolkit gives the steps for each distribution)."),
        steps=("nvidia-smi on the host must work first: the toolkit gives containers the host's driver, it installs none",
               "docker info lists the runtimes the daemon knows: 'nvidia' among them once the toolkit is configured",
               "a docker of its own (Docker Desktop, a rootless or snap-packaged docker) has its own daemon and "
               "configuration: the toolkit must be set up for that daemon"),
    )
    return _gpu_access_diagnosis(evidence, "docker has no GPU device driver: the NVIDIA container toolkit is not set up",
                                 root_cause, fix, words)


def _nvidia_runtime_refusal(evidence: Evidence, words: str) -> Diagnosis:
    library = _LIBRARY.search(words)
    if library is not None:
        root_cause = (f"The NVIDIA container runtime could not load the host's driver library {library['library']} "
                      "while it set the container up, so the container never started: the NVIDIA driver is not "
                      "installed where the runtime looks (the host, or the environment the daemon runs in), or the "
                      "driver's libraries are not in the loader's cache.")
        summary = ("Make the host's NVIDIA driver visible to the container runtime: nvidia-smi must work on the host, "
                   "and the runtime must find the driver's libraries (general guidance).")
    else:
        root_cause = ("The NVIDIA container runtime refused to set the container up (its own words are shown), before "
                      "anything in it ran. On this step it checks the image's CUDA requirement against the CUDA the "
                      "host's driver supports and mounts the driver's libraries and devices: the rest of its message "
                      "names which failed. No engine flag or Python package changes this.")
        summary = ("Read the runtime's message to its end: an unsatisfied 'cuda>=X' is an image built for a newer "
                   "CUDA than the host's driver supports (update the driver, or run an image built for the host's "
                   "CUDA); a library or device it cannot find is the host's driver install (general guidance).")
    fix = Fix(
        summary=summary,
        steps=("nvidia-smi on the host shows the driver version and the highest CUDA it supports ('CUDA Version'); "
               "the image's page or tag names the CUDA it was built for",
               "a device with its own driver packaging (Jetson's JetPack, a cloud node image) supports the CUDA its "
               "release names: an image built for that release is the one that runs there"),
    )
    return _gpu_access_diagnosis(evidence, "The NVIDIA container runtime refused to set up the container's GPUs",
                                 root_cause, fix, words)


def _gpu_access_diagnosis(evidence: Evidence, title: str, root_cause: str, fix: Fix, words: str) -> Diagnosis:
    return Diagnosis(
        pattern=GPU_ACCESS_RULE_ID, title=title, category=CATEGORY, root_cause=root_cause, fix=fix,
        references=GPU_ACCESS_SOURCES, engine=evidence.launch.engine, engine_version=evidence.launch.engine_version,
        basis="rule", evidence=(f"the container runtime's words: {words}",))
