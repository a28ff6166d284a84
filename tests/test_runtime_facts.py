"""Runtime fact lines (`[logsleuth: …]`, appended after a container's, pod's or unit's log by the runtime
sources) read as failures, and journald's `short-iso` prefix stripped so a unit's traceback is parsed.

The fact lines come from the real builders (docker.ContainerFacts, journal.UnitFacts, command.fact_line for the
Kubernetes lines, whose builder is not written yet: their text follows the shared contract); the tracebacks are
real CPython output (tests.helpers.real_traceback).
"""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.ingest.normalize import normalize_text
from logsleuth.models import Report
from logsleuth.sources.runtime.command import fact_line
from logsleuth.sources.runtime.docker import ContainerFacts
from logsleuth.sources.runtime.journal import UnitFacts
from logsleuth.tracebacks.scanner import scan
from tests.helpers import real_traceback

LOADING = (
    "[2026-11-30 22:10:31] server_args=ServerArgs(model_path='meta-llama/Llama-3.1-70B-Instruct', tp_size=8)\n"
    "[2026-11-30 22:10:40 TP0] Load weight begin. avail mem=78.50 GB\n"
)
FINISHED = "2026-11-30T23:58:41Z"
POD = "pod serving/sglang-0"


def _container(**facts: object) -> str:
    values: dict[str, object] = {"container": "web", "status": "exited", "oom_killed": False, "exit_code": 0,
                                 "error": "", "restarts": 0, "finished_at": FINISHED}
    line = ContainerFacts(**{**values, **facts}).fact_line()  # type: ignore[arg-type]
    assert line is not None
    return line + "\n"


def _event(kind: str, reason: str, message: str, count: int = 1) -> str:
    return fact_line(f"{POD} event", [f"{kind} {reason} (x{count}", f"last {FINISHED}): {message}"]) + "\n"


def _diagnose(text: str) -> Report:
    return diagnose_text(text, DiagnoseOptions(include_user_patterns=False))


def _crash() -> str:
    return real_traceback("def load():\n    raise ValueError('bad --tp-size 3')\nload()\n")


# -- the scanner ----------------------------------------------------------------------------------------


def test_an_oom_killed_container_without_a_traceback_is_a_failure() -> None:
    log = LOADING + _container(oom_killed=True, exit_code=137)
    [failure] = scan(normalize_text(log))
    assert (failure.kind, failure.final.type) == ("line", "OOMKilled")
    assert failure.final.message.startswith("container web: exited, OOMKilled by its cgroup, exit code 137 (SIGKILL)")


def test_a_fact_that_states_nothing_wrong_is_no_failure() -> None:
    log = LOADING + _container(status="running", restarts=3)  # only restarts: the current run is fine
    assert "[logsleuth: container web: running, restarts 3" in log
    assert scan(normalize_text(log)) == []


def test_a_readiness_probe_failing_while_weights_load_is_no_failure() -> None:
    # The readiness probe keeps traffic away until the server is ready: failing during the load is its job.
    log = LOADING + _event("Warning", "Unhealthy", 'Readiness probe failed: Get "http://10.1.2.3:30000/health": '
                                                    "dial tcp 10.1.2.3:30000: connect: connection refused", 12)
    assert scan(normalize_text(log)) == []


def test_an_exit_code_after_a_traceback_does_not_join_its_message() -> None:
    log = LOADING + _crash() + _container(exit_code=1)
    traceback, exited = scan(normalize_text(log))
    assert (traceback.kind, traceback.final.type, traceback.final.message) == ("traceback", "ValueError", "bad --tp-size 3")
    assert (exited.kind, exited.final.type) == ("killed", "Exited")


