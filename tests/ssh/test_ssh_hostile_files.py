"""known_hosts and ssh_config files as users really have them: markers, hashed names, patterns, garbage, bad
values, Include loops.  Where OpenSSH's own client is installed it is asked too, as the oracle: logsleuth must
refuse what it refuses."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_runner import run_diagnose
from sshd_server import SSHD, keygen

from logsleuth.errors import SourceError
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.ssh.known_hosts import known_host_entries

FAILURE_LOG = (
    b"[2025-11-06 02:10:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 690, in event_loop_overlap\n'
    b"    assert self.req_to_token_pool.available_size() > 0\n"
    b"AssertionError\n"
)


def hashed(directory: Path, line: str) -> str:
    """`line` with its host names hashed by OpenSSH's own `ssh-keygen -H`."""
    path = directory / "to-hash"
    path.write_text(line)
    subprocess.run(["ssh-keygen", "-q", "-H", "-f", str(path)], check=True, capture_output=True)
    return path.read_text()


# --- the known_hosts reader, no server needed ----------------------------------------------------------------


def test_known_hosts_lines_are_matched_like_openssh(tmp_path: Path) -> None:
    a, b = keygen(tmp_path / "a"), keygen(tmp_path / "b")
    file = tmp_path / "known_hosts"
    file.write_text(
        "# a comment\n"
        "\n"
        f"gpu7,10.0.0.7 {a}\n"
        f"[gpu7]:2222 {b}\n"
        f"*.cluster,!bad.cluster {a}\n"
        f"node?.lab {b}\n"
        + hashed(tmp_path, f"gpu9 {b}\n")
        + f"@revoked gpu7 {b}\n"
        f"@cert-authority *.example.com {a}\n"
        "garbage\n"
        "gpu8 ssh-ed25519 !!!not-base64!!!\n"
        "gpu8 ssh-ed25519\n"
        f"@unknown-marker gpu8 {a}\n"
        f"gpu8 ssh-rsa {a.split()[1]}\n"  # the blob says ed25519: OpenSSH skips the line
        f"GPU10 {a} a trailing comment\n"
    )

    def found(name: str) -> list[tuple[str | None, str, int]]:
        return [(e.marker, e.key_type, e.line) for e in known_host_entries([str(file)], name)]

    assert found("gpu7") == [(None, "ssh-ed25519", 3), ("@revoked", "ssh-ed25519", 8)]
    assert found("10.0.0.7") == [(None, "ssh-ed25519", 3)]
    assert found("[gpu7]:2222") == [(None, "ssh-ed25519", 4)]
    assert found("n1.cluster") == [(None, "ssh-ed25519", 5)]
    assert found("bad.cluster") == []  # a negated pattern wins over the wildcard
    assert found("node3.lab") == [(None, "ssh-ed25519", 6)]
    assert found("node33.lab") == []
    assert found("gpu9") == [(None, "ssh-ed25519", 7)]  # hashed by ssh-keygen -H
    assert found("api.example.com") == [("@cert-authority", "ssh-ed25519", 9)]
    assert found("gpu8") == []  # every gpu8 line is broken: skipped, as OpenSSH does
    assert found("gpu10") == [(None, "ssh-ed25519", 15)]  # names match without regard to case
    assert found("[gpu7]:22") == []
    assert known_host_entries([str(tmp_path / "missing")], "gpu7") == []


# --- host keys against the private sshd -----------------------------------------------------------------------


def connect(sshd: SSHD, config: Path, spec: str, **options: object) -> None:
    opts = SSHOptions(config_file=str(config), connect_attempts=1, **options)  # type: ignore[arg-type]
    for source in open_sources(spec, opts):
        source.close()


def refused(sshd: SSHD, config: Path, spec: str, **options: object) -> str:
    with pytest.raises(SourceError) as caught:
        connect(sshd, config, spec, **options)
    assert caught.value.exit_status == 3
    return str(caught.value)


def openssh_refuses(config: Path, host: str) -> bool | None:
    """Whether OpenSSH's client refuses the host key (None when no ssh client is installed)."""
    if not shutil.which("ssh"):
        return None
    result = subprocess.run(
        ["ssh", "-F", str(config), "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=accept-new", host, "true"],
        capture_output=True,
        text=True,
        timeout=30,
        stdin=subprocess.DEVNULL,
    )
    return result.returncode != 0


def own_known_hosts() -> Path:
    return Path(os.environ["XDG_CONFIG_HOME"]) / "logsleuth" / "known_hosts"


