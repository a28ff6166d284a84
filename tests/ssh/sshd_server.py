"""Start and describe the private OpenSSH servers used by the SSH tests (fixtures in conftest.py)."""

from __future__ import annotations

import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

import pytest

SSHD_PATH = "/usr/sbin/sshd"
# How long the connection attempts took, as a connection error says it ("3 attempts in 1.1 s"): a duration, which
# differs from run to run (and grows on a loaded machine).
_ATTEMPTS_TOOK = re.compile(r"(\d+ attempts?) in [\d.]+ s\b")


def without_attempt_time(error: str | None) -> str | None:
    """A connection error with the attempts' duration left out, their count kept: "3 attempts in … s"."""
    return error and _ATTEMPTS_TOOK.sub(r"\1 in … s", error)
USERS = {
    "logsleuth-test": "/bin/bash",  # the normal account
    "logsleuth-banner": "/bin/bash",  # its ~/.bashrc prints a banner on stdout and stderr
    "logsleuth-notail": "/bin/bash",  # its PATH (from ~/.ssh/environment) has no tail
    "logsleuth-nosh": "/usr/sbin/nologin",  # no shell at all: SFTP only
    # its ~/.bashrc holds an exec while a test's gate is closed (Gate below).  Not "logsleuth-hold", the name
    # before run_environment: test runs of older checkouts still write that account's ~/.bashrc for their gate.
    "logsleuth-gated": "/bin/bash",
    # its PATH (set by this run's sshd: run_environment) starts with the stand-in docker, journalctl and
    # systemctl (tests/runtime/standins), which keep their state in runtime_state(root)
    "logsleuth-runtime": "/bin/bash",
}
# The accounts are shared by every test run on the machine (two `make test` at once, or the xdist workers of
# one, each with its own sshd): what is in their homes never changes from run to run, and is written only when
# it differs (atomically).  What belongs to one run (its gate, its stand-ins' PATH and state) reaches the
# session through that run's own sshd (`SetEnv` under `Match User`, see run_environment), never a home file.
RUNTIME_USER = "logsleuth-runtime"
# The prefix of every run's private directory (SSHD.root); a file a test writes in a shared home carries its
# run's directory name (SSHD.in_home), so that runs at once never touch each other's.
RUN_PREFIX = "logsleuth-sshd-"
HOLD_USER = "logsleuth-gated"


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

    def in_home(self, user: str, name: str) -> Path:
        """A file of this run in `user`'s home (shared by every run on the machine): NAME made this run's own."""
        stem, dot, suffix = name.partition(".")
        return Path(os.path.expanduser(f"~{user}")) / f"{stem}-{self.root.name}{dot}{suffix}"

    def write_config(self, name: str, text: str) -> Path:
        path = self.root / "client" / name
        path.write_text(text)
        return path

    def unknown_key_config(self, name: str) -> tuple[Path, Path]:
        """(config, its empty UserKnownHostsFile): a client config under which the server's key is unknown."""
        empty = self.root / "client" / f"known_hosts.{name}"
        empty.write_text("")
        config = self.write_config(
            name, f"Host *\n    IdentityFile {self.client_key}\n    UserKnownHostsFile {empty}\n"
        )
        return config, empty

    @property
    def choose_openssh(self) -> str:
        """Config lines under which the default backend ("auto") chooses OpenSSH's ssh without changing how it
        connects: a ControlPath whose master never runs (ssh looks for one, finds none, connects itself)."""
        return f"    ControlMaster no\n    ControlPath {self.root}/no-master-%C\n"

    def known_hosts_line(self, port: int | None = None) -> str:
        return f"[127.0.0.1]:{port or self.port} {self.host_pub}\n"

    @property
    def host_key_described(self) -> str:
        """The server's key as logsleuth's messages show it: `ssh-ed25519 SHA256:...`."""
        listing = subprocess.run(
            ["ssh-keygen", "-l", "-E", "sha256", "-f", str(self.root / "host_key.pub")],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        return f"ssh-ed25519 {listing.split()[1]}"

    @property
    def gate_dir(self) -> Path:
        return self.root / "gate"

    def hold_spec(self, path: Path | str) -> str:
        """A spec read through the gated account (see Gate)."""
        return f"{HOLD_USER}@127.0.0.1:{self.port}:{path}"


# The gated account's ~/.bashrc (bash sources it for every exec over ssh).  While GATE exists, the exec that
# finds it at 0 writes its shell's pid to GATE.held and waits until the test removes GATE; the ones before it
# count GATE down and pass.  Everything else about the account is the normal one's.  GATE is in the directory
# that the run's sshd names in LOGSLEUTH_TEST_GATE (run_environment).
GATE_BASHRC = """g=$LOGSLEUTH_TEST_GATE/hold
if [ -n "$LOGSLEUTH_TEST_GATE" ] && [ -e "$g" ]; then
  n=$(cat "$g" 2>/dev/null)
  if [ "${n:-0}" -gt 0 ]; then echo $((n-1)) >"$g"
  else echo $$ >"$g.held"; while [ -e "$g" ]; do sleep 0.05; done
  fi
fi
"""


class Gate:
    """Holds one exec of the gated account on the remote side, so that a test can act at a known point of a
    session: `with Gate(sshd, passing=1) as gate:` lets one exec through (the probe), holds the next one, and
    `gate.session()` waits for it and returns the pids of the sshd processes serving that connection."""

    def __init__(self, sshd: SSHD, passing: int = 0) -> None:
        self.hold = sshd.gate_dir / "hold"
        self.held = sshd.gate_dir / "hold.held"
        self.passing = passing
        self.sshd_pids: list[int] = []

    def __enter__(self) -> Gate:
        self.held.unlink(missing_ok=True)
        self.hold.write_text(f"{self.passing}\n")
        self.hold.chmod(0o666)
        return self

    def session(self, client: subprocess.Popen[str] | None = None, timeout: float = 30.0) -> list[int]:
        """Wait until an exec is held; the sshd processes of its connection (the [priv] monitor and the
        unprivileged child that moves the bytes), found by walking up from the held shell.  `client`: the
        process that connects, whose early end is reported with its output."""
        deadline = time.monotonic() + timeout
        while not self.held.exists() or not self.held.read_text().strip():
            if client is not None and client.poll() is not None:
                out, err = client.communicate()
                raise AssertionError(f"the client ended ({client.returncode}) before an exec reached the gate: {err}")
            if time.monotonic() > deadline:
                raise AssertionError("no exec reached the gate")
            time.sleep(0.02)
        pid = int(self.held.read_text())
        self.sshd_pids = []
        while pid > 1:
            pid = _parent(pid)
            command = _command(pid)
            if "[listener]" in command or not command.startswith("sshd"):
                break  # the listener ("sshd: /usr/sbin/sshd -D [listener] ..."), which serves the other tests
            if _SESSION_SSHD.match(command):
                self.sshd_pids.append(pid)
        if not self.sshd_pids:
            raise AssertionError("the held exec has no per-connection sshd above it")
        return self.sshd_pids

    def release(self) -> None:
        self.hold.unlink(missing_ok=True)

    def signal_session(self, signum: int) -> None:
        for pid in self.sshd_pids:
            with suppress(ProcessLookupError):
                os.kill(pid, signum)

    def __exit__(self, *exc: object) -> None:
        self.release()
        self.signal_session(signal.SIGCONT)  # a stopped session must not outlive the test
        self.signal_session(signal.SIGKILL)
        self.held.unlink(missing_ok=True)


# The two per-connection processes: the unprivileged one that moves the bytes and its privileged monitor.
_SESSION_SSHD = re.compile(r"^sshd: \S+(@notty| \[priv\])$")


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return int(handle.read().rsplit(")", 1)[1].split()[1])
    except OSError:
        return 0


def _command(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


@contextmanager
def stopped(pids: list[int]) -> Iterator[None]:
    """SIGSTOP the processes for the duration, SIGCONT them after (by the pids given, nothing else)."""
    for pid in pids:
        os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        for pid in pids:
            with suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)


def missing_sshd(reason: str) -> None:
    if os.environ.get("CI") == "true":
        pytest.fail(f"SSH tests cannot run in CI: {reason}")
    pytest.skip(reason)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ensure_user(name: str, shell: str) -> Path:
    """The account, created if missing, with `shell` and a `*` password; changed only when it differs, so that
    runs at once neither race useradd nor rewrite an account another run is logged in as."""
    import pwd

    try:
        entry = pwd.getpwnam(name)
    except KeyError:
        created = subprocess.run(["useradd", "-m", "-s", shell, "-p", "*", name], capture_output=True, text=True)
        if created.returncode != 0 and subprocess.run(["id", name], capture_output=True).returncode != 0:
            raise RuntimeError(f"useradd {name}: {created.stderr.strip()}") from None  # not a run creating it too
        entry = pwd.getpwnam(name)
    if entry.pw_shell != shell or _password_field(name) != "*":
        subprocess.run(["usermod", "-s", shell, "-p", "*", name], check=True, capture_output=True)
    return Path(entry.pw_dir)


def _password_field(name: str) -> str | None:
    with open("/etc/shadow") as shadow:
        for line in shadow:
            fields = line.split(":")
            if fields[0] == name:
                return fields[1]
    return None


def _write_if_changed(path: Path, text: str, owner: str) -> None:
    """`text` at `path`, owned by `owner`: untouched when it is there already; else written whole and renamed
    into place, so that a session of another run never reads half a file."""
    if path.exists() and path.read_text() == text:
        return
    partial = path.with_name(f".{path.name}.{os.getpid()}")
    partial.write_text(text)
    shutil.chown(partial, owner, owner)
    os.replace(partial, path)


def runtime_bin(root: Path) -> Path:
    return root / "runtime-bin"


def runtime_state(root: Path) -> Path:
    return root / "runtime-state"


def prepare_users() -> None:
    """The test accounts and their home files: the same for every run (see USERS)."""
    for name, shell in USERS.items():
        home = _ensure_user(name, shell)
        ssh_dir = home / ".ssh"
        ssh_dir.mkdir(exist_ok=True)
        shutil.chown(ssh_dir, name, name)
        bashrc = ""
        if name == "logsleuth-banner":
            bashrc = 'echo "Welcome to gpu7! Disk quota: 93% used"\necho "motd on stderr" >&2\n'
        elif name == HOLD_USER:
            bashrc = GATE_BASHRC
        _write_if_changed(home / ".bashrc", bashrc, name)
        environment = ssh_dir / "environment"
        if name == "logsleuth-notail":
            empty = home / "empty-bin"
            empty.mkdir(exist_ok=True)
            _write_if_changed(environment, f"PATH={empty}\n", name)
        elif name != RUNTIME_USER and environment.exists():
            environment.unlink()  # (the runtime account's, from before run_environment, is overridden by it)


def run_environment(root: Path) -> str:
    """sshd_config lines giving this run's sessions what is theirs alone: the gated account its gate, the
    runtime account the stand-ins first on its PATH and their state (SetEnv overrides ~/.ssh/environment)."""
    return (
        f"Match User {HOLD_USER}\n"
        f"    SetEnv LOGSLEUTH_TEST_GATE={root / 'gate'}\n"
        f"Match User {RUNTIME_USER}\n"
        f"    SetEnv PATH={runtime_bin(root)}:/usr/local/bin:/usr/bin:/bin LOGSLEUTH_STANDIN_STATE={runtime_state(root)}\n"
    )


def keygen(path: Path, passphrase: str = "") -> str:
    """A fresh ed25519 key pair at `path`; its public key as known_hosts spells it: `ssh-ed25519 AAAA...`."""
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", passphrase, "-f", str(path)], check=True)
    return " ".join(Path(f"{path}.pub").read_text().split()[:2])


def sshd_config(root: Path, port: int, host_key: Path, authorized: Path, *, certificate: Path | None = None) -> Path:
    config = root / f"sshd_config.{port}"
    config.write_text(
        f"""Port {port}
ListenAddress 127.0.0.1
HostKey {host_key}
{f"HostCertificate {certificate}" if certificate else ""}
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
{run_environment(root)}"""
    )
    return config


class SSHDExited(RuntimeError):
    """sshd ended before it listened (its port taken since free_port() chose it, or a bad config)."""


def wait_listening(port: int, process: subprocess.Popen[bytes], log: Path) -> None:
    deadline = time.monotonic() + 30  # sshd starts in milliseconds: only a hang takes this long
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SSHDExited(f"sshd exited: {log.read_text(errors='replace')}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as sock:
                if sock.recv(4).startswith(b"SSH-"):
                    return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"sshd on port {port} did not start")


def run_sshd(root: Path, config: Path, port: int) -> subprocess.Popen[bytes]:
    # stderr to a file, not a pipe: nobody reads a pipe during the tests, and a full one would block sshd.
    log = root / f"sshd.{port}.log"
    with open(log, "wb") as stderr:
        process = subprocess.Popen([SSHD_PATH, "-D", "-e", "-f", str(config)], stderr=stderr)
    wait_listening(port, process, log)
    return process


@dataclass
class CertifiedSSHD:
    """A third sshd (same accounts and logs) whose host key is signed by a throwaway certificate authority."""

    port: int
    ca_pub: str  # "ssh-ed25519 AAAA...": what a `@cert-authority` known_hosts line trusts
    host_pub: str  # the plain host key inside the certificate (known to no known_hosts file)

    def known_hosts_line(self) -> str:
        return f"@cert-authority [127.0.0.1]:{self.port} {self.ca_pub}\n"


def start_certified_server(server: SSHD) -> tuple[CertifiedSSHD, subprocess.Popen[bytes]]:
    """An sshd presenting a host certificate (`HostCertificate`) for the name 127.0.0.1, signed by a new CA."""
    root = server.root
    ca = root / "host_ca"
    ca_pub = keygen(ca)
    host_key = root / "certified_host_key"
    host_pub = keygen(host_key)
    subprocess.run(
        ["ssh-keygen", "-q", "-s", str(ca), "-I", "logsleuth-test-host", "-h", "-n", "127.0.0.1", f"{host_key}.pub"],
        check=True,
        capture_output=True,
    )
    port, process = sshd_on_a_free_port(
        root, host_key, root / "authorized_keys", certificate=Path(f"{host_key}-cert.pub")
    )
    return CertifiedSSHD(port, ca_pub, host_pub), process


def sshd_on_a_free_port(
    root: Path, host_key: Path, authorized: Path, *, certificate: Path | None = None
) -> tuple[int, subprocess.Popen[bytes]]:
    """An sshd listening on a port that was free a moment ago: another test run (or xdist worker) may take it in
    between, and then sshd exits at once; a few tries on other ports get past that."""
    for attempt in range(5):
        port = free_port()
        try:
            return port, run_sshd(root, sshd_config(root, port, host_key, authorized, certificate=certificate), port)
        except SSHDExited:
            if attempt == 4:
                raise
    raise AssertionError("unreachable")


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """Stop one sshd we started, by its pid."""
    process.terminate()
    try:
        process.wait(timeout=5)
    except subprocess.TimeoutExpired:
        process.kill()


def start_servers() -> tuple[SSHD, list[subprocess.Popen[bytes]]]:
    """Two private sshds (target and jump host) with keys, accounts and a client config.  Needs root."""
    # Not under pytest's basetemp: that is mode 0700 and the test accounts must read keys and logs here.
    root = Path(tempfile.mkdtemp(prefix=RUN_PREFIX))
    root.chmod(0o755)
    Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    gate = root / "gate"
    gate.mkdir()
    gate.chmod(0o777)  # the gated account writes its held pid here
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

    (port, target), (jump_port, jump) = (sshd_on_a_free_port(root, host_key, authorized) for _ in range(2))
    processes = [target, jump]

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
    return server, processes


def stop_servers(server: SSHD, processes: list[subprocess.Popen[bytes]]) -> None:
    """Stop the sshds by the pids we started (nothing else), then remove the temp dir."""
    for process in processes:
        stop_process(process)
    shutil.rmtree(server.root, ignore_errors=True)
