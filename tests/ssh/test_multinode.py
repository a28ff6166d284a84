"""A multi-node launch read over SSH (issue 14): 32 hosts, as 32 ssh-config aliases of the one test sshd, each with
its own log.  node03 runs out of memory first; the others time out in NCCL ten minutes later; one host refuses
connections and one has no log.  And each host's clock, measured over the same connection (sources/ssh/clock.py).
"""

from __future__ import annotations

import json
import random
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from cli_runner import run_diagnose
from remote_logs import LINE
from sshd_server import SSHD, free_port

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.errors import SourceError
from logsleuth.models import ClockOffset, Report
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from logsleuth.sources.base import Source
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.ssh.clock import KnowsRemoteClock, RunsScripts, clock_of, measure_clock
from tests.test_fleet_report import SCHEMA, nccl_timeout, oom

pytestmark = pytest.mark.ssh

NODES = [f"node{n:02d}" for n in range(1, 33)]
ROOT, MISSING, REFUSING = "node03", "node31", "node32"


@pytest.fixture
def rack(sshd: SSHD) -> Iterator[tuple[Path, list[str]]]:
    """(the ssh config naming node01…node32, the 32 specs): every node is 127.0.0.1 on the test sshd's port, but
    node32's port has nothing listening; node31's log was never written."""
    directory = sshd.logs / f"multinode-{random.randrange(10**9)}"
    directory.mkdir()
    directory.chmod(0o755)
    for number, node in enumerate(NODES, start=1):
        if node == MISSING:
            continue
        text = oom("02:10:01", "TP3") if node == ROOT else nccl_timeout(f"02:20:{number:02d}", f"TP{number}")
        (directory / f"{node}.log").write_bytes(LINE * 20 + text.encode())
    closed_port = free_port()
    hosts = "".join(
        f"Host {node}\n    HostName 127.0.0.1\n    Port {closed_port if node == REFUSING else sshd.port}\n\n" for node in NODES
    )
    config = sshd.write_config(f"multinode-{directory.name}", hosts + sshd.config.read_text())
    try:
        yield config, [f"{node}:{directory}/{node}.log" for node in NODES]
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def check_fleet(report: Report) -> None:
    fleet = report.fleet
    assert fleet is not None and fleet.order_known
    assert fleet.root == ROOT
    root, cascade = report.failures[0], report.failures[1]
    assert root.diagnosis is not None and root.diagnosis.pattern == "sglang-gpu-oom-forward"
    assert root.hosts == (ROOT,)
    assert cascade.diagnosis is not None and cascade.diagnosis.pattern == "sglang-nccl-watchdog-timeout"
    assert cascade.cascade_of == root.fingerprint
    read = [node for node in NODES if node not in (ROOT, MISSING, REFUSING)]
    assert sorted(cascade.hosts) == read and dict(cascade.host_counts) == dict.fromkeys(read, 1)
    outcomes = {member.name: member.outcome for member in fleet.members}
    assert outcomes == {ROOT: "root", MISSING: "unreadable", REFUSING: "unreadable", **dict.fromkeys(read, "cascade")}
    assert [member.name for member in fleet.members][:3] == [ROOT, "node01", "node02"]  # then in time order
    errors = {member.name: member.error or "" for member in fleet.members if member.outcome == "unreadable"}
    assert errors[MISSING].endswith("no such file")
    assert "refused" in errors[REFUSING]


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_the_oom_on_node03_is_the_root_of_31_hosts_timing_out(sshd: SSHD, rack: tuple[Path, list[str]]) -> None:
    config, specs = rack
    report = diagnose(specs, DiagnoseOptions(ssh=SSHOptions(config_file=str(config), connect_attempts=1)))
    check_fleet(report)
    text = render(report, RenderOptions(format=OutputFormat.TEXT, width=120))
    lines = text.splitlines()
    assert lines[0].startswith(f"{ROOT} failed first: GPU out of memory")
    assert any(line.split()[:4] == ["node01", "cascade", "of", ROOT] for line in lines[:40])
    assert f"cascade of GPU out of memory while serving (prefill or decode) on {ROOT}" in text
    slack = render(report, RenderOptions(format=OutputFormat.SLACK, max_chars=3500))
    assert len(slack) <= 3500 and f"29 hosts: cascade of {ROOT}" in slack


def test_the_cli_reports_the_fleet_as_json(sshd: SSHD, rack: tuple[Path, list[str]]) -> None:
    """The same through the command line (and the SSH helper process, when the environment starts it)."""
    config, specs = rack
    result = run_diagnose(config, *specs, timeout=180)
    assert result.returncode == 1, result.stderr
    data = json.loads(result.stdout)
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    fleet = data["fleet"]
    assert fleet["root"] == ROOT and fleet["order_known"]
    hosts = {host["name"]: host for host in fleet["hosts"]}
    assert len(hosts) == 32
    assert hosts[ROOT]["outcome"] == "root" and hosts[ROOT]["timestamp"] == "2025-11-06 02:10:01"
    assert hosts["node02"]["outcome"] == "cascade" and hosts["node02"]["timestamp"] == "2025-11-06 02:20:02"
    assert hosts[MISSING]["outcome"] == "unreadable" and hosts[MISSING]["error"].endswith("no such file")
    assert hosts[REFUSING]["outcome"] == "unreadable" and "refused" in hosts[REFUSING]["error"]
    assert data["failures"][1]["cascade_of"] == data["failures"][0]["fingerprint"]


