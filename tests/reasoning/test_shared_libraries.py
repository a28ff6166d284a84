"""Rule rule-shared-library-missing (reasoning/shared_libraries.py): a system library the dynamic loader cannot find.

Each traceback is printed by real CPython: a mirrored package's extension loader asks ctypes for a library no system
has, so the message is the loader's own "<library>: cannot open shared object file: No such file or directory"
(the shape an extension import raises as ImportError).  The library names are the rows of
facts/shared_libraries.toml, made unfindable by a directory path nothing holds."""

from __future__ import annotations

import pytest

from logsleuth.facts.shared_libraries import library_named, shared_libraries
from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

LAUNCH = "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-7B-Instruct --port 30000\n"


def _sgl_kernel_importing(init_source: str) -> str:
    """The traceback real CPython prints importing an sgl_kernel package whose __init__.py is `init_source`."""
    code = f'''
        import os, sys
        os.makedirs("site-packages/sgl_kernel", exist_ok=True)
        with open("site-packages/sgl_kernel/__init__.py", "w") as f:
            f.write({init_source!r})
        sys.path.insert(0, "site-packages")
        import sgl_kernel
    '''
    return real_traceback(code)


def _loader_failure(library: str) -> str:
    """sgl_kernel's import failing to load `library` (a path nothing holds, so the loader's words name it)."""
    return _sgl_kernel_importing(
        "import ctypes\n"
        "try:\n"
        f"    ctypes.CDLL('/nonexistent-dir/{library}')\n"
        "except OSError as error:\n"
        "    raise ImportError(str(error).replace('/nonexistent-dir/', '')) from None\n")


@pytest.mark.parametrize(("library", "installs"), [
    ("libnuma.so.1", "libnuma1"),
    ("libibverbs.so.1", "libibverbs1"),
    ("libGL.so.1", "libgl1"),
])
def test_a_missing_system_library_names_it_and_its_package_not_a_reinstall(library: str, installs: str) -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure(library))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-shared-library-missing", "dependency-version", "rule")
    assert library in diagnosis.title
    assert diagnosis.fix is not None and installs in diagnosis.fix.summary
    assert "does not install it" in diagnosis.root_cause and "sgl_kernel" in diagnosis.root_cause
    assert not diagnosis.fix.flags and diagnosis.fix.command is None  # nothing about the launch changes


def test_a_library_the_table_does_not_know_is_named_with_how_to_find_its_package() -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure("libacmefoo.so.3"))
    assert diagnosis.pattern == "rule-shared-library-missing"
    assert diagnosis.fix is not None and "libacmefoo.so.3" in diagnosis.fix.summary
    assert "apt-file search" in diagnosis.fix.summary


def test_every_row_names_its_sources_and_what_installs_it() -> None:
    for row in shared_libraries():
        assert row.sources, row.component
        assert row.debian or row.pip or (row.platform and row.note), row.component
        assert not row.host_driver or row.platform, row.component  # a driver's library names its platform
    assert library_named("libcudart.so.12") is not None and library_named("libcudart.so.12.4.127") is not None
    assert library_named("libnuma.so") is not None and library_named("notalib") is None


def _kernel_load_failure(library: str) -> str:
    """sgl-kernel's loader (sgl_kernel/load_utils.py) giving up: its message lists each attempt's error, the loader's
    words for `library` among them; the bundled pattern sglang-sgl-kernel-load-failure names this message."""
    return _sgl_kernel_importing(
        "import ctypes\n"
        "errors = []\n"
        "try:\n"
        f"    ctypes.CDLL('/nonexistent-dir/{library}')\n"
        "except OSError as error:\n"
        "    errors.append('ImportError: ' + str(error).replace('/nonexistent-dir/', ''))\n"
        "raise ImportError('\\n[sgl_kernel] CRITICAL: Could not load any common_ops library!\\n'\n"
        "                  'Please ensure sgl_kernel is properly installed with:\\n'\n"
        "                  'pip install --upgrade sgl_kernel\\n'\n"
        "                  'Error details from previous import attempts:\\n- ' + '\\n- '.join(errors))\n")


def test_a_known_system_library_leads_over_the_kernel_packages_own_load_failure() -> None:
    log = LAUNCH + _kernel_load_failure("libnuma.so.1")
    assert "Could not load any common_ops library!" in log and "libnuma.so.1: cannot open shared object file" in log
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    assert diagnosis.fix is not None and "libnuma1" in diagnosis.fix.summary
    assert not any("--force-reinstall" in step for step in diagnosis.fix.steps)


