"""Fatal lines of the programs around an engine, with no Python exception type (issue 28, stop 38's blind split;
tracebacks/typeless_errors.py): pydantic's `Value error, …` line without its ValidationError header, the openai
client's `Error code: 400 - {…}` without its class, a client's `HTTP 400: {"detail": …}`, the NVIDIA container
toolkit refusing a container, the dynamic loader's `undefined symbol` quoted alone.  And the look-alikes that stay
no failure: access-log lines with a status, a healthy container start, torch's shutdown warning after a clean exit."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import diagnose_text
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS, primary

# -- pydantic: a validator's ValueError as ValidationError's line ---------------------------------------------------------
# A mirror of pydantic-core's display (its ValidationError's str: "{n} validation error for {title}", then per error
# "  {msg} [type={type}, input_value={input}, input_type={input_type}]" and the "For further information" line; the
# msg of a validator's ValueError is "Value error, {error}"), raised by real CPython from a mirror of vLLM's
# config check (vllm/config/model.py raises ValueError in ModelConfig's __post_init__, which pydantic wraps).
PYDANTIC_CORE = '''
class ValidationError(ValueError):
    def __init__(self, title, error, input_value):
        self.title, self.error, self.input_value = title, error, input_value

    def __str__(self):
        return (f"1 validation error for {self.title}\\n"
                f"  Value error, {self.error} [type=value_error, input_value={self.input_value}, input_type=ArgsKwargs]\\n"
                f"    For further information visit https://errors.pydantic.dev/2.12/v/value_error")


def validate(title, check):
    try:
        check()
    except ValueError as error:
        raise ValidationError(title, error, "ArgsKwargs((), {'model': ...rocessor_plugin': None})") from None
'''
UNKNOWN_TYPE = ("The checkpoint you are trying to load has model type `qwen3_next` but Transformers does not recognize "
                "this architecture. This could be because of an issue with the checkpoint, or because your version of "
                "Transformers is out of date.")


def _validation_error(tmp_path: Path) -> str:
    package = tmp_path / "pydantic_core"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "_pydantic_core.py").write_text(PYDANTIC_CORE)
    check = f"def check():\n    raise ValueError({UNKNOWN_TYPE!r})\n"
    program = f"from pydantic_core._pydantic_core import validate\n{check}validate('ModelConfig', check)\n"
    ran = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, cwd=tmp_path,
                         env={"PYTHONPATH": str(tmp_path), "PATH": "/usr/bin:/bin"}, check=False)
    assert "Value error, " in ran.stderr, ran.stderr
    return ran.stderr


def test_pydantics_value_error_line_alone_is_the_validation_error_it_belongs_to(tmp_path: Path) -> None:
    # the exception raised is pydantic's ValidationError: the inner line is its message (the retired blind split 13)
    printed = _validation_error(tmp_path)
    value_line = next(line for line in printed.splitlines() if "Value error, " in line)
    assert primary(f"the server does not start:\n{value_line}\n") == (
        "pydantic_core._pydantic_core.ValidationError", f"Value error, {UNKNOWN_TYPE}", "dependency-version")


def test_the_whole_validation_error_stays_one_failure(tmp_path: Path) -> None:
    report = diagnose_text(_validation_error(tmp_path), OPTIONS)
    assert len(report.failures) == 1
    block = report.failures[0].failure.exceptions[-1]
    assert block.type == "pydantic_core._pydantic_core.ValidationError"
    assert UNKNOWN_TYPE in " ".join(block.message.split())


@pytest.mark.parametrize("level", ["INFO", "DEBUG", "WARNING"])
def test_pydantics_value_error_quoted_in_a_quiet_record_is_no_failure(tmp_path: Path, level: str) -> None:
    """A record at INFO, DEBUG or WARNING that quotes pydantic's `Value error, …` (a wrapper logging a refused request
    it retries, a config it falls back from) was survived: the process went on.  Only a line of its own, or an ERROR
    record's, is the failure (tracebacks/scanner.py, as a runtime's status in such a record is)."""
    value_line = next(line for line in _validation_error(tmp_path).splitlines() if "Value error, " in line).strip()
    quiet = (f"INFO 08-12 10:01:02 [api_server.py:1000] vLLM API server version 0.10.1\n"
             f"{level} 08-12 10:01:05 [launcher.py:40] config rejected, falling back to defaults: {value_line}\n"
             f"INFO 08-12 10:01:06 [launcher.py:29] Route: /v1/completions, Methods: POST\n")
    assert not diagnose_text(quiet, OPTIONS).failures
    failed = quiet.replace(f"{level} 08-12 10:01:05", "ERROR 08-12 10:01:05")
    assert [group.failure.final.type for group in diagnose_text(failed, OPTIONS).failures] == [
        "pydantic_core._pydantic_core.ValidationError"]


# The `Value error, …` line pydantic prints indented on its own, after whatever quiet record came last: it has no header,
# so it takes over that record's level (ingest/normalize.py), but it is the failure.  The paste styles around it:
# bare, a docker compose service, mpirun's rank tag, pdsh's host, and Python logging's `- ERROR - name:` whose level
# the normalizer does not read (the review of search18; the wild fixture dev-pydantic-value-line, vLLM thread 50708).
@pytest.mark.parametrize("prefix", ["", "vllm-1  | ", "[1,0]<stderr>:", "node1: ",
                                    "2025-08-12 10:01:05,123 - ERROR - config:"])
@pytest.mark.parametrize("level", ["INFO", "WARNING"])
def test_pydantics_value_error_line_after_a_quiet_record_stays_the_failure(
        tmp_path: Path, level: str, prefix: str) -> None:
    value_line = next(line for line in _validation_error(tmp_path).splitlines() if "Value error, " in line)
    wrapped = "" if prefix.startswith(("2025", "node1")) else prefix
    log = (f"{wrapped}INFO 08-12 10:01:02 [api_server.py:1000] vLLM API server version 0.10.1\n"
           f"{wrapped}{level} 08-12 10:01:03 [utils.py:326] non-default args: {{'model': '/models/foo'}}\n"
           f"{prefix}{value_line}\n")
    assert [group.failure.final.type for group in diagnose_text(log, OPTIONS).failures] == [
        "pydantic_core._pydantic_core.ValidationError"]


# -- an HTTP error answer printed by a client ---------------------------------------------------------------------------------
# openai-python: f"Error code: {status} - {body}" (openai/_client.py _make_status_error), the body the server's error
# (vLLM's and SGLang's ErrorResponse: object, message, type, param, code).
CONTEXT = ("This model's maximum context length is 4096 tokens. However, you requested 5000 tokens (1000 in the messages, "
           "4000 in the completion). Please reduce the length of the messages or completion.")
BODY = f"{{'object': 'error', 'message': \"{CONTEXT}\", 'type': 'BadRequestError', 'param': None, 'code': 400}}"


@pytest.mark.parametrize(("line", "type_"), [
    (f"Error code: 400 - {BODY}", "openai.BadRequestError"),
    (f"the request fails with Error code: 400 - {BODY}", "openai.BadRequestError"),
    ("Error code: 503 - {'object': 'error', 'message': 'The engine is not ready', 'code': 503}", "openai.InternalServerError"),
    ("Error code: 429", "openai.RateLimitError"),
])
def test_the_openai_clients_status_error_without_its_class_is_a_failure(line: str, type_: str) -> None:
    found = primary(f"{line}\n")
    assert found[0] == type_
    assert found[1].startswith("Error code: ")


def test_a_status_and_the_servers_detail_is_a_failure() -> None:
    detail = "The model `Qwen/Qwen2-7B` does not exist."
    assert primary(f'HTTP 404: {{"detail": "{detail}"}}\n')[:2] == ("HTTPError", detail)


def test_the_classed_line_still_wins_over_nothing_else() -> None:
    assert primary(f"openai.BadRequestError: Error code: 400 - {BODY}\n")[0] == "openai.BadRequestError"


@pytest.mark.parametrize("log", [
    'INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n'
    'INFO:     127.0.0.1:51234 - "GET /v1/models HTTP/1.1" 404 Not Found\n'
    'INFO:     127.0.0.1:51236 - "GET /health HTTP/1.1" 200 OK\n',
    '{"detail": "Not Found"}\n',  # a body with no status printed before it
    "the error code: 400 was fixed by shortening the prompt\n",
])
def test_access_log_lines_and_prose_are_no_failure(log: str) -> None:
    assert not diagnose_text(log, OPTIONS).failures


# -- the NVIDIA container toolkit refusing a GPU container --------------------------------------------------------------------
# libnvidia-container's requirement check (nvidia-container-cli), as docker's runc hook reports it: on its own line
# after `… stderr: Auto-detected mode as 'legacy'` (docker 24+), or inside the daemon's one line with `\\n` escapes
# (older docker; NVIDIA/nvidia-container-toolkit#152 quotes the check's wording).
REQUIREMENT = ("requirement error: unsatisfied condition: cuda>=12.4, please update your driver to a newer version, or use "
               "an earlier cuda container")
DAEMON = ("docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime "
          "create failed: runc create failed: unable to start container process: error during container init: error running "
          "hook #0: error running hook: exit status 1, stdout: , stderr: Auto-detected mode as 'legacy'")


@pytest.mark.parametrize("log", [
    f"{DAEMON}\nnvidia-container-cli: {REQUIREMENT}: unknown.\n",
    ("docker: Error response from daemon: OCI runtime create failed: container_linux.go:370: starting container process caused: "
     "process_linux.go:459: container init caused: Running hook #0:: error running hook: exit status 1, stdout: , stderr: "
     f"nvidia-container-cli: {REQUIREMENT}: unknown.\n"),
])
def test_the_container_toolkits_refusal_is_the_failure(log: str) -> None:
    assert primary(log) == ("nvidia-container-cli", REQUIREMENT, "orchestration")  # the container never ran (stop 51)


def test_dockers_summary_alone_is_a_failure() -> None:
    assert primary(f"{DAEMON}\n")[0] == "OCI runtime create failed"


def test_a_healthy_container_start_is_no_failure() -> None:
    log = ("$ docker run --gpus all -p 8000:8000 vllm/vllm-openai:v0.9.1 --model Qwen/Qwen2.5-7B-Instruct\n"
           "INFO 06-01 10:00:00 [api_server.py:1287] vLLM API server version 0.9.1\n"
           "INFO 06-01 10:01:10 [launcher.py:29] Available routes are:\n"
           "INFO:     Started server process [1]\n"
           "INFO:     Application startup complete.\n")
    assert not diagnose_text(log, OPTIONS).failures


# -- the dynamic loader's undefined symbol, quoted alone --------------------------------------------------------------------
# glibc's dlerror: "%s: undefined symbol: %s"; Python raises it as ImportError when an extension module loads.
@pytest.mark.parametrize(("line", "message"), [
    ("> `/usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi`",
     "/usr/local/lib/python3.10/dist-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"),
    ("common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi", "common_ops.abi3.so: undefined symbol: _ZN3c104cuda9SetDeviceEi"),
    ("libtorch_cuda.so: undefined symbol: ncclCommRegister", "libtorch_cuda.so: undefined symbol: ncclCommRegister"),
    ("it fails with '/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommWindowRegister'",
     "/opt/venv/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so: undefined symbol: ncclCommWindowRegister"),
])
def test_an_undefined_symbol_quoted_alone_is_an_import_error(line: str, message: str) -> None:
    assert primary(f"{line}\n") == ("ImportError", message, "dependency-version")


# -- torch's shutdown warning ---------------------------------------------------------------------------------------------
# torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp warns at exit when destroy_process_group() was not called: a
# process that ended without tearing down its process group, after a clean exit as after a crash.
SHUTDOWN = ("[rank0]:[W601 10:00:01.000000000 ProcessGroupNCCL.cpp:1496] Warning: WARNING: destroy_process_group() was not "
            "called before program exit, which can leak resources. For more info, please see "
            "https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())")


def test_the_shutdown_warning_after_a_clean_exit_is_no_failure() -> None:
    log = ("INFO 06-01 10:00:00 [llm_engine.py:400] init engine took 12.3 seconds\n"
           "Processed prompts: 100%|██████████| 8/8 [00:02<00:00,  3.9it/s]\n"
           f"{SHUTDOWN}\n")
    assert not diagnose_text(log, OPTIONS).failures


@pytest.mark.parametrize("death", ["Killed", "Fatal Python error: Segmentation fault"])
def test_the_shutdown_warning_names_no_cause_of_a_crash(death: str) -> None:
    report = diagnose_text(f"INFO 06-01 10:00:00 [core.py:100] loading weights\n{SHUTDOWN}\n{death}\n", OPTIONS)
    assert report.failures
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category != "nccl"
    assert not any("destroy_process_group" in line for line in diagnosis.evidence)


def test_a_real_nccl_error_before_a_crash_still_names_its_cause() -> None:
    # NCCL's own warning line (its debug format: host:pid:tid [rank] file:line NCCL WARN …)
    log = ("gpu-node:2011:2011 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.0.2<38533> failed : "
           "Software caused connection abort\n"
           f"{SHUTDOWN}\nKilled\n")
    diagnosis = diagnose_text(log, OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "nccl"


# -- a traceback whose exception line the paste cut, under the error record that names it ---------------------------------
# SGLang's scheduler logs `Scheduler hit an exception: {traceback}` (srt/managers/scheduler.py run_scheduler_process);
# a wrapper or the user keeps the record's first line and the frames, the exception line cut away.
ATTENTION = "Unsupported attention backend fa3 on this GPU"
CUT_CODE = f"""
def run_scheduler_process():
    raise ValueError({ATTENTION!r})

