"""`watch HOST:PATH` over the real test sshd (issue 30, finding 10): the ready URL names the source's host where
the server bound every address, and a dropped connection is told once per attempt, naming the source once, then
"reconnected" when the follow is back, also when the connection drops as the follow starts; with both
backends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from sshd_server import SSHD, Gate
from test_ssh_faults import fault_config
from test_watch_faults import BACKENDS, READY, STAGES, kill_serving_sshd, new_tail

from tests.helpers import spawn

pytestmark = pytest.mark.ssh
HANG = 90


def _start(sshd: SSHD, log: Path, backend: str, *extra: str) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    return spawn(
        [sys.executable, "-m", "logsleuth", "watch", f"logsleuth-alias:{log}", "--ssh-config", str(sshd.config),
         "--ssh-backend", backend, "--timeout", "60", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
    )


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_ready_url_names_the_sources_host(sshd: SSHD, backend: str) -> None:
    log = sshd.logs / f"ready-url-{backend}.log"
    log.write_bytes(
        b"[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', host='0.0.0.0', port=30000, tp_size=1)\n"
        + b"".join(STAGES[1:]) + b"INFO:     Uvicorn running on http://0.0.0.0:30000 (Press CTRL+C to quit)\n" + READY
    )
    try:
        watch = _start(sshd, log, backend, "--format", "json")
        stdout, stderr = watch.communicate(timeout=HANG)
    finally:
        log.unlink()
    assert watch.returncode == 0, stderr
    ready = json.loads(stdout.splitlines()[-1])
    assert ready["event"] == "ready"
    assert ready["url"] == "http://logsleuth-alias:30000"  # the host as the user named it
    assert ready["launch_seconds"] == 22.0  # from server_args at 10:00:00 to ready at 10:00:22, the log's times


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_reconnect_is_told_once_and_so_is_its_end(sshd: SSHD, backend: str) -> None:
    log = sshd.logs / f"reconnect-notice-{backend}.log"
    log.write_bytes(STAGES[0])
    spec = f"logsleuth-alias:{log}"
    watch = _start(sshd, log, backend)
    try:
        tail = new_tail(log, set(), watch)
        kill_serving_sshd(tail)
        new_tail(log, {tail}, watch)  # the follow is back
        with log.open("ab") as handle:
            handle.write(b"".join(STAGES[1:]) + READY)
        stdout, stderr = watch.communicate(timeout=HANG)
    finally:
        if watch.poll() is None:
            watch.kill()
            watch.communicate()
        log.unlink()
    assert watch.returncode == 0, stderr
    lines = stderr.splitlines()
    reconnecting = [line for line in lines if "reconnecting (attempt" in line]
    assert reconnecting and all(line.count(spec) == 1 for line in reconnecting), stderr
    assert reconnecting[0].startswith(f"logsleuth: {spec}: ")
    after = lines[lines.index(reconnecting[-1]) + 1 :]
    assert any(line.startswith(f"logsleuth: {spec}: reconnected (attempt ") for line in after), stderr


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_connection_lost_as_the_follow_starts_is_reconnected(sshd: SSHD, backend: str) -> None:
    """The drop comes before the remote follow's first line reaches watch (CI saw it on a busy machine: the sshd
    serving a just-started tail was killed before its first line was forwarded, and watch gave up with exit 3).
    The gate holds the follow's exec, the one after the probe; its connection is killed there."""
    log = sshd.logs / f"first-leg-{backend}.log"
    log.write_bytes(STAGES[0])
    log.chmod(0o644)  # the gated account reads it
    config = fault_config(sshd, f"first-leg-{backend}", sshd.choose_openssh if backend == "openssh" else "")
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    watch: subprocess.Popen[str] | None = None
    try:
        with Gate(sshd, passing=1) as gate:  # the probe passes; the follow is held
            watch = spawn(
                [sys.executable, "-m", "logsleuth", "watch", sshd.hold_spec(log), "--ssh-config", str(config),
                 "--ssh-backend", backend, "--timeout", "60"],
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
            )
            gate.session(watch)
            assert b"--pid=" in Path(f"/proc/{gate.held.read_text().strip()}/cmdline").read_bytes()  # the follow's
            gate.signal_session(signal.SIGKILL)
            gate.release()
        new_tail(log, set(), watch)  # the follow is back
        with log.open("ab") as handle:
            handle.write(b"".join(STAGES[1:]) + READY)
        stdout, stderr = watch.communicate(timeout=HANG)
    finally:
        if watch is not None and watch.poll() is None:
            watch.kill()
            watch.communicate()
        log.unlink()
    assert watch.returncode == 0, stderr
    assert "connection lost while reading; reconnecting (attempt 1)" in stderr
    assert "reconnected (attempt 1)" in stderr
