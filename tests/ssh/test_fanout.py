"""Many remote sources at once (sources/fanout.py, api.diagnose, the concurrent SSH helper protocol) against
the private sshd: one sshd reached under many ssh-config aliases (`Host node01 … HostName 127.0.0.1`), as a
fleet of hosts would be.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_diagnose
from remote_logs import LINE
from sshd_server import SSHD, without_attempt_time

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.models import Report
from logsleuth.sources.options import SSHOptions
from tests.helpers import spawn

pytestmark = pytest.mark.ssh


def node(number: int) -> str:
    return f"node{number:02d}"


def fleet_config(sshd: SSHD, hosts: int, name: str = "fleet", extra: str = "") -> Path:
    """A client config naming `hosts` aliases of the one test sshd."""
    aliases = "".join(
        f"Host {node(n)}\n    HostName 127.0.0.1\n    Port {sshd.port}\n\n" for n in range(1, hosts + 1)
    )
    return sshd.write_config(
        name,
        f"{aliases}Host *\n    User logsleuth-test\n    IdentityFile {sshd.client_key}\n    IdentitiesOnly yes\n"
        f"    UserKnownHostsFile {sshd.root}/client/known_hosts\n{extra}",
    )


def crash(number: int) -> bytes:
    """Each host's own failure, so that a source read twice or swapped with another shows in the report."""
    return (
        f"[2025-11-06 02:10:{number % 60:02d} TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
        '  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2316, in run_scheduler_process\n'
        "    scheduler.event_loop_overlap()\n"
        f"RuntimeError: host {node(number)} failed\n"
    ).encode()


@pytest.fixture
def fleet_logs(sshd: SSHD, request: pytest.FixtureRequest) -> Iterator[dict[int, Path]]:
    """32 logs of ~400 KiB, each ending in its host's own failure (log N is read through alias nodeN)."""
    paths = {}
    for number in range(1, 33):
        path = sshd.logs / f"fanout-{request.node.name.split('[')[0]}-{number}.log"
        path.write_bytes(LINE * 4000 + crash(number))
        paths[number] = path
    yield paths
    for path in paths.values():
        path.unlink(missing_ok=True)


def refused_spec() -> str:
    """A source on a port of 127.0.0.1 that nobody listens on: connecting to it is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = int(probe.getsockname()[1])
    return f"logsleuth-test@127.0.0.1:{port}:/var/log/none.log"


class SourceStates:
    """An `on_source` callback (called from worker threads): every call, and the most sources that were
    between "connecting" and their end at the same time."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, str, str | None]] = []
        self.most = 0
        self._running = 0
        self._lock = threading.Lock()

    def __call__(self, name: str, state: str, detail: str | None) -> None:
        with self._lock:
            self.calls.append((name, state, detail))
            self._running += {"connecting": 1, "done": -1, "error": -1}.get(state, 0)
            self.most = max(self.most, self._running)


def cli_environment(helper: bool) -> dict[str, str]:
    """This environment for a child logsleuth: no ssh-agent, the SSH helper on or off."""
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    environment["LOGSLEUTH_SSH_WORKER"] = "1" if helper else "0"
    return environment


def failed_sources(report: Report) -> list[str]:
    return sorted(name for group in report.failures for name in group.sources)


def without_clocks(report: Report) -> Report:
    """A report without its clock measurements (each host's clock, the fleet's spread and what follows from it)
    and without the time its connection attempts took (a loaded machine makes it 1.3 s one time and 1.1 s the
    next): they differ from one measurement to the next."""
    sources = tuple(replace(info, clock=None, error=without_attempt_time(info.error)) for info in report.sources)
    fleet = report.fleet and replace(
        report.fleet,
        clock_spread=None,
        root_uncertain=False,
        members=tuple(replace(member, error=without_attempt_time(member.error)) for member in report.fleet.members),
    )
    return replace(report, sources=sources, fleet=fleet)


def json_without_clocks(report: dict[str, Any]) -> dict[str, Any]:
    """The same for a JSON report."""
    for source in report["sources"]:
        source["clock"] = None
        source["error"] = without_attempt_time(source.get("error"))
    if report.get("fleet"):
        report["fleet"].update(clock_spread_seconds=None, root_uncertain=False)
        for member in report["fleet"].get("hosts") or ():
            if "error" in member:
                member["error"] = without_attempt_time(member["error"])
    return report


def in_process(config: Path) -> DiagnoseOptions:
    return DiagnoseOptions(ssh=SSHOptions(config_file=str(config)), include_user_patterns=False)


