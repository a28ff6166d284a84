"""The SSH source against a real OpenSSH server on 127.0.0.1 (see conftest.py)."""

from __future__ import annotations

import gzip
import os
import random
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from remote_logs import FAILURE, LINE
from sshd_server import SSHD, free_port

from logsleuth.errors import SourceError
from logsleuth.reading.reader import INITIAL_WINDOW
from logsleuth.sources.base import Source
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from tests.helpers import offsets_of

pytestmark = pytest.mark.ssh
HANG_DEADLINE = 120  # seconds: reached only when what the test waits for never happens


def options(sshd: SSHD, **overrides: object) -> SSHOptions:
    values: dict[str, object] = {"config_file": str(sshd.config), "connect_attempts": 1}
    values.update(overrides)
    return SSHOptions(**values)  # type: ignore[arg-type]


def read_all(source: Source) -> bytes:
    return b"".join(source.read_range(0, source.size()))


def open_one(spec: str, opts: SSHOptions) -> Source:
    sources = open_sources(spec, opts)
    assert len(sources) == 1, [s.name for s in sources]
    return sources[0]


def error_of(spec: str, opts: SSHOptions) -> str:
    with pytest.raises(SourceError) as caught:
        for source in open_sources(spec, opts):
            source.close()
    assert caught.value.exit_status == 3
    return str(caught.value)


@pytest.fixture
def log(sshd: SSHD) -> Iterator[Path]:
    path = sshd.logs / f"server-{random.randrange(10**9)}.log"
    path.write_bytes(LINE * 30000 + FAILURE)  # ~3 MiB: bigger than the prefetched tail
    yield path
    path.unlink(missing_ok=True)


# --- source syntax -------------------------------------------------------------------------------------------


def test_config_alias(sshd: SSHD, log: Path) -> None:
    source = open_one(f"logsleuth-alias:{log}", options(sshd))
    try:
        assert source.name == f"logsleuth-alias:{log}"
        assert source.host == "logsleuth-alias"
        assert source.size() == log.stat().st_size
        assert read_all(source) == log.read_bytes()
    finally:
        source.close()


@pytest.mark.parametrize("form", ["scp", "url"])
def test_user_host_port_spellings(sshd: SSHD, log: Path, form: str) -> None:
    if form == "scp":
        spec = f"logsleuth-test@127.0.0.1:{sshd.port}:{log}"
    else:
        spec = f"ssh://logsleuth-test@127.0.0.1:{sshd.port}{log}"
    source = open_one(spec, options(sshd))
    try:
        assert source.name == spec
        end = source.size()
        assert b"".join(source.read_range(end - len(FAILURE), end)) == FAILURE
    finally:
        source.close()


def test_relative_and_home_paths(sshd: SSHD) -> None:
    target = sshd.in_home("logsleuth-test", "relative.log")
    target.write_bytes(FAILURE)
    try:
        for spec in (f"logsleuth-alias:{target.name}", f"logsleuth-alias:~/{target.name}"):
            source = open_one(spec, options(sshd))
            assert read_all(source) == FAILURE
            source.close()
    finally:
        target.unlink()


@pytest.mark.parametrize("alias", ["behind-jump", "behind-two-jumps"])
def test_proxy_jump(sshd: SSHD, log: Path, alias: str) -> None:
    source = open_one(f"{alias}:{log}", options(sshd))
    try:
        hops = 0
        connection = source._runner.connection  # type: ignore[attr-defined]
        while connection.outer:
            hops += 1
            connection = connection.outer[0]
        assert connection.settings.port == sshd.jump_port
        assert hops == (1 if alias == "behind-jump" else 2)
        assert read_all(source) == log.read_bytes()
    finally:
        source.close()


def test_proxy_command(sshd: SSHD, log: Path) -> None:
    if not shutil.which("ssh"):
        pytest.skip("no OpenSSH client for the ProxyCommand")
    config = sshd.write_config(
        "proxycommand",
        f"Host via-command\n    ProxyCommand ssh -F {sshd.config} -W %h:%p jumpbox\n"
        f"    HostName 127.0.0.1\n    Port {sshd.port}\n\n" + sshd.config.read_text(),
    )
    source = open_one(f"via-command:{log}", options(sshd, config_file=str(config)))
    try:
        assert read_all(source) == log.read_bytes()
    finally:
        source.close()


