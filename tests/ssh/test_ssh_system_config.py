"""The config files OpenSSH reads: the user's ~/.ssh/config, then the system-wide /etc/ssh/ssh_config (first value
wins); with -F only that file; with `-F none` none.  HOME is a temp dir (conftest.py) and the tests point
`SSHOptions.system_config_file` at a file of their own, except the oracle test, which compares the real
/etc/ssh/ssh_config as logsleuth reads it with OpenSSH's own reading (`ssh -G`)."""

from __future__ import annotations

import os
import pwd
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from remote_logs import FAILURE
from sshd_server import SSHD

from logsleuth.errors import UsageError
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.ssh.config import load_config, resolve_host


def user_config(text: str) -> Path:
    path = Path(os.environ["HOME"]) / ".ssh" / "config"
    path.write_text(text)
    return path


def resolved(options: SSHOptions, host: str = "sysalias") -> tuple[str, int, str]:
    settings = resolve_host(load_config(options), host)
    return settings.hostname, settings.port, settings.user


@pytest.mark.ssh
def test_the_system_config_is_read_after_the_users(sshd: SSHD, tmp_path: Path) -> None:
    """The user's Port wins (first value); the rest, GlobalKnownHostsFile included, comes from the system file."""
    global_known = tmp_path / "ssh_known_hosts"
    global_known.write_text(sshd.known_hosts_line())
    system = tmp_path / "ssh_config"
    system.write_text(
        f"Host sysalias\n    HostName 127.0.0.1\n    Port 1\n    User logsleuth-test\n"
        f"    IdentityFile {sshd.client_key}\n    UserKnownHostsFile none\n    GlobalKnownHostsFile {global_known}\n"
    )
    user_config(f"Host sysalias\n    Port {sshd.port}\n")
    log = sshd.logs / "system-config.log"
    log.write_bytes(FAILURE)
    try:
        (source,) = open_sources(f"sysalias:{log}", SSHOptions(system_config_file=str(system), connect_attempts=1))
        assert b"".join(source.read_range(0, source.size())) == FAILURE
        source.close()
    finally:
        log.unlink()
    assert global_known.read_text() == sshd.known_hosts_line()  # read, never written


def test_with_F_only_that_file_is_read_and_F_none_reads_none(tmp_path: Path) -> None:
    system = tmp_path / "ssh_config"
    system.write_text("Host sysalias\n    HostName 10.0.0.9\n    Port 2201\n    User from-system\n")
    user_config("Host sysalias\n    User from-user\n")
    given = tmp_path / "given"
    given.write_text("Host sysalias\n    Port 2202\n")
    assert resolved(SSHOptions(system_config_file=str(system))) == ("10.0.0.9", 2201, "from-user")
    assert resolved(SSHOptions(config_file=str(given), system_config_file=str(system)))[:2] == ("sysalias", 2202)
    assert resolved(SSHOptions(config_file="none", system_config_file=str(system)))[:2] == ("sysalias", 22)


def test_a_system_config_includes_relative_to_its_directory(tmp_path: Path) -> None:
    """OpenSSH: relative Include names are under ~/.ssh in the user's files, under /etc/ssh in the system's."""
    (tmp_path / "ssh_config.d").mkdir()
    (tmp_path / "ssh_config.d" / "cluster.conf").write_text("Host sysalias\n    HostName 10.0.0.8\n")
    system = tmp_path / "ssh_config"
    system.write_text("Include ssh_config.d/*.conf\n")
    user_dir = Path(os.environ["HOME"]) / ".ssh"
    (user_dir / "extra.conf").write_text("Host sysalias\n    Port 2203\n")
    user_config("Include extra.conf\n")
    assert resolved(SSHOptions(system_config_file=str(system)))[:2] == ("10.0.0.8", 2203)


def test_a_bad_line_in_the_system_config_is_a_usage_error(tmp_path: Path) -> None:
    system = tmp_path / "ssh_config"
    system.write_text("Host *\n    ConnectTimeout soon\n")
    with pytest.raises(UsageError) as caught:
        open_sources("sysalias:/x.log", SSHOptions(system_config_file=str(system)))
    assert str(caught.value) == f"ssh config {system} line 2: bad ConnectTimeout 'soon' (a number of seconds)"
    assert caught.value.exit_status == 2


@pytest.mark.skipif(shutil.which("ssh") is None, reason="no OpenSSH client to compare with")
def test_the_real_system_config_is_read_as_openssh_reads_it() -> None:
    """No -F, an empty ~/.ssh: what logsleuth resolves from /etc/ssh/ssh_config is what `ssh -G` resolves
    (Debian's sets HashKnownHosts yes, for one)."""
    if Path(pwd.getpwuid(os.getuid()).pw_dir, ".ssh", "config").exists():
        pytest.skip("ssh reads the account's real ~/.ssh/config (its HOME comes from the password database)")
    host = "gpu7.example"  # ssh -G looks nothing up
    printed = subprocess.run(["ssh", "-G", host], capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    assert printed.returncode == 0, printed.stderr
    openssh = dict(line.split(" ", 1) for line in printed.stdout.splitlines() if " " in line)
    settings = resolve_host(load_config(SSHOptions()), host)
    assert (settings.hostname, str(settings.port), settings.user) == (openssh["hostname"], openssh["port"], openssh["user"])
    assert settings.hash_known_hosts == (openssh["hashknownhosts"] == "yes")
    assert " ".join(settings.global_known_hosts_files) == openssh["globalknownhostsfile"]
    strict = {"true": "yes", "false": "no"}.get(openssh["stricthostkeychecking"], openssh["stricthostkeychecking"])
    assert settings.strict_host_key_checking == strict


@pytest.mark.ssh
@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_the_cli_prints_where_an_accepted_key_was_stored(sshd: SSHD, backend: str) -> None:
    """OpenSSH's "Permanently added" line, with the file it went to, on stderr whatever the terminal."""
    if backend == "openssh" and shutil.which("ssh") is None:
        pytest.skip("no OpenSSH client")
    config, user_file = sshd.unknown_key_config(f"cli-notice-{backend}")
    if backend == "openssh":
        config.write_text(config.read_text() + sshd.choose_openssh)
    log = sshd.logs / f"cli-notice-{backend}.log"
    log.write_bytes(FAILURE)
    own = Path(os.environ["XDG_CONFIG_HOME"]) / "logsleuth" / "known_hosts"
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    try:
        result = subprocess.run(
            [sys.executable, "-m", "logsleuth", "diagnose", f"logsleuth-test@127.0.0.1:{sshd.port}:{log}",
             "-F", str(config), "--accept-new-host-key", "--format", "json"],
            capture_output=True, text=True, env=environment, timeout=60,
        )
    finally:
        log.unlink()
    assert result.returncode == 1, result.stderr
    assert result.stderr == (
        f"logsleuth: Permanently added '[127.0.0.1]:{sshd.port}' (ED25519) to the list of known hosts in {own}\n"
    )
    assert own.read_text() == sshd.known_hosts_line() and user_file.read_text() == ""
