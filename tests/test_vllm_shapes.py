"""vLLM's processes dying without a Python exception of their own (issue 28, branch h-vshape): the banner of torch's
fatal-signal handler with its native backtrace in CPython's frame format (vllm-project/vllm#27868, NVIDIA/nccl#2106),
and the parent's record that a worker or the engine core died (`Worker proc VllmWorker-2 died unexpectedly, shutting
down executor.`, intel/llm-scaler#154; `Engine core proc EngineCore_DP0 died unexpectedly, shutting down
client.`, vllm-project/vllm#27549).  The lines are composed from those programs' formats (addresses and pids ours);
the Python tracebacks around them are real CPython output (tests/helpers.real_traceback) in vLLM's paths."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.ingest.normalize import normalize_text
from logsleuth.models import Report
from tests.helpers import real_traceback

OPTIONS = DiagnoseOptions(include_user_patterns=False)

DUMP = (
    "!!!!!!! Segfault encountered !!!!!!!\n"
    '  File "./signal/../sysdeps/unix/sysv/linux/x86_64/libc_sigaction.c", line 0, in 0x00007f4e1204532f\n'
    '  File "<unknown>", line 0, in cuMemCreate\n'
    '  File "misc/cudawrap.cc", line 92, in ncclCuMemHostEnable()\n'
    '  File "misc/cudawrap.cc", line 280, in initOnceFunc\n'
    '  File "/dvs/p4/build/sw/gpgpu/nccl/gitfusion/stable/src/init.cc", line 1852, in ncclCommInitRank\n'
    '  File "<unknown>", line 0, in ffi_call\n'
    "\n"
)
ENGINE_RECORD = "(EngineCore_DP0 pid=3791) INFO 10-31 07:39:11 [pynccl.py:70] vLLM is using nccl==2.27.3\n"
CASCADE_CODE = """
    def wait_for_engine_startup():
        raise RuntimeError("Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': -11}")
    wait_for_engine_startup()
"""
WORKER_CODE = """
    class OutOfMemoryError(RuntimeError):
        pass
    OutOfMemoryError.__module__ = "torch"
    def execute_model():
        raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB.")
    execute_model()
