"""Shapes stop 39's dev sweep found unread (issue 28, branch h-found5), on real wordings and real CPython tracebacks:

- Ray's re-raise of a remote task's error, `ray.exceptions.RayTaskError(ActorDiedError): ray::TaskRunner.run() (pid=…)`
  with the task's own frames and its cause's line after it (ray/exceptions.py RayTaskError.as_instanceof_cause; verl's
  verl-project/verl#4082, OpenRLHF/OpenRLHF#624, Simple-Efficient/RL-Factory#8);
- a wrapper's level after a bracketed time (`[2025-06-01 10:00:00] ERROR `, `[…][verl][ERROR] `) before the engine's
  exception line, with no traceback;
- a wrapper's logger prefix before every line of a traceback whose header the paste cut (vllm-project/vllm PR#43410);
- an error stated in a wrapper's ERROR record above a traceback cut before its exception line (xorbitsai/inference#2486);
- the engines' error body's tail (`…", 'type': 'BadRequestError', 'param': None, 'code': 400}`) after the engine's
  message, its head cut (elotl/GenAI-infra-stack#62)."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# A mirror of Ray's re-raise: the class it builds derives from RayTaskError and the cause's class and is named after
# both; its str() is the task's name and place, the task's traceback and the cause's line (ray/exceptions.py).
RAY_REMOTE = '''
class RayTaskError(Exception):
    def __init__(self, text, cause):
        super().__init__(text)
        self.text, self.cause = text, cause

    def __str__(self):
        return self.text

    def as_instanceof_cause(self):
        cls = type(f"RayTaskError({type(self.cause).__name__})", (RayTaskError, type(self.cause)), {})
        cls.__module__ = "ray.exceptions"
        return cls(self.text, self.cause)


REMOTE = """ray::RayWorkerWrapper.execute_method() (pid=22065, ip=10.39.1.20, actor_id=35de9637a3079d43, repr=<Wrapper>)
  File "/opt/conda/lib/python3.10/site-packages/vllm/worker/worker_base.py", line 566, in execute_method
    raise e
  File "/opt/conda/lib/python3.10/site-packages/vllm/worker/worker.py", line 128, in init_device
    raise ValueError(f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp}).")
ValueError: Total number of attention heads (14) must be divisible by tensor parallel size (4)."""


def get_objects(value):
    raise value.as_instanceof_cause()


def get(value):
    return get_objects(value)


get(RayTaskError(REMOTE, ValueError()))
'''
HEADS = "Total number of attention heads (14) must be divisible by tensor parallel size (4)."


def test_a_ray_task_error_and_the_remote_frames_after_it_are_one_exception_its_cause_last() -> None:
    log = real_traceback(RAY_REMOTE)
    assert "ray.exceptions.RayTaskError(ValueError): ray::RayWorkerWrapper.execute_method()" in log
    report = diagnose_text(log, OPTIONS)
    assert len(report.failures) == 1
    block = report.failures[0].failure.exceptions[-1]
    assert (block.type, block.message) == ("ValueError", HEADS)
    functions = [frame.function for frame in block.frames]
    assert functions[-4:] == ["get", "get_objects", "execute_method", "init_device"]


def test_the_re_raise_cut_before_its_cause_is_named_by_its_own_line() -> None:
    log = real_traceback(RAY_REMOTE)
    cut = log[: log.index("ValueError: Total")]  # the paste stops inside the task's frames
    assert primary(cut)[0] == "ray.exceptions.RayTaskError(ValueError)"


def test_a_ray_task_error_line_under_a_wrapper_s_timestamp_is_read() -> None:
    # verl's launcher stamps each line it re-prints (verl-project/verl#4082); the paste ends on the re-raise
    log = real_traceback(RAY_REMOTE)
    local = log[: log.index("\n  File", log.index("RayTaskError(ValueError)"))]
    stamped = "".join(f"[2026-03-12 11:17:34] {line}\n" for line in local.splitlines())
    assert primary(stamped)[0] == "ray.exceptions.RayTaskError(ValueError)"


@pytest.mark.parametrize("line", [
    "self.initialize(min_per_gpu_memory)",  # a source line whose indentation a paste lost
    "scheduler = Scheduler(server_args)",
])
def test_a_call_with_a_name_in_parentheses_is_no_exception_line(line: str) -> None:
    from logsleuth.tracebacks.grammar import EXCEPTION_LINE, STRICT_EXCEPTION_LINE

    assert STRICT_EXCEPTION_LINE.match(line) is None
    assert EXCEPTION_LINE.match(line) is None or "(" not in EXCEPTION_LINE.match(line)["type"]


# -- a wrapper's level after a bracketed time, the engine's exception line after it ---------------------------------

OOM = real_traceback("""
class OutOfMemoryError(RuntimeError):
    pass