run_scheduler_process()
"""


def _cut_traceback() -> str:
    printed = real_traceback(CUT_CODE, "sglang/srt/managers/scheduler.py")
    return "".join(line for line in printed.splitlines(keepends=True) if not line.startswith("ValueError"))


@pytest.mark.parametrize("record", [
    f"[2025-06-01 10:00:00 TP0] ERROR Scheduler hit an exception: ValueError: {ATTENTION}",
    f"2025-06-01 10:00:00,123 - verl.workers.rollout - ERROR - rollout failed: ValueError: {ATTENTION}",
])
def test_the_record_above_a_cut_traceback_names_its_exception(record: str) -> None:
    report = diagnose_text(f"{record}\n{_cut_traceback()}", OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert failure.kind == "traceback"
    assert (failure.final.type, failure.final.message) == ("ValueError", ATTENTION)
    assert failure.final.frames


def test_a_record_that_names_no_exception_leaves_the_cut_traceback_as_it_is() -> None:
    # the raising statement is left to name the type and the message it spells out (tracebacks/raising_statement.py)
    report = diagnose_text(f"ERROR 06-01 10:00:00 [engine.py:160] Error in the step, see below\n{_cut_traceback()}", OPTIONS)
    final = report.failures[0].failure.final
    assert (final.type, final.message, final.typed_from_statement) == ("ValueError", ATTENTION, True)


def test_a_whole_traceback_keeps_its_own_exception() -> None:
    printed = real_traceback(CUT_CODE, "sglang/srt/managers/scheduler.py")
    report = diagnose_text(f"ERROR Scheduler hit an exception: KeyError: 'other'\n{printed}", OPTIONS)
    assert [(group.failure.final.type, group.failure.final.message) for group in report.failures][:1] == [("ValueError", ATTENTION)]


def test_the_newer_toolkit_runtimes_refusal_inside_dockers_line_is_the_failure() -> None:
    """nvidia-container-runtime's CDI mode words it inside the OCI error: `requirements not met: unsatisfied condition: …`."""
    log = ("failed to create task for container: failed to create shim task: OCI runtime create failed: failed to create NVIDIA "
           "Container Runtime: failed to construct OCI spec modifier: requirements not met: unsatisfied condition: cuda>=12.9 "
           "(cuda=12.6): unknown\n")
    found = primary(log)
    assert found[0] == "OCI runtime create failed" and "unsatisfied condition: cuda>=12.9" in found[1]
    assert found[2] == "orchestration"


