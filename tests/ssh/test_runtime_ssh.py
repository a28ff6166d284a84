"""`HOST:docker:C`, `HOST:podman:C` and `HOST:journal:UNIT` over the test sshd, with both SSH backends.

The host's `docker`, `journalctl` and `systemctl` are the stand-ins of tests/runtime/standins, first on the
PATH of the `logsleuth-runtime` account (sshd_server.py): no Docker daemon, journald or systemd-as-PID-1 can
run on the test machines.  Everything else is real: sshd, the login shell, the quoting of every argument.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_diagnose
from sshd_server import RUNTIME_USER, SSHD, runtime_bin, runtime_state

from tests.runtime.conftest import STANDINS, Runtime

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "eagle3-incident.log"
BACKENDS = ["paramiko", "openssh"]


@pytest.fixture
def remote_runtime(sshd: SSHD) -> Runtime:
    return install_standins(sshd)


def install_standins(sshd: SSHD) -> Runtime:
    """The stand-ins and an empty state for them on the test host (the stand-ins are copied: pytest's own temp
    dirs are private to root, and the test account must run them)."""
    bin_dir, state = runtime_bin(sshd.root), runtime_state(sshd.root)
    for path in (bin_dir, state):
        shutil.rmtree(path, ignore_errors=True)
    shutil.copytree(STANDINS, bin_dir)
    (bin_dir / "podman").symlink_to("docker")  # podman's CLI takes docker's flags for logs and inspect
    bin_dir.chmod(0o755)
    for part in ("", "docker", "journal", "systemd"):
        (state / part).mkdir(exist_ok=True)
        (state / part).chmod(0o777)  # the stand-ins log their calls here, as the test account
    return Runtime(state)


def _report(sshd: SSHD, backend: str, *specs: str, status: int = 1) -> dict[str, Any]:
    done = run_diagnose(sshd.config, *specs, "--ssh-backend", backend)
    assert done.returncode == status, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _records() -> list[tuple[str, str]]:
    return [("stderr", line) for line in EXAMPLE.read_text().splitlines()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_container_on_a_host(sshd: SSHD, remote_runtime: Runtime, backend: str) -> None:
    remote_runtime.container("sglang", _records(), exit_code=1)
    report = _report(sshd, backend, f"{RUNTIME_USER}@logsleuth-alias:docker:sglang")
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    assert report["sources"][0]["host"] == "logsleuth-alias"
    # The same argv as locally, each argument passed as itself through the remote shell.
    assert [call[:2] for call in remote_runtime.calls()] == [["docker", "inspect"], ["docker", "logs"]]
    assert remote_runtime.calls()[1][2:] == ["--tail", "2000", "--", "sglang"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_oom_killed_container_on_a_host_names_its_fact(sshd: SSHD, remote_runtime: Runtime, backend: str) -> None:
    loading = ["[2026-11-30 22:10:31] Load weight begin. avail mem=78.50 GB"]
    remote_runtime.container("sglang", [("stdout", line) for line in loading], oom_killed=True, exit_code=137)
    done = run_diagnose(sshd.config, f"{RUNTIME_USER}@logsleuth-alias:docker:sglang", "--ssh-backend", backend)
    report = json.loads(done.stdout)
    assert done.returncode == 1, done.stderr
    assert report["failures"][0]["diagnosis"]["pattern"] == "common-cgroup-oom-killed"
    assert "OOMKilled by its cgroup" in json.dumps(report["failures"][0])


def test_a_unit_on_a_host(sshd: SSHD, remote_runtime: Runtime) -> None:
    stamp = "2026-11-30T22:10:31+0000 gpu7 python3[4187]: "
    remote_runtime.unit("sglang.service", [stamp + "Load weight begin. avail mem=78.50 GB"],
                        {"LoadState": "loaded", "ActiveState": "failed", "Result": "oom-kill", "ExecMainCode": "2",
                         "ExecMainStatus": "9", "NRestarts": "1"})
    report = _report(sshd, "openssh", f"{RUNTIME_USER}@logsleuth-alias:journal:sglang.service")
    assert "Result=oom-kill" in json.dumps(report["failures"][0])
    assert [call[0] for call in remote_runtime.calls()] == ["systemctl", "journalctl"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_container_name_with_shell_characters_reaches_docker_as_itself(
    sshd: SSHD, remote_runtime: Runtime, backend: str
) -> None:
    # A valid Docker name may hold `.`, `-` and `_`; nothing else passes the spec check, so this is the
    # strangest name that reaches the host.  It must arrive as one argument, unchanged.
    remote_runtime.container("a.b-c_d", _records(), exit_code=1)
    _report(sshd, backend, f"{RUNTIME_USER}@logsleuth-alias:docker:a.b-c_d")
    assert remote_runtime.calls()[0][-1] == "a.b-c_d"


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (f"{RUNTIME_USER}@logsleuth-alias:docker:nope", "docker:nope: no such container (docker ps -a lists them)"),
        # The notail account's PATH is an empty directory: no docker there.
        ("logsleuth-notail@logsleuth-alias:docker:sglang", "docker:sglang: docker is not installed (not found on PATH)"),
    ],
)
@pytest.mark.parametrize("backend", BACKENDS)
def test_errors_on_a_host_are_one_line_and_exit_3(
    sshd: SSHD, remote_runtime: Runtime, backend: str, spec: str, message: str
) -> None:
    remote_runtime.container("sglang", _records())
    done = run_diagnose(sshd.config, spec, "--ssh-backend", backend)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1
    assert lines[0].startswith("logsleuth: ") and lines[0].endswith(message)


def test_a_fleet_of_containers(sshd: SSHD, remote_runtime: Runtime) -> None:
    # Two "hosts" (aliases of the one test sshd) with a container each: one crashed, one still loading.
    remote_runtime.container("sglang", _records(), exit_code=1)
    remote_runtime.container("other", [("stdout", "Load weight begin. avail mem=78.50 GB")], status="running")
    report = _report(
        sshd, "openssh", f"{RUNTIME_USER}@logsleuth-alias:docker:sglang", f"{RUNTIME_USER}@logsleuth-alias:docker:other"
    )
    assert report["fleet"] is not None
    outcomes = {member["source"]: member["outcome"] for member in report["fleet"]["hosts"]}
    assert outcomes == {
        f"{RUNTIME_USER}@logsleuth-alias:docker:sglang": "root",
        f"{RUNTIME_USER}@logsleuth-alias:docker:other": "no-failure",
    }


@pytest.mark.parametrize("backend", BACKENDS)
def test_watch_a_container_on_a_host_until_it_crashes(sshd: SSHD, remote_runtime: Runtime, backend: str) -> None:
    # `docker logs --follow` runs on the host; the stand-in follows the container while it is "running" and ends
    # its stream when the test marks it exited, after which `docker inspect` tells the exit.
    import subprocess
    import sys
    import threading

    from tests.runtime.test_follow import set_container
    from tests.runtime.test_watch_runtime import LAUNCH, _records

    set_container(remote_runtime, "web", _records(LAUNCH), status="running")
    crash = [*_records(LAUNCH), *_records(EXAMPLE.read_text().splitlines(), 10, "stderr")]
    timer = threading.Timer(1.5, lambda: set_container(remote_runtime, "web", crash, exit_code=1))
    timer.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "logsleuth", "watch", f"{RUNTIME_USER}@logsleuth-alias:docker:web",
             "--ssh-config", str(sshd.config), "--ssh-backend", backend, "--timeout", "30", "--format", "json"],
            capture_output=True, text=True, timeout=90)
    finally:
        timer.cancel()
    assert done.returncode == 1, done.stderr
    assert "sglang-eagle-partial-spec-args" in done.stdout
    assert ["docker", "logs", "--follow"] in [call[:3] for call in remote_runtime.calls()]


def test_a_podman_container_on_a_host(sshd: SSHD, remote_runtime: Runtime) -> None:
    remote_runtime.container("sglang", _records(), exit_code=1)
    report = _report(sshd, "paramiko", f"{RUNTIME_USER}@logsleuth-alias:podman:sglang")
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    assert [call[:2] for call in remote_runtime.calls()] == [["podman", "inspect"], ["podman", "logs"]]


def test_watch_a_unit_on_a_host_until_ready(sshd: SSHD, remote_runtime: Runtime) -> None:
    # `journalctl --follow` on the host (the stand-in follows its state file until the watch ends it).
    import subprocess
    import sys
    import threading

    from tests.runtime.test_follow import set_unit
    from tests.runtime.test_watch_runtime import LAUNCH, READY

    stamp = "2026-11-30T22:10:31+0000 gpu7 python3[4187]: "
    remote_runtime.unit("sglang.service", [stamp + line for line in LAUNCH],
                        {"LoadState": "loaded", "ActiveState": "active", "Result": "success", "NRestarts": "0"})
    timer = threading.Timer(1.5, lambda: set_unit(remote_runtime, "sglang.service",
                                                  [stamp + line for line in LAUNCH + READY]))
    timer.start()
    try:
        done = subprocess.run(
            [sys.executable, "-m", "logsleuth", "watch", f"{RUNTIME_USER}@logsleuth-alias:journal:sglang.service",
             "--ssh-config", str(sshd.config), "--timeout", "30"],
            capture_output=True, text=True, timeout=90)
    finally:
        timer.cancel()
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().endswith("the server is ready")
    _assert_the_follow_ended_on_the_host(sshd)


def _assert_the_follow_ended_on_the_host(sshd: SSHD) -> None:
    """The unit was quiet after "ready", so `journalctl --follow` would never learn from a write that the watch
    ended: it must still go with the session, not stay on the host."""
    import subprocess
    import time

    follower = str(runtime_bin(sshd.root) / "journalctl")
    deadline = time.monotonic() + 10
    while True:
        left = subprocess.run(["pgrep", "-f", follower], capture_output=True, text=True).stdout.split()
        if not left or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    assert not left, f"journalctl --follow still running on the host after the watch ended: pids {left}"


# -- a follow whose SSH connection drops: reconnected as `watch HOST:PATH` is ---------------------------------------
#
# The serving sshd of the remote follow (the stand-in's `docker logs --follow` or `journalctl --follow`, found by its
# command line) is killed by pid, as tests/ssh/test_watch_faults.py does for `tail -F`.


def remote_followers(sshd: SSHD, program: str) -> set[int]:
    """The pids of the stand-in `program` running with --follow on the host."""
    path = str(runtime_bin(sshd.root) / program).encode()
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                argv = (Path("/proc") / entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if path in argv and b"--follow" in argv:
                found.add(int(entry))
    return found


def drop_the_connection_of(sshd: SSHD, program: str, old: set[int] | None = None) -> int:
    """Kill the sshd serving the (one new) remote follower of `program`: its connection is lost."""
    from test_watch_faults import kill_serving_sshd, wait_for

    found = wait_for(lambda: remote_followers(sshd, program) - (old or set()), 30, f"a remote {program} --follow")
    assert isinstance(found, set) and len(found) == 1, found
    follower = found.pop()
    kill_serving_sshd(follower)
    return follower


def _crash_reported_after(sshd: SSHD, spec: str, backend: str, meanwhile: Callable[[], None]) -> list[dict[str, Any]]:
    """`logsleuth watch SPEC --format json` while `meanwhile` breaks things; it must report the example's crash
    (exit 1).  Its JSON events."""
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    process = subprocess.Popen(
        [sys.executable, "-m", "logsleuth", "watch", spec, "--ssh-config", str(sshd.config), "--ssh-backend", backend,
         "--timeout", "60", "--format", "json"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment)
    try:
        meanwhile()
        stdout, stderr = process.communicate(timeout=90)  # a hang fails here
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1, stderr
    assert "sglang-eagle-partial-spec-args" in stdout
    return [json.loads(line) for line in stdout.splitlines()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_watch_a_container_on_a_host_across_a_dropped_connection(
    sshd: SSHD, remote_runtime: Runtime, backend: str
) -> None:
    """The connection of `docker logs --follow` is lost while the server loads; the crash is written then.  The watch
    reconnects (announced as for HOST:PATH), follows on and reports the crash (exit 1, not 3)."""
    from tests.runtime.test_follow import set_container
    from tests.runtime.test_watch_runtime import LAUNCH, _records

    set_container(remote_runtime, "web", _records(LAUNCH), status="running")

    def drop_then_crash() -> None:
        drop_the_connection_of(sshd, "docker")
        crash = [*_records(LAUNCH), *_records(EXAMPLE.read_text().splitlines(), 10, "stderr")]
        set_container(remote_runtime, "web", crash, exit_code=1)

    events = _crash_reported_after(sshd, f"{RUNTIME_USER}@logsleuth-alias:docker:web", backend, drop_then_crash)
    reconnects = [event for event in events if event["event"] == "reconnect"]
    assert reconnects and reconnects[0]["attempt"] == 1, events
    assert reconnects[0]["message"].startswith(f"{RUNTIME_USER}@logsleuth-alias:docker:web: ")


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_unit_followed_on_a_host_loses_and_repeats_no_line_across_drops(
    sshd: SSHD, remote_runtime: Runtime, backend: str
) -> None:
    """`journalctl --follow`'s connection is killed twice, with lines written while it is down: every line arrives
    once, in order (the reconnected follow starts with the newest lines again; those already delivered are
    dropped)."""
    from logsleuth.sources.options import SSHOptions
    from logsleuth.sources.runtime.follow import open_followed
    from tests.runtime.test_follow import set_unit

    stamp = "2026-11-30T22:10:31+0000 gpu7 python3[4187]: "
    lines = [f"{stamp}line {n:04d}" for n in range(30)]
    remote_runtime.unit("sglang.service", lines[:10], {"LoadState": "loaded", "ActiveState": "active",
                                                       "Result": "success", "NRestarts": "0"})
    from test_watch_faults import Reader, wait_for

    # A follower of the test before ends within a second of its session: not to be taken for this one's.
    wait_for(lambda: not remote_followers(sshd, "journalctl"), 10, "the followers of earlier tests to end")
    notices: list[str] = []
    options = SSHOptions(config_file=str(sshd.config), backend=backend, notice=notices.append)  # type: ignore[arg-type]
    followed = open_followed(f"{RUNTIME_USER}@logsleuth-alias:journal:sglang.service", options)
    reader = Reader(followed.follow(0))
    reader.start()
    try:
        killed: set[int] = set()
        for written in (10, 20):
            reader.wait_until([_text(lines[:written])])
            killed.add(drop_the_connection_of(sshd, "journalctl", killed))
            set_unit(remote_runtime, "sglang.service", lines[: written + 10])  # while the connection is down
        reader.wait_until([_text(lines)])
        time.sleep(0.5)  # nothing more comes
    finally:
        reader.stop()
        followed.close()
    assert reader.error is None, reader.error
    assert reader.generations() == [_text(lines)]
    assert sum("reconnecting (attempt 1)" in notice for notice in notices) == 2, notices


def _text(lines: list[str]) -> bytes:
    return "".join(line + "\n" for line in lines).encode()


def test_a_resumed_follow_passes_on_only_what_comes_after_what_was_delivered() -> None:
    """The overlap rule alone: the newest lines again, cut after the end of what was delivered; when that end is
    not among them (more lines were written while the connection was down), all of them once the command is
    quiet for a second (25 idle ticks)."""
    from logsleuth.sources.runtime.link import Resumed

    resumed = Resumed(b"line 2\nline 3\n")
    assert [resumed.feed(chunk) for chunk in (b"line 1\nline 2\n", b"line 3\nline 4\n", b"line 5\n")] == [
        b"", b"line 4\n", b"line 5\n"]
    gap = Resumed(b"line 3\n")
    assert gap.feed(b"line 90\nline 91\n") == b""
    assert b"".join(gap.feed(b"") for _ in range(25)) == b"line 90\nline 91\n"
    assert gap.feed(b"line 92\n") == b"line 92\n"


def runtime_sessions(sshd: SSHD) -> set[int]:
    """The per-connection sshd processes of the runtime account under this test's own sshd (found by its listener,
    whose title names the config under sshd.root): nobody else's."""
    from sshd_server import _command, _parent

    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit() and _command(int(entry)) == f"sshd: {RUNTIME_USER}@notty":
            pid = int(entry)
            while pid > 1:
                pid = _parent(pid)
                if str(sshd.root) in _command(pid):
                    found.add(int(entry))
                    break
    return found


