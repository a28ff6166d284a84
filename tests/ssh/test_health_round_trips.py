"""Remote `health` on a sampled log reads its windows in one round trip (issue 30, finding 4): it ran one remote
script per window (330 for an 80 MB log: 17-23 s over paramiko, 53-60 s with OpenSSH), and now runs a handful,
whatever the number of windows, with both backends; the findings stay those of the same file read locally.

The log is small and the sampling thresholds are lowered for the test (the plan is the same as for a large log).
The remote scripts are counted by wrapping the runner's `run`: the connection, the sshd and the scripts are real.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sshd_server import SSHD

from logsleuth.health import scan
from logsleuth.health.run import HealthOptions, check_health
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.ssh.openssh import OpenSSHTarget
from logsleuth.sources.ssh.shared import SharedConnection
from scripts.health_fixtures.steady import write_steady_state

pytestmark = pytest.mark.ssh

SIZE = 4 << 20
MOST_SCRIPTS = 4  # the probe, the search, the windows, and a check of the latest launch (a vLLM log)


@pytest.fixture
def sampled_log(sshd: SSHD, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    monkeypatch.setattr(scan, "FULL_READ_BYTES", 1 << 20)  # a 4 MiB log is sampled as a 100 MB one is
    monkeypatch.setattr(scan, "HEAD_BYTES", 256 << 10)
    log = sshd.logs / f"health-round-trips-{os.getpid()}.log"
    write_steady_state(log, SIZE, "0.5.9", ["retraction-storm", "accept-drop"])
    log.chmod(0o644)
    yield log
    log.unlink()


def _counting_runs(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scripts: list[str] = []
    for runner in (SharedConnection, OpenSSHTarget):
        original = runner.run

        def run(self: Any, script: str, *args: Any, _original: Any = original, **kwargs: Any) -> Any:
            scripts.append(script)
            return _original(self, script, *args, **kwargs)

        monkeypatch.setattr(runner, "run", run)
    return scripts


def _findings(specs: list[str], ssh: SSHOptions) -> list[tuple[str, tuple[str, ...]]]:
    report = check_health(specs, HealthOptions(include_user_patterns=False, ssh=ssh))
    assert report.sampled and not [source.error for source in report.sources if source.error]
    return [(finding.pattern_id, tuple(cause.id for cause in finding.causes)) for finding in report.findings]


@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_a_sampled_remote_log_costs_a_handful_of_round_trips(
    sshd: SSHD, sampled_log: Path, monkeypatch: pytest.MonkeyPatch, backend: str
) -> None:
    local = _findings([str(sampled_log)], SSHOptions())
    scripts = _counting_runs(monkeypatch)
    remote = _findings([f"logsleuth-alias:{sampled_log}"], SSHOptions(config_file=str(sshd.config), backend=backend))
    assert remote == local
    assert {pattern for pattern, _ in remote} == {
        "sglang-health-kv-pool-full-retract", "sglang-health-accept-length-near-one",
    }
    assert 0 < len(scripts) <= MOST_SCRIPTS, f"{len(scripts)} remote scripts"


# `logsleuth health` as the console script runs it (the SSH helper forked first, as __main__._entry does), with the
# sampling thresholds lowered as above; prints {"helper": whether one was forked, "code": the exit status} last on
# stderr, the report on stdout.
HEALTH_SCRIPT = r"""
import json, sys
from logsleuth.health import scan
scan.FULL_READ_BYTES, scan.HEAD_BYTES = 1 << 20, 256 << 10
from logsleuth.internal.ssh_helper import process
argv = json.loads(sys.argv[1])
process.fork_if_remote(argv)
served = process.started is not None
from logsleuth.__main__ import main
code = main(argv, quick=True)
process.stop()
print(json.dumps({"helper": served, "code": code}), file=sys.stderr)
"""


@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_health_through_the_ssh_helper_finds_what_it_finds_without(sshd: SSHD, sampled_log: Path, backend: str) -> None:
    """`health` forks the SSH helper, as diagnose and watch do (it connects while the CLI starts); the search and
    the windows are then requests to it.  The report is the same with the helper and without."""
    import json
    import subprocess
    import sys

    argv = ["health", "--format", "json", "--no-user-patterns", "--ssh-config", str(sshd.config), "--ssh-backend",
            backend, f"logsleuth-alias:{sampled_log}"]
    reports = {}
    for helper in (True, False):
        env = {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "LOGSLEUTH_SSH_WORKER")}
        env["LOGSLEUTH_SSH_WORKER"] = "1" if helper else "0"
        done = subprocess.run([sys.executable, "-c", HEALTH_SCRIPT, json.dumps(argv)], capture_output=True,
                              text=True, env=env, timeout=120)
        outcome = json.loads(done.stderr.splitlines()[-1])
        assert outcome == {"helper": helper, "code": 1}, done.stderr
        report = json.loads(done.stdout)
        reports[helper] = ([f["pattern"] for f in report["findings"]], report["series"], report["batches"])
    assert reports[True] == reports[False]
    assert sorted(reports[True][0]) == ["sglang-health-accept-length-near-one", "sglang-health-kv-pool-full-retract"]


@pytest.mark.parametrize("with_perl", [True, False], ids=["perl", "tail and head"])
def test_the_ranges_script_reads_exact_bytes_with_perl_or_without(tmp_path: Path, with_perl: bool) -> None:
    """RANGES_SCRIPT as the host's /bin/sh runs it (here, no SSH needed): the same bytes as the file holds, with
    perl and with only tail, head and wc on PATH; a range past the end comes back short."""
    import shutil
    import subprocess

    from logsleuth.sources.ssh.scripts import (
        RANGES_PERL,
        RANGES_SCRIPT,
        command_line,
        parse_ranges,
        strip_noise,
    )

    data = bytes(range(256)) * 64 + b"line\nwith \x00 NUL and \xff\n"
    log = tmp_path / "odd name; $(touch pwned).log"
    log.write_bytes(data)
    tools = tmp_path / "bin"
    tools.mkdir()
    for tool in ("tail", "head", "wc", *(["perl"] if with_perl else [])):
        found = shutil.which(tool)
        assert found is not None
        (tools / tool).symlink_to(found)
    ranges = [(0, 10), (300, 4096), (len(data) - 5, len(data) + 100), (7, 8)]
    pairs = [number for start, end in ranges for number in (start, end - start)]
    script = command_line(RANGES_SCRIPT, "MARKER", RANGES_PERL, str(log), *pairs)
    done = subprocess.run(["/bin/sh", "-c", script], capture_output=True, env={"PATH": str(tools)}, timeout=60)
    body = strip_noise(done.stdout, "MARKER")
    assert body is not None, done.stderr
    assert parse_ranges(body) == [(start, data[start:end]) for start, end in ranges]
    assert not (tmp_path / "pwned").exists()


def _stderr_of_health(sshd: SSHD, log: Path, on_a_terminal: bool) -> str:
    """`logsleuth health HOST:LOG --format text`'s stderr, written to a terminal (a pty) or to a pipe."""
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    argv = [sys.executable, "-m", "logsleuth", "health", "--format", "text", "--no-user-patterns", "--ssh-config",
            str(sshd.config), f"logsleuth-alias:{log}"]
    if not on_a_terminal:
        done = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
        assert done.returncode == 1, done.stderr
        return done.stderr
    main, terminal = os.openpty()
    try:
        child = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=terminal, env={**env, "COLUMNS": "120"})
        os.close(terminal)
        seen = b""
        while True:
            try:
                data = os.read(main, 1 << 16)
            except OSError:  # EIO: the child closed the terminal
                break
            if not data:
                break
            seen += data
        assert child.wait(timeout=120) == 1
    finally:
        os.close(main)
    return seen.decode("utf-8", "replace")


def test_remote_health_shows_progress_on_a_terminal_only(sshd: SSHD, sampled_log: Path) -> None:
    shown = _stderr_of_health(sshd, sampled_log, on_a_terminal=True)
    assert "logsleuth-alias" in shown, shown  # the status line names the source it connects to and reads
    assert _stderr_of_health(sshd, sampled_log, on_a_terminal=False) == ""
