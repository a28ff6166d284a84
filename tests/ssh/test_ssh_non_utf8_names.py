"""A remote log whose name is not UTF-8 (`caf\\xe9.log`, as old tools and mounted shares leave them): `case` and
`diagnose` read it over SSH with either backend, against the real test sshd (it was an internal error: the
exec request was encoded strictly)."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from sshd_server import SSHD
from test_ssh_hostile_files import FAILURE_LOG

pytestmark = pytest.mark.ssh


@pytest.fixture
def latin1_named_log(sshd: SSHD) -> Iterator[bytes]:
    name = os.fsencode(sshd.logs) + b"/caf\xe9-%d.log" % os.getpid()
    with open(name, "wb") as handle:
        handle.write(FAILURE_LOG)
    yield name
    os.unlink(name)


@pytest.mark.parametrize("command", ["case", "diagnose"])
@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_a_remote_log_with_a_non_utf8_name_is_read(sshd: SSHD, latin1_named_log: bytes, command: str, backend: str) -> None:
    environment = {key: value for key, value in os.environ.items() if key != "SSH_AUTH_SOCK"}
    result = subprocess.run(
        [sys.executable, "-m", "logsleuth", command, b"logsleuth-alias:" + latin1_named_log,
         "--ssh-config", str(sshd.config), "--ssh-backend", backend],
        capture_output=True, env=environment, timeout=60,
    )
    stderr = result.stderr.decode("utf-8")  # strict
    assert result.returncode == 1, stderr
    assert "internal error" not in stderr
    assert "AssertionError" in result.stdout.decode("utf-8")  # the failure was read
