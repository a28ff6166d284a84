"""The versions a paste shows beside a driver/runtime mismatch (issue 28, stop 56): the host driver and the newest CUDA
it supports (nvidia-smi's header, torch's `found version 11040`), torch's release and the CUDA it was built for (torch's
collect_env, a +cuXYZ tag, or the CUDA of its PyPI wheel: facts/torch_builds.py).  Said as what the paste shows, beside
the row's checks: which side is older decides between a newer driver and another build (NVIDIA's CUDA Compatibility
guide, docs.nvidia.com/deploy/cuda-compatibility: an application of a newer CUDA major release needs a newer driver or
forward compatibility; within one major release, Minor Version Compatibility runs it on a driver of that family at or
above the family's minimum, "with limited feature-set", so an API beyond the driver returns status 36).  Nothing for a
torch built for ROCm, the CPU or an XPU: its statuses are no CUDA driver's."""

from __future__ import annotations

from logsleuth.facts.gpu_error_names import driver_mismatch_named
from logsleuth.facts.torch_builds import CudaVersions, cuda_versions_in
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.versions import version_key

# NVIDIA's CUDA Compatibility guide, Minor Version Compatibility: the oldest driver of each CUDA major release that
# runs that release's minor versions
_FAMILY_MINIMUM = {"11": "450.80.02", "12": "525.60.13", "13": "580"}


def driver_version_steps(evidence: Evidence) -> tuple[str, ...]:
    """A step saying the host driver's and torch's CUDA the paste shows, and which is older, for a failure naming a
    driver/runtime mismatch status; nothing when it names none or the paste shows neither version."""
    failure = evidence.failure
    status = next((named for text in exception_lines(failure) if (named := driver_mismatch_named(text))), None)
    if status is None:
        return ()
    shown = cuda_versions_in([*evidence.launch.package_lines, *failure.context, *evidence.lines, *evidence.earlier])
    if shown.torch_platform is not None:
        return ()  # a +rocm/+cpu/+xpu torch: no CUDA driver's mismatch to compare
    said = []
    if shown.driver or shown.driver_cuda:
        said.append(f"the host driver {shown.driver or ''}".rstrip() +
                    (f", whose newest CUDA is {shown.driver_cuda}" if shown.driver_cuda else ""))
    if shown.torch and shown.torch_cuda:
        said.append(f"torch {shown.torch}, built for CUDA {shown.torch_cuda}")
    if not said:
        return ()
    return (f"The paste shows {'; and '.join(said)}{_comparison(shown, status)}.",)


def _comparison(shown: CudaVersions, status: str) -> str:
    needs, supports = version_key(shown.torch_cuda or ""), version_key(shown.driver_cuda or "")
    if needs is None or supports is None or needs <= supports:
        return ""
    major = (shown.driver_cuda or "").split(".")[0]
    minimum = _FAMILY_MINIMUM.get(major)
    if needs[0][:1] > supports[0][:1]:
        return (f": torch's CUDA {shown.torch_cuda} is of a newer major release than this driver supports "
                f"({shown.driver_cuda}), so a driver of CUDA {shown.torch_cuda}'s branch or a build (an image) for CUDA "
                f"{major}.x fits" + (f" (minor version compatibility runs any {major}.x build on a driver at or above "
                                     f"{minimum})" if minimum else ""))
    newer = f": torch's CUDA {shown.torch_cuda} is newer than the driver's {shown.driver_cuda} within one major release"
    driver, floor = version_key(shown.driver or ""), version_key(minimum or "")
    below = driver is not None and floor is not None and driver < floor
    if below:
        return (f"{newer}, and the driver is below {minimum}, the oldest driver of CUDA {major}.x that minor version "
                f"compatibility runs newer {major}.x builds on: a newer driver fits")
    if status in ("cudaErrorCallRequiresNewerDriver", "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER"):
        return (f"{newer}; minor version compatibility runs it with a limited feature set, and status 36 is a call "
                f"beyond this driver: a driver of CUDA {shown.torch_cuda}'s branch, or a build for CUDA "
                f"{shown.driver_cuda} or older, fits")
    if status == "cudaErrorInsufficientDriver":
        return (f"{newer}; minor version compatibility runs it only on a driver at or above the family's minimum "
                f"({minimum or 'the CUDA Compatibility guide lists it'}), so status 35 says this driver is below it "
                "or is not the driver the process loads")
    return (f"{newer}, which CUDA's minor version compatibility runs on this driver without forward-compatibility "
            "libraries, so compat libraries in the way (a libcuda that is not the host driver's) are the likelier cause")
