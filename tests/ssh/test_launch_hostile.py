"""`logsleuth launch` against what a host or a command line can hold (issue 26): its files are the account's alone,
it never hints at killing a process group it cannot confirm is its own launch (a pid file holding 1 would make
`kill -TERM -1` signal every process), and the lines it prints show the characters they run.

The real test sshd and the fake SGLang server, as in test_launch.py (whose helpers these tests use).
"""

from __future__ import annotations

import contextlib
import os
import pwd
import shutil
import stat
import subprocess
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sshd_server import SSHD

from tests.ssh import test_launch
from tests.ssh.test_launch import USER, _kill_group, _launch, _server

place = test_launch.place  # the fixture: a directory of the test account's, its launches killed afterwards


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.lstat().st_mode)


def _as_test_user() -> None:
    account = pwd.getpwnam(USER)
    os.setgid(account.pw_gid)
    os.setuid(account.pw_uid)


@pytest.fixture
def other_group() -> Iterator[int]:
    """A process group of the test account that logsleuth did not start: `sleep`, its own session."""
    sleeper = subprocess.Popen(["sleep", "300"], preexec_fn=_as_test_user, start_new_session=True)
    try:
        yield sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait()


@pytest.mark.ssh
def test_the_log_and_pid_file_are_private_in_a_private_directory(sshd: SSHD, place: Path) -> None:
    log = place / "fresh" / "deeper" / "server.log"
    run = _launch(sshd, _server(place), log_path=str(log))
    assert run.status == 0, run.stderr
    assert (_mode(log), _mode(Path(f"{log}.pid"))) == (0o600, 0o600)
    assert (_mode(log.parent), _mode(log.parent.parent)) == (0o700, 0o700)
    assert "umask 077" in run.stderr  # said, among the lines it runs


@pytest.mark.ssh
def test_an_overwritten_log_is_replaced_by_a_private_file(sshd: SSHD, place: Path) -> None:
    log = place / "shared.log"
    for path in (log, Path(f"{log}.pid")):
        path.write_text("an earlier launch\n")
        path.chmod(0o644)
        shutil.chown(path, USER, USER)
    run = _launch(sshd, _server(place), log_path=str(log), overwrite=True)
    assert run.status == 0, run.stderr
    assert (_mode(log), _mode(Path(f"{log}.pid"))) == (0o600, 0o600)
    assert "an earlier launch" not in log.read_text()


@pytest.mark.ssh
def test_the_default_directory_is_made_private(sshd: SSHD) -> None:
    now = datetime.now(UTC).replace(year=2099)  # a log name no other launch takes
    run = _launch(sshd, ["true"], now=now, alive_check=0.2)  # exits at once: the watch ends
    directory = Path(pwd.getpwnam(USER).pw_dir) / "logsleuth"
    log = directory / f"launch-{now:%Y%m%dT%H%M%SZ}.log"
    try:
        assert log.exists(), run.stderr
        assert (_mode(directory), _mode(log), _mode(Path(f"{log}.pid"))) == (0o700, 0o600, 0o600)
    finally:
        with contextlib.suppress(OSError, ValueError):
            _kill_group(int(Path(f"{log}.pid").read_text()))
        for path in (log, Path(f"{log}.pid")):
            path.unlink(missing_ok=True)


@pytest.mark.ssh
@pytest.mark.parametrize("recorded", ["1", "0", "-1", "01"])
def test_a_pid_file_naming_every_process_gets_no_kill_hint(sshd: SSHD, place: Path, recorded: str) -> None:
    log = place / "odd.log"
    pid_file = Path(f"{log}.pid")
    pid_file.write_text(f"{recorded}\n")
    shutil.chown(pid_file, USER, USER)
    try:
        run = _launch(sshd, _server(place), log_path=str(log))
    finally:
        content = pid_file.read_text()
        pid_file.unlink()  # never left for a clean-up that kills the groups pid files name
    assert run.status == 3
    assert "kill" not in run.stderr, run.stderr
    assert run.stderr.splitlines()[-1].endswith(f"{pid_file} already exists: choose another --log, or --overwrite "
                                                "to replace it")
    assert content == f"{recorded}\n" and not log.exists()


@pytest.mark.ssh
def test_a_running_group_that_is_not_the_launch_gets_no_kill_hint(sshd: SSHD, place: Path, other_group: int) -> None:
    log = place / "reused.log"
    pid_file = Path(f"{log}.pid")
    log.write_text("+ python3 -m sglang.launch_server --model-path /models/m\n")
    pid_file.write_text(f"{other_group}\n")
    for path in (log, pid_file):
        shutil.chown(path, USER, USER)
    run = _launch(sshd, _server(place), log_path=str(log), overwrite=True)
    assert run.status == 3
    last = run.stderr.splitlines()[-1]
    assert f"process group {other_group}" in last and "not confirmed" in last
    assert "kill" not in run.stderr, run.stderr
    assert pid_file.read_text() == f"{other_group}\n"  # nothing replaced either