def test_the_strongest_fact_is_the_failure_and_the_others_its_context() -> None:
    log = LOADING + "".join((
        _event("Warning", "Unhealthy", 'Liveness probe failed: Get "http://10.1.2.3:30000/health": dial tcp '
                                       "10.1.2.3:30000: connect: connection refused", 3),
        _event("Normal", "Killing", "Container sglang failed liveness probe, will be restarted"),
        fact_line(f"{POD} container sglang", ["terminated", "reason Error", "exit code 137 (SIGKILL)", "restarts 2",
                                              f"finished {FINISHED}"]) + "\n",
    ))
    [failure] = scan(normalize_text(log))
    assert (failure.kind, failure.final.type) == ("line", "Killing")
    assert failure.final.message == f"{POD} event: Normal Killing (x1, last {FINISHED}): Container sglang failed liveness probe, will be restarted"
    assert [text[:40] for text in failure.context[-2:]] == [
        f"[logsleuth: {POD} event: Warning Unhealthy"[:40],
        f"[logsleuth: {POD} container sglang: terminated"[:40],
    ]


# -- the diagnosis --------------------------------------------------------------------------------------


def test_the_traceback_stays_the_root_when_the_container_only_exited() -> None:
    report = _diagnose(LOADING + _crash() + _container(exit_code=1))
    assert [group.failure.final.type for group in report.failures] == ["ValueError"]
    assert report.failures[0].cascade == ("container web: exited, exit code 1, restarts 0, finished 2026-11-30T23:58:41Z",)


def test_an_oom_kill_fact_outranks_a_generic_killed_line() -> None:
    report = _diagnose(LOADING + "Killed\n" + _container(oom_killed=True, exit_code=137))
    root = report.failures[0]
    assert root.diagnosis is not None and root.diagnosis.pattern == "common-cgroup-oom-killed"
    assert [group.failure.final.type for group in report.failures] == ["OOMKilled"]


def test_an_oom_kill_fact_outranks_the_cascade_it_caused() -> None:
    # A scheduler killed by the cgroup: the launcher's pipe to it ends (EOFError), then the container exits.
    cascade = real_traceback("import multiprocessing\nreader, writer = multiprocessing.Pipe(False)\nwriter.close()\n"
                             "reader.recv()\n")
    report = _diagnose(LOADING + cascade + _container(oom_killed=True, exit_code=1))
    root = report.failures[0]
    assert root.diagnosis is not None and root.diagnosis.pattern == "common-cgroup-oom-killed"


def test_a_unit_killed_by_a_signal_reads_as_killed() -> None:
    facts = UnitFacts("sglang.service", "loaded", "failed", "signal", "2", 9, 0).fact_line()
    assert facts is not None
    report = _diagnose(LOADING + facts + "\n")
    root = report.failures[0]
    assert root.diagnosis is not None and root.diagnosis.pattern == "common-process-killed"
    assert root.failure.final.message == (
        "unit sglang.service: failed, killed by a signal (Result=signal), main process killed by SIGKILL, restarts 0"
    )


# -- journald's prefix ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "stamp",
    [
        "2026-11-30T23:58:41+0000",  # journalctl -o short-iso up to systemd 254
        "2026-11-30T23:58:41+00:00",  # systemd 255 and later (systemd/systemd#29134)
        "2026-11-30T23:58:41.123456+0000",  # -o short-iso-precise
    ],
)
def test_journalctl_iso_prefixes_are_stripped(stamp: str) -> None:
    crash = _crash()
    log = "".join(f"{stamp} gpu7 python3[4187]: {line}\n" for line in crash.splitlines())
    lines = normalize_text(log)
    assert [line.text for line in lines] == crash.splitlines()
    assert {(line.meta.host, line.meta.process, line.meta.pid, line.meta.timestamp) for line in lines} == {
        ("gpu7", "python3", 4187, stamp)
    }
    [failure] = scan(lines)
    assert (failure.final.type, failure.final.message) == ("ValueError", "bad --tp-size 3")


def test_a_kubectl_timestamp_before_plain_text_is_not_a_journal_prefix() -> None:
    [line] = normalize_text("2026-11-30T23:58:41.702123456Z warming up gpu[0]: done\n")
    assert (line.text, line.meta.host, line.meta.pid) == ("warming up gpu[0]: done", None, None)
