"""Sessions that break while logsleuth reads: a frozen server, a killed one, a log truncated under the reader,
Ctrl-C during a stuck read, and connects bounded by a caller's deadline.

Each runs the real CLI (`python -m logsleuth`, so the SSH helper process takes part unless turned off) in a
subprocess with a timeout: a hang fails the test instead of hanging the suite.  The server side is made to
misbehave for real: the gated test account (sshd_server.Gate) holds one exec, and the test stops (SIGSTOP) or
kills (SIGKILL) the sshd processes of that very connection, or truncates the log, before letting it go on.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from remote_logs import FAILURE, LINE
from sshd_server import SSHD, Gate, stopped

from logsleuth.errors import SourceError
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from tests.helpers import spawn

pytestmark = pytest.mark.ssh

# The failure first, then ~1 MiB without one: the reader's first window (the probe's prefetch) finds nothing, so
# a second exec (a wider window, or grep with --all) always follows the probe.
LOG = FAILURE + LINE * 10000


def fault_config(sshd: SSHD, name: str, extra: str = "") -> Path:
    return sshd.write_config(
        name,
        f"Host *\n    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {sshd.root}/client/known_hosts\n{extra}",
    )


def start_cli(config: Path, *args: str, helper: bool = True) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "LOGSLEUTH_SSH_WORKER")}
    environment["LOGSLEUTH_SSH_WORKER"] = "1" if helper else "0"
    return spawn(
        [sys.executable, "-m", "logsleuth", "diagnose", *args, "--ssh-config", str(config), "--format", "json"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=environment,
    )


def finish(process: subprocess.Popen[str], timeout: float) -> tuple[int, str]:
    try:
        _, stderr = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise AssertionError(f"logsleuth still running after {timeout} s (a hang)") from None
    return process.returncode, stderr


@pytest.fixture
def log(sshd: SSHD, request: pytest.FixtureRequest) -> Path:
    path = sshd.logs / f"fault-{request.node.name.replace('[', '-').rstrip(']')}.log"
    path.write_bytes(LOG)
    yield path  # type: ignore[misc]
    path.unlink(missing_ok=True)


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize(
    ("helper", "backend"),
    [(True, "paramiko"), (False, "paramiko"), (True, "openssh")],
    ids=["helper", "in-process", "openssh"],
)
def test_a_frozen_server_is_a_stall_after_the_configured_keepalives(
    sshd: SSHD, log: Path, helper: bool, backend: str
) -> None:
    """ServerAliveInterval 1 × ServerAliveCountMax 2: no answer for 2 s and the read gives up, in one line (ssh's
    own keepalives with the openssh backend)."""
    extra = "    ServerAliveInterval 1\n    ServerAliveCountMax 2\n"
    config = fault_config(sshd, f"frozen-{backend}", extra + (sshd.choose_openssh if backend == "openssh" else ""))
    with Gate(sshd) as gate:  # holds the very first exec (the probe)
        process = start_cli(config, sshd.hold_spec(log), helper=helper)
        with stopped(gate.session(process)):
            gate.release()  # the probe runs, but its answer waits in a stopped sshd
            frozen_at = time.monotonic()
            status, stderr = finish(process, timeout=90)
            waited = time.monotonic() - frozen_at
    assert stderr == "logsleuth: 127.0.0.1: connection stalled after 2 s\n"
    assert status == 3
    assert waited > 1.5  # not before the keepalives ran out (a loaded machine only makes this longer)


@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_a_killed_session_is_a_lost_connection(sshd: SSHD, log: Path, backend: str) -> None:
    config = fault_config(sshd, f"killed-{backend}", sshd.choose_openssh if backend == "openssh" else "")
    with Gate(sshd, passing=1) as gate:  # the probe passes; the wider read after it is held
        process = start_cli(config, sshd.hold_spec(log))
        gate.session(process)
        gate.signal_session(signal.SIGKILL)
        gate.release()
        status, stderr = finish(process, timeout=30)
    assert stderr == "logsleuth: 127.0.0.1: connection lost while reading\n"
    assert status == 3


@pytest.mark.parametrize("mode", [("--all",), ()], ids=["all", "latest"])
def test_a_log_truncated_while_being_read(sshd: SSHD, log: Path, mode: tuple[str, ...]) -> None:
    """logrotate's copytruncate between the size probe and the reads: one line, exit 3 (not a wrong answer)."""
    config = fault_config(sshd, "truncated")
    spec = sshd.hold_spec(log)
    with Gate(sshd, passing=1) as gate:  # the probe sees the full size; the next exec meets the truncated file
        process = start_cli(config, *mode, spec)
        gate.session(process)
        with log.open("r+b") as handle:
            handle.truncate(1000)
        gate.release()
        status, stderr = finish(process, timeout=30)
    assert stderr == f"logsleuth: {spec}: changed while being read\n"
    assert status == 3