OutOfMemoryError.__module__ = "torch"
raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB of which 1.06 GiB is free.")
""").strip().splitlines()[-1]


@pytest.mark.parametrize("prefix", [
    "[2025-06-01 10:00:00] ERROR ",
    "[2025-06-01 10:00:00] [ERROR] ",
    "[2025-06-01 10:00:00,123][vllm][ERROR] ",
    "(WorkerDict pid=7) [2025-06-01 10:00:00] ERROR ",
])
def test_an_exception_line_in_a_wrapper_s_error_record_is_the_failure(prefix: str) -> None:
    assert OOM.startswith("torch.OutOfMemoryError: CUDA out of memory.")
    assert primary(prefix + OOM + "\n")[:2] == ("torch.OutOfMemoryError", OOM.partition(": ")[2])


@pytest.mark.parametrize("prefix", ["[2025-06-01 10:00:00] INFO ", "[2025-06-01 10:00:00][verl][WARNING] "])
def test_the_same_line_in_a_wrapper_s_info_or_warning_record_is_no_failure(prefix: str) -> None:
    assert diagnose_text(prefix + "Retrying after " + OOM + "\n", OPTIONS).failures == ()


# -- a wrapper's logger before every line of a traceback whose header the paste cut ----------------------------------

STARTUP = real_traceback("""
def wait_for_engine_startup(finished):
    raise RuntimeError("Engine core initialization failed. See root cause above. " f"Failed core proc(s): {finished}")


def launch_core_engines():
    wait_for_engine_startup({})


launch_core_engines()
""")
CONTAINER = "2026-05-29 09:14:45,594 - INFO - [container] (APIServer pid=557) "


def _headerless(traceback: str, prefix: str) -> str:
    lines = [line for line in traceback.splitlines() if not line.startswith("Traceback")]
    return "".join(prefix + line + "\n" for line in lines)


def test_frames_under_a_logger_prefix_without_their_header_are_read_to_the_exception() -> None:
    assert primary(_headerless(STARTUP, CONTAINER)) == (
        "RuntimeError", "Engine core initialization failed. See root cause above. Failed core proc(s): {}", "process-killed")
    block = diagnose_text(_headerless(STARTUP, CONTAINER), OPTIONS).failures[0].failure.exceptions[-1]
    assert [frame.function for frame in block.frames] == ["<module>", "launch_core_engines", "wait_for_engine_startup"]


def test_the_same_frames_cut_before_the_exception_are_still_a_failure() -> None:
    cut = _headerless(STARTUP, CONTAINER).splitlines()[:-1]
    failures = diagnose_text("\n".join(cut) + "\n", OPTIONS).failures
    assert len(failures) == 1 and failures[0].failure.truncated


def test_a_healthy_start_under_the_same_prefix_is_no_failure() -> None:
    healthy = ("INFO 05-29 09:13:02 [api_server.py:1805] vLLM API server version 0.11.0\n"
               "INFO 05-29 09:13:53 [api_server.py:1887] Starting vLLM API server 0 on http://0.0.0.0:8000\n"
               'INFO:     10.0.3.9:51220 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n')
    assert diagnose_text("".join(CONTAINER + line + "\n" for line in healthy.splitlines()), OPTIONS).failures == ()


# -- an error stated in a wrapper's ERROR record above a traceback cut before its exception line -----------------------

CLIENTS = "Timed out after 601 seconds waiting for clients. 1/2 clients joined."
LAUNCH = real_traceback(f"""
def _process_result_message(message):
    raise RuntimeError({CLIENTS!r})


def launch_model():
    _process_result_message(None)


