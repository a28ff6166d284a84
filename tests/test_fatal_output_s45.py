"""Shapes stop 45's dev sweep of fresh pastes did not find (branch found):

- Ray's own FATAL record: src/ray/util/logging.cc writes every record as `[%Y-%m-%d %H:%M:%S,%e %L %P %t] %v`, spdlog's
  level letter `C` for RAY_LOG(FATAL) and a failed RAY_CHECK, the text `<file>:<line>: <message>`, then
  `*** StackTrace Information ***` and the frames (RayLog::~RayLog), then abort().  verl-project/verl#2380 pasted one
  under Ray's actor prefix (`(TaskRunner pid=…) [2025-07-06 07:14:27,052 C 2915798 2915798] task_receiver.cc:219:  Check
  failed: objects_valid`).  Its I, W and E records are no such failure.
- Kubernetes and a harness on it saying a server container crashed, without the container's own error: the kubelet's
  BackOff event (`Back-off restarting failed container …`, pkg/kubelet/kuberuntime), `kubectl get pods`' STATUS
  CrashLoopBackOff or Error (printPod; vllm-project/production-stack#454) and llm-d-benchmark's standup check
  (`Crashed container in pod: …`, llm-d/llm-d-benchmark#668).  The failure only of a paste that shows no other: the
  container's log says why.

- the openai client's `Connection error.` (APIConnectionError's default message, openai/_exceptions.py) printed by a
  program around the engine after its own words of an error, the type lost (FoundationAgents/OpenManus#770's loguru
  record, datalab-to/chandra#34's quoted sentence): the client never reached the server, a fallback.

- a launcher's word that the engine's server did not come up (`vLLM failed to start.  Retry with --enable-serving-output
  …`, instructlab/instructlab#3466; evaluation and benchmark scripts polling /health print `ERROR: vLLM failed to
  start`, `vLLM failed to start within 300s`): a fallback, typed `launch failure`.

- torch's NCCL watchdog timeout text outside the c10 record that logs it (ProcessGroupNCCL.cpp; a paste that lost the
  record's prefix, a sentence quoting it): the DistBackendError the watchdog terminates with, a fallback.

The tracebacks are printed by real CPython (tests.helpers.real_traceback)."""

from __future__ import annotations

import pytest

from logsleuth.ingest.normalize import normalize_text
from logsleuth.tracebacks.scanner import scan
from logsleuth.tracebacks.typeless_errors import (
    ENGINE_DID_NOT_START_TYPE,
    NCCL_WATCHDOG_EXCEPTION,
    OPENAI_CONNECTION_TYPE,
    typeless_error,
)
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import primary

RAY_CHECK = "[2025-07-06 07:14:27,052 C 2915798 2915798] task_receiver.cc:219:  Check failed: objects_valid "
RAY_STACK = (
    "*** StackTrace Information ***\n"
    "/opt/venv/lib/python3.11/site-packages/ray/_raylet.so(+0x13ddb7a) [0x73a4e4830b7a] ray::operator<<()\n"
    "/opt/venv/lib/python3.11/site-packages/ray/_raylet.so(_ZN3ray6RayLogD1Ev+0x479) [0x73a4e48335f9] ray::RayLog::~RayLog()\n"
)


@pytest.mark.parametrize("prefix", ["", "(TaskRunner pid=2915798) ", "`(TaskRunner pid=2915798) "])
def test_rays_fatal_record_is_a_fatal_abort_ending_before_its_stack_trace(prefix: str) -> None:
    log = prefix + RAY_CHECK + "\n" + "".join(prefix + line + "\n" for line in RAY_STACK.splitlines())
    (failure,) = scan(normalize_text(log))
    assert (failure.kind, failure.final.type) == ("abort", "FATAL")
    assert failure.final.message.strip() == "task_receiver.cc:219:  Check failed: objects_valid"


@pytest.mark.parametrize("level", ["I", "W", "E"])
def test_rays_other_records_are_no_fatal_abort(level: str) -> None:
    log = f"[2025-07-06 07:14:27,052 {level} 2915798 2915798] core_worker.cc:812: Connecting to the raylet\n"
    assert all(failure.final.type != "FATAL" for failure in scan(normalize_text(log)))


KUBECTL_PODS = """\
NAME                                            READY   STATUS             RESTARTS      AGE
vllm-deployment-router-8666bf6464-4whxb         1/1     Running            0             2m49s
vllm-mistral-deployment-vllm-67dd8b6d79-kk7fs   0/1     CrashLoopBackOff   4 (73s ago)   2m49s
"""
DESCRIBE_EVENTS = """\
Events:
  Type     Reason     Age                 From               Message
  ----     ------     ----                ----               -------
  Normal   Started    14m (x4 over 15m)   kubelet            Started container vllm
  Warning  BackOff    33s (x70 over 15m)  kubelet            Back-off restarting failed container vllm in pod vllm-0_default(b50a7fa8)
"""
HARNESS = """\
16:52:53 - Waiting for pods to be Ready (timeout=900s)
16:53:24 - ❌ Crashed container in pod: vllm-standalone-llama-3-1b-845945945-dljsw
"""