def test_glob_newest_and_all_files(sshd: SSHD) -> None:
    directory = sshd.logs / "glob"
    directory.mkdir()
    try:
        for index, name in enumerate(["sglang-b.log", "sglang-a.log", "sglang-c.log"]):
            path = directory / name
            path.write_bytes(name.encode() + b"\n" + FAILURE)
            os.utime(path, (1_700_000_000 + index * 100, 1_700_000_000 + index * 100))
        (directory / "other.log").write_bytes(b"x")
        newest = open_sources(f"logsleuth-alias:{directory}/sglang-*.log", options(sshd))
        assert [s.name for s in newest] == [f"logsleuth-alias:{directory}/sglang-c.log"]
        assert read_all(newest[0]).startswith(b"sglang-c.log\n")
        newest[0].close()

        every = open_sources(f"logsleuth-alias:{directory}/sglang-*.log", options(sshd, all_files=True))
        assert sorted(s.name.rsplit("/", 1)[1] for s in every) == [
            "sglang-a.log",
            "sglang-b.log",
            "sglang-c.log",
        ]
        for source in every:
            assert read_all(source) == (directory / source.name.rsplit("/", 1)[1]).read_bytes()
            source.close()
    finally:
        shutil.rmtree(directory)


def test_all_files_keeps_going_past_an_unreadable_match(sshd: SSHD) -> None:
    directory = sshd.logs / "mixed"
    directory.mkdir()
    try:
        (directory / "ok.log").write_bytes(FAILURE)
        secret = directory / "secret.log"
        secret.write_bytes(FAILURE)
        secret.chmod(0o600)
        sources = open_sources(f"logsleuth-alias:{directory}/*.log", options(sshd, all_files=True))
        by_name = {s.name.rsplit("/", 1)[1]: s for s in sources}
        assert read_all(by_name["ok.log"]) == FAILURE
        with pytest.raises(SourceError, match=r"secret\.log: permission denied$"):
            by_name["secret.log"].size()
        for source in sources:
            source.close()
    finally:
        shutil.rmtree(directory)


@pytest.mark.parametrize("all_files", [False, True])  # True: no prefetch, the size needs its own pass
def test_gzip_file(sshd: SSHD, all_files: bool) -> None:
    plain = LINE * 20000 + FAILURE
    path = sshd.logs / f"rotated-{all_files}.log.gz"
    path.write_bytes(gzip.compress(plain))
    try:
        source = open_one(f"logsleuth-alias:{path}", options(sshd, all_files=all_files))
        assert source.size() == len(plain)
        end = len(plain)
        for start in (end - 1000, end - (1 << 20), 12345, 0):
            assert b"".join(source.read_range(start, end)) == plain[start:end]
        assert b"".join(source.read_range(100, 200)) == plain[100:200]
        source.close()
    finally:
        path.unlink()


def test_corrupt_gzip_file(sshd: SSHD) -> None:
    path = sshd.logs / "corrupt.log.gz"
    path.write_bytes(gzip.compress(FAILURE * 1000)[:-200])
    try:
        message = error_of(f"logsleuth-alias:{path}", options(sshd))
        assert message.startswith(f"logsleuth-alias:{path}: not a valid gzip file (gzip: "), message
    finally:
        path.unlink()


# --- reading -------------------------------------------------------------------------------------------------


def test_random_windows_match_local_bytes(sshd: SSHD, log: Path) -> None:
    data = log.read_bytes()
    source = open_one(f"logsleuth-alias:{log}", options(sshd))
    rng = random.Random(4)
    try:
        size = source.size()
        assert size == len(data)
        windows = [(size - (1 << 20), size), (0, size), (0, 1), (size - 1, size), (5, 5)]
        for _ in range(25):
            low, high = sorted((rng.randrange(0, size + 1), rng.randrange(0, size + 1)))
            windows.append((low, high))
        windows += [(rng.randrange(size - (2 << 20), size), size) for _ in range(10)]  # across the cache edge
        for start, end in windows:
            assert b"".join(source.read_range(start, end)) == data[start:end], (start, end)
    finally:
        source.close()


