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
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from sshd_server import (
    SSHD,
    SSHD_PATH,
    free_port,
    keygen,
    missing_sshd,
    prepare_users,
    sshd_config,
    wait_listening,
)


@pytest.fixture(scope="session")
def sshd() -> Iterator[SSHD]:
    if not os.path.exists(SSHD_PATH):
        missing_sshd(f"{SSHD_PATH} not installed (apt-get install -y openssh-server)")
    if os.geteuid() != 0:
        missing_sshd("the SSH tests create local test accounts and need root")
    # Not under pytest's basetemp: that is mode 0700 and the test accounts must read keys and logs here.
    root = Path(tempfile.mkdtemp(prefix="logsleuth-sshd-"))
    root.chmod(0o755)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    prepare_users()
    host_key = root / "host_key"
    host_pub = keygen(host_key)
    client_dir = root / "client"
    client_dir.mkdir()
    client_key = client_dir / "id_test"
    client_pub = keygen(client_key)
    locked_key = client_dir / "id_locked"
    locked_pub = keygen(locked_key, passphrase="secret phrase")
    authorized = root / "authorized_keys"
    authorized.write_text(f"{client_pub}\n{locked_pub}\n")
    authorized.chmod(0o644)
    logs = root / "logs"
    logs.mkdir()
    logs.chmod(0o755)
    home = root / "home"
    (home / ".ssh").mkdir(parents=True)

    port, jump_port = free_port(), free_port()
    processes = []
    for listen in (port, jump_port):
        config = sshd_config(root, listen, host_key, authorized)
        process = subprocess.Popen([SSHD_PATH, "-D", "-e", "-f", str(config)], stderr=subprocess.PIPE)
        processes.append(process)
        wait_listening(listen, process)

    server = SSHD(root, port, jump_port, client_key, host_pub, logs, home)
    (client_dir / "known_hosts").write_text(server.known_hosts_line() + server.known_hosts_line(jump_port))
    server.config.write_text(
        f"""Host logsleuth-alias
    HostName 127.0.0.1
    Port {port}

Host jumpbox
    HostName 127.0.0.1
    Port {jump_port}

Host behind-jump
    HostName 127.0.0.1
    Port {port}
    ProxyJump jumpbox

Host behind-two-jumps
    HostName 127.0.0.1
    Port {port}
    ProxyJump jumpbox,logsleuth-test@127.0.0.1:{jump_port}

Host *
    User logsleuth-test
    IdentityFile {client_key}
    IdentitiesOnly yes
    UserKnownHostsFile {client_dir}/known_hosts
"""
    )
    try:
        yield server
    finally:
        for process in processes:  # stopped by the pid we started, nothing else
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=5)
            except subprocess.TimeoutExpired:
                process.kill()
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture(autouse=True)
def isolated_client_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Keep the real ~/.ssh, ~/.config and ssh-agent out of every test."""
    home = tmp_path / "client-home"
    (home / ".ssh").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(home / ".config"))
    monkeypatch.delenv("SSH_AUTH_SOCK", raising=False)
