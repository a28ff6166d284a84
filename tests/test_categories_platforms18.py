"""Non-CUDA platforms and hosts in the honest category (issue 28, split 17's platform misses), in our own words: an
accelerator's runtime refusing a kernel for a capability the device lacks (a SYCL aspect), a cloud VM's metadata
server out of reach (a TPU VM reading its own environment), and an engine run on native Windows.  Each with a
look-alike.  Tracebacks are printed by the real interpreter where the platform allows it; Windows paths, which CPython
on Linux cannot print, are written by hand in CPython's shape."""

from __future__ import annotations

from tests.helpers import diagnose_with_patterns, real_traceback

# The SYCL runtime's sycl::exception for a kernel whose required aspect the queue's device lacks (intel/llvm), as torch's
# XPU code surfaces it (acts-project/traccc#333, vllm-project/vllm-xpu-kernels#92).
_ASPECT = "Required aspect fp64 is not supported on the device"


def test_a_sycl_aspect_the_device_lacks_is_a_device_capability_with_intels_tools() -> None:
    traceback = real_traceback(f"raise RuntimeError({_ASPECT!r})", "vllm_xpu_kernels/ops.py")
    diagnosis = diagnose_with_patterns(traceback)
    assert diagnosis.category == "gpu-arch-unsupported", diagnosis
    assert diagnosis.fix is not None and any("sycl-ls" in step and "fp64" in step for step in diagnosis.fix.steps)


def test_the_aspect_message_cut_mid_word_keeps_its_reading() -> None:
    """A worker's ERROR record whose paste stops inside the last word."""
    log = f"(Worker pid=1200) ERROR 04-21 10:59:44 [multiproc_executor.py:800] RuntimeError: {_ASPECT[:-2]}\n"
    assert diagnose_with_patterns(log).category == "gpu-arch-unsupported"


def test_an_aspect_word_elsewhere_is_no_device_limit() -> None:
    traceback = real_traceback("raise RuntimeError('Required argument aspect_ratio is missing from the request')")
    assert diagnose_with_patterns(traceback).category != "gpu-arch-unsupported"


def _metadata_refused(host: str, url: str) -> str:
    """requests' ConnectionError as torch_xla's _get_metadata raises it when the metadata server refuses (the message
    shape urllib3 prints for a refused connection)."""
    message = (f"HTTPConnectionPool(host='{host}', port=80): Max retries exceeded with url: {url} (Caused by "
               "NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f0000000000>: Failed to establish a "
               "new connection: [Errno 111] Connection refused'))")
    return real_traceback(f"""
        class ConnectionError(OSError):
            pass
        ConnectionError.__module__ = "requests.exceptions"

        def _get_metadata(key):
            raise ConnectionError({message!r})

        _get_metadata("tpu-env")
        """, "torch_xla/_internal/tpu.py")


def test_a_tpu_vm_metadata_server_out_of_reach_gets_the_platforms_guidance_not_the_proxys() -> None:
    """vllm-project/vllm#9538, pytorch/xla#9449: torch_xla reading tpu-env from the GCE metadata server."""
    diagnosis = diagnose_with_patterns(
        _metadata_refused("metadata.google.internal", "/computeMetadata/v1/instance/attributes/tpu-env"))
    assert diagnosis.category == "network"
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    assert any("TPU_SKIP_MDS_QUERY" in step for step in steps)
    assert not any("NO_PROXY" in step for step in steps)  # no proxy is shown


def test_a_refused_connection_to_the_servers_own_port_keeps_the_network_rows_proxy_check() -> None:
    diagnosis = diagnose_with_patterns(_metadata_refused("localhost", "/v1/models"))
    assert diagnosis.category == "network"
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    assert not any("TPU_SKIP_MDS_QUERY" in step for step in steps)


# A vLLM source checkout imported from a native Windows Python (vllm-project/vllm#12858's shape, our own paths).
_WINDOWS_IMPORT = '''Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "D:\\\\src\\\\vllm\\\\vllm\\\\__init__.py", line 7, in <module>
    from vllm.engine.arg_utils import EngineArgs
  File "D:\\\\src\\\\vllm\\\\vllm\\\\distributed\\\\__init__.py", line 3, in <module>
    from .communication_op import *
  File "D:\\\\src\\\\vllm\\\\vllm\\\\distributed\\\\communication_op.py", line 8, in <module>
    from .parallel_state import get_tp_group
'''


def test_a_traceback_cut_inside_a_distributed_frame_on_native_windows_is_no_collective_failure() -> None:
    """The paste stops inside the last frame's header: only the subsystem's name is left, which says nothing here."""
    cut = _WINDOWS_IMPORT[: _WINDOWS_IMPORT.rindex(", in <module>") + len(", in <mod")]
    diagnosis = diagnose_with_patterns(cut)
    assert diagnosis.category == "unclassified", diagnosis
    assert diagnosis.fix is not None and "WSL2" in diagnosis.fix.steps[0]


def test_a_cut_import_statement_on_native_windows_keeps_the_platform_check() -> None:
    """Cut at an import statement, the frames' shape reads an import failing (dependency-version): never nccl."""
    diagnosis = diagnose_with_patterns(_WINDOWS_IMPORT)
    assert diagnosis.category in {"unclassified", "dependency-version"}, diagnosis
    assert diagnosis.fix is not None and any("WSL2" in step for step in diagnosis.fix.steps)


def test_a_unix_only_standard_module_missing_is_the_platform_not_a_package_to_install() -> None:
    diagnosis = diagnose_with_patterns(_WINDOWS_IMPORT + "    import resource\nModuleNotFoundError: No module named 'resource'\n")
    assert diagnosis.category == "unclassified", diagnosis
    assert "standard library" in diagnosis.root_cause and "no pip package" in diagnosis.root_cause
    assert diagnosis.fix is not None and not any("pip install" in step for step in diagnosis.fix.steps)


def test_the_same_cut_traceback_on_linux_gets_no_windows_reading() -> None:
    linux = _WINDOWS_IMPORT.replace("D:\\\\src\\\\vllm\\\\", "/srv/vllm/").replace("\\\\", "/")
    cut = linux[: linux.rindex(", in <module>") + len(", in <mod")]
    assert "D:" not in cut
    diagnosis = diagnose_with_patterns(cut)
    assert "Windows" not in diagnosis.root_cause
    assert diagnosis.fix is None or not any("WSL2" in step for step in diagnosis.fix.steps)