# -- the core: api.diagnose reads the sources at once ----------------------------------------------------------


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_32_sources_at_once_give_the_sequential_report(sshd: SSHD, fleet_logs: dict[int, Path]) -> None:
    config = fleet_config(sshd, 32)
    specs = [f"{node(n)}:{path}" for n, path in fleet_logs.items()]
    reports, states = [], []
    for parallel in (1, 32):
        seen = SourceStates()
        reports.append(diagnose(specs, replace(in_process(config), parallel=parallel), on_source=seen))
        states.append(seen)
    sequential, concurrent = reports
    assert without_clocks(concurrent) == without_clocks(sequential)
    assert [source.name for source in concurrent.sources] == specs  # the order of the command line
    assert failed_sources(concurrent) == sorted(specs)  # each host's failure, once
    for seen in states:
        assert sorted(seen.calls) == sorted(
            (spec, state, None) for spec in specs for state in ("connecting", "reading", "done")
        )
    assert states[0].most == 1  # parallel=1: one source after another, as before
    assert states[1].most > 8  # all 32 at once (on a loaded machine the first may end before the last starts)


def test_a_refused_host_and_a_missing_file_among_good_ones(sshd: SSHD, fleet_logs: dict[int, Path]) -> None:
    config = fleet_config(sshd, 3)
    missing = f"{node(2)}:{sshd.logs}/missing.log"
    refused = refused_spec()
    specs = [f"{node(1)}:{fleet_logs[1]}", refused, missing, f"{node(3)}:{fleet_logs[3]}"]
    seen = SourceStates()
    report = diagnose(specs, replace(in_process(config), parallel=4), on_source=seen)
    assert [source.name for source in report.sources] == specs
    errors = [source.error for source in report.sources]
    assert errors[0] is None and errors[3] is None
    assert errors[1] is not None and "refused" in errors[1]
    assert errors[2] == f"{missing}: no such file"
    assert failed_sources(report) == sorted([specs[0], specs[3]])
    assert (refused, "error", errors[1]) in seen.calls and (missing, "error", errors[2]) in seen.calls
    assert without_clocks(report) == without_clocks(diagnose(specs, replace(in_process(config), parallel=1)))


# -- the command line, with the helper process and without --------------------------------------------------


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_the_cli_reads_64_hosts_the_same_with_and_without_the_helper(
    sshd: SSHD, fleet_logs: dict[int, Path]
) -> None:
    """64 aliases (past the default --parallel 32), one of them naming a missing file."""
    config = fleet_config(sshd, 64)
    missing = f"{node(2)}:{sshd.logs}/missing.log"
    specs = [f"{node(n)}:{fleet_logs[(n - 1) % 32 + 1]}" for n in range(1, 65)]
    specs[1] = missing
    results = [run_diagnose(config, *specs, helper=helper, timeout=120) for helper in (True, False)]
    for result in results:
        assert result.returncode == 1, result.stderr
        assert result.stderr == f"logsleuth: {missing}: no such file\n"
    with_helper, without = (json_without_clocks(json.loads(result.stdout)) for result in results)
    assert with_helper == without
    assert [source["name"] for source in with_helper["sources"]] == specs
    assert (
        sum(group["count"] for group in with_helper["failures"]) == 63
    )  # every host read but the missing one


# Forks the helper as the console entry point does, for a command line naming a silent host and two others.
# A thread opens the silent host's source (its connection waits for an SSH banner that never comes); meanwhile
# this thread opens the two others and reads their streams chunk by chunk, in turns.  Then it tells the test,
# which closes the silent port, and waits for the first opening to fail.
TWO_IN_FLIGHT = r"""
import hashlib, json, sys, threading
from logsleuth.internal.ssh_helper import process
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions

argv, silent_spec, specs, config = json.loads(sys.argv[1])
process.fork_if_remote(argv)
options = SSHOptions(config_file=config)
silent = {}
def open_silent():
    try:
        silent["opened"] = open_sources(silent_spec, options)
    except Exception as exc:
        silent["error"] = f"{type(exc).__name__}: {exc}"
opening = threading.Thread(target=open_silent, daemon=True)
opening.start()
sources = [open_sources(spec, options)[0] for spec in specs]
streams = [source.read_range(0, source.size()) for source in sources]
digests = [hashlib.sha256() for _ in streams]
turns = []
while any(stream is not None for stream in streams):
    for index, stream in enumerate(streams):
        chunk = None if stream is None else next(stream, None)
        if chunk is None:
            streams[index] = None
        else:
            digests[index].update(chunk)
            turns.append(index)
out = {"silent_still_opening": opening.is_alive(), "sha": [d.hexdigest() for d in digests], "turns": turns}
dropped = sources[0].read_range(0, sources[0].size())
next(dropped)
dropped.close()  # a stream stopped after its first chunk: the rest must never reach another request
size = sources[1].size()
out["tail_after_drop"] = b"".join(sources[1].read_range(size - 100, size)).decode()
print("read", flush=True)
sys.stdin.readline()  # the test has closed the silent port
opening.join(60)
out["silent"] = silent
out["kinds"] = sorted({type(source).__name__ for source in sources})
for source in sources:
    source.close()
process.stop()
print(json.dumps(out))
"""