def test_a_system_library_the_table_does_not_know_also_leads_over_the_kernel_packages_load_failure() -> None:
    """Issue 28, stop 39 class 5: the answer leads with the system library and how to find what provides it, not with
    reinstalling the engine and the kernel package, which installs no system library."""
    diagnosis = first_diagnosis(LAUNCH + _kernel_load_failure("libacmefoo.so.3"))
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    assert diagnosis.fix is not None and "libacmefoo.so.3" in diagnosis.fix.summary and "apt-file search" in diagnosis.fix.summary
    assert not any("--force-reinstall" in step for step in diagnosis.fix.steps)


def test_nvshmem_is_named_with_the_wheel_that_ships_it() -> None:
    diagnosis = first_diagnosis(LAUNCH + _kernel_load_failure("libnvshmem_host.so.3"))
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    assert diagnosis.fix is not None and "nvidia-nvshmem-cu" in diagnosis.fix.summary
    assert "or the pip wheels" not in diagnosis.fix.summary  # no system package to offer an alternative to


def test_torchs_own_library_leaves_the_kernel_packages_load_failure_to_its_pattern() -> None:
    """libtorch_cuda.so is a file of the torch wheel: the matching torch and kernel package are the fix."""
    diagnosis = first_diagnosis(LAUNCH + _kernel_load_failure("libtorch_cuda.so"))
    assert diagnosis.pattern == "sglang-sgl-kernel-load-failure", diagnosis.pattern


# Issue 28 stop 50 (split 13's harmful report): a paste that gives the loader's line first and sgl-kernel's banner
# after it (sgl_kernel/load_utils.py's "[sgl_kernel] CRITICAL: Could not load any common_ops
# library!"), the short form users retype.  The loader's words lead the exception, so the rule stood aside for the
# kernel package's pattern, whose step reinstalls sglang: no pip install provides a system library.
_BANNER = "[sgl_kernel] CRITICAL: Could not load any common_ops library!\n"


@pytest.mark.parametrize(("library", "installs"), [
    ("libnuma.so.1", "libnuma1"), ("libibverbs.so.1", "libibverbs1"), ("libgomp.so.1", "libgomp1")])
def test_a_system_library_named_before_the_kernel_packages_banner_leads(library: str, installs: str) -> None:
    log = LAUNCH + _loader_failure(library) + _BANNER
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    assert diagnosis.fix is not None and installs in diagnosis.fix.summary
    assert not any("--force-reinstall" in step for step in diagnosis.fix.steps)


def test_a_cuda_library_named_before_the_kernel_packages_banner_keeps_the_cuda_answer() -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure("libcudart.so.12") + _BANNER)
    assert diagnosis.pattern == "common-cuda-library-missing", diagnosis.pattern


def _too_old(library_path: str, version: str, extension: str) -> str:
    """glibc's loader words (elf/dl-version.c) for a library older than the one `extension` was linked against."""
    return _sgl_kernel_importing(
        f"raise ImportError(\"{library_path}: version `{version}' not found (required by {extension})\")\n")


def test_a_cpp_runtime_older_than_the_extension_needs_names_the_system_library_not_a_reinstall() -> None:
    extension = "/usr/local/lib/python3.10/dist-packages/sgl_kernel/sm90/common_ops.abi3.so"
    log = LAUNCH + _too_old("/usr/lib/x86_64-linux-gnu/libstdc++.so.6", "GLIBCXX_3.4.32", extension) + _BANNER
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-shared-library-missing", "dependency-version")
    assert "GLIBCXX_3.4.32" in diagnosis.title and "libstdc++.so.6" in diagnosis.title
    assert diagnosis.fix is not None and "general guidance" in diagnosis.fix.summary
    assert any("strings /usr/lib/x86_64-linux-gnu/libstdc++.so.6" in step for step in diagnosis.fix.steps)
    assert not any("--force-reinstall" in step for step in diagnosis.fix.steps)


def test_an_environments_own_older_copy_is_said_to_shadow_the_systems() -> None:
    log = LAUNCH + _too_old("/opt/conda/lib/libstdc++.so.6", "GLIBCXX_3.4.30",
                            "/opt/conda/lib/python3.10/site-packages/vllm/_C.abi3.so")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    assert diagnosis.fix is not None and any("environment's own copy" in step for step in diagnosis.fix.steps)


# Review 3 of stop 50 (M1): the loader's words quoted as a repr inside another message, as sgl-kernel's banner lists
# each attempt (`- ImportError("/usr/lib/…/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (…)")`) and vLLM's
# `Failed to import from vllm._C with ImportError(…)` prints them: the path is the word ending at the library's name,
# never the repr's wrapper; with no directory printed, no path is named.
def _attempts_listed(error: str) -> str:
    """sgl-kernel's load failure listing one attempt's error as its repr (sgl_kernel/load_utils.py's form)."""
    return _sgl_kernel_importing(
        f"error = ImportError({error!r})\n"
        "raise ImportError('[sgl_kernel] CRITICAL: Could not load any common_ops library!\\n'\n"
        "                  'Error details from previous import attempts:\\n- ' + repr(error))\n")