def test_a_connection_lost_while_a_stopped_container_is_waited_for_is_reconnected(
    sshd: SSHD, remote_runtime: Runtime
) -> None:
    """`docker stop` ends the run (SIGTERM): the watch waits for a restart, asking `docker inspect` every second over
    its one connection (paramiko's), which is lost then.  It reconnects, sees the restart, and reports the new run's
    crash (exit 1, not 3)."""
    from test_watch_faults import wait_for

    from tests.runtime.test_follow import RUN1_END, RUN2_START, set_container
    from tests.runtime.test_watch_runtime import LAUNCH, _records

    run1 = _records(LAUNCH)
    set_container(remote_runtime, "web", run1, status="running")

    def stop_drop_then_restart() -> None:
        wait_for(lambda: remote_followers(sshd, "docker"), 30, "a remote docker --follow")
        set_container(remote_runtime, "web", run1, exit_code=143, finished_at=RUN1_END)  # docker stop
        wait_for(lambda: not remote_followers(sshd, "docker"), 30, "the run's follow to end")
        sessions = wait_for(lambda: runtime_sessions(sshd), 30, "the watch's connection")
        for session in sessions:  # type: ignore[union-attr]
            os.kill(session, signal.SIGKILL)
        run2 = _records(EXAMPLE.read_text().splitlines(), 62, "stderr")  # from 22:11:02, after RUN1_END
        set_container(remote_runtime, "web", run1 + run2, status="running", started_at=RUN2_START,
                      finished_at=RUN1_END, restarts=1)

    events = _crash_reported_after(sshd, f"{RUNTIME_USER}@logsleuth-alias:docker:web", "paramiko",
                                   stop_drop_then_restart)
    assert "reconnect" in [event["event"] for event in events]