def test_the_helper_serves_two_requests_in_flight_with_streams_in_turns(sshd: SSHD) -> None:
    import hashlib

    config = fleet_config(sshd, 2, "two-in-flight")
    logs = [sshd.logs / f"in-flight-{n}.log" for n in (1, 2)]
    for number, path in enumerate(logs, start=1):
        path.write_bytes(LINE * (30000 + number) + crash(number))  # ~3 MiB: many chunks each
    specs = [f"{node(n)}:{path}" for n, path in enumerate(logs, start=1)]
    expected = [hashlib.sha256(path.read_bytes()).hexdigest() for path in logs]
    second_tail = logs[1].read_bytes()[-100:].decode()
    try:
        with socket.socket() as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen(8)  # the kernel completes the TCP handshake; nobody ever speaks SSH
            silent_spec = f"logsleuth-test@127.0.0.1:{listener.getsockname()[1]}:/var/log/x.log"
            argv = ["diagnose", silent_spec, *specs, "-F", str(config)]
            process = subprocess.Popen(
                [sys.executable, "-c", TWO_IN_FLIGHT, json.dumps([argv, silent_spec, specs, str(config)])],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
                env=cli_environment(helper=True),
            )
            assert process.stdout is not None and process.stdin is not None
            assert process.stdout.readline() == "read\n", process.communicate(timeout=30)[1]
        process.stdin.write("go on\n")  # the silent port is closed now: its connection is reset
        stdout, stderr = process.communicate(timeout=60)
        assert process.returncode == 0, stderr
        out = json.loads(stdout)
    finally:
        for path in logs:
            path.unlink(missing_ok=True)
    assert out["kinds"] == ["RemoteSourceProxy"]  # served by the helper
    assert out["silent_still_opening"] is True  # one request in flight while the others were answered
    assert out["sha"] == expected
    assert out["turns"][:4] == [0, 1, 0, 1]  # the two streams' chunks were taken in turns
    assert out["turns"].count(0) > 2 and out["turns"].count(1) > 2
    assert out["tail_after_drop"] == second_tail
    assert out["silent"].get("error", "").startswith("SourceError: 127.0.0.1:"), out[
        "silent"
    ]  # its own answer


# -- Ctrl-C while many sources are read and one host is frozen -----------------------------------------------


@pytest.mark.parametrize("helper", [True, False], ids=["helper", "in-process"])
def test_one_ctrl_c_ends_a_fan_out_with_a_frozen_host_at_once(
    sshd: SSHD, fleet_logs: dict[int, Path], helper: bool
) -> None:
    """The frozen host accepts the TCP connection and then says nothing (its worker would wait 3 × 60 s)."""
    config = fleet_config(sshd, 3, f"fanout-ctrl-c-{helper}", "    ConnectTimeout 60\n")
    with socket.socket() as frozen:
        frozen.bind(("127.0.0.1", 0))
        frozen.listen(8)
        specs = [
            f"{node(1)}:{fleet_logs[1]}",
            f"logsleuth-test@127.0.0.1:{frozen.getsockname()[1]}:/x.log",
            f"{node(3)}:{fleet_logs[3]}",
        ]
        process = spawn(
            [sys.executable, "-m", "logsleuth", "diagnose", *specs, "-F", str(config), "--format", "json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=cli_environment(helper),
        )
        frozen.settimeout(60)
        frozen.accept()  # the CLI is running and connecting to the frozen host
        # The other two are read by now.  (A Ctrl-C sooner, while the hosts are still being connected to, was seen
        # under load to hang the in-process fan-out past 20 s, and to end the helper one by SIGINT (-2) instead
        # of 130: not this test's case; left for an issue of its own.)
        time.sleep(2.0)
        assert process.poll() is None, process.communicate()
        process.send_signal(signal.SIGINT)
        interrupted_at = time.monotonic()
        try:
            _, stderr = process.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()
            raise AssertionError("logsleuth still running 20 s after Ctrl-C (a hang)") from None
        took = time.monotonic() - interrupted_at
    assert process.returncode == 130
    assert stderr == "logsleuth: interrupted\n", stderr
    assert took < 20  # at once, not after the frozen host's 3 × 60 s: a bound only a hang fails
