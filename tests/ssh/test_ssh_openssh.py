"""The openssh backend (sources/ssh/openssh.py) and the backend choice (sources/ssh/open.py), against the private
sshds on 127.0.0.1: the third one presents a host certificate (conftest.certified_sshd).

The one-line errors are checked by asking both backends the same question: the openssh backend must say what the
paramiko backend says, word for word.
"""

from __future__ import annotations

import base64
import gzip
import hashlib
import os
import re
import shutil
import socket
import struct
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from cli_runner import run_diagnose
from remote_logs import FAILURE, LINE
from sshd_server import SSHD, CertifiedSSHD, free_port, keygen, without_attempt_time

from logsleuth.errors import SourceError, UsageError
from logsleuth.sources.base import ALIVE, Source
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions

pytestmark = [pytest.mark.ssh, pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client")]

BACKENDS = ("paramiko", "openssh")
COUNTING_PROXY = Path(__file__).with_name("counting_proxy.py")


def options(sshd: SSHD, **overrides: object) -> SSHOptions:
    values: dict[str, object] = {"config_file": str(sshd.config), "connect_attempts": 1}
    values.update(overrides)
    return SSHOptions(**values)  # type: ignore[arg-type]


def open_one(spec: str, opts: SSHOptions) -> Source:
    (source,) = open_sources(spec, opts)
    return source


def read_all(source: Source) -> bytes:
    return b"".join(source.read_range(0, source.size()))


def error_of(spec: str, opts: SSHOptions) -> str:
    with pytest.raises(SourceError) as caught:
        for source in open_sources(spec, opts):
            source.close()
    assert caught.value.exit_status == 3
    assert "\n" not in str(caught.value)
    return str(caught.value)


def own_known_hosts() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "logsleuth" / "known_hosts"


def described(public: str) -> str:
    """`ssh-ed25519 SHA256:…` of a public key, as both backends' messages show it."""
    key_type, blob = public.split()[:2]
    digest = base64.b64encode(hashlib.sha256(base64.b64decode(blob)).digest()).decode().rstrip("=")
    return f"{key_type} SHA256:{digest}"


def run_cli(config: Path, *args: str, helper: bool = True) -> subprocess.CompletedProcess[str]:
    return run_diagnose(config, *args, helper=helper, timeout=90)


@pytest.fixture
def log(sshd: SSHD, request: pytest.FixtureRequest) -> Iterator[Path]:
    name = re.sub(r"[^\w-]", "-", request.node.name)
    path = sshd.logs / f"openssh-{name}.log"
    path.write_bytes(LINE * 30000 + FAILURE)  # ~3 MiB: bigger than the prefetched tail
    yield path
    path.unlink(missing_ok=True)


# --- reading: the same sources, carried by ssh -------------------------------------------------------------------


def test_openssh_reads_what_paramiko_reads(sshd: SSHD, log: Path) -> None:
    data = log.read_bytes()
    source = open_one(f"logsleuth-alias:{log}", options(sshd, backend="openssh"))
    try:
        assert source.backend == "openssh"  # type: ignore[attr-defined]
        assert source.size() == len(data)
        size = len(data)
        for start, end in [(size - 1000, size), (size - (2 << 20), size), (0, size), (12345, 67890), (5, 5)]:
            assert b"".join(source.read_range(start, end)) == data[start:end], (start, end)
        assert source.find_anchors((b"Traceback", b"AssertionError")) == sorted(  # type: ignore[attr-defined]
            [data.index(b"Traceback"), data.index(b"AssertionError")]
        )
    finally:
        source.close()
    packed = log.with_suffix(".log.gz")
    packed.write_bytes(gzip.compress(data))
    try:
        source = open_one(f"logsleuth-alias:{packed}", options(sshd, backend="openssh"))
        assert source.size() == len(data)  # decompressed on the remote host, as with paramiko
        assert b"".join(source.read_range(len(data) - 5000, len(data))) == data[-5000:]
        source.close()
    finally:
        packed.unlink()


def test_the_openssh_backend_never_imports_paramiko(sshd: SSHD, log: Path) -> None:
    code = (
        "import sys\n"
        "from logsleuth.sources.open import open_sources\n"
        "from logsleuth.sources.options import SSHOptions\n"
        f"(s,) = open_sources({f'logsleuth-alias:{log}'!r}, SSHOptions(config_file={str(sshd.config)!r}, backend='openssh'))\n"
        "print(s.size(), 'paramiko' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == [str(log.stat().st_size), "False"], done.stderr


def test_openssh_banner_globs_and_quoting(sshd: SSHD) -> None:
    """A ~/.bashrc banner is dropped, a glob picks the newest, a hostile path runs nothing: the same scripts."""
    directory = sshd.logs / "openssh-glob"
    directory.mkdir()
    marker = sshd.logs / "OPENSSH-MARKER"
    try:
        (directory / "a b;'$(touch x)`y`.log").write_bytes(b"older\n" + FAILURE)
        os.utime(directory / "a b;'$(touch x)`y`.log", (1_700_000_000, 1_700_000_000))
        (directory / "newest.log").write_bytes(b"newest\n" + FAILURE)
        spec = f"logsleuth-banner@127.0.0.1:{sshd.port}:{directory}/*.log"
        source = open_one(spec, options(sshd, backend="openssh"))
        assert source.name.endswith("/newest.log")
        assert read_all(source) == b"newest\n" + FAILURE
        source.close()
        every = open_sources(spec, options(sshd, backend="openssh", all_files=True))
        assert sorted(read_all(s) for s in every) == [b"newest\n" + FAILURE, b"older\n" + FAILURE]
        for one in every:
            one.close()
        message = error_of(f"logsleuth-alias:{sshd.logs}/nope; touch {marker}", options(sshd, backend="openssh"))
        assert message.endswith(": no such file") and not marker.exists()
    finally:
        shutil.rmtree(directory)


def test_openssh_follows_a_growing_log(sshd: SSHD) -> None:
    """`watch` over ssh: tail -F in an ssh process; closing the follow ends it."""
    log = sshd.logs / "openssh-follow.log"
    log.write_bytes(b"first\n")
    source = open_one(f"logsleuth-alias:{log}", options(sshd, backend="openssh"))
    chunks = source.follow(0)  # type: ignore[attr-defined]
    try:
        got = b""
        for chunk in chunks:
            got += chunk if chunk != ALIVE else b""  # ALIVE: the heartbeat's confirmation, not the log's bytes
            if got == b"first\n":
                with log.open("ab") as handle:
                    handle.write(b"second\n")
            if got == b"first\nsecond\n":
                break
        assert got == b"first\nsecond\n"
    finally:
        chunks.close()
        source.close()
        log.unlink()


# --- the same one-line errors -----------------------------------------------------------------------------------


def _error_case(sshd: SSHD, tmp_path: Path, case: str, silent_port: int) -> tuple[str, SSHOptions]:
    """(spec, options) that fail the same way with either backend."""
    direct = f"logsleuth-test@127.0.0.1:{sshd.port}:{sshd.logs}/x.log"
    known = f"{sshd.root}/client/known_hosts"
    if case == "unknown-host-name":
        return f"{'z' * 64}.invalid:/x.log", options(sshd)  # refused locally: no DNS query leaves this machine
    if case == "refused":
        return f"127.0.0.1:{free_port()}:/x.log", options(sshd, connect_attempts=2)
    if case == "timeout":
        return f"127.0.0.1:{silent_port}:/x.log", options(sshd, connect_timeout=1.0)
    if case == "jump-host-cannot-connect":
        config = sshd.write_config(
            "jump-refused", f"Host behind\n    HostName 127.0.0.1\n    Port {free_port()}\n    ProxyJump jumpbox\n\n"
            + sshd.config.read_text()
        )
        return "behind:/x.log", options(sshd, config_file=str(config))
    config_text = f"Host *\n    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {tmp_path}/known_hosts\n"
    if case in ("auth", "locked-key"):
        key = sshd.root / "client" / "id_locked"
        if case == "auth":
            keygen(tmp_path / "stranger")
            key = tmp_path / "stranger"
        config_text = f"Host *\n    IdentityFile {key}\n    UserKnownHostsFile {known}\n"
    elif case == "unknown-host-key":
        (tmp_path / "known_hosts").write_text("")
    elif case == "changed-host-key":
        (tmp_path / "known_hosts").write_text(f"[127.0.0.1]:{sshd.port} {keygen(tmp_path / 'impostor')}\n")
    elif case == "revoked-host-key":
        (tmp_path / "known_hosts").write_text(
            f"[127.0.0.1]:{sshd.port} {sshd.host_pub}\n@revoked * {sshd.host_pub}\n"
        )
    elif case == "alias-changed-host-key":
        (tmp_path / "known_hosts").write_text(f"gpu-alias {keygen(tmp_path / 'impostor')}\n")
        config_text = f"Host aliased\n    HostName 127.0.0.1\n    Port {sshd.port}\n    HostKeyAlias gpu-alias\n" + config_text
        direct = f"logsleuth-test@aliased:{sshd.logs}/x.log"
    else:
        return {
            "missing": f"logsleuth-alias:{sshd.logs}/no-such.log",
            "directory": f"logsleuth-alias:{sshd.logs}",
            "glob-without-match": f"logsleuth-alias:{sshd.logs}/nothing-*.log",
            "no-tail": f"logsleuth-notail@127.0.0.1:{sshd.port}:{sshd.logs}/x.log",
        }[case], options(sshd)
    config = tmp_path / "config"
    config.write_text(config_text)
    return direct, options(sshd, config_file=str(config))


ERROR_CASES = [
    "unknown-host-name",
    "refused",
    "timeout",
    "jump-host-cannot-connect",
    "auth",
    "locked-key",
    "unknown-host-key",
    "changed-host-key",
    "revoked-host-key",
    "alias-changed-host-key",
    "missing",
    "directory",
    "glob-without-match",
    "no-tail",
]


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("case", ERROR_CASES)
def test_openssh_errors_are_the_paramiko_errors(sshd: SSHD, tmp_path: Path, case: str) -> None:
    target = sshd.logs / "x.log"
    target.write_bytes(FAILURE)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # accepts TCP, never speaks SSH
        spec, opts = _error_case(sshd, tmp_path, case, silent.getsockname()[1])
        try:
            said = {backend: error_of(spec, replace(opts, backend=backend)) for backend in BACKENDS}
        finally:
            target.unlink()
    if case == "jump-host-cannot-connect":  # the reason is the jump host's, as each client words it
        said = {backend: text.split(" (")[0] for backend, text in said.items()}
    assert without_attempt_time(said["openssh"]) == without_attempt_time(said["paramiko"])
    expected_start = {
        "refused": "127.0.0.1: connection refused by 127.0.0.1 port ",
        "timeout": "127.0.0.1: connection to 127.0.0.1 port ",
        "jump-host-cannot-connect": "behind: jump host jumpbox could not connect to 127.0.0.1 port ",
        "auth": "127.0.0.1: authentication failed for logsleuth-test@127.0.0.1 (tried publickey with: ",
        "locked-key": "127.0.0.1: authentication failed for logsleuth-test@127.0.0.1: key ",
        "unknown-host-key": f"127.0.0.1: unknown host key for [127.0.0.1]:{sshd.port} ({sshd.host_key_described}); ",
        "changed-host-key": f"127.0.0.1: HOST KEY CHANGED for [127.0.0.1]:{sshd.port}: ",
        "revoked-host-key": f"127.0.0.1: REVOKED HOST KEY for [127.0.0.1]:{sshd.port}: the server presents ",
        "alias-changed-host-key": "aliased: HOST KEY CHANGED for gpu-alias: ",
    }.get(case, "")
    assert said["openssh"].startswith(expected_start), said


def test_an_account_without_a_shell_is_one_line(sshd: SSHD, log: Path) -> None:
    spec = f"logsleuth-nosh@127.0.0.1:{sshd.port}:{log}"
    assert error_of(spec, options(sshd, backend="openssh")) == (
        f"{spec}: the account on 127.0.0.1 has no usable shell (only the paramiko backend falls back to SFTP)"
    )


@pytest.mark.parametrize("alias", [False, True], ids=["host-port", "HostKeyAlias"])
def test_openssh_accepts_a_new_key_into_logsleuths_file_as_paramiko_does(
    sshd: SSHD, log: Path, tmp_path: Path, alias: bool
) -> None:
    """ssh checks the key and accepts it (accept-new); the key lands in logsleuth's own known_hosts under the
    name paramiko would use, with the same notice, never in the user's file; then either backend knows it."""
    user_file = tmp_path / "known_hosts"
    user_file.write_text("")
    host = "aliased" if alias else "127.0.0.1"
    config = tmp_path / "config"
    config.write_text(
        ("Host aliased\n    HostName 127.0.0.1\n    HostKeyAlias gpu-alias\n" if alias else "")
        + f"Host *\n    Port {sshd.port}\n    User logsleuth-test\n    IdentityFile {sshd.client_key}\n"
        f"    UserKnownHostsFile {user_file}\n"
    )
    spec = f"{host}:{log}"
    name = "gpu-alias" if alias else f"[127.0.0.1]:{sshd.port}"
    assert error_of(spec, options(sshd, config_file=str(config), backend="openssh")).startswith(
        f"{host}: unknown host key for {name} ({sshd.host_key_described}); verify it"
    )
    notices: list[str] = []
    opts = options(sshd, config_file=str(config), backend="openssh", accept_new_host_key=True, notice=notices.append)
    source = open_one(spec, opts)
    assert read_all(source) == log.read_bytes()  # later runs (new ssh processes) know the key too
    source.close()
    assert notices == [f"Permanently added '{name}' (ED25519) to the list of known hosts in {own_known_hosts()}"]
    assert own_known_hosts().read_text() == f"{name} {sshd.host_pub}\n"
    assert user_file.read_text() == ""
    for backend in BACKENDS:  # known now, to both
        open_one(spec, options(sshd, config_file=str(config), backend=backend)).close()


# --- host certificates: what paramiko cannot check ----------------------------------------------------------------


def certified_config(sshd: SSHD, certified: CertifiedSSHD, tmp_path: Path, authority: str) -> Path:
    known = tmp_path / "known_hosts"
    known.write_text(f"@cert-authority [127.0.0.1]:{certified.port} {authority}\n")
    config = tmp_path / "config"
    config.write_text(
        f"Host certified\n    HostName 127.0.0.1\n    Port {certified.port}\n    User logsleuth-test\n"
        f"    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {known}\n"
    )
    return config


def test_auto_reaches_a_host_with_a_certificate_through_ssh(
    sshd: SSHD, certified_sshd: CertifiedSSHD, log: Path, tmp_path: Path
) -> None:
    config = certified_config(sshd, certified_sshd, tmp_path, certified_sshd.ca_pub)
    spec = f"certified:{log}"
    messages: list[str] = []
    source = open_one(spec, options(sshd, config_file=str(config), progress=messages.append))
    try:
        assert source.backend == "openssh"  # type: ignore[attr-defined]
        assert read_all(source) == log.read_bytes()
    finally:
        source.close()
    assert messages[0] == "connecting to certified with ssh (host certificate authority)…"
    for helper in (True, False):  # the whole command, with and without the SSH helper process
        result = run_cli(config, spec, helper=helper)
        assert (result.returncode, result.stderr) == (1, ""), result.stderr
        assert '"AssertionError' in result.stdout
    known = (tmp_path / "known_hosts").read_text()
    assert known.startswith("@cert-authority") and len(known.splitlines()) == 1  # nothing written
    assert not own_known_hosts().exists()
    # paramiko cannot check the certificate: the host's plain key is unknown to it, and the message says why
    where = f"{tmp_path}/known_hosts line 1"
    assert error_of(spec, options(sshd, config_file=str(config), backend="paramiko")) == (
        f"certified: unknown host key for [127.0.0.1]:{certified_sshd.port} ({described(certified_sshd.host_pub)}); "
        f"{where} trusts a certificate authority for this host, but the paramiko backend cannot check host "
        "certificates (the openssh backend can); verify the key, then rerun with --accept-new-host-key to trust it"
    )


def test_a_certificate_from_another_authority_is_refused_in_one_line(
    sshd: SSHD, certified_sshd: CertifiedSSHD, log: Path, tmp_path: Path
) -> None:
    config = certified_config(sshd, certified_sshd, tmp_path, keygen(tmp_path / "other-ca"))
    result = run_cli(config, f"certified:{log}")
    assert result.returncode == 3, result.stderr
    assert result.stderr == (  # ssh tried the certificate, then the plain key inside it: known to no file
        f"logsleuth: certified: unknown host key for [127.0.0.1]:{certified_sshd.port} "
        f"({described(certified_sshd.host_pub)}); verify it, then rerun with --accept-new-host-key to trust it\n"
    )


# --- ControlMaster: one connection for several runs --------------------------------------------------------------


def test_auto_shares_the_users_controlmaster_connection(sshd: SSHD, log: Path, tmp_path: Path) -> None:
    """ControlMaster auto + ControlPersist: the first run's ssh becomes the master; every later ssh (the wider
    reads, the second run) goes through its socket: the ProxyCommand counts one TCP connection in all."""
    counter = tmp_path / "connections"
    counter.write_text("")
    config = tmp_path / "config"
    config.write_text(
        f"Host muxed\n    HostName 127.0.0.1\n    Port {sshd.port}\n    User logsleuth-test\n"
        f"    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {sshd.root}/client/known_hosts\n"
        f"    ControlMaster auto\n    ControlPath {sshd.root}/mux-%C\n    ControlPersist 60\n"
        f"    ProxyCommand {sys.executable} {COUNTING_PROXY} {counter} %p\n"
    )
    control = ["ssh", "-F", str(config), "-o", "BatchMode=yes"]
    try:
        for run in range(2):
            result = run_cli(config, "--all", f"muxed:{log}")  # --all: a probe, then grep: two ssh per run
            assert (result.returncode, result.stderr) == (1, ""), result.stderr
            check = subprocess.run([*control, "-O", "check", "muxed"], capture_output=True, text=True, timeout=10)
            assert check.returncode == 0 and "Master running" in check.stderr, (run, check.stderr)
        assert len(counter.read_text().splitlines()) == 1
    finally:
        subprocess.run([*control, "-O", "exit", "muxed"], capture_output=True, timeout=10)


def test_what_a_killed_logsleuth_left_is_swept(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ssh's logs live in a private directory named after the process; a helper stopped by Ctrl-C cannot remove
    its own, so the next logsleuth does."""
    from logsleuth.sources.ssh.openssh import private_directory

    monkeypatch.setenv("TMPDIR", str(tmp_path))
    monkeypatch.setattr("tempfile.tempdir", None)  # gettempdir() reads TMPDIR again
    gone = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True, check=True).stdout.strip()
    (tmp_path / f"logsleuth-ssh-{gone}-abc").mkdir()
    (tmp_path / f"logsleuth-ssh-{gone}-abc" / "ssh-1.log").write_text("debug1: …\n")
    (tmp_path / f"logsleuth-ssh-{os.getppid()}-def").mkdir()  # a live process: kept
    (tmp_path / "logsleuth-ssh-notapid").mkdir()  # not ours to judge: kept
    made = Path(private_directory())
    assert made.parent == tmp_path and made.name.startswith(f"logsleuth-ssh-{os.getpid()}-")
    assert sorted(path.name for path in tmp_path.glob("logsleuth-ssh-*")) == sorted(
        [made.name, f"logsleuth-ssh-{os.getppid()}-def", "logsleuth-ssh-notapid"]
    )


# --- the choice ------------------------------------------------------------------------------------------------------


def _sk_public_key() -> str:
    """A FIDO (sk-) ed25519 public key as ssh-keygen writes it: the format is public, no device is needed."""

    def string(value: bytes) -> bytes:
        return struct.pack(">I", len(value)) + value

    blob = string(b"sk-ssh-ed25519@openssh.com") + string(os.urandom(32)) + string(b"ssh:")
    return f"sk-ssh-ed25519@openssh.com {base64.b64encode(blob).decode()} me@laptop"


@pytest.mark.parametrize(
    ("extra", "reason"),
    [
        ("", None),
        ("    CertificateFile {home}/.ssh/id_test-cert.pub\n", "CertificateFile"),
        ("    ControlMaster auto\n    ControlPath {home}/.ssh/cm-%C\n", "ControlMaster"),
        ("    ControlMaster no\n    ControlPath {home}/.ssh/cm-%C\n", "ControlMaster"),
        ("    IdentityFile {home}/.ssh/id_token\n", "FIDO security key"),
        ("default-sk", "FIDO security key"),
        ("cert-authority", "host certificate authority"),
    ],
)
def test_what_paramiko_lacks(tmp_path: Path, extra: str, reason: str | None) -> None:
    import paramiko

    from logsleuth.sources.spec import parse_remote_spec
    from logsleuth.sources.ssh.open import paramiko_lacks

    home = Path(os.environ["HOME"])
    (home / ".ssh" / "id_token").write_text("-----BEGIN OPENSSH PRIVATE KEY-----\n")
    (home / ".ssh" / "id_token.pub").write_text(_sk_public_key())
    known = tmp_path / "known_hosts"
    known.write_text(f"@cert-authority *.cluster {keygen(tmp_path / 'ca')}\n")
    if extra == "default-sk":  # no IdentityFile: OpenSSH also tries ~/.ssh/id_ed25519_sk
        shutil.copy(home / ".ssh" / "id_token", home / ".ssh" / "id_ed25519_sk")
        shutil.copy(home / ".ssh" / "id_token.pub", home / ".ssh" / "id_ed25519_sk.pub")
    host = "gpu7.cluster" if extra == "cert-authority" else "gpu7"
    lines = "" if extra in ("default-sk", "cert-authority") else extra.format(home=home)
    config = paramiko.SSHConfig.from_text(f"Host *\n    UserKnownHostsFile {tmp_path}/none\n{lines}")
    if extra == "cert-authority":
        config = paramiko.SSHConfig.from_text(f"Host *\n    UserKnownHostsFile {known}\n")
    remote = parse_remote_spec(f"{host}:/x.log")
    assert remote is not None
    opts = SSHOptions(known_hosts_file=str(tmp_path / "own"), system_config_file=None)
    assert paramiko_lacks(config, remote, opts) == reason


def test_match_exec_makes_auto_choose_ssh(sshd: SSHD, log: Path, tmp_path: Path) -> None:
    """ssh runs `Match exec` as the user's ssh does (paramiko would need invoke even to look the host up)."""
    config = tmp_path / "config"
    config.write_text(
        f'Match host matched exec "test %h = matched"\n    HostName 127.0.0.1\n    Port {sshd.port}\n\n'
        + sshd.config.read_text()
    )
    source = open_one(f"matched:{log}", options(sshd, config_file=str(config)))
    try:
        assert source.backend == "openssh"  # type: ignore[attr-defined]
        assert read_all(source) == log.read_bytes()
    finally:
        source.close()


def test_auto_without_ssh_uses_paramiko_and_openssh_says_it_needs_ssh(
    sshd: SSHD, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = sshd.write_config("without-ssh", sshd.config.read_text() + sshd.choose_openssh)
    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))  # a machine without OpenSSH's client
    source = open_one(f"logsleuth-alias:{log}", options(sshd, config_file=str(config)))
    assert source.backend == "paramiko"  # type: ignore[attr-defined]
    source.close()
    assert error_of(f"logsleuth-alias:{log}", options(sshd, backend="openssh")) == (
        "logsleuth-alias: the openssh backend needs OpenSSH's ssh client, and none is on PATH"
    )


def test_a_bad_backend_or_config_under_openssh_is_a_usage_error(sshd: SSHD, tmp_path: Path) -> None:
    with pytest.raises(UsageError, match=r"^ssh backend must be one of auto, paramiko, openssh, not 'putty'$"):
        open_sources("gpu7:/x.log", SSHOptions(backend="putty"))  # type: ignore[arg-type]
    bad = tmp_path / "config"
    bad.write_text("Host direct\n    Port abc\n")
    with pytest.raises(UsageError) as caught:
        open_sources("direct:/x.log", SSHOptions(config_file=str(bad), backend="openssh"))
    assert caught.value.exit_status == 2
    assert str(caught.value) == f"ssh config {bad} line 2: Bad port 'abc'"  # ssh's own words


def test_cli_ssh_backend_option(sshd: SSHD, log: Path) -> None:
    """`--ssh-backend openssh` on the command line (cli/app.py) reaches SSHOptions.backend."""
    from typer.main import get_command

    from logsleuth.cli.app import app

    diagnose = get_command(app).commands["diagnose"]  # type: ignore[attr-defined]
    if not any("--ssh-backend" in param.opts for param in diagnose.params):
        pytest.skip("cli/app.py has no --ssh-backend yet (the CLI half of issue 12)")
    result = run_cli(sshd.config, "--ssh-backend", "openssh", f"127.0.0.1:{free_port()}:/x.log")
    assert result.returncode == 3
    refused = r"logsleuth: 127\.0\.0\.1: connection refused by 127\.0\.0\.1 port \d+ \(3 attempts in [\d.]+ s\)\n"
    assert re.fullmatch(refused, result.stderr), result.stderr