# -- a wrapper's own prefix around every line of a traceback ------------------------------------------------------------------
# Learned from the line where the traceback starts after it (ingest/normalize.py _learn_prefix): its shape is taken off the
# lines after, so the frames and the exception line are read, and torch's shutdown warning after them is not the answer.
WRAPPER_PREFIXES = ("2025-06-01T10:00:00.123+08:00 ERROR [pid 123] ", "[2025-06-01 10:00:00,123][ERROR][worker_3] ",
                    "Jun 01 10:00:00 node1 python3[1234]: [ERROR] ", "10:00:00.123 [E] (pid=77) ")


@pytest.mark.parametrize("prefix", WRAPPER_PREFIXES)
def test_a_wrappers_prefix_on_every_line_of_a_traceback_is_taken_off(prefix: str) -> None:
    printed = real_traceback(CUT_CODE, "sglang/srt/managers/scheduler.py")
    log = "".join(prefix + line for line in printed.splitlines(keepends=True)) + SHUTDOWN + "\n"
    report = diagnose_text(log, OPTIONS)
    assert len(report.failures) == 1
    failure = report.failures[0].failure
    assert (failure.kind, failure.final.type, failure.final.message) == ("traceback", "ValueError", ATTENTION)
    assert [frame.function for frame in failure.final.frames] == ["<module>", "run_scheduler_process"]


def test_a_sentence_before_the_header_stays_its_header() -> None:
    printed = real_traceback(CUT_CODE, "sglang/srt/managers/scheduler.py")
    report = diagnose_text(f"[2025-06-01 10:00:00 TP0] Scheduler hit an exception: {printed}", OPTIONS)
    failure = report.failures[0].failure
    assert failure.header == "Scheduler hit an exception:"
    assert failure.final.type == "ValueError"
