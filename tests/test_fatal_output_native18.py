"""Failures split 17 left unfound or misfiled in native output (issue 28, branch native18), each read as its class.  Lines
rebuilt in our own text from the printing code's format:

- the CUDACHECK macro of the engines' custom all-reduce (vllm csrc/custom_all_reduce.cuh, copied from NCCL's examples:
  `printf("Failed: Cuda error %s:%d '%s'\\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(EXIT_FAILURE);`;
  sgl-project/sglang#552, vllm-project/vllm#9046), its CUDA error string named back as its status name;
- vLLM's API server polling for its engine cores (v1/engine/utils.py wait_for_engine_startup: a DEBUG line per 10-second
  poll with no answer) at the end of a paste: a start-up that stalled (LMCache/LMCache#1142);
- Mooncake's TCP transport failing a session (tcp_transport.cpp `Session::writeBody failed. … Error: <message> (value:
  <errno>)`): the KV transfer's (sgl-project/sglang#7118);
- a child's native dump in CPython's frame shape (`File "<unknown>", line 0, in <C function>`) right before the
  parent's EOFError on the pipe to it: a native crash, not a kill (gpustack/gpustack#5568);
- a paste that stops during the start-up: no failure, said so, not read as a healthy run."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.facts.gpu_error_names import family_of, name_of_string
from logsleuth.facts.table import parsed_toml
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.test_fatal_output_shapes import OPTIONS, primary

# -- 1. the custom all-reduce's CUDACHECK line --------------------------------------------------------------------


@pytest.mark.parametrize(("line", "name"), [
    ("Failed: Cuda error /build/vllm/csrc/custom_all_reduce.cuh:307 'peer access is not supported between these two devices'",
     "cudaErrorPeerAccessUnsupported"),
    ("Failed: Cuda error /workspace/csrc/custom_all_reduce.cuh:336 'invalid argument'", "cudaErrorInvalidValue"),
    ("(VllmWorkerProcess pid=881) Failed: Cuda error csrc/custom_all_reduce.cuh:164 'an illegal memory access was encountered'",
     "cudaErrorIllegalAddress"),
])
def test_the_custom_all_reduce_cudacheck_line_alone_is_the_failure(line: str, name: str) -> None:
    """The worker printed the check and exited: no Python exception follows in such a paste.  The string is named."""
    paste = f"Special tokens have been added in the vocabulary.\n\n{line}\n{line}\n\n"
    kind, message, category = primary(paste)
    assert kind == "CUDA error"
    assert message.endswith(f"({name})")
    # the custom all-reduce's own row (its source file names it), not a plain CUDA error or a kernel's bad access
    assert category == "nccl"
    diagnosis = diagnose_text(paste, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and "own all-reduce kernel" in diagnosis.title


def test_an_unknown_error_string_is_left_unnamed() -> None:
    kind, message, _ = primary("Failed: Cuda error /x/csrc/custom_all_reduce.cuh:12 'something the runtime never says'\n")
    assert kind == "CUDA error"
    assert message.endswith("'something the runtime never says'")


def test_the_macro_quoted_in_source_code_is_no_failure() -> None:
    """The macro's own definition, pasted from the header, prints a format, not a failure."""
    paste = ('#define CUDACHECK(cmd) do { cudaError_t e = cmd; if (e != cudaSuccess) {\\\n'
             '    printf("Failed: Cuda error %s:%d \'%s\'\\n", __FILE__, __LINE__, cudaGetErrorString(e));\\\n')
    assert not diagnose_text(paste, OPTIONS).failures


def test_every_string_names_a_status_its_enum_defines() -> None:
    """facts/gpu_error_names.toml [strings]: each name is one a family defines as an error."""
    strings = parsed_toml("gpu_error_names.toml")["strings"]
    assert strings
    for said, name in strings.items():
        assert family_of(name) is not None, name
        assert name_of_string(said) == name
    assert name_of_string("no such string") is None


# -- 2. a start-up that never finished --------------------------------------------------------------------------

