"""`logsleuth watch HOST:PATH` on a log that does not exist yet waits for it, as the local form does (issue 30,
finding 2), with both backends, through the SSH helper process and without it.  A host that cannot be reached,
a login that fails and an unknown host key still end the watch at once (exit 3), whatever the log.

Every watch here is `python -m logsleuth watch …` in a process of its own (only the console entry point forks the
helper).  The tests wait for events (the "waiting" line, the exit); the deadlines only catch a hang.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from sshd_server import SSHD, free_port, keygen
from test_ssh_watch import STAGES
from test_watch_helper import environment

from tests.helpers import spawn

pytestmark = pytest.mark.ssh

BACKENDS = ("paramiko", "openssh")
HANG = 90  # seconds: only a watch that hangs takes this long


def _argv(spec: str, config: Path, backend: str, *extra: str) -> list[str]:
    return [sys.executable, "-m", "logsleuth", "watch", spec, "--ssh-config", str(config), "--ssh-backend", backend,
            "--timeout", "60", *extra]


def _first_line(watch: subprocess.Popen[str]) -> str:
    """The watch's first line on stdout, or what it said on stderr when it ended without one."""
    assert watch.stdout is not None and watch.stderr is not None
    line = watch.stdout.readline()
    if not line:
        watch.wait(HANG)
        return f"(exit {watch.returncode}) {watch.stderr.read()}"
    return line


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("helper", [True, False], ids=["helper", "no helper"])
def test_a_remote_log_that_does_not_exist_yet_is_waited_for(sshd: SSHD, backend: str, helper: bool) -> None:
    # Not even its directory exists yet; its name holds a space, a quote and `$(…)`, which must stay characters.
    directory = sshd.logs / f"not yet {backend} {'helper' if helper else 'direct'} 'q' $(touch pwned)"
    log = directory / "server.log"
    spec = f"logsleuth-alias:{log}"
    watch = spawn(_argv(spec, sshd.config, backend, "--format", "json"), stdout=subprocess.PIPE,
                  stderr=subprocess.PIPE, text=True, env=environment(helper))
    try:
        first = _first_line(watch)
        directory.mkdir()
        log.write_bytes(b"".join(STAGES))  # the launch writes its whole log at once, from its first byte
        stdout, stderr = watch.communicate(timeout=HANG)
    finally:
        watch.kill()
        log.unlink(missing_ok=True)
        if directory.exists():
            directory.rmdir()
    events = [json.loads(line) for line in [first, *stdout.splitlines()] if line.startswith("{")]
    assert events and events[0]["event"] == "waiting", first
    assert events[0]["message"] == f"waiting for {spec} to appear"  # the local form's event, word for word
    assert watch.returncode == 0, stderr
    stages = [event["stage"] for event in events if event["event"] == "stage"]
    assert stages[0] == "args"  # read from its first byte: the whole launch is this one's
    assert events[-1]["event"] == "ready"
    assert "restarted" not in [event["event"] for event in events]  # appearing is not a rotation
    assert not (sshd.logs / "pwned").exists()


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_waiting_line_is_the_local_forms(sshd: SSHD, backend: str) -> None:
    """Without --format json, the same stderr line as `watch /local/path` prints."""
    log = sshd.logs / f"not-yet-text-{backend}.log"
    spec = f"logsleuth-alias:{log}"
    watch = spawn(_argv(spec, sshd.config, backend), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                  env=environment(True))
    assert watch.stderr is not None
    try:
        first = watch.stderr.readline()
        log.write_bytes(b"".join(STAGES))
        stdout, stderr = watch.communicate(timeout=HANG)
    finally:
        watch.kill()
        log.unlink(missing_ok=True)
    assert first == f"logsleuth: {spec}: waiting for {spec} to appear\n", first + stderr
    assert watch.returncode == 0, stderr
    assert stdout.strip().endswith("the server is ready")


# The watch's --timeout bounds connecting and waiting together (watch/follow.py): it must leave room for the login
# itself, which a busy machine slows past a second (CI: "connection … timed out after 1 s", exit 3 instead of 124).
NEVER_APPEARS_TIMEOUT = 10


