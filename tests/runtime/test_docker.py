"""Docker and Podman containers (sources/runtime/docker.py) through the stand-in `docker` client: no Docker
daemon can run on the test machines (conftest.py)."""

from __future__ import annotations

import json
import os

import pytest

from logsleuth.errors import ExitStatus, SourceError
from logsleuth.models import FACT_PREFIX
from logsleuth.reading.reader import read_latest
from logsleuth.sources.runtime.command import CommandSource, Finished
from logsleuth.sources.runtime.docker import ContainerFacts, open_container, parse_inspect
from logsleuth.sources.runtime.spec import parse_runtime_spec
from tests.helpers import real_traceback
from tests.runtime.conftest import STANDINS, Runtime, container_inspect, open_spec, text_of

LOADING = [("stdout", "[2026-11-30 22:10:31] Load weight begin. avail mem=78.50 GB"),
           ("stdout", "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:03<00:06,  3.01s/it]")]


def _open(spec: str) -> CommandSource:
    return open_spec(open_container, spec)


_text = text_of


def test_an_oom_killed_container_ends_with_its_fact_line(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here).  The cgroup OOM kill leaves no traceback: the fact line names it.
    runtime.container("sglang", LOADING, oom_killed=True, exit_code=137, restarts=3)
    source = _open("docker:sglang")
    text = _text(source)
    assert text.startswith(LOADING[0][1] + "\n")
    assert text.endswith(
        "[logsleuth: container sglang: exited, OOMKilled by its cgroup, exit code 137 (SIGKILL), restarts 3, "
        "finished 2026-11-30T23:58:41.215470913Z]\n"
    )
    assert runtime.calls() == [
        ["docker", "inspect", "--type", "container", "--", "sglang"],
        ["docker", "logs", "--tail", "2000", "--", "sglang"],
    ]


def test_the_fact_line_follows_every_window(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here): widening replaces the log but keeps the fact line last.
    runtime.container("sglang", LOADING, oom_killed=True, exit_code=137)
    source = _open("docker:sglang")
    source.size()
    source.whole = False  # pretend the first window was partial, to widen once more
    assert source.widen()
    assert _text(source).splitlines()[-1].startswith(FACT_PREFIX + "container sglang: exited, OOMKilled")


def test_podman_uses_the_podman_client(runtime: Runtime, monkeypatch: pytest.MonkeyPatch) -> None:
    # The stand-in docker serves as podman too (no daemon here): podman's logs/inspect take the same arguments.
    podman = runtime.state / "bin" / "podman"
    podman.parent.mkdir()
    podman.symlink_to(STANDINS / "docker")
    monkeypatch.setenv("PATH", f"{podman.parent}{os.pathsep}{os.environ['PATH']}")
    runtime.container("sglang", LOADING, status="running")
    assert _text(_open("podman:sglang")) == "".join(line + "\n" for _, line in LOADING)
    assert [call[:3] for call in runtime.calls()] == [["podman", "inspect", "--type"], ["podman", "logs", "--tail"]]


def test_a_crash_with_a_traceback_keeps_the_traceback_last_before_the_facts(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here); the traceback is a real CPython one, on the container's stderr.
    crash = real_traceback("import torch_stub_missing_module\n")
    runtime.container("sglang", [*LOADING, *[("stderr", line) for line in crash.splitlines()]], exit_code=1)
    result = read_latest(_open("docker:sglang"))
    # The traceback, then the container's exit as a failure of its own (a cascade of it in the report).
    assert [(failure.kind, failure.final.type) for failure in result.failures] == [
        ("traceback", "ModuleNotFoundError"), ("killed", "Exited")
    ]


@pytest.mark.parametrize(
    ("inspect", "line"),
    [
        ({"status": "exited", "exit_code": 0}, None),
        ({"status": "running"}, None),
        ({"status": "running", "restarts": 2}, "[logsleuth: container web: running, restarts 2]"),
        ({"status": "running", "oom_killed": True},
         "[logsleuth: container web: running, a process in it was OOMKilled by its cgroup, restarts 0]"),
        ({"status": "exited", "exit_code": 137},
         "[logsleuth: container web: exited, exit code 137 (SIGKILL), restarts 0, finished 2026-11-30T23:58:41.215470913Z]"),
        ({"status": "exited", "exit_code": 1, "restarts": 5},
         "[logsleuth: container web: exited, exit code 1, restarts 5, finished 2026-11-30T23:58:41.215470913Z]"),
        ({"status": "created", "exit_code": 127, "error": 'exec: "python3": executable file not found in $PATH'},
         '[logsleuth: container web: created, exit code 127, error: exec: "python3": executable file not found in $PATH, '
         "restarts 0, finished 2026-11-30T23:58:41.215470913Z]"),
        ({"status": "exited", "exit_code": 139, "restarts": 1},
         "[logsleuth: container web: exited, exit code 139 (SIGSEGV), restarts 1, finished 2026-11-30T23:58:41.215470913Z]"),
    ],
)
def test_fact_lines_from_inspect(inspect: dict[str, object], line: str | None) -> None:
    facts = parse_inspect("web", json.dumps([container_inspect("web", **inspect)]).encode())  # type: ignore[arg-type]
    assert facts.fact_line() == line


def test_inspect_facts_fields() -> None:
    facts = parse_inspect("web", json.dumps([container_inspect("web", status="running")]).encode())
    # Go's zero FinishedAt is no time; StartedAt is the latest run's start
    assert facts == ContainerFacts("web", "running", False, 0, "", 0, None, "2026-11-30T22:10:04.004513211Z")


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda runtime: None, "docker:ghost: no such container (docker ps -a lists them)"),
        (lambda runtime: runtime.socket("denied"),
         "docker:ghost: permission denied on the docker socket: add the user to the docker group, or run as root"),
        (lambda runtime: runtime.socket("down"),
         "docker:ghost: cannot connect to the Docker daemon (Cannot connect to the Docker daemon at "
         "unix:///var/run/docker.sock. Is the docker daemon running?)"),
    ],
)
def test_runtime_errors_are_one_line_source_errors(runtime: Runtime, setup: object, message: str) -> None:
    # Stand-in docker, answering as the real client does for each (no daemon here to produce them).
    setup(runtime)  # type: ignore[operator]
    with pytest.raises(SourceError) as caught:
        _open("docker:ghost")
    assert str(caught.value) == message
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


def test_docker_missing_is_a_one_line_source_error(nothing_on_path: None) -> None:
    with pytest.raises(SourceError) as caught:
        _open("docker:sglang")
    assert str(caught.value) == "docker:sglang: docker is not installed (not found on PATH)"


@pytest.mark.parametrize(
    ("spec", "answer", "message"),
    [
        ("docker:web", Finished(0, b"<html>proxy login</html>\n", b""),
         "docker:web: docker inspect printed something that is not its JSON"),
        # What a remote docker prints reaches the user's terminal: escapes are shown, not obeyed.
        ("gpu7:docker:web", Finished(1, b"", b"Error: \x1b]0;owned\x07 went wrong\n"),
         "gpu7:docker:web: docker inspect failed with exit status 1: Error: \\x1b]0;owned\\x07 went wrong"),
    ],
)
def test_odd_answers_are_one_line_source_errors(spec: str, answer: Finished, message: str) -> None:
    # A runner that answers as given (the seam the SSH runner will use).
    parsed = parse_runtime_spec(spec)
    assert parsed is not None
    with pytest.raises(SourceError) as caught:
        open_container(parsed, lambda command: answer)
    assert str(caught.value) == message
