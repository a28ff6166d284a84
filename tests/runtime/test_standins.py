"""The stand-ins (tests/runtime/standins) against the real clients installed on this machine: the real `docker`
client (no daemon), and the real `journalctl`/`systemctl` (no journald, systemd not PID 1).  The real client's own
argument parsing must accept every argv logsleuth builds, and reject a bad flag with the stand-in's words."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from logsleuth.sources.runtime.docker import inspect_command, logs_command
from logsleuth.sources.runtime.journal import journal_command, show_command
from tests.runtime.conftest import STANDINS, Runtime

# The real client must never reach a daemon: point it at a socket that does not exist.
NO_DAEMON = "unix:///nonexistent/logsleuth-test/docker.sock"


def _run(argv: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """Exit status, stdout, stderr.  The program is named by its bare name in argv[0], as when found on PATH
    (getopt's messages quote argv[0])."""
    done = subprocess.run(
        [Path(argv[0]).name, *argv[1:]], executable=argv[0], capture_output=True, text=True, timeout=30,
        env={**os.environ, **(env or {})},
    )
    return done.returncode, done.stdout, done.stderr


def _real(program: str) -> str:
    """The real client: the first one on PATH that is not our stand-in."""
    for folder in os.environ["PATH"].split(os.pathsep):
        candidate = Path(folder) / program
        if folder and Path(folder).resolve() != STANDINS and candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    pytest.skip(f"no real {program} on this machine to check the stand-in against")


@pytest.mark.parametrize(
    "argv",
    [list(logs_command("docker", "web", 2000).argv), list(logs_command("docker", "web", None).argv),
     list(inspect_command("docker", "web").argv)],
)
def test_the_real_docker_client_accepts_our_arguments(argv: list[str]) -> None:
    # The real client parses the arguments, then fails only for want of a daemon.
    status, _, said = _run([_real("docker"), *argv[1:]], {"DOCKER_HOST": NO_DAEMON})
    assert status == 1, said
    assert "Cannot connect to the Docker daemon at unix:///nonexistent/logsleuth-test/docker.sock" in said


@pytest.mark.parametrize(
    "args",
    [["logs", "--tail", "5", "--bogus", "web"], ["inspect", "--bogus", "web"], ["logs", "-fx", "web"],
     ["logs"], ["logs", "a", "b"], ["inspect"], ["logs", "--tail"], ["logs", "-n"]],
)
def test_stand_in_docker_rejects_arguments_as_the_real_client_does(runtime: Runtime, args: list[str]) -> None:
    real = _run([_real("docker"), *args], {"DOCKER_HOST": NO_DAEMON})
    standin = _run([str(STANDINS / "docker"), *args])
    assert standin == real
    assert real[0] in (1, 125)


def test_the_real_journalctl_accepts_our_arguments() -> None:
    # No journald here: the real journalctl finds no journal files, prints "-- No entries --" and exits 0.
    assert _run([_real("journalctl"), *journal_command("sglang", 2000).argv[1:]])[:2] == (0, "-- No entries --\n")
    assert _run([_real("journalctl"), *journal_command("sglang", None).argv[1:]])[0] == 0


def test_stand_in_journalctl_rejects_arguments_as_the_real_one_does(runtime: Runtime) -> None:
    args = ["-u", "sglang", "--bogus"]
    assert _run([str(STANDINS / "journalctl"), *args]) == _run([_real("journalctl"), *args])


def test_the_real_systemctl_accepts_our_arguments() -> None:
    # The real systemctl parses the arguments, then fails only because systemd is not PID 1 here; a bad flag
    # fails earlier, with getopt's message.
    real = _real("systemctl")
    status, said, errors = _run([real, *show_command("sglang").argv[1:]])
    if status == 0:
        assert "LoadState=" in said  # a machine with systemd as PID 1
    else:
        assert "unrecognized option" not in errors and "invalid option" not in errors, errors
    assert _run([real, "show", "sglang", "--bogus"]) == (1, "", "systemctl: unrecognized option '--bogus'\n")


def test_stand_in_systemctl_rejects_arguments_as_the_real_one_does(runtime: Runtime) -> None:
    args = ["show", "sglang", "--bogus"]
    assert _run([str(STANDINS / "systemctl"), *args]) == _run([_real("systemctl"), *args])


def test_stand_ins_are_executable() -> None:
    for name in ("docker", "journalctl", "systemctl"):
        assert shutil.which(name, path=str(STANDINS)) == str(STANDINS / name)
