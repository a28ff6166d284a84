"""The versions a paste shows beside a driver/runtime mismatch (issue 28, stop 56): the host driver and the newest CUDA
it supports (nvidia-smi's header), torch's release and the CUDA it was built for (torch's collect_env, a +cuXYZ tag, or
the CUDA of its PyPI wheel: facts/torch_builds.py).  Said as what the paste shows, beside the row's checks: which side is
older decides between a newer driver and an older build (NVIDIA's CUDA Compatibility guide: an application of a newer
CUDA major release needs a newer driver or forward compatibility; within one major release, Minor Version Compatibility
runs it on an older driver of that family)."""

from __future__ import annotations

from logsleuth.facts.gpu_error_names import driver_mismatch_named
from logsleuth.facts.torch_builds import cuda_versions_in
from logsleuth.reasoning.evidence import Evidence, exception_lines
from logsleuth.versions import version_key


def driver_version_steps(evidence: Evidence) -> tuple[str, ...]:
    """A step saying the host driver's and torch's CUDA the paste shows, and which is older, for a failure naming a
    driver/runtime mismatch status; nothing when it names none or the paste shows neither version."""
    failure = evidence.failure
    if not any(driver_mismatch_named(text) for text in exception_lines(failure)):
        return ()
    shown = cuda_versions_in([*evidence.launch.package_lines, *failure.context, *evidence.lines, *evidence.earlier])
    said = []
    if shown.driver:
        said.append(f"the host driver {shown.driver}" +
                    (f", whose newest CUDA is {shown.driver_cuda}" if shown.driver_cuda else ""))
    if shown.torch and shown.torch_cuda:
        said.append(f"torch {shown.torch}, built for CUDA {shown.torch_cuda}")
    if not said:
        return ()
    step = f"The paste shows {'; and '.join(said)}"
    needs, supports = version_key(shown.torch_cuda or ""), version_key(shown.driver_cuda or "")
    if needs is not None and supports is not None and needs[0][:1] > supports[0][:1]:
        step += (f": torch's CUDA {shown.torch_cuda} is of a newer major release than this driver supports "
                 f"({shown.driver_cuda}), so a newer driver or a torch build (an image) for CUDA {shown.driver_cuda} or "
                 "older fits")
    elif needs is not None and supports is not None and needs > supports:
        step += (f": torch's CUDA {shown.torch_cuda} is newer than the driver's {shown.driver_cuda} within one major "
                 "release, which CUDA's minor version compatibility runs on this driver without forward-compatibility "
                 "libraries, so compat libraries in the way (a libcuda that is not the host driver's) are the likelier "
                 "cause")
    return (step + ".",)