launch_model()
""")
XINFERENCE = "2024-10-25 12:21:14,974 xinference.api.restful_api 37502 ERROR    [address=172.22.149.188:45585, pid=43525] "


def _cut(traceback: str) -> str:
    return "".join(line + "\n" for line in traceback.splitlines() if not line.startswith("RuntimeError"))


def test_an_error_record_s_own_words_name_the_traceback_it_cut() -> None:
    assert primary(XINFERENCE + CLIENTS + "\n" + _cut(LAUNCH))[:2] == ("ERROR", CLIENTS)


@pytest.mark.parametrize("record", [
    XINFERENCE,  # the wrapper's tag and nothing else
    "2024-10-25 12:21:14,974 xinference.api.restful_api 37502 INFO     Launching the model on two workers, 1 joined",
])
def test_a_record_with_no_words_of_its_own_or_below_error_names_nothing(record: str) -> None:
    # the record names nothing: the traceback's own raising statement gives its type, and the message it spells out as
    # a plain literal (tracebacks/raising_statement.py, h-found6, h-found9)
    assert primary(record + "\n" + _cut(LAUNCH))[:2] == ("RuntimeError", CLIENTS)


# -- the engines' error body's tail after the engine's message (the client's print, its head cut) --------------------

CONTEXT = ("This model's maximum context length is 4096 tokens. However, you requested 6379 tokens (6029 in the messages, "
           "350 in the completion). Please reduce the length of the messages or completion.")


@pytest.mark.parametrize("tail", [
    "\", 'type': 'BadRequestError', 'param': None, 'code': 400}",
    '","type":"BadRequestError","param":null,"code":400}',
])
def test_an_engine_message_before_its_error_body_s_tail_is_the_failure(tail: str) -> None:
    assert primary("```" + CONTEXT + tail + "```\n") == ("ValueError", CONTEXT, "context-length")


def test_a_tail_after_words_no_engine_raises_is_no_failure() -> None:
    log = "the upstream said: please slow down and try again later\", 'type': 'BadRequestError', 'param': None, 'code': 400}\n"
    assert diagnose_text(log, OPTIONS).failures == ()


@pytest.mark.parametrize("prefix", [
    "Bad Request: ",  # the status's reason phrase alone (anomalyco/opencode#25230's client print)
    "Internal Server Error - ",
    "status=400 error=",  # a structured print's field
])
def test_an_engine_message_after_a_reason_phrase_or_an_error_field_is_the_failure(prefix: str) -> None:
    assert primary(prefix + CONTEXT + "\n") == ("ValueError", CONTEXT, "context-length")


@pytest.mark.parametrize("log", [
    "Bad Request: the model is busy, please retry the request in a moment\n",
    "Not Found: /v1/chat/completions is not served here by this proxy\n",
])
def test_a_reason_phrase_before_words_no_engine_raises_is_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


# -- torch's rank prefix after Ray's actor prefix; a CI log viewer's margin (ingest/normalize.py) ----------------------

WATCHDOG = ("[E416 13:21:26.967375581 ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: "
            "WorkNCCL(SeqNum=876319, OpType=BROADCAST, NumelIn=8, NumelOut=8, Timeout(ms)=600000) ran for 600089 milliseconds "
            "before timing out.")


@pytest.mark.parametrize("prefix", [
    "(ActorModelRayActor pid=744, ip=10.1.59.27) [rank9]:",  # OpenRLHF/OpenRLHF#970
    "(WorkerDict pid=616) [rank1]:",
    "[36m(WorkerDict pid=616)[0m [rank1]:",  # the colour codes' visible remains
])
def test_torch_s_rank_prefix_after_ray_s_actor_prefix_is_taken_off(prefix: str) -> None:
    assert primary(prefix + WATCHDOG + "\n") == ("c10::DistBackendError", WATCHDOG.partition("] ")[2], "nccl")


def test_a_ci_viewer_s_margin_before_records_is_taken_off_with_the_lines_under_it() -> None:
    # vllm-project/vllm#6042, #14574: Buildkite's web log copied with `  | ` before every line
    abort = ("terminate called after throwing an instance of 'c10::DistBackendError'\n"
             "  what():  [PG 2 Rank 0] Process group watchdog thread terminated with exception: " + WATCHDOG.partition("] ")[2] + "\n")
    log = "".join(f"  | {line}\n" for line in ("INFO 07-01 13:44:43 model_runner.py:160] Loading model weights took 0.2389 GB",
                                                 "[rank0]:" + WATCHDOG, *abort.splitlines()))
    assert primary(log)[:2] == ("c10::DistBackendError", "[PG 2 Rank 0] Process group watchdog thread terminated with exception: "
                                + " ".join(WATCHDOG.partition("] ")[2].split()))


def test_an_exception_group_s_own_margin_is_still_read_as_the_group() -> None:
    log = real_traceback("""
