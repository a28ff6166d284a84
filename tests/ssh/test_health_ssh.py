"""`logsleuth health HOST:PATH` over the real test sshd, with both SSH backends: the same findings as the same
file read locally, for a small log read whole and for a large one that is sampled (the literal search then runs
as grep on the host)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sshd_server import SSHD

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "health"
SCRIPT = Path(sys.executable).parent / "logsleuth"
sys.path.insert(0, str(ROOT))  # the checkout: scripts.health_fixtures
from logsleuth.health.scan import FULL_READ_BYTES  # noqa: E402
from scripts.health_fixtures.steady import write_steady_state  # noqa: E402


def health(config: Path | None, *args: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    command = [str(SCRIPT), "health", *args, "--format", "json", "--no-user-patterns"]
    if config is not None:
        command += ["--ssh-config", str(config)]
    return subprocess.run(command, capture_output=True, text=True, env=environment, timeout=120)


def findings(done: subprocess.CompletedProcess[str]) -> list[tuple[str, str]]:
    report: dict[str, Any] = json.loads(done.stdout)
    return [(f["pattern"], f["causes"][0]["id"]) for f in report["findings"]]


@pytest.mark.ssh
@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_a_remote_log_gives_the_local_findings(sshd: SSHD, backend: str) -> None:
    log = sshd.logs / "health-accept.log"
    log.write_bytes((FIXTURES / "0.5.9" / "accept-near-one.log").read_bytes())
    log.chmod(0o644)
    remote = health(sshd.config, f"logsleuth-alias:{log}", "--ssh-backend", backend)
    local = health(None, str(log))
    assert remote.returncode == local.returncode == 1, remote.stderr
    assert findings(remote) == findings(local) == [("sglang-health-accept-length-near-one", "draft-weights-not-loaded")]
    assert json.loads(remote.stdout)["sources"][0]["host"] == "logsleuth-alias"


@pytest.mark.ssh
@pytest.mark.slow
def test_a_large_remote_log_is_sampled_and_searched_on_the_host(sshd: SSHD) -> None:
    log = sshd.logs / "health-large.log"
    write_steady_state(log, FULL_READ_BYTES + (8 << 20), "0.5.23", ["retraction-storm", "cuda-graph-disabled"])
    log.chmod(0o644)
    try:
        remote = health(sshd.config, f"logsleuth-alias:{log}")
        local = health(None, str(log))
    finally:
        log.unlink()
    assert remote.returncode == local.returncode == 1, remote.stderr
    report = json.loads(remote.stdout)
    assert report["sampled"] and findings(remote) == findings(local)
    assert {pattern for pattern, _ in findings(remote)} == {
        "sglang-health-kv-pool-full-retract", "sglang-health-cuda-graph-disabled",
    }


@pytest.mark.ssh
def test_an_unreachable_file_on_a_host_is_one_line_and_exit_3(sshd: SSHD) -> None:
    done = health(sshd.config, f"logsleuth-alias:{sshd.logs}/missing-health.log")
    assert done.returncode == 3
    assert done.stderr.count("\n") == 1 and "missing-health.log" in done.stderr