def alias_config(sshd: SSHD, tmp_path: Path, known: str) -> Path:
    hosts = tmp_path / "known_hosts"
    hosts.write_text(known)
    return sshd.write_config(
        "alias-" + tmp_path.name,
        f"Host aliased\n    HostName 127.0.0.1\n    Port {sshd.port}\n    HostKeyAlias gpu-alias\n"
        f"    User logsleuth-test\n    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {hosts}\n",
    )


@pytest.mark.ssh
@pytest.mark.parametrize("accept", [False, True])
def test_host_key_alias_with_a_changed_key_is_refused(sshd: SSHD, tmp_path: Path, accept: bool) -> None:
    """HostKeyAlias names the known_hosts entry as it is, port not appended (ssh_config(5))."""
    impostor = keygen(tmp_path / "impostor")
    config = alias_config(sshd, tmp_path, f"gpu-alias {impostor}\n")
    message = refused(sshd, config, f"aliased:{sshd.logs}/x.log", accept_new_host_key=accept)
    assert message.startswith("aliased: HOST KEY CHANGED for gpu-alias: the server now presents ssh-ed25519 ")
    assert not own_known_hosts().exists()  # nothing stored
    assert openssh_refuses(config, "aliased") in (True, None)


@pytest.mark.ssh
def test_host_key_alias_finds_and_stores_the_bare_alias(sshd: SSHD, tmp_path: Path) -> None:
    log = sshd.logs / "alias.log"
    log.write_bytes(FAILURE_LOG)
    try:
        known = alias_config(sshd, tmp_path, f"gpu-alias {sshd.host_pub}\n")
        connect(sshd, known, f"aliased:{log}")
        assert openssh_refuses(known, "aliased") in (False, None)
        unknown = alias_config(sshd, tmp_path, "")
        notices: list[str] = []
        connect(sshd, unknown, f"aliased:{log}", accept_new_host_key=True, notice=notices.append)
    finally:
        log.unlink()
    assert own_known_hosts().read_text() == f"gpu-alias {sshd.host_pub}\n"
    assert notices == [
        f"Permanently added 'gpu-alias' (ED25519) to the list of known hosts in {own_known_hosts()}"
    ]


def direct_config(sshd: SSHD, name: str, known: str, extra: str = "") -> tuple[Path, Path]:
    hosts = sshd.root / "client" / f"known_hosts.{name}"
    hosts.write_text(known)
    config = sshd.write_config(
        name,
        f"Host direct\n    HostName 127.0.0.1\n    Port {sshd.port}\n    User logsleuth-test\n"
        f"    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {hosts}\n{extra}",
    )
    return config, hosts