def check():
    raise ExceptionGroup("two ranks failed", [ValueError("rank 0: bad shape"), KeyError("rank 1")])


check()
""")
    assert "  | ExceptionGroup: two ranks failed (2 sub-exceptions)" in log
    block = diagnose_text(log, OPTIONS).failures[0].failure.exceptions[-1]
    assert block.type == "ExceptionGroup" and len(block.members) == 2


# -- torch's c10 records before 2.4 (no date or time), and beside a kill notice ---------------------------------------

OLD_WATCHDOG = ("[Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2, OpType=ALLREDUCE, NumelIn=134217728, "
                "NumelOut=134217728, Timeout(ms)=600000) ran for 600059 milliseconds before timing out.")


def test_a_c10_record_without_date_or_time_is_a_logged_error() -> None:
    # vllm-project/vllm#6042: torch 2.3's `[E ProcessGroupNCCL.cpp:563] …` (c10/util/Logging.cpp of those releases)
    assert primary(f"[rank0]:[E ProcessGroupNCCL.cpp:563] {OLD_WATCHDOG}\n") == ("c10::DistBackendError", OLD_WATCHDOG, "nccl")


@pytest.mark.parametrize("log", ["[E main.py:12] started the worker\n", "[E] something\n", "see [E ProcessGroupNCCL.cpp] there\n"])
def test_other_bracketed_e_lines_are_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


def test_the_watchdog_s_records_outrank_the_parent_s_kill_notice_and_its_own_last_words() -> None:
    # the parent's `Worker … died, exit code: -6` says a worker died, torch's records of that worker say why; the
    # watchdog's "To avoid data inconsistency, we are taking the entire process down." is its own sequence's end
    log = ("ERROR 07-01 13:54:43 multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid 1159 died, exit code: -6\n"
           f"[rank0]:[E ProcessGroupNCCL.cpp:563] {OLD_WATCHDOG}\n"
           "[rank0]:[E ProcessGroupNCCL.cpp:583] [Rank 0] To avoid data inconsistency, we are taking the entire process down.\n")
    assert primary(log) == ("c10::DistBackendError", OLD_WATCHDOG, "nccl")


# -- the Google Cloud SDK's error for a failed command (tracebacks/typeless_errors.py) --------------------------------

GCLOUD = ("The user-provided container failed to start and listen on the port defined provided by the PORT=8000 environment "
          "variable within the allocated timeout. This can happen when the container port is misconfigured or if the timeout "
          "is too short.")


def test_gcloud_s_error_line_is_the_failure_of_a_paste_with_no_other() -> None:
    # googlecodelabs/feedback#1550, #1814: a Cloud Run deployment of the vLLM image
    log = f"Creating Revision...failed\nDeployment failed\nERROR: (gcloud.beta.run.deploy) {GCLOUD}\n"
    assert primary(log)[:2] == ("gcloud.beta.run.deploy", GCLOUD)


def test_the_engine_s_own_error_in_the_same_paste_outranks_gcloud_s() -> None:
    log = f"ERROR: (gcloud.run.deploy) {GCLOUD}\n" + real_traceback("raise ValueError('the model path does not exist')")
    assert primary(log)[:2] == ("ValueError", "the model path does not exist")


@pytest.mark.parametrize("log", ["Deployment failed\n", "ERROR: (not gcloud) something else happened here\n"])
def test_gcloud_s_summary_lines_alone_are_no_failure(log: str) -> None:
    assert diagnose_text(log, OPTIONS).failures == ()


def test_an_unrelated_error_record_does_not_outrank_the_kill_notice() -> None:
    log = ("E0601 10:00:00.000000 1234 loader.cc:12] optional kernel library not found, using the fallback path\n"
           "Killed\n")
    assert primary(log)[0] == "Killed"
