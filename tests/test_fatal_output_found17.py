"""Shapes the last blind split still left unfound, each read as its class (issue 28, stop 53, branch find17).  Lines
rebuilt in our own text from the printing code's format or the enum a header defines:

- a GPU runtime's or library's error status name printed alone or after the library's refusal (HIP's code object
  abort, CLR hip_code_object.cpp, ROCm/tensorflow-upstream#1305, ROCm/legacy-rocm-build#1623; the CUDA samples'
  helper_cuda.h check, NVIDIA/cuda-samples#225; a wrapper's `failed with error: CUDA_ERROR_NO_BINARY_FOR_GPU`,
  apache/tvm#205; `cudaLaunchKernel returned cudaErrorNoKernelImageForDevice`, jax-ml/jax#3753): a failure of a paste
  that shows no other, its category from the name (facts/gpu_error_names.toml);
- the accelerator vendors' own error lines: Ascend CANN's error message record (vllm-project/vllm-ascend#1007,
  Ascend/pytorch#61, and CANN 8.2's `Name(Ecode)` form, hw-native-sys/PTOAS#523, vllm-project/vllm-ascend#9725), torch's
  `HIP error: …` alone, Habana's `synStatus=N [name] …` (huggingface/optimum-habana#1611, huggingface/tgi-gaudi#93),
  Intel's Unified Runtime status names (ur_api.h ur_result_t);
- a Python traceback flattened onto one line or a few long lines (CPython prints each part on a line of its own,
  Lib/traceback.py): cut back into its frames and its exception;
- an exception message the paste cut where it ends: kept as cut, marked truncated."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from logsleuth.api import diagnose_text
from logsleuth.facts.gpu_error_names import families, family_of, name_category
from logsleuth.facts.table import parsed_toml
from tests.test_fatal_output_shapes import OPTIONS, primary

VLLM_HEALTHY_START = [
    "(APIServer pid=14) INFO:     Started server process [14]",
    "(APIServer pid=14) INFO:     Waiting for application startup.",
    "(APIServer pid=14) INFO:     Application startup complete.",
]


def _failures(log: str) -> list[str]:
    return [group.failure.final.type for group in diagnose_text(log, OPTIONS).failures]


# -- 1. a runtime's status name ------------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "kind", "category"), [
    ("hipErrorNoBinaryForGpu: Unable to find code object for all current devices!", "HIP error", "gpu-arch-unsupported"),
    ("cudaErrorNoKernelImageForDevice", "CUDA error", "gpu-arch-unsupported"),
    ('CUDA error at fused_rope.cu:88 code=209(cudaErrorNoKernelImageForDevice) "cudaLaunchKernel(fn, grid, block, args, 0, s)"',
     "CUDA error", "gpu-arch-unsupported"),
    ("[12:00:01] src/runtime/cuda/cuda_module.cc:93: cuModuleLoadData(&mod, image) failed with error: CUDA_ERROR_NO_BINARY_FOR_GPU",
     "CUDA error", "gpu-arch-unsupported"),
    ("Cuda Error (209): cudaLaunchKernel returned cudaErrorNoKernelImageForDevice", "CUDA error", "gpu-arch-unsupported"),
    ("cudaErrorIllegalAddress", "CUDA error", "illegal-memory-access"),
    ("paged_attention kernel failed: hipErrorIllegalAddress", "HIP error", "illegal-memory-access"),
    ("CUBLAS_STATUS_NOT_SUPPORTED", "CUDA error", "cuda-error"),
    ("gemm_fp8 returned status CUDNN_STATUS_EXECUTION_FAILED", "CUDA error", "cuda-error"),
    # Intel's and HIP's names have no NVIDIA-worded row (facts/gpu_error_names.toml [category]): unclassified
    ("UR_RESULT_ERROR_DEVICE_LOST", "XPU error", "unclassified"),
    ("cudaErrorMemoryAllocation", "CUDA error", "gpu-oom"),
    ("cuModuleLoad failed: CUDA_ERROR_OUT_OF_MEMORY", "CUDA error", "gpu-oom"),
])
def test_a_runtime_status_name_alone_is_the_failure(line: str, kind: str, category: str) -> None:
    assert primary(line + "\n") == (kind, line, category)


def test_the_name_after_a_launch_is_the_failure_and_a_shell_abort_after_it_keeps_it_as_context() -> None:
    log = "\n".join([
        "$ python3 -m sglang.launch_server --model-path /models/qwen --port 30000",
        "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
        "./serve.sh: line 12:  4242 Aborted (core dumped) python3 -m sglang.launch_server --model-path /models/qwen",
    ]) + "\n"
    report = diagnose_text(log, OPTIONS)
    assert report.failures
    failure = report.failures[0].failure
    assert any("hipErrorNoBinaryForGpu" in line for line in (*failure.context, failure.final.message))


def test_the_tables_named_categories_are_what_the_categories_read() -> None:
    # facts/gpu_error_names.toml's [category] is the one source: every name [category] lists is an error name
    for category, names in parsed_toml("gpu_error_names.toml")["category"].items():
        assert names
        for name in names:
            assert family_of(name) is not None, name
            assert name_category(name) == category


def _every_error_name() -> list[str]:
    """Every error name of every family (two members of a prefix family, from ur_api.h and pi.h)."""
    return [name for family in families()
            for name in (sorted(family.names - family.not_failures)
                         or [f"{family.prefix}DEVICE_LOST", f"{family.prefix}OUT_OF_RESOURCES"])]


def test_every_name_alone_gets_the_category_the_table_gives_it() -> None:
    # not only the listed names: one unlisted name the categories' words send elsewhere is a second, disagreeing copy
    wrong = []
    for name in _every_error_name():
        report = diagnose_text(name + "\n", OPTIONS)
        got = report.failures[0].diagnosis.category if report.failures and report.failures[0].diagnosis else None
        if got != name_category(name):
            wrong.append((name, got, name_category(name)))
    assert wrong == []


@pytest.mark.parametrize("line", [
    "hipErrorIllegalAddress", "hipErrorNoBinaryForGpu: Unable to find code object for all current devices!",
    "hipErrorOutOfMemory", "hipErrorLaunchTimeOut", "UR_RESULT_ERROR_DEVICE_LOST", "PI_ERROR_OUT_OF_RESOURCES",
    "RuntimeError: Native API failed. Native API returns: -5 (PI_ERROR_OUT_OF_RESOURCES) -5 (PI_ERROR_OUT_OF_RESOURCES)",
])
def test_an_amd_or_intel_runtimes_failure_gets_no_nvidia_advice(line: str) -> None:
    from logsleuth.render import render
    from logsleuth.render.options import OutputFormat, RenderOptions
    text = render(diagnose_text(line + "\n", OPTIONS), RenderOptions(format=OutputFormat.TEXT, width=200))
    assert not any(word in text for word in ("nvidia-smi", "CUDA_LAUNCH_BLOCKING", "torch.version.cuda", "Xid"))


def test_every_family_has_sources_and_no_success_name() -> None:
    for family in families():
        assert family.sources and family.type
        assert not any(name.endswith(("Success", "_SUCCESS")) for name in family.names)
    assert family_of("cudaSuccess") is None and family_of("CUDA_SUCCESS") is None
    assert family_of("cudaErrorFooBar") is None  # looks like one, no header defines it
    # members a healthy program prints: the header's "not actually an error", a prefix family's success
    for name in ("cudaErrorNotReady", "CUDA_ERROR_NOT_READY", "hipErrorNotReady", "CUDNN_STATUS_SUCCESS",
                 "cudaErrorCudartUnloading"):
        assert family_of(name) is None, name


def test_a_metrics_line_does_not_reach_the_device_readers() -> None:
    # every vLLM metrics line holds `: 20` (`throughput: 20.5 tokens/s`, `Running: 20 reqs`): a gate word there sent
    # each through every fatal-line regex (4x the time of a healthy log)
    from logsleuth.tracebacks.device_errors import DEVICE_ERROR_WORDS
    for line in [
        "(APIServer pid=14) INFO 01-02 10:00:00 [loggers.py:123] Engine 000: Avg prompt throughput: 20.5 tokens/s, "
        "Avg generation throughput: 20.1 tokens/s, Running: 20 reqs, Waiting: 0 reqs, GPU KV cache usage: 20.1%, "
        "Prefix cache hit rate: 20.0%",
        "step 10 loss 1.2 time: 2025-01-02T10:00:00",
    ]:
        assert not any(word in line for word in DEVICE_ERROR_WORDS)


def test_the_runtime_tables_are_the_headers() -> None:
    # names read from the CUDA headers where this machine has them: no name the table holds is missing from them
    import pathlib
    header = pathlib.Path("/usr/local/cuda-13.0/include/driver_types.h")
    if not header.exists():
        pytest.skip("no CUDA 13.0 headers here")
    text = header.read_text(encoding="utf-8", errors="replace")
    runtime = next(family for family in families() if family.family == "CUDA runtime")
    assert all(name in text for name in runtime.names)


@pytest.mark.parametrize("line", [
    "WARNING 01-02 10:00:00 [platform.py:12] cudaGetDeviceCount returned cudaErrorNoDevice, falling back to CPU",
    "INFO 01-02 10:00:00 [probe.py:1] probe status: cudaErrorNotReady",
    "| cudaErrorIllegalAddress | 700 | an illegal memory access was encountered |",
    "docs/errors.md:12:| hipErrorNoBinaryForGpu | 209 | no code object for the GPU |",
    "    if (err == cudaErrorIllegalAddress) {",
    "        case CUBLAS_STATUS_NOT_SUPPORTED:",
    '    return "CUBLAS_STATUS_NOT_SUPPORTED";',
    "    cudaErrorNoKernelImageForDevice = 209,",
    "- cudaErrorIllegalAddress",
    "The table lists cudaErrorIllegalAddress among the sticky errors.",
    "cudaErrorFooBar",
    "CUDA_SUCCESS",
    "kernel probe failed with cudaErrorNoKernelImageForDevice, retrying with the PTX build",
    # levels the normalizer does not tag: absl's (TensorFlow on a CPU host), a bracketed one, NOTICE
    "2024-05-01 12:00:00.123456: W external/local_xla/xla/stream_executor/cuda/cuda_driver.cc:282] failed call to "
    "cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected",
    "[W] cuModuleLoad returned CUDA_ERROR_NO_BINARY_FOR_GPU",
    "NOTICE: cuModuleLoad returned CUDA_ERROR_NO_BINARY_FOR_GPU for sm_90a kernel; using PTX JIT",
    "cudaMalloc failed with cudaErrorMemoryAllocation, retried successfully",
    # a status the header calls no error, a success member
    "cudaStreamQuery() returns cudaErrorNotReady while work is still pending.",
    "status: CUDA_ERROR_NOT_READY (poll again)",
    "cudnnCreate returned CUDNN_STATUS_SUCCESS",
    "CUDNN_STATUS_SUCCESS",
    # docs, a benchmark row, test output, lists, clauses, Python source
    "Returns cudaErrorInvalidValue if the pointer is NULL.",
    "[bench] kernel=gemm_fp8 M=4096 status=CUBLAS_STATUS_NOT_SUPPORTED time=n/a",
    "  Expected error: cudaErrorInvalidValue (test passed)",
    "Known error codes: cudaErrorIllegalAddress, cudaErrorLaunchFailure",
    "Previously this failed with cudaErrorNoKernelImageForDevice; after upgrading it works.",
    "Error handling: on cudaErrorIllegalAddress the process must restart.",
    '    raise RuntimeError(f"failed with {cudaErrorIllegalAddress}")',
])
def test_a_status_name_in_a_clean_paste_is_no_failure(line: str) -> None:
    # the line alone: what rejects it is its own shape (a readiness line after it is tested apart, below)
    assert _failures(line + "\n") == []


@pytest.mark.parametrize(("line", "kind"), [
    ("torch._C._cuda_init() failed: RuntimeError: cudaErrorInsufficientDriver", "RuntimeError"),
    ("E       RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a "
     "non-contiguous input.", "RuntimeError"),
])
def test_an_exception_line_quoting_a_status_keeps_its_type_wherever_it_starts(line: str, kind: str) -> None:
    assert primary(line + "\n")[0] == kind


def test_a_cuda_status_line_is_the_context_of_the_abort_after_it() -> None:
    log = "\n".join([
        "$ python3 -m sglang.launch_server --model-path /models/qwen --port 30000",
        'CUDA error at fused_rope.cu:88 code=209(cudaErrorNoKernelImageForDevice) "cudaLaunchKernel(fn, grid, block, args, 0, s)"',
        "./serve.sh: line 12:  4242 Aborted (core dumped) python3 -m sglang.launch_server --model-path /models/qwen",
    ]) + "\n"
    failure = diagnose_text(log, OPTIONS).failures[0].failure
    assert any("cudaErrorNoKernelImageForDevice" in line for line in (*failure.context, failure.final.message))


def test_a_python_exception_naming_the_status_stays_that_exception() -> None:
    line = "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_SUPPORTED when calling `cublasGemmEx( handle, opa, opb, m, n, k)`"
    assert primary(line + "\n")[0] == "RuntimeError"


# -- 2. the vendors' own error lines ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("line", "kind", "message"), [
    ("EE1001: [PID: 2210] 2025-06-01-10:20:30.123.456 The argument is invalid.Reason: rtMemcpyAsync failed, kind=1 is invalid!",
     "NPU error", "EE1001: The argument is invalid.Reason: rtMemcpyAsync failed, kind=1 is invalid!"),
    ("E40024: [PID: 2210] 2025-06-01-10:20:30.123.456 Failed call Python Func/Meathod [get_binfile_sha256_hash_from_c], Reason[SystemError]",
     "NPU error", "E40024: Failed call Python Func/Meathod [get_binfile_sha256_hash_from_c], Reason[SystemError]"),
    ("[ERROR] RecentErrMsg: [PID: 3310] 2026-01-02-03:04:05.678.901 Inner_Error_Device_Status_Abnormal(E39009): Failed to connect the device.",
     "NPU error", "Inner_Error_Device_Status_Abnormal(E39009): Failed to connect the device."),
    ("HIP error: invalid device function", "HIP error", "HIP error: invalid device function"),
    ("synStatus=26 [Generic failure] Device acquire failed.", "HPU error", "synStatus=26 [Generic failure] Device acquire failed."),
])
def test_a_vendor_runtimes_error_line_is_the_failure(line: str, kind: str, message: str) -> None:
    assert primary(line + "\n")[:2] == (kind, message)


def test_a_cann_record_gets_the_ascend_row() -> None:
    # the Ascend row (its category is cuda-error's, its title and checks CANN's), not NVIDIA's generic one
    line = "EE1001: [PID: 2210] 2025-06-01-10:20:30.123.456 The argument is invalid.Reason: rtMemcpyAsync failed"
    report = diagnose_text(line + "\n", OPTIONS)
    assert "Ascend" in report.failures[0].diagnosis.title


@pytest.mark.parametrize("line", [
    "[W1102 09:41:18.206 compiler_depend.ts:57] Warning: EE1001: [PID: 5625] 2025-09-19-14:34:08.166.059 The argument is invalid.",
    "EZ9999: Inner Error!",
    "| EE1001 | The argument is invalid | check the parameters |",
    "synStatus=0 [Success] Device acquired.",
    "[INFO] ASCEND(1234,python):2025-06-01-10:20:30.123.456 EE1001: [PID: 2210] 2025-06-01-10:20:30.123.456 The argument is invalid.",
    "2025-06-01 10:20:30 INFO ascend: EE1001: [PID: 2210] 2025-06-01-10:20:30.123.456 The argument is invalid.",
    "- EE1001: [PID: 2210] 2025-06-01-10:20:30.123.456 The argument is invalid.",
])
def test_a_vendor_code_in_a_clean_paste_is_no_failure(line: str) -> None:
    # on its own: what rejects it is the line, not a readiness line after it
    assert _failures(line + "\n") == []


# Runs that went on after a runtime's status line: a readiness line, a later success or served request (each line
# alone, without what follows it, is a failure: the test fails if the going-on is not read).
@pytest.mark.parametrize(("failed", "then"), [
    (["INFO:     Application startup complete.", "[autotune] config BLOCK_M=128 failed: hipErrorLaunchOutOfResources"],
     ["[autotune] best config BLOCK_M=64 0.12 ms",
      'INFO:     10.0.0.1:5000 - "POST /v1/completions HTTP/1.1" 200 OK']),
    (["attempt 1/3 failed: CUDA_ERROR_LAUNCH_FAILED"], ["attempt 2/3 succeeded", "INFO:     Application startup complete."]),
    (["synStatus=26 [Generic failure] Device acquire failed."], ["synStatus=0 [Success] Device acquired.", VLLM_HEALTHY_START[2]]),
    (["EE1001: [PID: 2210] 2025-06-01-10:20:30.123.456 The argument is invalid.Reason: x"], VLLM_HEALTHY_START),
    (["(APIServer pid=14) WARNING 01-02 10:00:00 [platform.py:1] CUDA probe failed, using the CPU platform:",
      "(APIServer pid=14)     cudaErrorNoDevice"], VLLM_HEALTHY_START),
    (["CUBLAS_STATUS_EXECUTION_FAILED"], [f"step {n} loss 1.{n}" for n in range(25)]),
])
def test_a_status_line_the_run_went_on_after_is_no_failure(failed: list[str], then: list[str]) -> None:
    assert _failures("\n".join(failed) + "\n") != []
    assert _failures("\n".join([*failed, *then]) + "\n") == []


# -- 3. a flattened traceback ------------------------------------------------------------------------------------------


def _real_traceback() -> list[str]:
    """A real CPython traceback of a ValueError raised two calls deep (the interpreter prints it)."""
    program = textwrap.dedent("""\
        def check(n):
            raise ValueError(f"max_model_len ({n}) must be positive")
        def main():
            check(-1)
        main()
    """)
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, check=False)
    return done.stderr.strip().splitlines()


def test_a_traceback_flattened_onto_one_line_is_read_as_printed() -> None:
    printed = _real_traceback()
    flat = " ".join(line.strip() for line in printed)
    assert "\n" not in flat and flat.startswith("Traceback (most recent call last): File ")
    whole, flattened = diagnose_text("\n".join(printed) + "\n", OPTIONS), diagnose_text(flat + "\n", OPTIONS)
    got, want = flattened.failures[0].failure.final, whole.failures[0].failure.final
    assert (got.type, got.message) == (want.type, want.message) == ("ValueError", "max_model_len (-1) must be positive")
    assert [(f.line, f.function) for f in got.frames] == [(f.line, f.function) for f in want.frames]
    assert [f.function for f in got.frames] == ["<module>", "main", "check"]


def test_a_traceback_flattened_onto_a_few_long_lines_is_read_as_printed() -> None:
    printed = _real_traceback()
    frames_at = [index for index, line in enumerate(printed) if line.lstrip().startswith('File "')]
    first = " ".join(line.strip() for line in printed[:frames_at[1]])
    rest = " ".join(line.strip() for line in printed[frames_at[1]:])
    got = diagnose_text(f"{first}\n{rest}\n", OPTIONS).failures[0].failure.final
    assert (got.type, [f.function for f in got.frames]) == ("ValueError", ["<module>", "main", "check"])


@pytest.mark.parametrize("line", [
    'The error is raised in File "serve.py", line 3, in main when the port is taken.',
    'See File "vllm/config.py", line 12, in verify for the check.',
    'Note: the two frames File "a.py", line 1, in f and File "b.py", line 2, in g are both mine.',
])
def test_a_sentence_quoting_frames_is_no_flattened_traceback(line: str) -> None:
    assert _failures("\n".join([VLLM_HEALTHY_START[2], line]) + "\n") == []


@pytest.mark.parametrize("line", [
    '(APIServer pid=14) DEBUG 01-02 10:00:00 [utils.py:12] slow call (1.2 s) from: File "/app/a.py", line 10, in '
    'handle resp = await call() File "/app/b.py", line 22, in call return await client.post(url)',
    '(APIServer pid=14) WARNING 01-02 10:00:00 [utils.py:12] Request failed, retrying: Traceback (most recent call '
    'last): File "/app/a.py", line 10, in handle resp = await call() File "/app/b.py", line 22, in call raise '
    'ConnectionError("reset by peer") ConnectionError: reset by peer',
])
def test_a_stack_a_quiet_record_logs_flattened_is_no_failure(line: str) -> None:
    assert _failures("\n".join([line, VLLM_HEALTHY_START[2]]) + "\n") == []


@pytest.mark.parametrize(("line", "kind", "message"), [
    ('Traceback (most recent call last): File "/app/x.py", line 3, in <module> main() File "/usr/lib/triton/runtime/'
     'jit.py", line 2, in run kernel.run(grid) triton.runtime.errors.OutOfResources: out of resource: shared memory',
     "triton.runtime.errors.OutOfResources", "out of resource: shared memory"),
    ('Traceback (most recent call last): File "/app/x.py", line 3, in <module> main() File "/app/y.py", line 2, in '
     'main r.raise_for_status() httpx.ReadTimeout: timed out', "httpx.ReadTimeout", "timed out"),
    ('Traceback (most recent call last): File "/app/x.py", line 3, in <module> main() File "/app/y.py", line 2, in '
     "main f() torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised: RuntimeError: bad",
     "torch._dynamo.exc.BackendCompilerFailed", "backend='inductor' raised: RuntimeError: bad"),
])
def test_a_flattened_exception_of_any_dotted_class_is_read(line: str, kind: str, message: str) -> None:
    assert primary(line + "\n")[:2] == (kind, message)


def test_each_rank_of_flattened_tracebacks_keeps_its_rank_and_its_own_lines() -> None:
    log = "\n".join([
        '[rank1]: Traceback (most recent call last): File "/app/x.py", line 3, in <module> main() File "/app/y.py", '
        'line 9, in main raise KeyError("y") KeyError: \'y\'',
        '[rank0]: Traceback (most recent call last): File "/app/x.py", line 3, in <module> main() File "/app/y.py", '
        'line 9, in main raise ValueError("x") ValueError: bad value x',
    ]) + "\n"
    got = {(g.failure.final.type, g.failure.final.message, g.failure.meta.ranks) for g in diagnose_text(log, OPTIONS).failures}
    assert got == {("KeyError", "'y'", (("rank", 1),)), ("ValueError", "bad value x", (("rank", 0),))}


# -- 4. a message cut where the paste ends -------------------------------------------------------------------------------


def test_a_message_cut_where_the_paste_ends_is_kept_and_marked_cut() -> None:
    # vLLM's check of the KV cache's room (raise site index: "The model's max seq len ({}) is larger than the maximum
    # number of tokens that can be stored in KV cache ({}). …"), the paste stopping mid-word
    log = "\n".join([
        "$ vllm serve /models/llama --max-model-len 32768",
        "Traceback (most recent call last):",
        '  File "/opt/venv/lib/python3.12/site-packages/vllm/v1/core/kv_cache_utils.py", line 700, in check_enough_kv_cache_memory',
        "    raise ValueError(",
        "ValueError: The model's max seq len (32768) is larger than the maximum number of tok",
    ])
    failure = diagnose_text(log, OPTIONS).failures[0].failure
    assert failure.final.type == "ValueError"
    assert failure.final.message.endswith("maximum number of tok")
    assert failure.final.truncated and failure.truncated


def test_a_quote_left_open_where_the_paste_ends_is_marked_cut() -> None:
    log = "Traceback (most recent call last):\n  File \"/srv/load.py\", line 9, in load\n    w = weights[name]\nKeyError: 'model.layers.0.mlp.gate_pro"
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (final.type, final.message, final.truncated) == ("KeyError", "'model.layers.0.mlp.gate_pro", True)


@pytest.mark.parametrize("message", [
    "The model's max seq len (32768) is larger than the maximum number of tokens that can be stored in KV cache (2000). "
    "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.",
    "'model.layers.0.mlp.gate_proj.weight'",
    "max_model_len must be positive",
])
def test_a_whole_message_at_the_pastes_end_is_not_marked_cut(message: str) -> None:
    kind = "KeyError" if message.startswith("'") else "ValueError"
    log = f"Traceback (most recent call last):\n  File \"/srv/load.py\", line 9, in load\n    check()\n{kind}: {message}\n"
    assert not diagnose_text(log, OPTIONS).failures[0].failure.final.truncated


def test_a_cut_message_before_more_lines_is_not_the_pastes_end() -> None:
    log = "\n".join([
        "Traceback (most recent call last):",
        '  File "/srv/load.py", line 9, in load',
        "    check()",
        "KeyError: 'model.layers.0.mlp.gate_pro",
        *VLLM_HEALTHY_START,
    ]) + "\n"
    failures = diagnose_text(log, OPTIONS).failures
    assert failures and not failures[0].failure.final.truncated


def test_a_contraction_is_no_open_quote() -> None:
    log = "Traceback (most recent call last):\n  File \"/srv/cfg.py\", line 1, in load\n    parse(s)\nValueError: Can't parse '(a, b'\n"
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (final.type, final.truncated) == ("ValueError", False)


def test_a_bracket_the_message_quotes_is_not_left_open() -> None:
    # CPython's own SyntaxError for an unclosed bracket quotes it ("'(' was never closed"): the message is whole
    log = "  File \"/srv/cfg.py\", line 1\n    x = (1,\n        ^\nSyntaxError: '(' was never closed\n"
    final = diagnose_text(log, OPTIONS).failures[0].failure.final
    assert (final.type, final.truncated) == ("SyntaxError", False)
