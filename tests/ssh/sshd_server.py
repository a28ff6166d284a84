"""Start and describe the private OpenSSH servers used by the SSH tests (fixtures in conftest.py)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD_PATH = "/usr/sbin/sshd"
USERS = {
    "logsleuth-test": "/bin/bash",  # the normal account
    "logsleuth-banner": "/bin/bash",  # its ~/.bashrc prints a banner on stdout and stderr
    "logsleuth-notail": "/bin/bash",  # its PATH (from ~/.ssh/environment) has no tail
    "logsleuth-nosh": "/usr/sbin/nologin",  # no shell at all: SFTP only
}


@dataclass
class SSHD:
    root: Path  # private temp dir: keys, configs, logs
    port: int
    jump_port: int
    client_key: Path
    host_pub: str  # "ssh-ed25519 AAAA..."
    logs: Path  # a directory the test users can read
    home: Path  # client-side HOME

    @property
    def config(self) -> Path:
        return self.root / "client" / "config"

    def write_config(self, name: str, text: str) -> Path:
        path = self.root / "client" / name
        path.write_text(text)
        return path

    def known_hosts_line(self, port: int | None = None) -> str:
        return f"[127.0.0.1]:{port or self.port} {self.host_pub}\n"


def missing_sshd(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"SSH tests cannot run in CI: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ensure_user(name: str, shell: str) -> Path:
    if subprocess.run(["id", name], capture_output=True).returncode != 0:
        subprocess.run(["useradd", "-m", "-s", shell, name], check=True, capture_output=True)
    subprocess.run(["usermod", "-s", shell, "-p", "*", name], check=True, capture_output=True)
    return Path(os.path.expanduser(f"~{name}"))


def prepare_users() -> None:
    for name, shell in USERS.items():
        home = _ensure_user(name, shell)
        ssh_dir = home / ".ssh"
        ssh_dir.mkdir(exist_ok=True)
        bashrc = home / ".bashrc"
        if name == "logsleuth-banner":
            bashrc.write_text('echo "Welcome to gpu7! Disk quota: 93% used"\necho "motd on stderr" >&2\n')
        else:
            bashrc.write_text("")
        environment = ssh_dir / "environment"
        if name == "logsleuth-notail":
            empty = home / "empty-bin"
            empty.mkdir(exist_ok=True)
            environment.write_text(f"PATH={empty}\n")
        elif environment.exists():
            environment.unlink()
        shutil.chown(home, name, name)
        for path in (ssh_dir, bashrc):
            shutil.chown(path, name, name)


def keygen(path: Path, passphrase: str = "") -> str:
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(path)], check=True)
    return " ".join(Path(f"{path}.pub").read_text().split()[:2])


def sshd_config(root: Path, port: int, host_key: Path, authorized: Path) -> Path:
    config = root / f"sshd_config.{port}"
    config.write_text(
        f"""Port {port}
ListenAddress 127.0.0.1
HostKey {host_key}
PidFile {root}/sshd.{port}.pid
AuthorizedKeysFile {authorized}
StrictModes no
UsePAM no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
PermitUserEnvironment yes
MaxStartups 200:30:400
AllowTcpForwarding yes
Subsystem sftp internal-sftp
LogLevel ERROR
"""
    )
    return config


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"sshd exited: {process.stderr.read().decode() if process.stderr else ''}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                if sock.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd on port {port} did not start")