"""


def under(prefix: str, text: str) -> str:
    """Every line of `text` under a vLLM process prefix and record header (vllm/logger.py's format)."""
    return "".join(f"{prefix}{line}\n" for line in text.splitlines())


@pytest.fixture(scope="module")
def api_cascade() -> str:
    """`vllm serve` after its engine core died: the API server's cascade, as CPython prints it."""
    return under("(APIServer pid=3700) ", real_traceback(CASCADE_CODE, "vllm/v1/engine/utils.py"))


@pytest.fixture(scope="module")
def worker_traceback() -> str:
    """A worker's own failure, logged by WorkerProc (0.11) before its parent notices it died."""
    record = "(VllmWorker rank=0 pid=812) ERROR 06-10 03:43:33 [multiproc_executor.py:597] "
    return under(record, "WorkerProc hit an exception.\n" + real_traceback(WORKER_CODE, "vllm/v1/worker/gpu_model_runner.py"))


def report(log: str) -> Report:
    return diagnose_text(log, OPTIONS)


def first(log: str) -> tuple[str, str, str]:
    failures = report(log).failures
    assert failures, log
    block = failures[0].failure.exceptions[-1]
    return failures[0].failure.kind, block.type, block.message


@pytest.mark.parametrize(
    "log",
    [
        DUMP,
        ENGINE_RECORD + DUMP,
        "".join(f"llm-server  | {line}\n" for line in (ENGINE_RECORD + DUMP).splitlines()),  # docker compose
        "".join(f"> {line}\n" if line else ">\n" for line in DUMP.splitlines()),  # quoted in an issue
    ],
)
def test_the_segfault_banner_is_one_native_crash_not_a_python_traceback(log: str) -> None:
    failures = report(log).failures
    assert [(group.failure.kind, group.failure.exceptions[-1].type) for group in failures] == [("abort", "SIGSEGV")]
    assert failures[0].failure.exceptions[-1].message == "Segfault encountered"


def test_the_dump_names_where_it_crashed_without_the_handlers_own_frame() -> None:
    context = report(ENGINE_RECORD + DUMP).failures[0].failure.context
    assert any("cuMemCreate" in line for line in context)
    assert any("ncclCuMemHostEnable" in line for line in context)
    assert not any("libc_sigaction" in line for line in context)


def test_the_api_servers_cascade_after_the_dump_is_not_the_failure(api_cascade: str) -> None:
    assert first(ENGINE_RECORD + DUMP + api_cascade)[:2] == ("abort", "SIGSEGV")


def test_a_python_traceback_is_still_read_as_one(api_cascade: str) -> None:
    assert first(api_cascade)[:2] == ("traceback", "RuntimeError")


@pytest.mark.parametrize(
    "line",
    [
        "ERROR 07-09 10:14:31 [multiproc_executor.py:140] Worker proc VllmWorker-2 died unexpectedly, shutting down executor.",
        "(EngineCore_DP0 pid=483) ERROR 03-02 11:00:00 [multiproc_executor.py:295] Worker proc VllmWorker-0 died unexpectedly "
        "(exit code: -9), shutting down executor.",
        "(APIServer pid=1) ERROR 10-31 07:39:20 [core_client.py:564] Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.",
        "CRITICAL 03-15 17:24:18 [multiproc_executor.py:48] MulitprocExecutor got fatal signal from worker processes, shutting down. "
        "See stack trace above for root cause issue.",
    ],
)
def test_a_child_that_died_unexpectedly_alone_is_the_failure(line: str) -> None:
    log = "INFO 07-09 10:12:01 [api_server.py:1395] vLLM API server version 0.9.1\n" + line + "\n"
    got = report(log)
    assert got.failures[0].failure.kind == "killed"
    diagnosis = got.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "vllm-engine-core-died"  # vLLM's words, not SGLang's flags


def test_the_workers_own_error_comes_before_its_parents_notice(worker_traceback: str) -> None:
    log = worker_traceback + (
        "(EngineCore_DP0 pid=700) ERROR 06-10 03:43:34 [multiproc_executor.py:149] Worker proc VllmWorker-0 died "
        "unexpectedly, shutting down executor.\n"
    )
    assert first(log)[:2] == ("traceback", "torch.OutOfMemoryError")


def test_an_actor_that_died_is_still_rays_exception() -> None:
    log = "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
    assert first(log)[1] == "ray.exceptions.ActorDiedError"


def test_a_log_that_only_mentions_death_in_prose_has_no_failure() -> None:
    log = "INFO 07-09 10:12:01 [api_server.py:1395] vLLM API server version 0.9.1\nthe worker proc died unexpectedly once last week\n"
    assert not report(log).failures


def test_a_workers_traceback_after_its_parents_fatal_signal_notice_is_the_failure(worker_traceback: str) -> None:
    """vllm-project/vllm#14452: 0.8's executor logs the fatal signal before the workers' tracebacks are flushed."""
    log = ("CRITICAL 03-15 17:24:18 [multiproc_executor.py:48] MulitprocExecutor got fatal signal from worker processes, "
           "shutting down. See stack trace above for root cause issue.\n" + worker_traceback)
    assert first(log)[:2] == ("traceback", "torch.OutOfMemoryError")


@pytest.mark.parametrize(
    ("record", "pattern"),
    [
        ("(EngineCore_DP0 pid=270) ERROR 09-20 08:01:20 [core.py:718] EngineCore failed to start.", "vllm-engine-core-init-failed"),
        ("(VllmWorker rank=2 pid=808) ERROR 06-10 03:43:33 [multiproc_executor.py:487] WorkerProc failed to start.", "vllm-engine-core-init-failed"),
        ("ERROR 04-28 02:37:03 [core.py:398] EngineCore encountered a fatal error.", "vllm-engine-core-died"),
        ("(VllmWorker TP0 pid=812) ERROR 02-13 18:05:01 [multiproc_executor.py:852] WorkerProc hit an exception.", "vllm-engine-core-died"),
    ],
)
def test_a_paste_cut_after_the_record_that_announces_a_fatal_error_is_a_failure(record: str, pattern: str) -> None:
    """vllm-project/vllm#17276, #23176, #15469: the record vLLM logs just before the traceback of the process's own error."""
    log = "INFO 09-20 08:01:02 [api_server.py:1839] vLLM API server version 0.10.2\n" + record + "\n"
    got = report(log)
    assert [group.failure.exceptions[-1].type for group in got.failures] == ["Engine process failed"]
    diagnosis = got.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == pattern


def test_the_announcing_record_yields_to_the_traceback_it_announces(worker_traceback: str) -> None:
    failures = report(worker_traceback).failures
    assert [group.failure.exceptions[-1].type for group in failures] == ["torch.OutOfMemoryError"]


def test_the_announcing_words_inside_a_sentence_are_no_failure() -> None:
    assert not report("I read that EngineCore failed to start. on other machines, but mine is fine\n").failures


@pytest.mark.parametrize(
    ("line", "ranks"),
    [
        ("(VllmWorker TP0 pid=406) ERROR 08-16 01:07:56 [multiproc_executor.py:596] WorkerProc hit an exception.", (("TP", 0),)),
        ("(VllmWorker TP6_EP6 pid=21360) ERROR 08-22 09:46:11 [multiproc_executor.py:596] WorkerProc hit an exception.",
         (("TP", 6), ("EP", 6))),
    ],
)
def test_vllm_0_10s_worker_prefix_names_its_ranks_as_tags(line: str, ranks: tuple[tuple[str, int], ...]) -> None:
    """vLLM 0.10 names its multiproc workers `VllmWorker TP0`, `VllmWorker TP6_EP6` (v1/executor/multiproc_executor.py)."""
    parsed = normalize_text(line + "\n")[0]
    assert (parsed.text, parsed.meta.process, parsed.meta.ranks, parsed.meta.header) == (
        "WorkerProc hit an exception.", "VllmWorker", ranks, "vllm")


def test_kubectl_logs_prefix_is_a_transport_layer(worker_traceback: str) -> None:
    """`kubectl logs -l app=vllm --prefix`: `[pod/vllm-0/vllm] ` before every line of each pod's container."""
    log = "".join(f"[pod/vllm-0/vllm] {line}\n" for line in worker_traceback.splitlines())
    got = report(log)
    assert [group.failure.exceptions[-1].type for group in got.failures] == ["torch.OutOfMemoryError"]
    assert got.launch.engine == "vllm"
    first_line = normalize_text(log)[0]
    assert (first_line.meta.host, first_line.meta.process) == ("vllm-0", "VllmWorker")


def test_two_pods_interleaved_under_kubectls_prefix_are_two_streams(worker_traceback: str) -> None:
    lines = worker_traceback.splitlines()
    log = "".join(f"[pod/vllm-{pod}/vllm] {line}\n" for line in lines for pod in (0, 1))
    groups = report(log).failures
    assert [group.failure.exceptions[-1].type for group in groups] == ["torch.OutOfMemoryError"]
    assert groups[0].count == 2


def test_rays_unnamed_task_prefix_is_a_process_prefix() -> None:
    """Ray prints `(pid=53316) ` before the output of a task or actor it has no name for (vllm-project/vllm#5785)."""
    parsed = normalize_text("(pid=53316, ip=10.0.0.5) INFO 06-24 02:48:48 llm_engine.py:100] Initializing an LLM engine\n")[0]
    assert (parsed.text, parsed.meta.pid, parsed.meta.host, parsed.meta.header) == (
        "Initializing an LLM engine", 53316, "10.0.0.5", "vllm")


CANCELLED_CODE = """
    def acquire_read():
        raise RuntimeError("cancelled")
    acquire_read()
"""


def test_a_message_queue_read_cancelled_at_shutdown_yields_even_to_the_api_servers_cascade(api_cascade: str) -> None:
    """The engine core's `RuntimeError: cancelled` (shm_broadcast.py acquire_read raises it once shutdown began) while it is
    torn down, then the API server's cascade: the cascade says more (a process died during start-up)."""
    cancelled = real_traceback(CANCELLED_CODE, "vllm/distributed/device_communicators/shm_broadcast.py")
    log = under("(EngineCore pid=4769) ", cancelled) + api_cascade
    assert first(log)[2].startswith("Engine core initialization failed.")


def test_a_cancelled_read_alone_is_still_the_failure() -> None:
    cancelled = real_traceback(CANCELLED_CODE, "vllm/distributed/device_communicators/shm_broadcast.py")
    assert first(cancelled)[1:] == ("RuntimeError", "cancelled")