def test_without_prefetch_the_size_is_asked_for(sshd: SSHD, log: Path) -> None:
    source = open_one(f"logsleuth-alias:{log}", options(sshd, prefetch_bytes=0))
    try:
        assert source.size() == log.stat().st_size
        end = source.size()
        assert b"".join(source.read_range(end - 5000, end)) == log.read_bytes()[-5000:]
    finally:
        source.close()


def test_backwards_widening_is_one_probe_then_one_exec_per_window(sshd: SSHD, log: Path) -> None:
    messages: list[str] = []
    source = open_one(f"logsleuth-alias:{log}", options(sshd, progress=messages.append))
    try:
        size = source.size()
        fetches: list[tuple[int, int]] = []
        fetch = source._fetch  # type: ignore[attr-defined]
        source._fetch = lambda start, end: (fetches.append((start, end)), fetch(start, end))[1]  # type: ignore[attr-defined]
        window = INITIAL_WINDOW
        assert b"".join(source.read_range(size - window, size)) == log.read_bytes()[-window:]
        assert fetches == []  # served from the prefetch that came with the size
        assert b"".join(source.read_range(size - 4 * window, size)) == log.read_bytes()[-4 * window :]
        assert fetches == [(size - 4 * window, size - window)]  # only the part before the prefetch
        assert b"".join(source.read_range(size - (4 << 20), size)) == log.read_bytes()
        assert len(fetches) == 2
        assert messages == ["connecting to logsleuth-alias…", f"reading logsleuth-alias:{log}…"]
    finally:
        source.close()


@pytest.mark.parametrize("compressed", [False, True])
def test_find_anchors_runs_grep_remotely(sshd: SSHD, compressed: bool) -> None:
    anchors = (b"Traceback", b"rror", b"-e", b"it's")
    data = (LINE * 5000 + b"\0binary\0 Error here\n" + FAILURE) * 3 + b"RuntimeError: it's -e over\n"
    path = sshd.logs / ("anchors.log.gz" if compressed else "anchors.log")
    path.write_bytes(gzip.compress(data) if compressed else data)
    try:
        source = open_one(f"logsleuth-alias:{path}", options(sshd))
        found = source.find_anchors(anchors)  # type: ignore[attr-defined]
        assert found == offsets_of(data, anchors)
        assert source.find_anchors((b"no such text",)) == []  # type: ignore[attr-defined]
        source.close()
    finally:
        path.unlink()


def test_bashrc_banner_does_not_corrupt_data(sshd: SSHD, log: Path) -> None:
    spec = f"logsleuth-banner@127.0.0.1:{sshd.port}:{log}"
    source = open_one(spec, options(sshd))
    try:
        assert read_all(source) == log.read_bytes()
        end = source.size()
        assert b"".join(source.read_range(end - 10, end)) == log.read_bytes()[-10:]
    finally:
        source.close()


def test_sftp_fallback_for_an_account_without_shell(sshd: SSHD, log: Path) -> None:
    base = f"logsleuth-nosh@127.0.0.1:{sshd.port}:"
    source = open_one(base + str(log), options(sshd))
    try:
        assert type(source).__name__ == "SFTPFileSource"
        data = log.read_bytes()
        assert source.size() == len(data)
        assert b"".join(source.read_range(len(data) - 5000, len(data))) == data[-5000:]
        assert read_all(source) == data
    finally:
        source.close()
    newest = open_one(f"{base}{log.parent}/server-*.log", options(sshd))
    newest.close()
    assert error_of(f"{base}{sshd.logs}/nothing-*.log", options(sshd)).endswith(": no file matches")
    assert error_of(f"{base}/nonexistent.log", options(sshd)) == f"{base}/nonexistent.log: no such file"
    gz = sshd.logs / "nosh.log.gz"
    gz.write_bytes(gzip.compress(FAILURE * 100))
    try:
        source = open_one(base + str(gz), options(sshd))
        assert read_all(source) == FAILURE * 100
        source.close()
    finally:
        gz.unlink()


