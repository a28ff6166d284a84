"""`logsleuth watch HOST:PATH` through the SSH helper process (issue 13 item 7), and the helper's "clock" request
(issue 14 item 3), against the private sshd.

Only the console entry point forks the helper, so every watch here is `python -m logsleuth watch …` in a process of
its own.  Whether the helper served the watch is told from /proc: the connection to the sshd (paramiko's socket, or
OpenSSH's `ssh` process) belongs to the helper, a fork of the watch process, and not to the watch process itself.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd_server import SSHD, _command, _parent
from test_ssh_watch import CRASH, STAGES
from test_watch_faults import (
    assert_no_tail_left,
    kill_serving_sshd,
    new_tail,
    numbered,
    remote_tails,
    wait_for,
)

from tests.helpers import append_later, spawn

pytestmark = pytest.mark.ssh

BACKENDS = ("paramiko", "openssh")


# -- who holds the connection --------------------------------------------------------------------------------


def _established_to(port: int) -> set[str]:
    """The inodes of this machine's TCP sockets connected to `port` (the client ends of connections to the sshd)."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            remote_port = int(fields[2].rsplit(":", 1)[1], 16)
            if remote_port == port and fields[3] == "01":  # 01: ESTABLISHED
                inodes.add(fields[9])
    return inodes


def connection_holders(port: int) -> set[int]:
    """The pids that hold a TCP connection to `port` open (our own processes: the others' fds are not readable)."""
    sockets = {f"socket:[{inode}]" for inode in _established_to(port)}
    holders = set()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            links = {os.readlink(f"/proc/{entry}/fd/{fd}") for fd in os.listdir(f"/proc/{entry}/fd")}
        except OSError:
            continue
        if links & sockets:
            holders.add(int(entry))
    return holders


def helper_of(watcher: int) -> int | None:
    """The SSH helper of a logsleuth process: its child with the same command line (a fork), if any."""
    command = _command(watcher)
    children = [int(e) for e in os.listdir("/proc") if e.isdigit() and _parent(int(e)) == watcher]
    return next((child for child in children if _command(child) == command), None)


def ancestors(pid: int) -> list[int]:
    chain = []
    while pid > 1:
        pid = _parent(pid)
        chain.append(pid)
    return chain


# -- the watch --------------------------------------------------------------------------------------------------


def environment(helper: bool) -> dict[str, str]:
    """No ssh-agent (the test sshd takes only the config's key); the helper on or off."""
    env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "LOGSLEUTH_SSH_WORKER")}
    env["LOGSLEUTH_SSH_WORKER"] = "1" if helper else "0"
    return env


def config_for(sshd: SSHD, backend: str) -> Path:
    if backend == "paramiko":
        return sshd.config
    return sshd.write_config("watch-helper-openssh", sshd.config.read_text() + sshd.choose_openssh)


def start_watch(sshd: SSHD, log: Path, *extra: str, helper: bool = True, backend: str = "paramiko") -> subprocess.Popen[str]:
    return spawn(
        [sys.executable, "-m", "logsleuth", "watch", f"logsleuth-alias:{log}", "--ssh-config",
         str(config_for(sshd, backend)), "--timeout", "60", *extra],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(helper),
    )


@pytest.fixture
def log(sshd: SSHD, request: pytest.FixtureRequest) -> Iterator[Path]:
    path = sshd.logs / f"watch-helper-{request.node.name.replace('[', '-').rstrip(']')}.log"
    path.write_bytes(STAGES[0])
    yield path
    path.unlink(missing_ok=True)


def finish(watch: subprocess.Popen[str], writer: threading.Thread | None = None) -> tuple[int, str, str]:
    try:
        stdout, stderr = watch.communicate(timeout=90)
    finally:
        watch.kill()
        if writer is not None:
            writer.join()
    return watch.returncode, stdout, stderr


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("helper", [True, False], ids=["helper", "no helper"])
def test_watch_follows_over_the_helper_until_ready(sshd: SSHD, log: Path, backend: str, helper: bool) -> None:
    """With the helper, the remote tail's connection is the helper's; without it (the control), the watch's own."""
    watch = start_watch(sshd, log, helper=helper, backend=backend)
    try:
        wait_for(lambda: remote_tails(log), 30, "the remote tail")
        holders = connection_holders(sshd.port)
        ours = [pid for pid in holders if watch.pid in ancestors(pid) or pid == watch.pid]
        assert ours, f"no connection to the sshd under the watch ({holders})"
        helper_pid = helper_of(watch.pid)
        if helper:
            assert helper_pid is not None
            assert all(helper_pid == pid or helper_pid in ancestors(pid) for pid in ours), (ours, helper_pid)
        else:
            assert helper_pid is None
            assert all(pid == watch.pid or _parent(pid) == watch.pid for pid in ours)
    finally:
        status, stdout, stderr = finish(watch, append_later(log, STAGES[1:], 0.2))
    assert status == 0, stderr
    assert "loading weights" in stderr and "KV cache allocated" in stderr
    assert stdout.strip().endswith("the server is ready")


