"""Stand-in `docker`, `journalctl` and `systemctl` first on PATH (tests/runtime/standins): no Docker daemon,
journald or systemd-as-PID-1 can run on the test machines.  The stand-ins keep their state in a directory the
`runtime` fixture fills; tests/runtime/test_standins.py checks them against the real clients."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

STANDINS = Path(__file__).resolve().parent / "standins"


def open_spec(opener: Callable[[Any], Any], spec: str) -> Any:
    """Parse `spec` and open it with `opener` (docker.open_container, journal.open_unit)."""
    from logsleuth.sources.runtime.spec import parse_runtime_spec

    parsed = parse_runtime_spec(spec)
    assert parsed is not None, spec
    return opener(parsed)


def text_of(source: Any) -> str:
    """Every byte a source holds, decoded."""
    return b"".join(source.read_range(0, source.size())).decode()


def container_inspect(
    name: str,
    *,
    status: str = "exited",
    oom_killed: bool = False,
    exit_code: int = 0,
    error: str = "",
    restarts: int = 0,
    finished_at: str = "2026-11-30T23:58:41.215470913Z",
) -> dict[str, Any]:
    """One element of `docker inspect` output, shaped as Docker's Engine API reference (ContainerInspectResponse,
    ContainerState) shows it, for an SGLang server container."""
    running = status == "running"
    return {
        "Id": "4fa6e0f0c6786287e131c3852c58a2e01cc697a68231826813597e4994f1d6e2",
        "Created": "2026-11-30T22:10:03.152114618Z",
        "Path": "python3",
        "Args": ["-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--port", "30000"],
        "State": {
            "Status": status,
            "Running": running,
            "Paused": False,
            "Restarting": status == "restarting",
            "OOMKilled": oom_killed,
            "Dead": False,
            "Pid": 41873 if running else 0,
            "ExitCode": exit_code,
            "Error": error,
            "StartedAt": "2026-11-30T22:10:04.004513211Z",
            "FinishedAt": "0001-01-01T00:00:00Z" if running else finished_at,
        },
        "Image": "sha256:1c0a3a2b34f05cce7cbaf3cd2b9a1e7b0e26a2bbd98c4c7c4f2a7d0a6e5f3b21",
        "ResolvConfPath": f"/var/lib/docker/containers/4fa6e0f0c678/{name}/resolv.conf",
        "LogPath": "/var/lib/docker/containers/4fa6e0f0c678/4fa6e0f0c678-json.log",
        "Name": f"/{name}",
        "RestartCount": restarts,
        "Driver": "overlay2",
        "Platform": "linux",
        "HostConfig": {"Memory": 68719476736, "ShmSize": 34359738368, "RestartPolicy": {"Name": "on-failure", "MaximumRetryCount": 5}},
        "Config": {"Image": "lmsysorg/sglang:latest", "Cmd": ["python3", "-m", "sglang.launch_server"]},
    }


@dataclass
class Runtime:
    """The stand-ins' daemon: containers and units the tests create."""

    state: Path

    def container(self, name: str, records: list[tuple[str, str]], **inspect: Any) -> None:
        """A container whose log is `records` ((stream, line), in the order written) and whose inspect
        output is container_inspect(name, **inspect)."""
        (self.state / "docker" / f"{name}.log.json").write_text(json.dumps(records))
        (self.state / "docker" / f"{name}.inspect.json").write_text(json.dumps(container_inspect(name, **inspect)))

    def socket(self, problem: str) -> None:
        (self.state / "docker" / "socket").write_text(problem)

    def unit(self, name: str, lines: list[str], show: dict[str, str] | None = None) -> None:
        (self.state / "journal" / f"{name}.lines").write_text("".join(line + "\n" for line in lines))
        if show is not None:
            text = "".join(f"{key}={value}\n" for key, value in show.items())
            (self.state / "systemd" / f"{name}.show").write_text(text)

    def hide_system_journal(self) -> None:
        (self.state / "journal" / "hint").write_text("yes")

    def calls(self) -> list[list[str]]:
        path = self.state / "calls"
        return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


@pytest.fixture
def runtime(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Runtime]:
    state = tmp_path / "standin-state"
    for part in ("docker", "journal", "systemd"):
        (state / part).mkdir(parents=True)
    monkeypatch.setenv("LOGSLEUTH_STANDIN_STATE", str(state))
    monkeypatch.setenv("PATH", f"{STANDINS}{os.pathsep}{os.environ['PATH']}")
    yield Runtime(state)


@pytest.fixture
def nothing_on_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A PATH with no docker, journalctl or systemctl on it (the host has none installed)."""
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