def test_path_injection_runs_nothing(sshd: SSHD) -> None:
    marker = sshd.logs / "MARKER"
    attempts = [
        f"{sshd.logs}/nope; touch {marker}",
        f"{sshd.logs}/nope$(touch {marker})",
        f"{sshd.logs}/nope`touch {marker}`",
        f"{sshd.logs}/nope' ; touch {marker}; echo '",
        f'{sshd.logs}/nope" ; touch {marker}; echo "',
        f"{sshd.logs}/nope\ntouch {marker}",
        f"{sshd.logs}/*; touch {marker}",
    ]
    for path in attempts:
        message = error_of(f"logsleuth-alias:{path}", options(sshd))
        assert message.endswith((": no such file", ": no file matches")), message
        assert not marker.exists(), path
    weird = sshd.logs / "a b;'\"$(x)`y`.log"
    weird.write_bytes(FAILURE)
    try:
        source = open_one(f"logsleuth-alias:{weird}", options(sshd))
        assert read_all(source) == FAILURE
        source.close()
    finally:
        weird.unlink()
    assert not marker.exists()


# --- errors: one line each, exit status 3 ---------------------------------------------------------------------


def test_unknown_host_name(sshd: SSHD) -> None:
    # A 64-character label is rejected locally by IDNA encoding: no DNS query leaves this machine.
    host = "x" * 64 + ".invalid"
    assert error_of(f"{host}:/var/log/x.log", options(sshd)) == f"{host}: unknown host name '{host}'"


def test_connection_refused(sshd: SSHD) -> None:
    port = free_port()
    spec = f"logsleuth-test@127.0.0.1:{port}:/x.log"
    assert error_of(spec, options(sshd)) == f"127.0.0.1: connection refused by 127.0.0.1 port {port}"


def test_transient_errors_are_retried_with_backoff(sshd: SSHD) -> None:
    messages: list[str] = []
    port = free_port()
    started = time.monotonic()
    error_of(f"127.0.0.1:{port}:/x.log", options(sshd, connect_attempts=3, progress=messages.append))
    assert time.monotonic() - started >= 0.25 + 0.5 - 0.05
    assert messages == [
        "connecting to 127.0.0.1…",
        "connecting to 127.0.0.1… (attempt 2)",
        "connecting to 127.0.0.1… (attempt 3)",
    ]


@pytest.mark.parametrize("where", ["option", "config"])
def test_timeout_on_a_server_that_never_answers(sshd: SSHD, where: str) -> None:
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)  # the kernel completes the TCP handshake; nobody ever speaks SSH
        port = silent.getsockname()[1]
        if where == "option":
            opts = options(sshd, connect_timeout=1.0)
            spec = f"127.0.0.1:{port}:/x.log"
            alias = "127.0.0.1"
        else:
            config = sshd.write_config(
                "timeout", f"Host silent\n    HostName 127.0.0.1\n    Port {port}\n    ConnectTimeout 1\n"
            )
            opts = options(sshd, config_file=str(config), connect_timeout=30.0)
            spec, alias = "silent:/x.log", "silent"
        message = error_of(spec, opts)
    # The message names the limit that ended it: the config's 1 s, not the option's 30 s.
    assert message == f"{alias}: connection to 127.0.0.1 port {port} timed out after 1 s (no SSH handshake)"


def test_a_server_that_hangs_up_at_once_closed_the_connection(sshd: SSHD) -> None:
    """A server that accepts and closes at once ended the handshake itself (the handshake thread saw EOF): that is
    said, not a timeout, however long the budget."""
    import threading

    with socket.socket() as closing:
        closing.bind(("127.0.0.1", 0))
        closing.listen(8)
        port = closing.getsockname()[1]

        def hang_up() -> None:
            connection, _ = closing.accept()
            connection.close()

        server = threading.Thread(target=hang_up, daemon=True)
        server.start()
        message = error_of(f"127.0.0.1:{port}:/x.log", options(sshd, connect_timeout=30.0))
        server.join(timeout=30)
    assert message.startswith(f"127.0.0.1: 127.0.0.1 port {port} closed the connection during the SSH handshake")


def test_auth_failed_names_the_methods_tried(sshd: SSHD, tmp_path: Path) -> None:
    stranger = tmp_path / "id_stranger"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
    config = sshd.write_config(
        "stranger",
        f"Host *\n    IdentityFile {stranger}\n    UserKnownHostsFile {sshd.root}/client/known_hosts\n",
    )
    spec = f"logsleuth-test@127.0.0.1:{sshd.port}:/x.log"
    assert error_of(spec, options(sshd, config_file=str(config))) == (
        f"127.0.0.1: authentication failed for logsleuth-test@127.0.0.1 "
        f"(tried publickey with: {stranger}; server allows: publickey)"
    )