def test_a_log_that_never_appears_times_out_with_124(sshd: SSHD) -> None:
    spec = f"logsleuth-alias:{sshd.logs}/never-appears.log"
    result = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", spec, "--ssh-config", str(sshd.config),
         "--timeout", str(NEVER_APPEARS_TIMEOUT)],
        capture_output=True, text=True, env=environment(True), timeout=HANG,
    )
    assert result.returncode == 124, result.stderr
    assert result.stderr.splitlines()[-1] == (
        f"logsleuth: {spec}: not ready after {NEVER_APPEARS_TIMEOUT} s (the log never appeared)"
    )


def _failing(sshd: SSHD, tmp_path: Path, case: str) -> tuple[str, Path, str]:
    """(spec, config, the start of the one-line error) for a host that cannot be used."""
    missing_log = f"{sshd.logs}/not-there-either.log"
    if case == "refused":
        port = free_port()
        return f"127.0.0.1:{port}:{missing_log}", sshd.config, f"logsleuth: 127.0.0.1: connection refused by 127.0.0.1 port {port}"
    config = tmp_path / "config"
    if case == "auth":
        keygen(tmp_path / "stranger")
        config.write_text(f"Host *\n    IdentityFile {tmp_path}/stranger\n"
                          f"    UserKnownHostsFile {sshd.root}/client/known_hosts\n")
        expected = "logsleuth: 127.0.0.1: authentication failed for logsleuth-test@127.0.0.1"
    else:
        (tmp_path / "known_hosts").write_text("")
        config.write_text(f"Host *\n    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {tmp_path}/known_hosts\n")
        expected = "logsleuth: 127.0.0.1: unknown host key for"
    return f"logsleuth-test@127.0.0.1:{sshd.port}:{missing_log}", config, expected


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["refused", "auth", "unknown-host-key"])
def test_a_host_that_cannot_be_used_still_fails_at_once(sshd: SSHD, tmp_path: Path, backend: str, case: str) -> None:
    """Waiting is for the log only: these end the watch with exit 3 and one line, not a wait until --timeout."""
    spec, config, expected = _failing(sshd, tmp_path, case)
    result = subprocess.run(_argv(spec, config, backend), capture_output=True, text=True, env=environment(True),
                            timeout=HANG)
    assert result.returncode == 3, result.stderr
    assert result.stderr.startswith(expected), result.stderr
    assert len(result.stderr.splitlines()) == 1, result.stderr
    assert "waiting" not in result.stderr


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["unreadable", "directory"])
def test_a_log_that_exists_but_cannot_be_read_fails_at_once(sshd: SSHD, backend: str, case: str) -> None:
    """A log that is there but that the login cannot read (no permission; a directory) will not become readable
    by waiting: the watch ends with one line and exit 3, as `diagnose` of the same spec does, not at --timeout."""
    if case == "unreadable":
        log = sshd.logs / f"unreadable-{backend}.log"
        log.write_bytes(b"".join(STAGES))
        log.chmod(0o000)  # the tests run as root; the SSH login is logsleuth-test, which cannot read it
    else:
        log = sshd.logs / f"a-directory-{backend}.log"
        log.mkdir(exist_ok=True)
    spec = f"logsleuth-alias:{log}"
    try:
        watched = subprocess.run(_argv(spec, sshd.config, backend), capture_output=True, text=True,
                                 env=environment(True), timeout=HANG)
        diagnosed = subprocess.run([sys.executable, "-m", "logsleuth", "diagnose", spec, "--ssh-config", str(sshd.config),
                                    "--ssh-backend", backend], capture_output=True, text=True, env=environment(True),
                                   timeout=HANG)
    finally:
        if log.is_dir():
            log.rmdir()
        else:
            log.unlink()
    assert diagnosed.returncode == 3, diagnosed.stderr
    assert watched.returncode == 3, watched.stderr
    assert len(watched.stderr.splitlines()) == 1, watched.stderr
    assert watched.stderr.startswith(f"logsleuth: {spec}: "), watched.stderr
    assert "waiting" not in watched.stderr and "Traceback" not in watched.stderr