# --- the clock -------------------------------------------------------------------------------------------------


def open_one(spec: str, options: SSHOptions) -> Source:
    (source,) = open_sources(spec, options)
    return source


def runner_of(source: Source) -> RunsScripts:
    """The connection a source's `remote_clock()` measures over (its public `runner`), for the tests below that
    measure over it with a clock of their own (`now=`) or a PATH without `date`.  It is the same measurement:
    checked against `remote_clock()` itself."""
    assert isinstance(source, KnowsRemoteClock)  # the hook `diagnose` measures a fleet's clocks with
    own = source.remote_clock()
    assert abs(own.offset) <= own.uncertainty + 0.005, own  # the test sshd runs on this machine: one clock
    runner: RunsScripts = source.runner  # type: ignore[attr-defined]
    return runner


@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_the_clock_of_a_host_is_measured_over_its_connection(sshd: SSHD, backend: str, tmp_path: Path) -> None:
    log = sshd.logs / f"clock-{random.randrange(10**9)}.log"
    log.write_bytes(LINE)
    options = SSHOptions(config_file=str(sshd.config), connect_attempts=1, backend=backend)
    source = open_one(f"logsleuth-alias:{log}", options)
    try:
        runner = runner_of(source)
        same = measure_clock(runner, "logsleuth-alias")
        # The sshd runs on this machine: one clock, so the offset is 0 within the query's uncertainty.
        assert abs(same.offset) <= same.uncertainty + 0.005, same
        assert 0 < same.uncertainty < 2.0
        # Seen from a clock 100 s behind, the host is 100 s ahead: the sign and the scale of the offset.
        behind = measure_clock(runner, "logsleuth-alias", now=lambda: time.time() - 100)
        assert behind.offset == pytest.approx(100, abs=behind.uncertainty + 0.005)
    finally:
        source.close()
        log.unlink(missing_ok=True)


class _WithoutDate:
    """The real runner of a source, running every script with a PATH where no `date` is (a host without
    coreutils on its PATH)."""

    def __init__(self, runner: Any) -> None:
        self._runner = runner

    def run(self, script: str, *args: str | int, idle_ticks: bool = False) -> Any:
        return self._runner.run("PATH=/nonexistent; export PATH; " + script, *args, idle_ticks=idle_ticks)


def test_a_host_without_date_is_a_one_line_error(sshd: SSHD) -> None:
    log = sshd.logs / f"clock-{random.randrange(10**9)}.log"
    log.write_bytes(LINE)
    source = open_one(f"logsleuth-alias:{log}", SSHOptions(config_file=str(sshd.config), connect_attempts=1))
    try:
        with pytest.raises(SourceError) as caught:
            measure_clock(_WithoutDate(runner_of(source)), "logsleuth-alias")
        message = str(caught.value)
        assert message.startswith("logsleuth-alias: cannot read the remote clock (") and "date" in message
        assert "\n" not in message
    finally:
        source.close()
        log.unlink(missing_ok=True)


def test_a_source_without_a_shell_cannot_tell_its_clock(sshd: SSHD) -> None:
    """The no-shell account is read over SFTP: no script runs there, so no clock (and no error)."""
    log = sshd.logs / f"clock-{random.randrange(10**9)}.log"
    log.write_bytes(LINE)
    log.chmod(0o644)
    spec = f"logsleuth-nosh@127.0.0.1:{sshd.port}:{log}"
    source = open_one(spec, SSHOptions(config_file=str(sshd.config), connect_attempts=1, backend="paramiko"))
    try:
        assert b"".join(source.read_range(0, source.size())) == LINE  # it is read all the same
        assert clock_of(source) is None
    finally:
        source.close()
        log.unlink(missing_ok=True)


class _ClockedSource:
    """A source that can tell its clock, for `clock_of`: its answer comes from the real test sshd."""

    def __init__(self, source: Source) -> None:
        self._runner = runner_of(source)

    def remote_clock(self) -> ClockOffset:
        return measure_clock(self._runner, "logsleuth-alias")


def test_clock_of_asks_only_sources_that_can_tell(sshd: SSHD, tmp_path: Path) -> None:
    log = sshd.logs / f"clock-{random.randrange(10**9)}.log"
    log.write_bytes(LINE)
    source = open_one(f"logsleuth-alias:{log}", SSHOptions(config_file=str(sshd.config), connect_attempts=1))
    try:
        clocked = _ClockedSource(source)
        assert isinstance(clocked, KnowsRemoteClock)
        measured = clock_of(clocked)
        assert measured is not None and abs(measured.offset) <= measured.uncertainty + 0.005
        local = tmp_path / "local.log"
        local.write_bytes(LINE)
        (local_source,) = open_sources(str(local))
        assert clock_of(local_source) is None  # a local file has our clock
        local_source.close()
    finally:
        source.close()
        log.unlink(missing_ok=True)