def test_passphrase_protected_key_gives_a_clear_message(sshd: SSHD) -> None:
    locked = sshd.root / "client" / "id_locked"
    config = sshd.write_config(
        "locked",
        f"Host *\n    IdentityFile {locked}\n    UserKnownHostsFile {sshd.root}/client/known_hosts\n",
    )
    spec = f"logsleuth-test@127.0.0.1:{sshd.port}:/x.log"
    assert error_of(spec, options(sshd, config_file=str(config))) == (
        f"127.0.0.1: authentication failed for logsleuth-test@127.0.0.1: key {locked} is passphrase-protected "
        f"and logsleuth does not prompt; load it into ssh-agent with: ssh-add {locked}"
    )


def _wait_for_agent(environment: dict[str, str]) -> None:
    """Until the agent answers (`ssh-add -l`: 0 or 1, "no identities"; 2 is "cannot connect").  Waiting for its
    socket file alone raced on a loaded machine: the file was there, or not yet, when ssh-add ran."""
    deadline = time.monotonic() + HANG_DEADLINE
    while time.monotonic() < deadline:
        listed = subprocess.run(["ssh-add", "-l"], env=environment, capture_output=True, stdin=subprocess.DEVNULL)
        if listed.returncode in (0, 1):
            return
        time.sleep(0.05)
    pytest.fail(f"ssh-agent did not answer within {HANG_DEADLINE} s")


@pytest.mark.parametrize("key", ["plain", "locked"])
def test_ssh_agent_keys_are_used(
    sshd: SSHD, log: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """The agent's keys work; a passphrase-protected IdentityFile works once it is in the agent, even with
    IdentitiesOnly (matched through its .pub file)."""
    agent_socket = tmp_path / "agent.sock"
    agent = subprocess.Popen(["ssh-agent", "-D", "-a", str(agent_socket)], stdout=subprocess.DEVNULL)
    try:
        environment = {**os.environ, "SSH_AUTH_SOCK": str(agent_socket)}
        _wait_for_agent(environment)
        key_file = sshd.client_key if key == "plain" else sshd.root / "client" / "id_locked"
        if key == "locked":  # ssh-add reads the passphrase from an askpass program
            askpass = tmp_path / "askpass"
            askpass.write_text("#!/bin/sh\necho 'secret phrase'\n")
            askpass.chmod(0o755)
            environment.update(SSH_ASKPASS=str(askpass), SSH_ASKPASS_REQUIRE="force", DISPLAY=":0")
        subprocess.run(
            ["ssh-add", "-q", str(key_file)],
            env=environment,
            check=True,
            capture_output=True,
            stdin=subprocess.DEVNULL,
        )
        monkeypatch.setenv("SSH_AUTH_SOCK", str(agent_socket))
        text = f"Host *\n    UserKnownHostsFile {sshd.root}/client/known_hosts\n"
        if key == "locked":
            text += f"    IdentityFile {key_file}\n    IdentitiesOnly yes\n"
        config = sshd.write_config(f"agent-{key}", text)
        source = open_one(
            f"logsleuth-test@127.0.0.1:{sshd.port}:{log}", options(sshd, config_file=str(config))
        )
        assert read_all(source) == log.read_bytes()
        source.close()
        if key == "plain":  # IdentitiesOnly with another IdentityFile: the agent's key is not offered
            stranger = tmp_path / "id_stranger"
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(stranger)], check=True)
            only = sshd.write_config(
                "agent-only", f"{text}    IdentityFile {stranger}\n    IdentitiesOnly yes\n"
            )
            message = error_of(
                f"logsleuth-test@127.0.0.1:{sshd.port}:{log}", options(sshd, config_file=str(only))
            )
            assert f"(tried publickey with: {stranger}; server allows: publickey)" in message
    finally:
        agent.terminate()
        agent.wait(timeout=HANG_DEADLINE)