def test_watch_over_the_helper_reports_a_crash(sshd: SSHD, log: Path) -> None:
    watch = start_watch(sshd, log, "--format", "json")
    wait_for(lambda: remote_tails(log), 30, "the remote tail")
    served_by_helper = helper_of(watch.pid) is not None
    status, stdout, stderr = finish(watch, append_later(log, [STAGES[1], CRASH], 0.2))
    assert served_by_helper
    assert status == 1, stderr
    last = json.loads(stdout.splitlines()[-1])  # JSON lines: the failure event comes last, with the report
    assert last["event"] == "failure"
    report = last["report"]
    assert [failure["signature"] for failure in report["failures"]] == ["AssertionError"]
    assert report["sources"][0]["name"] == f"logsleuth-alias:{log}"
    assert_no_tail_left(log)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ctrl_c_leaves_no_remote_tail_and_no_helper(sshd: SSHD, log: Path, backend: str) -> None:
    watch = start_watch(sshd, log, backend=backend)
    wait_for(lambda: remote_tails(log), 30, "the remote tail")
    helper_pid = helper_of(watch.pid)
    assert helper_pid is not None
    watch.send_signal(signal.SIGINT)
    status, _, stderr = finish(watch)
    assert status == 130, stderr
    assert stderr.strip().endswith("logsleuth: interrupted"), stderr
    assert_no_tail_left(log)
    assert not Path(f"/proc/{helper_pid}").exists() or _parent(helper_pid) != watch.pid


# Forks the helper as the console entry point does, then follows the log through it while the test kills the
# sshd process serving the follow: the lines come through exactly once each, and the helper passes the follow's
# "reconnecting (attempt n)…" notices on.  Prints one JSON line per event on stdout for the test to read.
FOLLOW_SCRIPT = r"""
import json, sys
from logsleuth.internal.ssh_helper import process as ssh_prefork
from logsleuth.sources.base import ALIVE
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions

spec, config, wanted = json.loads(sys.argv[1])
ssh_prefork.fork_if_remote(["watch", spec, "-F", config])
say = lambda **event: print(json.dumps(event), flush=True)
(source,) = open_sources(spec, SSHOptions(config_file=config, notice=lambda text: say(notice=text)))
say(kind=type(source).__name__)
received = b""
chunks = source.follow(0)
for chunk in chunks:
    if chunk == ALIVE:  # the heartbeat's confirmation, not the log's bytes
        continue
    received += chunk
    if chunk:
        say(received=len(received))
    if len(received) >= wanted:
        break
chunks.close()
source.close()
say(data=received.decode())
ssh_prefork.stop()
"""


def test_a_follow_through_the_helper_survives_dropped_connections(sshd: SSHD, log: Path) -> None:
    first, second, third = numbered("a", 20), numbered("b", 20, 20), numbered("c", 20, 40)
    log.write_bytes(first)
    spec = f"logsleuth-alias:{log}"
    wanted = len(first + second + third)
    follower = subprocess.Popen(
        [sys.executable, "-c", FOLLOW_SCRIPT, json.dumps([spec, str(sshd.config), wanted])],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment(helper=True),
    )
    try:
        events = iter(follower.stdout)  # type: ignore[arg-type]
        assert json.loads(next(events)) == {"kind": "RemoteSourceProxy"}
        killed: set[int] = set()
        lines: list[dict[str, object]] = []
        for more in (second, third):
            tail = new_tail(log, killed)
            kill_serving_sshd(tail)
            killed.add(tail)
            with log.open("ab") as handle:
                handle.write(more)
            # Drop it again only once it says it is back: on a busy machine a second drop during the first
            # reconnect would be one outage, not two.
            for line in events:
                lines.append(json.loads(line))
                if "reconnected" in str(lines[-1].get("notice", "")):
                    break
        lines += [json.loads(line) for line in events]
        stderr = follower.stderr.read()  # type: ignore[union-attr]
    finally:
        follower.kill()
        follower.wait()
    assert follower.returncode == 0, stderr
    notices = [event["notice"] for event in lines if "notice" in event]
    assert sum("reconnecting (attempt 1)" in notice for notice in notices) == 2, notices
    assert lines[-1] == {"data": (first + second + third).decode()}
    assert_no_tail_left(log)


# -- the clock of each host in a fleet diagnose (issue 14 item 3) ----------------------------------------------

CRASHED = STAGES[0] + CRASH


def diagnose_json(sshd: SSHD, *specs: str, helper: bool) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "diagnose", *specs, "-F", str(sshd.config), "--format", "json"],
        capture_output=True, text=True, env=environment(helper), timeout=120,
    )
    assert proc.returncode == 1, proc.stderr
    report: dict[str, object] = json.loads(proc.stdout)
    return report


@pytest.mark.parametrize("helper", [True, False], ids=["helper", "no helper"])
def test_a_fleet_diagnose_reports_each_hosts_clock(sshd: SSHD, tmp_path: Path, helper: bool) -> None:
    """Two remote logs (a fleet: each host's clock, measured over its own connection, by the helper when there is
    one) and a local one (our own clock: not measured)."""
    logs = [sshd.logs / f"clock-fleet-{n}.log" for n in range(2)]
    local = tmp_path / "local.log"
    for path in [*logs, local]:
        path.write_bytes(CRASHED)
    try:
        report = diagnose_json(sshd, *(f"logsleuth-alias:{path}" for path in logs), str(local), helper=helper)
    finally:
        for path in logs:
            path.unlink()
    sources = report["sources"]
    assert isinstance(sources, list)
    clocks = [source["clock"] for source in sources]
    assert clocks[2] is None
    for clock in clocks[:2]:
        # The test sshd runs on this machine: one clock, so the offset is 0 within the measurement's uncertainty.
        assert 0 < clock["uncertainty_seconds"] < 2.0, clock
        assert abs(clock["offset_seconds"]) <= clock["uncertainty_seconds"] + 0.005, clock


@pytest.mark.parametrize("helper", [True, False], ids=["helper", "no helper"])
def test_a_single_remote_source_does_not_measure_the_clock(sshd: SSHD, helper: bool) -> None:
    log = sshd.logs / "clock-single.log"
    log.write_bytes(CRASHED)
    try:
        report = diagnose_json(sshd, f"logsleuth-alias:{log}", helper=helper)
    finally:
        log.unlink()
    sources = report["sources"]
    assert isinstance(sources, list)
    assert [source["clock"] for source in sources] == [None]
