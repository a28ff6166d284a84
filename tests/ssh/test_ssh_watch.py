"""`logsleuth watch HOST:PATH`: follows a remote log through the private sshd while it grows."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from sshd_server import SSHD

from tests.helpers import append_later

STAGES = [
    b"[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1)\n",
    b"[2026-11-29 10:00:02] Load weight begin. avail mem=78.84 GB\n",
    b"[2026-11-29 10:00:09] Load weight end. type=LlamaForCausalLM, avail mem=60.1 GB\n",
    b"[2026-11-29 10:00:10] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB\n",
    b"[2026-11-29 10:00:22] The server is fired up and ready to roll!\n",
]
CRASH = (
    b"[2026-11-29 10:00:03 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 2316, in run\n'
    b"    scheduler.event_loop()\n"
    b'  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/managers/scheduler.py", line 690, in event_loop\n'
    b"    assert self.req_to_token_pool.available_size() > 0\n"
    b"AssertionError\n"
)


def _watch(sshd: SSHD, log: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    environment = dict(os.environ)
    environment.pop("SSH_AUTH_SOCK", None)
    return subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", f"logsleuth-alias:{log}", "--ssh-config", str(sshd.config),
         "--timeout", "60", *extra],
        capture_output=True, text=True, env=environment, timeout=90,
    )


@pytest.mark.ssh
def test_remote_watch_until_ready(sshd: SSHD) -> None:
    log = sshd.logs / "watch-ready.log"
    log.write_bytes(STAGES[0])
    writer = append_later(log, STAGES[1:], 0.3)
    try:
        result = _watch(sshd, log)
    finally:
        writer.join()
        log.unlink()
    assert result.returncode == 0, result.stderr
    assert "loading weights" in result.stderr and "KV cache allocated" in result.stderr
    assert result.stdout.strip().endswith("the server is ready")


@pytest.mark.ssh
def test_remote_watch_diagnoses_a_crash(sshd: SSHD) -> None:
    log = sshd.logs / "watch-crash.log"
    log.write_bytes(STAGES[0])
    writer = append_later(log, [STAGES[1], CRASH], 0.3)
    try:
        result = _watch(sshd, log, "--format", "json")
    finally:
        writer.join()
        log.unlink()
    assert result.returncode == 1, result.stderr
    assert '"AssertionError"' in result.stdout
    assert '"hosts": [\n        "logsleuth-alias"' in result.stdout