@pytest.mark.parametrize(("log", "type_", "said"), [
    (KUBECTL_PODS, "CrashLoopBackOff", "vllm-mistral-deployment-vllm-67dd8b6d79-kk7fs"),
    (KUBECTL_PODS.replace("CrashLoopBackOff   4 (73s ago)", "Error              1 (9s ago) "), "container crashed",
     "vllm-mistral-deployment-vllm-67dd8b6d79-kk7fs"),
    (DESCRIBE_EVENTS, "BackOff", "Back-off restarting failed container vllm in pod"),
    (HARNESS, "container crashed", "Crashed container in pod: vllm-standalone-llama-3-1b-845945945-dljsw"),
    (HARNESS.replace("❌", "ERROR:"), "container crashed", "Crashed container in pod: vllm-standalone"),
])
def test_a_container_kubernetes_or_a_harness_saw_crash_is_an_orchestration_failure(log: str, type_: str, said: str) -> None:
    found_type, message, category = primary(log)
    assert found_type == type_ and said in message
    assert category == "orchestration"


@pytest.mark.parametrize("line", [
    "vllm-deployment-router-8666bf6464-4whxb         1/1     Running            0             2m49s",
    "NAME                                            READY   STATUS             RESTARTS      AGE",
    "If the pod goes into CrashLoopBackOff, read its previous log.",
    "Get the logs from the last crashed container in pod my-app-xxx",
])
def test_pods_that_run_and_sentences_about_crashes_are_no_failure(line: str) -> None:
    assert typeless_error(line) is None


def test_the_containers_own_traceback_is_the_failure_beside_its_back_off() -> None:
    traceback = real_traceback('raise ValueError("The model\'s max seq len (32768) is larger than the maximum number '
                               'of tokens that can be stored in KV cache (11904).")\n')
    found_type, message, _ = primary(traceback + DESCRIBE_EVENTS)
    assert found_type == "ValueError" and "max seq len" in message


@pytest.mark.parametrize(("line", "said"), [
    ("2025-03-17 17:21:07.953 | ERROR    | app.llm:ask_tool:426 - OpenAI API error: Connection error.",
     "OpenAI API error: Connection error."),
    ('I am facing "Error during VLLM generation: Connection error." when I am running long document.',
     "Error during VLLM generation: Connection error."),
    ("Error calling LLM API: Connection error.", "Error calling LLM API: Connection error."),
])
def test_the_openai_clients_connection_error_after_a_programs_error_words_is_a_fallback(line: str, said: str) -> None:
    assert typeless_error(line) == (OPENAI_CONNECTION_TYPE, said, True)
    assert primary(line + "\n") == (OPENAI_CONNECTION_TYPE, said, "network")


@pytest.mark.parametrize("line", [
    "Connection errors per minute: 0",
    "No Connection error so far, the server answers.",
    "litellm.APIError: APIError: Hosted_vllmException - Connection error",  # a line typed by its own exception class
])
def test_connection_words_without_a_programs_error_before_them_are_no_connection_failure(line: str) -> None:
    found = typeless_error(line)
    assert found is None or found[0] != OPENAI_CONNECTION_TYPE


def test_a_traceback_beside_the_connection_error_is_the_failure() -> None:
    traceback = real_traceback('raise RuntimeError("Engine core initialization failed. See root cause above.")\n')
    found_type, message, _ = primary("ERROR - OpenAI API error: Connection error.\n" + traceback)
    assert found_type == "RuntimeError" and "Engine core initialization failed" in message


@pytest.mark.parametrize(("line", "said"), [
    ("vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure.",
     "vLLM failed to start.  Retry with --enable-serving-output to learn more about the failure."),
    ("ERROR: vLLM failed to start", "vLLM failed to start"),
    ("[eval] vLLM failed to start within 300s", "vLLM failed to start within 300s"),
    ("SGLang server failed to start, see the log above", "SGLang server failed to start, see the log above"),
])
def test_a_launchers_word_that_the_engine_did_not_start_is_a_fallback(line: str, said: str) -> None:
    assert typeless_error(line) == (ENGINE_DID_NOT_START_TYPE, said, True)
    assert primary(line + "\n")[:2] == (ENGINE_DID_NOT_START_TYPE, " ".join(said.split()))


@pytest.mark.parametrize("line", ["Why vLLM failed to start?", "EngineCore failed to start.",
                                  "vLLM failed to start? It printed nothing else"])
def test_questions_and_the_engines_own_start_up_record_are_no_launch_failure(line: str) -> None:
    found = typeless_error(line)
    assert found is None or found[0] != ENGINE_DID_NOT_START_TYPE


def test_the_engines_traceback_after_the_launchers_word_is_the_failure() -> None:
    traceback = real_traceback('raise ValueError("No available memory for the cache blocks. Try increasing '
                               '`gpu_memory_utilization` when initializing the engine.")\n')
    found_type, message, _ = primary(traceback + "ERROR: vLLM failed to start\n")
    assert found_type == "ValueError" and "No available memory" in message


WATCHDOG_TEXT = ("[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=31, OpType=ALLREDUCE, "
                 "NumelIn=117440512, NumelOut=117440512, Timeout(ms)=600000) ran for 600031 milliseconds before timing out.")


@pytest.mark.parametrize("line", [
    "[rank3]: " + WATCHDOG_TEXT,  # torchrun's rank prefix, the c10 record's own prefix lost
    f'The job died with "{WATCHDOG_TEXT}" after ten minutes',
])
def test_the_nccl_watchdogs_timeout_text_without_its_record_is_its_distbackenderror(line: str) -> None:
    found_type, message, category = primary(line + "\n")
    assert found_type == NCCL_WATCHDOG_EXCEPTION and "ran for 600031 milliseconds" in message
    assert category == "nccl"


def test_a_sentence_naming_the_watchdog_without_its_text_is_no_watchdog_failure() -> None:
    assert typeless_error("I keep getting Watchdog caught collective operation timeout after 10 minutes") is None