def test_default_config_and_key_file(sshd: SSHD, log: Path) -> None:
    """No -F: ~/.ssh/config is read; no IdentityFile: ~/.ssh/id_ed25519 is tried (HOME is a temp dir)."""
    ssh_dir = Path(os.environ["HOME"]) / ".ssh"
    shutil.copy(sshd.client_key, ssh_dir / "id_ed25519")
    (ssh_dir / "id_ed25519").chmod(0o600)
    (ssh_dir / "config").write_text(
        f"Host home-alias\n    HostName 127.0.0.1\n    Port {sshd.port}\n    User logsleuth-test\n"
        f"    UserKnownHostsFile {sshd.root}/client/known_hosts\n"
    )
    source = open_one(f"home-alias:{log}", options(sshd, config_file=None))
    assert read_all(source) == log.read_bytes()
    source.close()


def test_unknown_host_key_is_refused_then_accepted_on_request(sshd: SSHD, log: Path) -> None:
    config, empty = sshd.unknown_key_config("unknown-key")
    spec = f"logsleuth-test@127.0.0.1:{sshd.port}:{log}"
    opts = options(sshd, config_file=str(config))
    assert error_of(spec, opts) == (
        f"127.0.0.1: unknown host key for [127.0.0.1]:{sshd.port} ({sshd.host_key_described}); "
        "verify it, then rerun with --accept-new-host-key to trust it"
    )
    own = Path(os.environ["XDG_CONFIG_HOME"]) / "logsleuth" / "known_hosts"
    assert not own.exists()
    source = open_one(spec, options(sshd, config_file=str(config), accept_new_host_key=True))
    source.close()
    assert own.read_text() == sshd.known_hosts_line()
    assert empty.read_text() == ""  # the user's own files are never written
    open_one(spec, opts).close()  # now known


def test_changed_host_key_is_always_refused(sshd: SSHD, tmp_path: Path) -> None:
    impostor = tmp_path / "impostor"
    subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(impostor)], check=True)
    known = tmp_path / "known_hosts"
    public = " ".join(Path(f"{impostor}.pub").read_text().split()[:2])
    known.write_text(f"[127.0.0.1]:{sshd.port} {public}\n")
    config = sshd.write_config(
        "changed-key", f"Host *\n    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {known}\n"
    )
    spec = f"logsleuth-test@127.0.0.1:{sshd.port}:/x.log"
    for accept in (False, True):
        message = error_of(spec, options(sshd, config_file=str(config), accept_new_host_key=accept))
        assert message.startswith(
            f"127.0.0.1: HOST KEY CHANGED for [127.0.0.1]:{sshd.port}: the server now presents ssh-ed25519 SHA256:"
        )
        assert message.endswith(
            f"which does not match {known}; refusing to connect (possible man-in-the-middle). If the change is "
            f"expected, remove the old key with: ssh-keygen -R '[127.0.0.1]:{sshd.port}' -f {known}"
        )


def test_remote_file_missing(sshd: SSHD) -> None:
    spec = f"logsleuth-alias:{sshd.logs}/no-such.log"
    assert error_of(spec, options(sshd)) == f"{spec}: no such file"


def test_glob_without_match(sshd: SSHD) -> None:
    spec = f"logsleuth-alias:{sshd.logs}/nothing-*.log"
    assert error_of(spec, options(sshd)) == f"{spec}: no file matches"


def test_permission_denied(sshd: SSHD) -> None:
    secret = sshd.logs / "secret.log"
    secret.write_bytes(FAILURE)
    secret.chmod(0o600)  # owned by root; the test account cannot read it
    try:
        spec = f"logsleuth-alias:{secret}"
        assert error_of(spec, options(sshd)) == f"{spec}: permission denied"
    finally:
        secret.unlink()


def test_path_is_a_directory(sshd: SSHD) -> None:
    spec = f"logsleuth-alias:{sshd.logs}"
    assert error_of(spec, options(sshd)) == f"{spec}: is a directory"


def test_fifo_is_refused_instead_of_blocking(sshd: SSHD) -> None:
    fifo = sshd.logs / "pipe.log"
    os.mkfifo(fifo)
    try:
        spec = f"logsleuth-alias:{fifo}"
        assert error_of(spec, options(sshd)) == f"{spec}: not a regular file"
    finally:
        fifo.unlink()