@pytest.mark.parametrize(
    ("helper", "backend"),
    [(True, "paramiko"), (False, "paramiko"), (True, "openssh"), (False, "openssh")],
    ids=["helper", "in-process", "openssh-helper", "openssh-in-process"],
)
@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_one_ctrl_c_ends_a_stuck_read_at_once(sshd: SSHD, log: Path, helper: bool, backend: str) -> None:
    """A frozen read with a long stall limit: the first Ctrl-C exits 130 promptly, helper or not."""
    extra = "    ServerAliveInterval 60\n" + (sshd.choose_openssh if backend == "openssh" else "")
    config = fault_config(sshd, f"ctrl-c-{backend}", extra)
    with Gate(sshd, passing=1) as gate:  # the probe passes; the wider read after it freezes
        process = start_cli(config, sshd.hold_spec(log), helper=helper)
        with stopped(gate.session(process)):
            gate.release()
            time.sleep(1.0)  # the CLI is now waiting on the frozen read
            process.send_signal(signal.SIGINT)
            interrupted_at = time.monotonic()
            status, stderr = finish(process, timeout=45)
            took = time.monotonic() - interrupted_at
    assert status == 130
    # __main__ prints "interrupted" when KeyboardInterrupt reaches it; typer 0.2x turns it into a silent exit 130
    assert stderr in ("", "logsleuth: interrupted\n"), stderr
    assert took < 45  # at once, not after the 60 s keepalive (3 × 60 s before a stall): only a hang fails this


# --- connecting: attempts, total time and the caller's deadline ------------------------------------------------


@pytest.fixture
def silent_port() -> int:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the TCP handshake; nobody ever speaks SSH
        yield silent.getsockname()[1]  # type: ignore[misc]


def connect_error(spec: str, opts: SSHOptions) -> tuple[str, float]:
    started = time.monotonic()
    with pytest.raises(SourceError) as caught:
        open_sources(spec, opts)
    return str(caught.value), time.monotonic() - started


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_a_timeout_after_retries_states_the_attempts_and_the_real_time(sshd: SSHD, silent_port: int) -> None:
    opts = SSHOptions(config_file=str(sshd.config), connect_timeout=1.0, connect_attempts=3)
    message, took = connect_error(f"127.0.0.1:{silent_port}:/x.log", opts)
    found = re.fullmatch(
        rf"127\.0\.0\.1: connection to 127\.0\.0\.1 port {silent_port} timed out after 3 attempts in "
        r"([\d.]+) s \(no SSH handshake\)",
        message,
    )
    assert found, message
    assert 3.5 < float(found[1]) <= took + 0.1  # 3 × 1 s plus the backoff between them: the real total


def test_a_deadline_bounds_the_whole_connect(sshd: SSHD, silent_port: int) -> None:
    """`watch --timeout 5` on a silent port: the deadline cuts the attempts, not 3 × 10 s plus backoff.  The
    connect code is imported first, and the deadline leaves time to reach the handshake: on a loaded machine the
    imports alone took 2 s (the deadline passed before the first attempt, a message without the handshake)."""
    import logsleuth.sources.ssh.connect  # noqa: F401 - imported before the deadline starts

    opts = SSHOptions(config_file=str(sshd.config), deadline=time.monotonic() + 5.0, deadline_seconds=5.0)
    message, took = connect_error(f"127.0.0.1:{silent_port}:/x.log", opts)
    assert took < 25  # cut by the deadline: not the 3 × 10 s attempts plus backoff (a bound only a hang fails)
    assert message == f"127.0.0.1: connection to 127.0.0.1 port {silent_port} timed out after 5 s (no SSH handshake)"


def test_a_deadline_already_past_does_not_connect(sshd: SSHD, log: Path) -> None:
    opts = SSHOptions(config_file=str(sshd.config), deadline=time.monotonic() - 1)
    message, took = connect_error(f"logsleuth-alias:{log}", opts)
    assert took < 10  # no attempt: a connection to this live server would have succeeded, not raised
    assert message == "logsleuth-alias: connection to 127.0.0.1 port " f"{sshd.port} timed out after 0 s"
