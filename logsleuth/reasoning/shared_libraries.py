"""A system library the dynamic loader cannot find (issue 28, class 4: dependency drift that is not a Python package).

A compiled extension (sgl-kernel's common_ops, a flashinfer or vLLM `_C` module, torch's own) links against system
libraries; when one is missing, CPython's import reports the loader's words: "ImportError: libnuma.so.1: cannot open
shared object file: No such file or directory" (ctypes: OSError).  No pip install of the engine or of the package
fixes it: the library comes from the system's packages, the NVIDIA driver, or a CUDA component.  The answer names the
library and what installs it (facts/shared_libraries.toml); a library the table does not know is named with the way to
find its package.

A library the loader finds but that lacks a symbol version the extension was linked with (glibc's dl-version.c:
"<library>: version `GLIBCXX_3.4.32' not found (required by <extension>)") is the same class: the system's library
is older than the one the extension was built on, and no reinstall of the Python package changes it."""

from __future__ import annotations

import re

from logsleuth.facts.shared_libraries import SharedLibrary, library_named
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence, exception_lines

RULE_ID = "rule-shared-library-missing"
_CANNOT_OPEN = compile_lazily(r"(?<![\w.+-])(?P<lib>lib[\w.+-]*?\.so(?:\.\d+)*): cannot open shared object file")
# glibc's loader (elf/dl-version.c): the library is there, but older than the one the extension was linked against.
_VERSION_NOT_FOUND = compile_lazily(
    r"(?<![\w.+-])(?P<lib>lib[\w.+-]*?\.so(?:\.\d+)*): version `(?P<version>[A-Z]+_[\d.]+)' not found"
    r"(?: \(required by (?P<by>[^)\s]+)\))?")
