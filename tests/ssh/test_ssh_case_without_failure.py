"""`logsleuth case HOST:LOG` of a remote log with no failure still carries the log's own lines (issue 28, item 6):
its last lines and its error-looking lines, read again over one more connection to the real test sshd."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd_server import SSHD

pytestmark = pytest.mark.ssh

# torch c10d's client socket timeout (torch/csrc/distributed/c10d/socket.cpp), a glog-style error record a server
# survives: no failure, but an error a reader points at.
C10D_TIMEOUT = (
    "[E1016 03:31:38.919469923 socket.cpp:1011] [c10d] The client socket has timed out after 600000ms while "
    "trying to connect to (10.0.0.7, 29500)."
)


@pytest.fixture
def healthy_log(sshd: SSHD) -> Iterator[Path]:
    path = Path(sshd.logs) / f"healthy-{os.getpid()}.log"
    decode = [f"[2026-11-29 10:00:00 TP0] Decode batch. #running-req: {i % 64}, #token: {i * 7}\n" for i in range(3000)]
    ready = "[2026-11-29 10:05:00] The server is fired up and ready to roll!\n"
    path.write_text(C10D_TIMEOUT + "\n" + "".join(decode) + ready + "[2026-11-29 10:05:01] the very last line\n")
    yield path
    path.unlink()


def test_a_remote_log_without_a_failure_gets_its_last_lines_and_error_lines(sshd: SSHD, healthy_log: Path) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "SSH_AUTH_SOCK"}
    result = subprocess.run(
        [sys.executable, "-m", "logsleuth", "case", f"logsleuth-alias:{healthy_log}", "--ssh-config", str(sshd.config)],
        capture_output=True, text=True, env=environment, timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "no failure found in the log" in result.stdout
    assert C10D_TIMEOUT in result.stdout
    assert "the very last line" in result.stdout