def test_tail_missing_on_the_remote(sshd: SSHD, log: Path) -> None:
    spec = f"logsleuth-notail@127.0.0.1:{sshd.port}:{log}"
    assert error_of(spec, options(sshd)) == (
        f"{spec}: remote command 'tail' not found on 127.0.0.1 (logsleuth needs tail, head and wc; gzip for .gz)"
    )


# --- size -----------------------------------------------------------------------------------------------------


def _make_big_log(path: Path, size: int) -> bytes:
    """A sparse file of `size` bytes whose last ~1 MiB is real log text ending in a failure (quick to make)."""
    tail = LINE * ((1 << 20) // len(LINE)) + FAILURE
    with path.open("wb") as handle:
        handle.truncate(size - len(tail))
        handle.seek(size - len(tail))
        handle.write(tail)
    return tail


def _bytes_this_process_read() -> int:
    """rchar of /proc/self/io: every byte this process read with read(2) and its kind, sockets included."""
    for line in Path("/proc/self/io").read_text().splitlines():
        if line.startswith("rchar:"):
            return int(line.split()[1])
    raise AssertionError("no rchar in /proc/self/io")


def test_one_gib_log_reads_only_the_end(sshd: SSHD) -> None:
    path = sshd.logs / "big-1g.log"
    tail = _make_big_log(path, 1 << 30)
    try:
        received_before = _bytes_this_process_read()
        source = open_one(f"logsleuth-alias:{path}", options(sshd))
        size = source.size()
        assert size == 1 << 30
        assert b"".join(source.read_range(size - len(tail), size)) == tail
        window = b"".join(source.read_range(size - (16 << 20), size))
        assert window[-len(tail) :] == tail and len(window) == 16 << 20
        source.close()
        # Never proportional to the file size: counted in bytes this process read (the SSH traffic is most of
        # them), not in seconds, which a loaded machine stretches and a fast one shrinks.
        assert _bytes_this_process_read() - received_before < 64 << 20
    finally:
        path.unlink()


@pytest.mark.slow
def test_streaming_a_one_gib_log_does_not_stall_on_rekey(sshd: SSHD) -> None:
    path = sshd.logs / "big-stream.log"
    tail = _make_big_log(path, 1 << 30)
    try:
        source = open_one(f"logsleuth-alias:{path}", options(sshd))
        total = 0
        last = b""
        for chunk in source.read_range(0, source.size()):
            total += len(chunk)
            last = (last + chunk)[-len(tail) :]
        assert total == 1 << 30 and last == tail
        source.close()
    finally:
        path.unlink()


# --- names and remote stderr in messages ----------------------------------------------------------------------

HOSTILE_NAME = "evil-\x1b]0;pwned\x07\x1b[2J.log"  # a terminal title change and a screen clear
HOSTILE_SHOWN = "evil-\\x1b]0;pwned\\x07\\x1b[2J.log"


def test_remote_names_in_messages_carry_no_control_characters(sshd: SSHD) -> None:
    """A file name matched by a glob and gzip's stderr (which repeats the name) are escaped in messages."""
    directory = sshd.logs / "hostile-names"
    directory.mkdir()
    try:
        secret = directory / HOSTILE_NAME
        secret.write_bytes(FAILURE)
        secret.chmod(0o600)
        (directory / "evil-but-readable.log").write_bytes(FAILURE)
        sources = open_sources(f"logsleuth-alias:{directory}/evil-*", options(sshd, all_files=True))
        (failed,) = [source for source in sources if "readable" not in source.name]
        with pytest.raises(SourceError) as caught:
            failed.size()
        assert str(caught.value) == f"logsleuth-alias:{directory}/{HOSTILE_SHOWN}: permission denied"
        for source in sources:
            source.close()
        secret.unlink()
        corrupt = directory / (HOSTILE_NAME + ".gz")
        corrupt.write_bytes(b"this is not gzip data\n")
        message = error_of(f"logsleuth-alias:{directory}/evil-*.gz", options(sshd))
        assert message.startswith(f"logsleuth-alias:{directory}/{HOSTILE_SHOWN}.gz: not a valid gzip file (gzip: ")
        assert HOSTILE_SHOWN in message[len(f"logsleuth-alias:{directory}/{HOSTILE_SHOWN}.gz") :]  # gzip's own text
        assert not any(ord(c) < 32 or 127 <= ord(c) < 160 for c in message)
    finally:
        shutil.rmtree(directory)