WAIT = "(APIServer pid=7) DEBUG 07-24 07:{m:02d}:{s:02d} [utils.py:475] Waiting for {local} local, {remote} remote core engine proc(s) to start."


def _waits(count: int, local: int = 1, remote: int = 0) -> list[str]:
    return [WAIT.format(m=(10 * i) // 60, s=(10 * i) % 60, local=local, remote=remote) for i in range(count)]


@pytest.mark.parametrize(("local", "remote"), [(1, 0), (2, 2)])
def test_a_paste_ending_on_a_minute_of_waits_is_a_stalled_start(local: int, remote: int) -> None:
    report = diagnose_text("\n".join(_waits(7, local, remote)) + "\n", OPTIONS)
    assert report.failures
    group = report.failures[0]
    assert group.failure.final.type == "start-up hang"
    assert group.failure.final.message.startswith(f"Waiting for {local} local, {remote} remote core engine proc(s)")
    assert group.diagnosis is not None and group.diagnosis.category == "hang-timeout"
    assert "engine core" in group.diagnosis.title


def test_a_few_waits_between_the_workers_lines_are_a_normal_start() -> None:
    lines = _waits(3)
    lines.insert(1, "(EngineCore_0 pid=90) INFO 07-24 07:00:05 [gpu_model_runner.py:1801] Model loading took 14.9 GiB")
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


def test_waits_the_start_moved_on_from_are_no_failure() -> None:
    """Many waits while a large model loads, then the engine came up: the later lines say the start finished."""
    lines = [*_waits(12), "(APIServer pid=7) INFO 07-24 07:02:10 [api_server.py:1000] Starting vLLM API server 0 on http://0.0.0.0:8000",
             "(APIServer pid=7) INFO:     Application startup complete."]
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


def test_five_waits_are_not_yet_a_stall() -> None:
    assert not diagnose_text("\n".join(_waits(5)) + "\n", OPTIONS).failures


# -- 3. Mooncake's TCP transport ------------------------------------------------------------------------------------


def test_a_tcp_transport_session_error_is_the_kv_transfer() -> None:
    """The glog E record alone, then the engine's per-request record cut before its exception."""
    paste = ("E0101 10:00:00.000001 4242 tcp_transport.cpp:136] Session::writeBody failed. Error: Bad address (value: 14), "
             "total_transferred_bytes_: 0, current transferred_bytes: 0\n"
             "[2025-01-01 10:00:00] Session 10.0.0.2:15000 failed.\n"
             "[2025-01-01 10:00:00] Prefill transfer failed for request rank=0 req.rid='abc' req.bootstrap_room=1 with exception\n")
    report = diagnose_text(paste, OPTIONS)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "network"
    assert "KV-cache transfer" in diagnosis.title
    steps = " ".join(diagnosis.fix.steps) if diagnosis.fix else ""
    assert "Bad address" in steps and "host memory" in steps


def test_a_session_error_of_another_kind_gets_no_bad_address_check() -> None:
    paste = ("E0101 10:00:00.000001 4242 tcp_transport.cpp:120] Session::readHeader failed. Error: Connection reset by peer "
             "(value: 104), bytes read: 0, expected: 17\n")
    diagnosis = diagnose_text(paste, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "network"
    assert "Bad address" not in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


# -- 4. a child's native dump before the parent's pipe error ------------------------------------------------------

PARENT_EOF = '''Traceback (most recent call last):
  File "/sgl/python/sglang/srt/entrypoints/engine.py", line 925, in _wait_for_scheduler_ready
    data = scheduler_pipe_readers[i].recv()
  File "/usr/lib/python3.10/multiprocessing/connection.py", line 250, in recv
    buf = self._recv_bytes()
  File "/usr/lib/python3.10/multiprocessing/connection.py", line 383, in _recv
    raise EOFError
EOFError
'''


def test_a_native_dump_before_the_parents_eof_is_a_native_crash() -> None:
    dump = "".join(f'  File "<unknown>", line 0, in {name}\n' for name in
                   ("_PyEval_EvalFrameDefault", "_PyFunction_Vectorcall", "PyEval_EvalCode", "Py_BytesMain", "_start"))
    diagnosis = diagnose_text(dump + PARENT_EOF, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "native-crash"
    assert "crashed in native code" in diagnosis.title


def test_the_parents_eof_alone_stays_a_dead_child() -> None:
    """The look-alike: no dump above it, so nothing says the child crashed natively."""
    diagnosis = diagnose_text(PARENT_EOF, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category != "native-crash"


# -- 5. a paste that stops during the start-up ----------------------------------------------------------------------


def _text(log: str) -> str:
    return render(diagnose_text(log, OPTIONS), RenderOptions(format=OutputFormat.TEXT, width=400))


def test_a_paste_ending_after_the_settings_dump_asks_for_the_lines_after() -> None:
    log = ("INFO 01-14 13:24:33 api_server.py:712] vLLM API server version 0.6.6.post1\n"
           "INFO 01-14 13:24:33 api_server.py:713] args: Namespace(host='localhost', port=10000, model='m')\n")
    text = _text(log)
    assert "No failure found" in text
    assert "ends during the server's start-up" in text and "paste those" in text


def test_a_start_that_finished_says_nothing_of_it() -> None:
    log = ("INFO 01-14 13:24:33 api_server.py:713] args: Namespace(host='localhost', port=10000, model='m')\n"
           "INFO:     Application startup complete.\n")
    text = _text(log)
    assert "No failure found" in text
    assert "ends during the server's start-up" not in text


def test_a_log_that_goes_on_past_its_start_up_says_nothing_of_it() -> None:
    """A wrapper's lines after the start-up (its own readiness, its training steps), or an engine past its CUDA graphs:
    the run went on (xorbitsai/inference#2334's and verl-project/verl#4082's shapes, in our own words)."""
    went_on = ("[2026-03-12 11:02:38 TP0] Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=61.94 GB\n"
               "[2026-03-12 11:02:40][trainer][WARNING] Retrying the server health check\n"
               "[2026-03-12 11:02:52][trainer][INFO] Server ready at http://127.0.0.1:30000\n"
               "[2026-03-12 11:03:30][trainer][INFO] step:1 - loss:0.012\n")
    assert "ends during the server's start-up" not in _text(went_on)
    engine_up = ("INFO 09-20 10:06:52 model_runner.py:1025] Loading model weights took 14.2487 GB\n"
                 "INFO 09-20 10:07:12 model_runner.py:1456] Graph capturing finished in 17 secs.\n")
    assert "ends during the server's start-up" not in _text(engine_up)


# -- review of native18: the same rows as frames of a Python traceback -------------------------------------------------

# tvm_ffi prints a packed function's C++ frames in CPython's frame shape under `tvm_ffi.core.Function.__call__`, inside
# the Python traceback of the error it raised (flashinfer >= 0.4's JIT kernels, TileLang): frames of that traceback, no
# child's native dump.
TVM_FFI_TRACEBACK = '''[2026-02-13 00:28:06 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/sgl/python/sglang/srt/managers/scheduler.py", line 2500, in run_scheduler_process
    scheduler.event_loop_normal()
  File "/usr/local/lib/python3.12/site-packages/flashinfer/prefill.py", line 2001, in run
    self._cached_module.ragged_run(
  File "python/tvm_ffi/cython/function.pxi", line 923, in tvm_ffi.core.Function.__call__
  File "<unknown>", line 0, in __tvm_ffi_batch_prefill_ragged_run
  File "<unknown>", line 0, in BatchPrefillWithRaggedKVCacheRun(tvm::ffi::Tensor, tvm::ffi::Tensor)
RuntimeError: Check failed: (status == cudaSuccess) is false: BatchPrefillWithRaggedKVCache failed with error out of memory
'''


def test_tvm_ffi_frames_of_a_python_traceback_are_no_native_dump() -> None:
    """The child's Python error is printed above the parent's EOFError: the child raised, it did not crash natively."""
    report = diagnose_text(TVM_FFI_TRACEBACK + PARENT_EOF, OPTIONS)
    eof = next(group for group in report.failures if group.failure.final.type == "EOFError")
    assert eof.diagnosis is not None and eof.diagnosis.category != "native-crash"


def test_tvm_ffi_frames_of_a_cut_worker_traceback_leave_the_engines_start_failure_its_title() -> None:
    """vLLM's worker logs its traceback line by line beside EngineCore's; the worker's exception line is cut."""
    worker = "(Worker_TP2 pid=52) ERROR 02-13 00:28:06 [multiproc_executor.py:863] "
    core = "(EngineCore_DP0 pid=51) ERROR 02-13 00:28:06 [core.py:1006] "
    lines = [
        worker + "WorkerProc failed to start.",
        worker + "Traceback (most recent call last):",
        worker + '  File "/v/vllm/v1/executor/multiproc_executor.py", line 834, in worker_main',
        worker + "    worker = WorkerProc(*args, **kwargs)",
        worker + '  File "/v/flashinfer/fused_moe/core.py", line 1660, in trtllm_fp8_block_scale_moe_op',
        worker + "    result = moe_op.trtllm_fp8_block_scale_moe(",
        worker + '  File "python/tvm_ffi/cython/function.pxi", line 923, in tvm_ffi.core.Function.__call__',
        worker + '  File "<unknown>", line 0, in __tvm_ffi_trtllm_fp8_block_scale_moe',
        core + "EngineCore failed to start.",
        worker + '  File "<unknown>", line 0, in flashinfer::Fp8BlockScaleLauncher::run(long, bool, bool, bool)',
        core + "Traceback (most recent call last):",
        core + '  File "/v/vllm/v1/engine/core.py", line 996, in run_engine_core',
        core + "    engine_core = EngineCoreProc(*args, **kwargs)",
        core + '  File "/v/vllm/v1/executor/multiproc_executor.py", line 500, in wait_for_ready',
        core + "    raise e from None",
        core + "Exception: WorkerProc initialization failed due to by an exception in a background process. "
               "See stack trace for root cause.",
        "(APIServer pid=50) Traceback (most recent call last):",
        '(APIServer pid=50)   File "/v/vllm/v1/engine/utils.py", line 1000, in wait_for_engine_startup',
        '(APIServer pid=50)     raise RuntimeError("Engine core initialization failed. "',
        "(APIServer pid=50) RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
    ]
    report = diagnose_text("\n".join(lines) + "\n", OPTIONS)
    assert report.failures
    for group in report.failures:
        assert group.diagnosis is not None and group.diagnosis.category != "native-crash", group.failure.final.message
    assert any(group.diagnosis is not None and "engine process died during start-up" in group.diagnosis.title
               for group in report.failures)


@pytest.mark.parametrize("after", [
    # vLLM's LLM.generate progress bar and the offline example's print (entrypoints/llm.py, examples/offline_inference)
    ["Processed prompts: 100%|##########| 4/4 [00:01<00:00,  3.10it/s, est. speed input: 20.1 toks/s, output: 49.6 toks/s]",
     "Prompt: 'Hello, my name is', Generated text: ' Joel, I am a student'"],
    # the v1 engine core's line once it is up (v1/engine/core.py), the paste ending on it
    ["INFO 10-10 10:00:13 [core.py:194] init engine (profile, create kv cache, warmup model) took 3.27 seconds"],
])
def test_a_finished_offline_run_without_cuda_graphs_is_not_a_start_up_cut_short(after: list[str]) -> None:
    """With enforce_eager the KV cache is the last stage, and an offline `LLM()` prints no readiness line."""
    log = "\n".join([
        "INFO 10-10 10:00:00 llm_engine.py:237] Initializing an LLM engine (v0.6.3) with config: model='m', enforce_eager=True",
        "INFO 10-10 10:00:10 model_runner.py:1067] Loading model weights took 14.2487 GB",
        "INFO 10-10 10:00:12 gpu_executor.py:122] # GPU blocks: 27000, # CPU blocks: 4681",
        *after]) + "\n"
    text = _text(log)
    assert "No failure found" in text
    assert "ends during the server's start-up" not in text


def test_a_few_polls_after_the_settings_dump_still_end_during_the_start_up() -> None:
    """The API server's polls for its engine cores are the start-up's own lines, not a run that went on."""
    log = "(APIServer pid=7) INFO 07-24 06:59:50 [utils.py:233] non-default args: {'model': 'Qwen/Qwen3-8B'}\n" + \
        "\n".join(_waits(5)) + "\n"
    text = _text(log)
    assert "No failure found" in text
    assert "ends during the server's start-up" in text


def test_a_stalled_start_the_user_ended_with_ctrl_c_stays_a_stalled_start() -> None:
    """Ctrl-C is how a user ends a start that never comes up: its echo, the shutdown line and the KeyboardInterrupt
    traceback after the waits are the interrupt's trailer, not the start going on."""
    trailer = ["^C(APIServer pid=7) INFO 07-24 07:02:01 [launcher.py:80] Shutting down FastAPI HTTP server.",
               "Traceback (most recent call last):", '  File "/usr/bin/vllm", line 8, in <module>', "    sys.exit(main())",
               "KeyboardInterrupt"]
    report = diagnose_text("\n".join([*_waits(12), *trailer]) + "\n", OPTIONS)
    assert report.failures[0].failure.final.type == "start-up hang"


def test_a_stalled_start_is_not_said_to_be_ended_by_a_watchdog() -> None:
    """The server waits on: the category's meaning must not say a watchdog ended it."""
    text = _text("\n".join(_waits(7)) + "\n")
    assert "start-up that stalled" in text
    assert "watchdog ended" not in text


def test_waits_stamped_seconds_apart_are_no_minute() -> None:
    """Seven lines in six seconds (a paste that repeats them, several front-ends): not a minute of 10-second polls."""
    lines = [WAIT.format(m=0, s=i, local=1, remote=0) for i in range(7)]
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


def test_a_connect_and_a_start_line_of_one_poll_are_one_poll() -> None:
    """One poll logs both lines when both counts are pending (v1/engine/utils.py): four polls are 40 s, no stall."""
    lines = []
    for i in range(4):
        stamp = {"m": 0, "s": 10 * i, "local": 1, "remote": 0}
        lines += [WAIT.format(**stamp).replace("to start.", "to connect."), WAIT.format(**stamp)]
    assert not diagnose_text("\n".join(lines) + "\n", OPTIONS).failures


def test_the_current_client_session_wording_is_the_kv_transfer() -> None:
    """Current tcp_transport.cpp logs the client side as `ClientSession::writeBody failed. Attempt to write data …`."""
    paste = ("E0101 10:00:00.000001 4242 tcp_transport.cpp:330] ClientSession::writeBody failed. Attempt to write data "
             "0x7f12a0000000 using buffer 0x7f12a0000000. Error: Bad address (value: 14)\n"
             "[2025-01-01 10:00:00] Prefill transfer failed for request rank=0 req.rid='abc' req.bootstrap_room=1 with exception\n")
    diagnosis = diagnose_text(paste, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "network"
    assert "KV-cache transfer" in diagnosis.title
    assert "Bad address" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_the_server_sessions_warning_is_no_failure() -> None:
    """`ServerSession::readBody failed` is a LOG(WARNING) of a peer that went away (EOF skipped): the transfers go on."""
    paste = ("W0101 10:00:00.000001 4242 tcp_transport.cpp:210] ServerSession::readBody failed. Attempt to read data "
             "0x7f12a0000000 using buffer 0x7f12a0000000. Error: Connection reset by peer (value: 104)\n")
    assert not diagnose_text(paste, OPTIONS).failures