def test_a_quoted_loader_message_gives_the_path_the_loader_printed() -> None:
    error = ("/usr/lib/x86_64-linux-gnu/libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by "
             "/usr/local/lib/python3.10/dist-packages/sgl_kernel/sm90/common_ops.abi3.so)")
    diagnosis = first_diagnosis(LAUNCH + _attempts_listed(error))
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "strings /usr/lib/x86_64-linux-gnu/libstdc++.so.6 | grep GLIBCXX_" in steps, steps
    assert "ImportError(" not in steps


def test_a_loader_message_without_a_directory_names_no_path() -> None:
    error = "libstdc++.so.6: version `GLIBCXX_3.4.32' not found (required by common_ops.abi3.so)"
    diagnosis = first_diagnosis(LAUNCH + _attempts_listed(error))
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    steps = "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "strings libstdc++" not in steps and "ImportError(" not in steps and "ldconfig -p" in steps, steps


# Review 3 of stop 50 (L1): libcurl and libcups begin like NVIDIA's libcu*: they are the system's, not CUDA's.
@pytest.mark.parametrize("library", ["libcurl.so.4", "libcups.so.2"])
def test_a_system_library_named_like_cudas_is_the_systems(library: str) -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure(library) + _BANNER)
    assert diagnosis.pattern == "rule-shared-library-missing", diagnosis.pattern
    assert diagnosis.fix is not None and not any("--force-reinstall" in step for step in diagnosis.fix.steps)


# torch's own words when a device plugin it autoloads fails to import (torch/__init__.py _import_device_backends,
# torch 2.5+), after the loader's line the plugin's import printed alone: the shape of vllm-project/vllm-ascend#1440
# and DeepLink-org/dlinfer#47, written here in our own words.
_AUTOLOAD_FAILED = ("RuntimeError: Failed to load the backend extension: torch_npu. You can disable extension "
                    "auto-loading with TORCH_DEVICE_BACKEND_AUTOLOAD=0.\n")
_CONTAINER_START = "docker run -it --rm --device /dev/davinci0 -v /data/models:/models my-npu-image:latest bash\n"


def test_a_driver_library_missing_in_a_container_is_the_containers_set_up() -> None:
    log = _CONTAINER_START + "libascend_hal.so: cannot open shared object file: No such file or directory\n" + _AUTOLOAD_FAILED
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-shared-library-missing", "orchestration")
    assert "Ascend NPU" in diagnosis.title and "libascend_hal.so" in diagnosis.title
    assert diagnosis.fix is not None and any("npu-smi info" in step for step in diagnosis.fix.steps)
    assert any("/usr/local/Ascend/driver" in step for step in diagnosis.fix.steps)
    assert "torch_npu" in diagnosis.root_cause
    assert any(fact.startswith("the container's start: docker run") for fact in diagnosis.evidence)


def test_a_driver_library_missing_outside_a_container_is_the_driver_install() -> None:
    log = "libascend_hal.so: cannot open shared object file: No such file or directory\n" + _AUTOLOAD_FAILED
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-shared-library-missing", "dependency-version")
    assert "driver" in diagnosis.title and "container" not in diagnosis.title


def test_a_loader_line_above_an_unrelated_failure_is_not_its_cause() -> None:
    log = ("libascend_hal.so: cannot open shared object file: No such file or directory\n"
           "ValueError: max_model_len (8192) is greater than the derived max_model_len (4096).\n")
    assert first_diagnosis(log).pattern != "rule-shared-library-missing"


@pytest.mark.parametrize(("library", "platform", "check"), [
    ("libamdhip64.so.6", "AMD GPU (ROCm)", "rocminfo"),
    ("libhsa-runtime64.so.1", "AMD GPU (ROCm)", "rocminfo"),
    ("libze_loader.so.1", "Intel GPU (XPU)", "sycl-ls"),
    ("libhccl.so", "Ascend NPU", "set_env.sh"),
])
def test_an_accelerator_runtime_library_names_its_platform_and_the_vendors_check(
        library: str, platform: str, check: str) -> None:
    diagnosis = first_diagnosis(LAUNCH + _loader_failure(library))
    assert (diagnosis.pattern, diagnosis.category) == ("rule-shared-library-missing", "dependency-version")
    assert platform in diagnosis.title and library in diagnosis.title
    assert diagnosis.fix is not None and any(check in step for step in diagnosis.fix.steps)
