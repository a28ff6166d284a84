"""A private OpenSSH server (plus a second one as a ProxyJump host) on 127.0.0.1 for the SSH tests.

Facts this relies on (FIELD-NOTES §8): sshd by absolute path, /run/sshd must exist when root, `StrictModes no`
for keys under /tmp, `UsePAM no` plus a `*` password so key logins work on locked accounts, `MaxStartups`
raised for parallel connects.  The test accounts are created with useradd, so these tests need root (CI runs
as root).  Without sshd they are skipped, except under CI=true where that is a failure.

The client side never sees the real ~/.ssh: HOME and XDG_CONFIG_HOME point into the temp dir, SSH_AUTH_SOCK
is unset, and every test passes its own `-F` config.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd_server import (
    SSHD,
    SSHD_PATH,
    CertifiedSSHD,
    missing_sshd,
    start_certified_server,
    start_servers,
    stop_process,
    stop_servers,
)


@pytest.fixture(scope="session")
def sshd() -> Iterator[SSHD]:
    if not os.path.exists(SSHD_PATH):
        missing_sshd(f"{SSHD_PATH} not installed (apt-get install -y openssh-server)")
    if os.geteuid() != 0:
        missing_sshd("the SSH tests create local test accounts and need root")
    server, processes = start_servers()
    try:
        yield server
    finally:
        stop_servers(server, processes)


@pytest.fixture(scope="session")
def certified_sshd(sshd: SSHD) -> Iterator[CertifiedSSHD]:
    """A third sshd, started only for the tests that ask for it: its host key comes with a host certificate."""
    server, process = start_certified_server(sshd)
    try:
        yield server
    finally:
        stop_process(process)


@pytest.fixture(autouse=True)
def isolated_client_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the real ~/.ssh, ~/.config and ssh-agent out of every test."""
    home = tmp_path / "client-home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
