"""`logsleuth diagnose HOST:PATH` end to end, through the CLI process, against the private sshd."""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_diagnose
from sshd_server import SSHD, free_port

FAILURE_LOG = (
    b"[2025-11-06 02:09:58] server_args=ServerArgs(model_path='Qwen/Qwen2.5-7B-Instruct', tp_size=1)\n"
    + b"[2025-11-06 02:09:59 TP0] Load weight end. type=Qwen2ForCausalLM, avail mem=60.12 GB\n" * 2000
    + b"[2025-11-06 02:10:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2316, in run_scheduler_process\n'
    b"    scheduler.event_loop_overlap()\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 690, in event_loop_overlap\n'
    b"    assert self.req_to_token_pool.available_size() > 0\n"
    b"AssertionError\n"
)


def run_cli(sshd: SSHD | None, *args: str) -> subprocess.CompletedProcess[str]:
    return run_diagnose(sshd.config if sshd is not None else None, *args)


def failures_without_location(report: dict[str, Any]) -> list[dict[str, Any]]:
    # Where each failure was first seen: the same lines, a different source name and host.
    return [{**{k: v for k, v in f.items() if k not in ("hosts", "host_counts", "sources", "firsts")},
             "firsts": [{k: v for k, v in first.items() if k not in ("source", "host")} for first in f.get("firsts", [])]}
            for f in report["failures"]]


@pytest.mark.ssh
@pytest.mark.parametrize("mode", [(), ("--all",)], ids=["latest", "all"])
def test_remote_diagnose_finds_the_same_failure_as_local(sshd: SSHD, mode: tuple[str, ...]) -> None:
    log = sshd.logs / "cli.log"
    log.write_bytes(FAILURE_LOG * 2 if mode else FAILURE_LOG)
    try:
        remote = run_cli(sshd, *mode, f"logsleuth-alias:{log}")
        local = run_cli(None, *mode, str(log))
    finally:
        log.unlink()
    assert remote.returncode == local.returncode == 1, remote.stderr
    remote_report, local_report = json.loads(remote.stdout), json.loads(local.stdout)
    assert remote_report["failures"], remote.stdout
    assert failures_without_location(remote_report) == failures_without_location(local_report)
    assert remote_report["failures"][0]["hosts"] == ["logsleuth-alias"]
    assert remote.stderr == ""  # no progress noise outside a TTY


CASES = [
    "unknown-host-name",
    "refused",
    "timeout",
    "auth",
    "unknown-host-key",
    "changed-host-key",
    "missing",
    "directory",
    "denied",
    "no-tail",
]


def _error_case(
    sshd: SSHD, case: str, tmp_path: Path, secret: Path, silent_port: int
) -> tuple[str, str, Path]:
    """(spec, expected start of the message, ssh config) for one error case."""
    known = f"{sshd.root}/client/known_hosts"
    direct = f"logsleuth-test@127.0.0.1:{sshd.port}:/x.log"
    if case == "unknown-host-name":
        host = "y" * 64 + ".invalid"  # rejected by IDNA encoding before any DNS query
        return f"{host}:/x.log", f"{host}: unknown host name '{host}'", sshd.config
    if case == "refused":
        port = free_port()
        return (
            f"127.0.0.1:{port}:/x.log",
            f"127.0.0.1: connection refused by 127.0.0.1 port {port} (3 attempts in ",  # the real time follows
            sshd.config,
        )
    if case == "timeout":
        config = sshd.write_config(
            "cli-timeout",
            f"Host silent\n    HostName 127.0.0.1\n    Port {silent_port}\n    ConnectTimeout 1\n",
        )
        message = f"silent: connection to 127.0.0.1 port {silent_port} timed out after 3 attempts in "
        return "silent:/x.log", message, config
    if case == "auth":
        config = sshd.write_config(
            "cli-auth", f"Host *\n    IdentityFile {tmp_path}/none\n    UserKnownHostsFile {known}\n"
        )
        message = (
            "127.0.0.1: authentication failed for logsleuth-test@127.0.0.1 (tried publickey with: no keys "
            "(no ssh-agent keys, no key files); server allows: publickey)"
        )
        return direct, message, config
    if case in ("unknown-host-key", "changed-host-key"):
        hosts = tmp_path / "known_hosts"
        if case == "unknown-host-key":
            hosts.write_text("")
            message = f"127.0.0.1: unknown host key for [127.0.0.1]:{sshd.port} (ssh-ed25519 SHA256:"
        else:
            subprocess.run(
                ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(tmp_path / "other")], check=True
            )
            other = " ".join((tmp_path / "other.pub").read_text().split()[:2])
            hosts.write_text(f"[127.0.0.1]:{sshd.port} {other}\n")
            message = f"127.0.0.1: HOST KEY CHANGED for [127.0.0.1]:{sshd.port}: the server now presents"
        config = sshd.write_config(
            case, f"Host *\n    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {hosts}\n"
        )
        return direct, message, config
    simple = {
        "missing": (f"logsleuth-alias:{sshd.logs}/nope.log", "no such file"),
        "directory": (f"logsleuth-alias:{sshd.logs}", "is a directory"),
        "denied": (f"logsleuth-alias:{secret}", "permission denied"),
        "no-tail": (
            f"logsleuth-notail@127.0.0.1:{sshd.port}:{secret}",
            "remote command 'tail' not found on 127.0.0.1 (logsleuth needs tail, head and wc; gzip for .gz)",
        ),
    }
    spec, reason = simple[case]
    return spec, f"{spec}: {reason}", sshd.config


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.ssh
@pytest.mark.parametrize("case", CASES)
def test_each_error_is_one_line_and_exit_status_3(sshd: SSHD, case: str, tmp_path: Path) -> None:
    secret = sshd.logs / f"cli-secret-{case}.log"
    secret.write_bytes(b"x\n")
    secret.chmod(0o600)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts TCP, never speaks SSH
        spec, message, config = _error_case(sshd, case, tmp_path, secret, silent.getsockname()[1])
        try:
            result = run_cli(None, spec, "--ssh-config", str(config))
        finally:
            secret.unlink()
    assert result.returncode == 3, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"logsleuth: {message}"), result.stderr
    assert json.loads(result.stdout)["sources"][0]["error"].startswith(message)
    if case in ("refused", "timeout"):  # the total time of the 3 attempts follows
        assert re.fullmatch(r"[\d.]+ s\)|[\d.]+ s \(no SSH handshake\)", lines[0][len(f"logsleuth: {message}") :])
    elif not case.endswith("host-key"):  # the host-key messages go on with a fingerprint
        assert lines[0] == f"logsleuth: {message}"


def test_local_diagnose_never_imports_paramiko(tmp_path: Path) -> None:
    log = tmp_path / "local.log"
    log.write_bytes(FAILURE_LOG)
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "logsleuth", "diagnose", str(log), "--format", "json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode in (0, 1), result.stderr[-2000:]
    imported = {
        line.split("|")[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "paramiko" not in imported and "logsleuth.sources.ssh" not in imported
    assert "logsleuth.sources.spec" in imported  # the cheap spec parser is what decides local vs remote