# NVIDIA's library names (CUDA's toolkit libraries, the driver's, NCCL, NVSHMEM) for a library the table does not
# list: the CUDA answer keeps it.  Named one by one: a bare libcu/libnv prefix also takes libcurl and libcups.
_NVIDIA_NAMED = compile_lazily(
    r"^lib(?:cuda|cudart|cublas|cudnn|cufft|cufile|curand|cusolver|cusparse|cupti|nvrtc|nvJitLink|nvToolsExt|nvidia-"
    r"|nvshmem|nccl)")
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
    library: the pattern's reinstall stays.  A failure that is the loader's words for an NVIDIA library keeps the
    pattern written for it (common-cuda-library-missing); a system library leads wherever its line stands (a paste
    that gives the loader's line first and the package's banner after it).  A library older than the extension
    needs (version `GLIBCXX_...' not found) leads the same way."""
    found = evidence.first_match(_CANNOT_OPEN)
    if found is None:
        return library_too_old(evidence)
    if _PYTHON_PACKAGE_LIBRARY.match(found["lib"]):
        return None
    quoted_inside = any(_CANNOT_OPEN.search(block.message) and not _CANNOT_OPEN.match(block.message.strip())
                        for block in evidence.failure.exceptions)
    if not quoted_inside and _nvidia_library(found["lib"]):
        return None
    return shared_library(evidence)


def _nvidia_library(lib: str) -> bool:
    """NVIDIA's own library (the driver, CUDA, cuDNN, NCCL): a pasted short form ("ImportError: libcudart.so.12:
    cannot open ..." above sgl-kernel's banner) keeps the CUDA answer; any other library is the system's (libnuma,
    libibverbs, libgomp), whichever line of the paste comes first."""
    row = library_named(lib)
    return row.nvidia if row is not None else bool(_NVIDIA_NAMED.match(lib))


# A failure that is a load or an import failing (torch's "Failed to load the backend extension: torch_npu" for a
# device plugin torch autoloads, an ImportError with the loader's words cut): the loader's own line printed just above
# it, alone, names what was missing (vllm-project/vllm-ascend#1440).
_LOAD_FAILED = compile_lazily(r"(?i)\b(?:load|import)(?:ed|ing)?\b")
_LOADER_LINES_ABOVE = 3


def _loader_line_above(evidence: Evidence) -> re.Match[str] | None:
    """The loader's words on one of the lines just above a failure to load or import, when its own lines lack them."""
    failure = evidence.failure
    if not any(block.type.endswith(("ImportError", "ModuleNotFoundError", "OSError")) or _LOAD_FAILED.search(block.message)
               for block in failure.exceptions):
        return None
    return next((m for line in reversed(failure.context[-_LOADER_LINES_ABOVE:]) if (m := _CANNOT_OPEN.search(line))),
                None)


def shared_library(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_CANNOT_OPEN) or _loader_line_above(evidence)
    if found is None:
        return library_too_old(evidence)
    lib = found["lib"]
    row = library_named(lib)
    launch = evidence.launch
    engine_name = ENGINE_NAMES.get(launch.engine or "", "the engine")
    package = _loading_package(evidence)
    loader = f"{package}'s compiled code" if package else "a compiled extension"
    if row is not None and row.platform:
        return platform_library(evidence, found, row, loader)
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
                   "file index names it (general guidance: apt-file search on Debian/Ubuntu, dnf provides on RHEL/Fedora); a CUDA "
                   "component may instead come from NVIDIA's pip wheels (nvidia-*-cu<CUDA major>).")
        steps = (check,)
        references = ()
    return Diagnosis(
        pattern=RULE_ID, title=f"A system library is missing: {lib}", category="dependency-version",
        root_cause=root_cause, fix=Fix(summary=summary, steps=steps), references=references,
        engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"the loader's words: {found.group(0)}",))


# The directory the loader printed in front of the library's name: the word that ends at the name, from the space,
# quote or bracket before it.  The message is often a repr inside another one (sgl-kernel's `- ImportError("/usr/lib/
# …/libstdc++.so.6: …")`, vLLM's `Failed to import from vllm._C with ImportError(…)`): its wrapper is no path.
_DIRECTORY_BEFORE = compile_lazily(r"(?:^|[\s'\"(])(?P<dir>/[^\s'\"()]*/)$")


def _printed_directory(before: str) -> str | None:
    found = _DIRECTORY_BEFORE.search(before[-4096:])
    return found["dir"] if found else None


_SYSTEM_C_LIBRARY = ("GLIBC_",)  # glibc itself: no package of a running system replaces it


def library_too_old(evidence: Evidence) -> Diagnosis | None:
    """The loader found the library but not the symbol version the extension was linked with: the system's copy is
    older than the build system's (libstdc++ from an older GCC, an older glibc), or an environment's own older copy
    comes first on the loader's path."""
    found = evidence.first_match(_VERSION_NOT_FOUND)
    if found is None:
        return None
    lib, version, needed_by = found["lib"], found["version"], found["by"]
    directory = _printed_directory(found.string[:found.start("lib")])
    path = (directory or "") + lib
    row = library_named(lib)
    what = f"{lib} ({row.component})" if row else lib
    by = needed_by.rsplit("/", 1)[-1] if needed_by else "a compiled extension"
    root_cause = (f"The loader found {what} but it has no {version}: {by} was built on a system with a newer copy of "
                  "that library than the one loaded here. It is a library of the system, not a Python package: "
                  "reinstalling the same build of the package does not change it.")
    if version.startswith(_SYSTEM_C_LIBRARY):
        summary = (f"This system's C library (glibc) is older than the one {by} was built for: run it on a newer "
                   "system or image, or install a build of the package made for this glibc (general guidance: the "
                   "wheel's manylinux tag names the glibc it needs).")
    else:
        summary = (f"Give the loader a {lib} that has {version} (general guidance): a newer system or image, the "
                   f"{row.debian + ' package of a newer release' if row and row.debian else 'library of a newer toolchain'}, "
                   "or a build of the package made for this system.")
    family = version.split("_")[0]
    steps = [f"strings {path} | grep {family}_ lists the versions the loaded copy has (the loader took {path})"
             if directory else
             f"The loader's words do not give {lib}'s directory: ldconfig -p | grep {lib.split('.so')[0]}.so shows the "
             f"copies it finds, and strings on the one it loads | grep {family}_ lists the versions that copy has"]
    if any(place in path for place in ("conda", "/envs/", "/venv", "site-packages")):
        steps.append(f"{path} is an environment's own copy: it shadows a newer system copy, if the system has one")
    return Diagnosis(
        pattern=RULE_ID, title=f"A system library is older than the extension needs: {lib} has no {version}",
        category="dependency-version", root_cause=root_cause, fix=Fix(summary=summary, steps=tuple(steps)),
        references=(row.sources if row else ()) + ("glibc elf/dl-version.c: \"version `%s' not found (required by %s)\"",),
        engine=evidence.launch.engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the loader's words: {found.group(0)}",))


CONTAINER_CATEGORY = "orchestration"
# torch (2.5+) importing a device plugin's extension by its entry point (torch/__init__.py _import_device_backends:
# "Failed to load the backend extension: {name}. You can disable extension auto-loading with
# TORCH_DEVICE_BACKEND_AUTOLOAD=0."; pytorch/tutorials advanced_source/python_extension_autoload.rst)
_BACKEND_EXTENSION = compile_lazily(r"Failed to load the backend extension: (?P<name>[A-Za-z_]\w*)")


def platform_library(evidence: Evidence, found: re.Match[str], row: SharedLibrary, loader: str) -> Diagnosis:
    """An accelerator's runtime library missing (facts/shared_libraries.toml rows with a platform): that platform's
    driver or runtime is not visible to the process.  A library of the host's driver missing in a container the log
    shows started is the container's set-up (its devices and driver mounts: orchestration); otherwise the driver or
    runtime is not installed here, or not on the loader's path."""
    lib, launch = found["lib"], evidence.launch
    platform = row.platform
    if (named := next((m for line in exception_lines(evidence.failure) if (m := _BACKEND_EXTENSION.search(line))), None)):
        loader = named["name"] + " (the device extension torch loads on import)"
    check = (f"ldconfig -p | grep {lib.split('.so')[0]}.so shows whether (and where) the loader finds it; "
             "echo $LD_LIBRARY_PATH the extra directories it reads")
    evidence_lines = [f"the loader's words: {found.group(0)}"]
    if row.host_driver and launch.container_lines:
        container = launch.container_lines[0].strip()
        evidence_lines.append(f"the container's start: {container[:200]}")
        root_cause = (f"The dynamic loader found no {lib} ({row.component}) when {loader} was loaded, inside a container. "
                      f"It is the host's {platform} driver's own library: a container gets it from the host (the "
                      "devices and driver directories its start mounts, or the vendor's container runtime), never from "
                      "its image, so the container was started without the host's driver visible to it.")
        summary = (f"Start the container with the {platform}'s devices and the host's driver mounted, as the engine's "
                   "or the vendor's installation guide shows for this device (general guidance: compare the command "
                   "with the guide's, device by device and mount by mount).")
        steps = (f"{row.platform_check} on the host shows whether the driver itself sees the devices; inside the "
                 "container it works only once the driver is visible there", *((row.note,) if row.note else ()), check)
        category = CONTAINER_CATEGORY
        title = f"The container was started without the host's {platform} driver: {lib} is missing"
    else:
        root_cause = (f"The dynamic loader found no {lib} ({row.component}) when {loader} was loaded: the {platform}'s "
                      f"{'driver' if row.host_driver else 'runtime'} is not installed here, or not on the loader's path. "
                      "It is not a Python package: reinstalling the engine or the plugin does not install it.")
        summary = (f"Install the {platform}'s {'driver' if row.host_driver else 'runtime'} that provides {lib}"
                   f"{': ' + _installs(row) if _installs(row) else ''}; in a container, in its image or, for a driver "
                   "library, mounted from the host.")
        steps = (f"{row.platform_check}: whether the {platform}'s driver sees the devices here", check,
                 *((row.note,) if row.note else ()))
        category = "dependency-version"
        title = f"The {platform}'s {'driver' if row.host_driver else 'runtime'} library is missing: {lib}"
    return Diagnosis(
        pattern=RULE_ID, title=title, category=category, root_cause=root_cause, fix=Fix(summary=summary, steps=steps),
        references=row.sources, engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=tuple(evidence_lines))
