"""A system library the dynamic loader cannot find (issue 28, class 4: dependency drift that is not a Python package).

A compiled extension (sgl-kernel's common_ops, a flashinfer or vLLM `_C` module, torch's own) links against system
libraries; when one is missing, CPython's import reports the loader's words: "ImportError: libnuma.so.1: cannot open
shared object file: No such file or directory" (ctypes: OSError).  No pip install of the engine or of the package
fixes it: the library comes from the system's packages, the NVIDIA driver, or a CUDA component.  The answer names the
library and what installs it (facts/shared_libraries.toml); a library the table does not know is named with the way to
find its package."""

from __future__ import annotations

from logsleuth.facts.shared_libraries import SharedLibrary, library_named
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-shared-library-missing"
_CANNOT_OPEN = compile_lazily(r"(?<![\w.+-])(?P<lib>lib[\w.+-]*?\.so(?:\.\d+)*): cannot open shared object file")
# The package whose compiled code asked for it: the innermost frame under site-packages/ (dist-packages/).
_PACKAGE = compile_lazily(r"(?:site|dist)-packages/(?P<package>[A-Za-z_][\w]*)")


# Frames that only load another package's library: the package whose library it is sits in an outer frame (DeepGEMM's
# _C.so through tvm_ffi.load_module, a JIT-built kernel through torch.ops.load_library).
_LOADER_FRAMES = ("tvm_ffi/", "torch/_ops.py")


def _loading_package(evidence: Evidence) -> str | None:
    for block in reversed(evidence.failure.exceptions):
        for frame in reversed(block.frames):
            found = _PACKAGE.search(frame.file)
            if (found is not None and found["package"] not in ("importlib", "ctypes")
                    and not any(loader in frame.file for loader in _LOADER_FRAMES)):
                return found["package"]
    return None


def _installs(row: SharedLibrary) -> str:
    system = row.debian or row.rhel
    parts = [f"{row.debian} on Debian/Ubuntu" if row.debian else "", f"{row.rhel} on RHEL/Fedora" if row.rhel else "",
             f"{'or ' if system else ''}the pip wheels {row.pip}" if row.pip else ""]
    return ", ".join(part for part in parts if part)


# torch's own libraries (libtorch_cuda.so, libc10.so, libshm.so): a Python package's files, missing when torch itself is
# broken or another torch shadows it; reinstalling the matching packages is then the fix, not a system package.
_PYTHON_PACKAGE_LIBRARY = compile_lazily(r"^lib(?:torch|c10|caffe2|shm)\w*\.so")


def known_library_missing(evidence: Evidence) -> Diagnosis | None:
    """The rule's answer when a package's own load failure quotes the loader's words for a system library (sgl-kernel's
    "Could not load any common_ops library!" lists each attempt's error): it leads over the pattern that names the
    package's message, whose steps reinstall the engine and the package, which installs no system library; a library
    the facts do not know is named with the way to find what provides it.  torch's own libraries are no system
    library: the pattern's reinstall stays.  A failure that is the loader's words itself keeps the pattern written for
    it (common-cuda-library-missing)."""
    if not any(_CANNOT_OPEN.search(block.message) and not _CANNOT_OPEN.match(block.message.strip())
               for block in evidence.failure.exceptions):
        return None
    found = evidence.first_match(_CANNOT_OPEN)
    if found is None or _PYTHON_PACKAGE_LIBRARY.match(found["lib"]):
        return None
    return shared_library(evidence)


def shared_library(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_CANNOT_OPEN)
    if found is None:
        return None
    lib = found["lib"]
    row = library_named(lib)
    launch = evidence.launch
    engine_name = ENGINE_NAMES.get(launch.engine or "", "the engine")
    package = _loading_package(evidence)
    loader = f"{package}'s compiled code" if package else "a compiled extension"
    what = f"{lib} ({row.component})" if row else lib
    root_cause = (f"The dynamic loader found no {what} when {loader} was loaded. It is a library of the system, the "
                  f"driver or CUDA, not a Python package: reinstalling {engine_name}"
                  f"{' or ' + package if package else ''} does not install it.")
    check = f"ldconfig -p | grep {lib.split('.so')[0]}.so shows whether (and where) the loader finds it; echo $LD_LIBRARY_PATH the extra directories it reads"
    if row is not None:
        summary = f"Install {row.component}: {_installs(row)}; in a container, in its image."
        steps = (check, *((row.note,) if row.note else ()))
        references = row.sources
    else:
        summary = (f"Install the system package that provides {lib} (in a container, in its image): the distribution's "
                   "file index names it (apt-file search on Debian/Ubuntu, dnf provides on RHEL/Fedora); a CUDA "
                   "component may instead come from NVIDIA's pip wheels (nvidia-*-cu<CUDA major>).")
        steps = (check,)
        references = ()
    return Diagnosis(
        pattern=RULE_ID, title=f"A system library is missing: {lib}", category="dependency-version",
        root_cause=root_cause, fix=Fix(summary=summary, steps=steps), references=references,
        engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"the loader's words: {found.group(0)}",))