def run_cli(config: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_diagnose(config, *args)


@pytest.mark.ssh
@pytest.mark.parametrize(
    "case", ["revoked", "revoked-by-wildcard", "cert-authority-only", "cert-authority-and-key", "hashed", "garbage"]
)
def test_hostile_known_hosts_end_in_one_line(sshd: SSHD, tmp_path: Path, case: str) -> None:
    real = f"[127.0.0.1]:{sshd.port} {sshd.host_pub}\n"
    ca = keygen(tmp_path / "ca")
    known = {
        "revoked": real + f"@revoked [127.0.0.1]:{sshd.port} {sshd.host_pub}\n",
        "revoked-by-wildcard": f"@revoked * {sshd.host_pub}\n" + real,
        "cert-authority-only": f"@cert-authority * {ca}\n",
        "cert-authority-and-key": f"@cert-authority * {ca}\n" + real,
        "hashed": hashed(tmp_path, real),
        "garbage": "\x00\x1b[31m nonsense\n@revoked\n|1|notbase64|x ssh-ed25519 AAAA\n" + real + "[127.0.0.1\n",
    }[case]
    config, hosts = direct_config(sshd, f"hostile-{case}", known)
    log = sshd.logs / f"hostile-{case}.log"
    log.write_bytes(FAILURE_LOG)
    try:
        result = run_cli(config, f"direct:{log}")
    finally:
        log.unlink()
    name = f"[127.0.0.1]:{sshd.port}"
    if case.startswith("revoked"):
        assert result.returncode == 3, result.stderr
        line = 2 if case == "revoked" else 1
        assert result.stderr == (
            f"logsleuth: direct: REVOKED HOST KEY for {name}: the server presents {sshd.host_key_described}, which "
            f"{hosts} line {line} marks as revoked; refusing to connect\n"
        )
        assert openssh_refuses(config, "direct") in (True, None)
    elif case == "cert-authority-only":  # "auto" reaches the host with ssh, which checks certificates itself
        assert result.returncode == 3, result.stderr
        assert result.stderr == (
            f"logsleuth: direct: unknown host key for {name} ({sshd.host_key_described}); verify it, then rerun "
            "with --accept-new-host-key to trust it\n"
        )
    else:
        assert (result.returncode, result.stderr) == (1, ""), result.stderr
    assert hosts.read_text() == known  # never written


@pytest.mark.ssh
def test_global_known_hosts_file_is_read_and_never_written(sshd: SSHD, tmp_path: Path) -> None:
    global_file = tmp_path / "ssh_known_hosts"
    global_file.write_text(f"[127.0.0.1]:{sshd.port} {sshd.host_pub}\n")
    config, user_file = direct_config(sshd, "global", "", f"    GlobalKnownHostsFile {global_file}\n")
    log = sshd.logs / "global.log"
    log.write_bytes(FAILURE_LOG)
    try:
        connect(sshd, config, f"direct:{log}")
        config_without, _ = direct_config(sshd, "global-none", "", "    GlobalKnownHostsFile /nonexistent\n")
        message = refused(sshd, config_without, f"direct:{log}")
    finally:
        log.unlink()
    assert message.startswith("direct: unknown host key")
    assert user_file.read_text() == "" and global_file.read_text() == f"[127.0.0.1]:{sshd.port} {sshd.host_pub}\n"


def test_global_known_hosts_default_to_openssh_files() -> None:
    import paramiko

    from logsleuth.sources.ssh.config import resolve_host

    settings = resolve_host(paramiko.SSHConfig.from_text(""), "gpu7")
    assert settings.global_known_hosts_files == ("/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2")


# --- ssh_config files ---------------------------------------------------------------------------------------


BAD_CONFIGS = {
    "port-missing": ("Host direct\n    Port\n", 2, "no value after Port"),
    "port-not-a-number": ("Host direct\n    Port abc\n", 2, "bad Port 'abc' (a number from 1 to 65535)"),
    "port-out-of-range": ("Host *\n    Port 70000\n", 2, "bad Port '70000' (a number from 1 to 65535)"),
    "timeout": ("Host direct\n    ConnectTimeout soon\n", 2, "bad ConnectTimeout 'soon' (a number of seconds)"),
    "alive-count": ("ServerAliveCountMax -1\n", 1, "bad ServerAliveCountMax '-1' (a whole number)"),
    "jump-port": ("Host direct\n    ProxyJump bastion:http\n", 2, "bad ProxyJump 'bastion:http' (bad port)"),
    "unparsable": ("Host direct\n    = 3\n", 2, "cannot read '= 3'"),
    "include-loop": ("Include {self}\n", 1, "Include nested more than 16 deep (does a file include itself?)"),
}


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.ssh
@pytest.mark.parametrize("helper", ["1", "0"], ids=["helper", "in-process"])
@pytest.mark.parametrize("case", sorted(BAD_CONFIGS))
def test_a_bad_ssh_config_line_is_a_usage_error(sshd: SSHD, tmp_path: Path, case: str, helper: str) -> None:
    text, line, reason = BAD_CONFIGS[case]
    config = tmp_path / "config"
    config.write_text(text.format(self=config) + sshd.config.read_text())
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    environment["LOGSLEUTH_SSH_WORKER"] = helper
    result = subprocess.run(
        [sys.executable, "-m", "logsleuth", "diagnose", "direct:/x.log", "-F", str(config), "--format", "json"],
        capture_output=True,
        text=True,
        env=environment,
        timeout=60,
    )
    assert result.stderr == f"logsleuth: ssh config {config} line {line}: {reason}\n"
    assert result.returncode == 2


@pytest.mark.ssh
def test_unknown_keywords_are_ignored(sshd: SSHD, tmp_path: Path) -> None:
    """Distributions add keywords of their own (Apple's UseKeychain, Debian's GSSAPI ones): a config the user's
    ssh accepts must not be refused, so unknown keywords are skipped (as with `IgnoreUnknown *`)."""
    log = sshd.logs / "unknown-keywords.log"
    log.write_bytes(FAILURE_LOG)
    config = sshd.write_config(
        "unknown-keywords", "Host *\n    UseKeychain yes\n    Frobnicate a b c\n\n" + sshd.config.read_text()
    )
    try:
        result = run_cli(config, f"logsleuth-alias:{log}")
    finally:
        log.unlink()
    assert (result.returncode, result.stderr) == (1, "")
