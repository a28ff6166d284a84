"""`logsleuth launch`: starts the fake SGLang server (tests/fixtures/fake_sglang_server.py) on the real test sshd and
follows it to ready or to a crash; dry runs write nothing; the pid file names the process group, which is stopped
only on request; --retry runs the pattern's corrected command after a yes.

Everything is real: sshd, the remote /bin/sh, setsid and nohup, the python3 that runs the fake server, CPython's
traceback.  The y/N questions are answered by a function passed in (the prompt on a terminal is not driven).
The "remote" host is this machine, so a test can look at the processes it started with ps.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from sshd_server import RUN_PREFIX, SSHD

from logsleuth.api import DiagnoseOptions
from logsleuth.render.options import OutputFormat, RenderOptions
from logsleuth.sources.options import SSHBackend, SSHOptions
from logsleuth.sources.spec import parse_remote_spec
from logsleuth.watch.launch import LaunchStreams, default_log_path, retry_log_path, run_launch, stop_launch
from tests.helpers import lines_until, spawn

FAKE_SERVER = Path(__file__).resolve().parent.parent / "fixtures" / "fake_sglang_server.py"
USER = "logsleuth-test"
HOST = "logsleuth-alias"  # the test sshd's alias in its client config (User logsleuth-test)
STOP_DEADLINE = 120  # seconds stop_launch may wait for the group to exit: only a hang takes this long
# The EAGLE-3 sizes given in part: SGLang's (and the fake's) assert fails; the pattern's fix adds the steps.
PARTIAL_EAGLE = ["--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", "/models/draft",
                 "--speculative-num-draft-tokens", "16", "--speculative-eagle-topk", "1"]


class Run:
    """One run_launch: its exit status and what it printed, with the questions it asked."""

    def __init__(self, status: int, stdout: str, stderr: str, questions: list[str]) -> None:
        self.status, self.stdout, self.stderr, self.questions = status, stdout, stderr, questions


@pytest.fixture
def place(sshd: SSHD) -> Iterator[Path]:
    """A directory of the test account's own, holding the fake `sglang` package and the launch logs.  Every
    process group a launch in it recorded is killed afterwards."""
    root = sshd.root / f"launch-{os.getpid()}-{time.monotonic_ns()}"
    root.mkdir()
    subprocess.run([sys.executable, str(FAKE_SERVER), "install", str(root / "pkg")], check=True)
    subprocess.run(["chown", "-R", f"{USER}:{USER}", str(root)], check=True)
    try:
        yield root
    finally:
        for pid_file in root.rglob("*.pid"):
            _kill_group(int(pid_file.read_text()))
        shutil.rmtree(root, ignore_errors=True)


def _kill_group(pgid: int) -> None:
    if pgid < 2:  # a pid file a test planted: killpg(0) is our own group, killpg(1) init's
        return
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGKILL)


def _options(sshd: SSHD, backend: SSHBackend = "auto") -> DiagnoseOptions:
    return DiagnoseOptions(ssh=SSHOptions(config_file=str(sshd.config), connect_attempts=1, backend=backend),
                           include_user_patterns=False)


def _server(place: Path, *flags: str) -> list[str]:
    return [f"PYTHONPATH={place / 'pkg'}", "python3", "-m", "sglang.launch_server", "--model-path", "/models/m",
            "--fake-step-seconds", "0.05", *flags]


def _launch(sshd: SSHD, words: list[str], *, answers: list[bool] | None = None, host: str = HOST,
            backend: SSHBackend = "auto", **kwargs: object) -> Run:
    stdout, stderr, questions = io.StringIO(), io.StringIO(), []
    answered = iter(answers or [])

    def confirm(question: str) -> bool:
        questions.append(question)
        return next(answered)

    status = run_launch(host, words, options=_options(sshd, backend), streams=LaunchStreams(stdout, stderr),
                        confirm=confirm if answers is not None else None, **kwargs)  # type: ignore[arg-type]
    return Run(status, stdout.getvalue(), stderr.getvalue(), questions)


def _group(pgid: int) -> list[str]:
    """The command lines of the live processes in process group `pgid` (zombies left out)."""
    listing = subprocess.run(["ps", "-e", "-o", "pgid=,stat=,args="], capture_output=True, text=True).stdout
    rows = [line.split(None, 2) for line in listing.splitlines()]
    return [row[2] for row in rows if len(row) == 3 and row[0] == str(pgid) and not row[1].startswith("Z")]


def _wait_for(condition: object, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


@pytest.mark.ssh
@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_launch_to_ready_records_the_process_group_and_stops_it_on_request(
    sshd: SSHD, place: Path, backend: SSHBackend
) -> None:
    log = place / "ready.log"
    run = _launch(sshd, _server(place), log_path=str(log), backend=backend)
    assert run.status == 0, run.stderr
    pid = int(Path(f"{log}.pid").read_text())
    assert run.stdout == f"{HOST}:{log}: the server is ready (pid {pid})\n"
    assert f"started pid {pid} " in run.stderr
    assert log.read_text().splitlines()[0] == "+ " + " ".join(_server(place))  # the command heads its own log
    assert "loading weights" in run.stderr and "KV cache allocated" in run.stderr
    # setsid made the recorded pid the leader of a group holding the server and its child; the group runs on.
    group = _group(pid)
    assert any("sglang.launch_server" in args for args in group) and any("time.sleep" in args for args in group)
    assert os.getpgid(pid) == pid and os.getsid(pid) == pid

    remote = parse_remote_spec(f"{HOST}:{log}")
    assert remote is not None
    # The wait is a deadline for a hang only: on a loaded machine the group's processes can take more than the
    # command's default 10 s to exit and be reaped (seen in a full run at load 14).
    assert stop_launch(remote, pid, _options(sshd, backend).ssh, wait=STOP_DEADLINE) == "stopped"
    assert _group(pid) == []
    assert stop_launch(remote, pid, _options(sshd, backend).ssh) == "gone"


@pytest.mark.ssh
def test_launch_to_a_crash_prints_the_diagnosis_and_the_corrected_command(sshd: SSHD, place: Path) -> None:
    log = place / "crash.log"
    run = _launch(sshd, _server(place, *PARTIAL_EAGLE), log_path=str(log), retry=False)
    assert run.status == 1, run.stderr
    assert "AssertionError" in run.stdout
    assert "EAGLE speculative sizes given only in part" in run.stdout
    corrected = " ".join(_server(place, *PARTIAL_EAGLE, "--speculative-num-steps", "15"))
    assert f"corrected command: {corrected}" in run.stderr
    assert "--retry" in run.stderr
    assert run.questions == [] and not Path(retry_log_path(str(log), 1)).exists()  # never retried unasked


@pytest.mark.ssh
def test_retry_runs_the_corrected_command_after_a_yes(sshd: SSHD, place: Path) -> None:
    log = place / "eagle.log"
    run = _launch(sshd, _server(place, *PARTIAL_EAGLE), log_path=str(log), retry=True, answers=[True])
    assert run.status == 0, run.stderr
    assert len(run.questions) == 1 and "run the corrected command" in run.questions[0]
    retried = Path(retry_log_path(str(log), 1))
    assert retried.name == "eagle.retry1.log"
    first_line, *rest = retried.read_text().splitlines()
    assert first_line.endswith("--speculative-eagle-topk 1 --speculative-num-steps 15")
    assert "speculative_num_steps=15" in "\n".join(rest)  # the server parsed the corrected flags
    assert "The server is fired up and ready to roll!" in rest[-1]
    assert "AssertionError" in log.read_text()  # the failed launch's log is kept


@pytest.mark.ssh
def test_retry_answered_no_runs_nothing(sshd: SSHD, place: Path) -> None:
    log = place / "eagle.log"
    run = _launch(sshd, _server(place, *PARTIAL_EAGLE), log_path=str(log), retry=True, answers=[False])
    assert run.status == 1
    assert len(run.questions) == 1
    assert not Path(retry_log_path(str(log), 1)).exists()


def _listing(root: Path) -> list[tuple[str, int, float]]:
    """Every path under `root` with its size and time; in the shared test home, other runs' own files (named
    after their run: SSHD.in_home) aside, as they may come and go meanwhile (and with them the time of `root`
    itself: a new entry in it shows anyway)."""
    paths = [path for path in root.rglob("*") if RUN_PREFIX not in path.name]
    return sorted((str(path), path.stat().st_size, path.stat().st_mtime) for path in paths)


@pytest.mark.ssh
def test_dry_run_prints_the_commands_and_writes_nothing(sshd: SSHD, place: Path) -> None:
    home = Path(f"/home/{USER}")
    before = _listing(home), _listing(place)
    now = datetime(2026, 11, 30, 22, 48, 0, tzinfo=UTC)
    run = _launch(sshd, _server(place), dry_run=True, now=now)
    assert run.status == 0, run.stderr
    assert (_listing(home), _listing(place)) == before
    log = default_log_path(now)
    assert log == "logsleuth/launch-20261130T224800Z.log"
    assert run.stdout.splitlines() == [
        "umask 077",
        'mkdir -p "$HOME"/logsleuth',
        'chmod go-rwx "$HOME"/logsleuth',
        f"printf '%s\\n' '+ PYTHONPATH={place}/pkg python3 -m sglang.launch_server --model-path /models/m "
        f"--fake-step-seconds 0.05' > \"$HOME\"/{log}",
        f"setsid nohup env PYTHONPATH={place}/pkg python3 -m sglang.launch_server --model-path /models/m "
        f"--fake-step-seconds 0.05 >> \"$HOME\"/{log} 2>&1 < /dev/null &",
        f'echo $! > "$HOME"/{log}.pid',
    ]
    # Nothing is contacted either: a host that cannot be reached gives the same lines.
    unreachable = _launch(sshd, _server(place), dry_run=True, now=now, host="logsleuth-test@127.0.0.1:1")
    assert unreachable.status == 0 and unreachable.stdout == run.stdout


@pytest.mark.ssh
def test_an_existing_log_is_not_overwritten_unless_asked(sshd: SSHD, place: Path) -> None:
    log = place / "taken.log"
    log.write_text("an earlier launch\n")
    shutil.chown(log, USER, USER)
    run = _launch(sshd, _server(place), log_path=str(log))
    assert run.status == 3
    assert run.stderr.splitlines()[-1] == f"logsleuth: {HOST}: {log} already exists: choose another --log, or --overwrite to replace it"
    assert log.read_text() == "an earlier launch\n" and not Path(f"{log}.pid").exists()
    replaced = _launch(sshd, _server(place), log_path=str(log), overwrite=True)
    assert replaced.status == 0, replaced.stderr
    assert "an earlier launch" not in log.read_text()


@pytest.mark.ssh
def test_a_running_launch_is_never_replaced(sshd: SSHD, place: Path) -> None:
    log = place / "busy.log"
    assert _launch(sshd, _server(place), log_path=str(log)).status == 0
    pid = int(Path(f"{log}.pid").read_text())
    again = _launch(sshd, _server(place), log_path=str(log), overwrite=True)
    assert again.status == 3
    assert f"still running (process group {pid})" in again.stderr and f"kill -TERM -{pid}" in again.stderr
    assert int(Path(f"{log}.pid").read_text()) == pid


@pytest.mark.ssh
@pytest.mark.parametrize(
    ("host", "words", "log", "status", "message"),
    [
        ("logsleuth-test@127.0.0.1:1", ["python3", "-V"], None, 3, "127.0.0.1"),
        (HOST, [], None, 2, "no command to launch"),
        (HOST, ["no-such-program-here", "--x"], "PLACE/x.log", 3, "no program 'no-such-program-here'"),
        (HOST, ["python3", "-V"], "/proc/forbidden/x.log", 3, "cannot create or write the log directory /proc/forbidden"),
        ("-F", ["python3", "-V"], None, 2, "not a host"),
        ("logsleuth-nosh@127.0.0.1:PORT", ["python3", "-V"], None, 3, "has no usable shell"),
    ],
)
def test_errors_are_one_line(sshd: SSHD, place: Path, host: str, words: list[str], log: str | None, status: int,
                             message: str) -> None:
    host = host.replace("PORT", str(sshd.port))
    run = _launch(sshd, words, host=host, log_path=log.replace("PLACE", str(place)) if log else None)
    assert run.status == status
    notes = [line for line in run.stderr.splitlines() if not line.startswith(("logsleuth: running on", "  "))]
    assert len(notes) == 1 and message in notes[0], run.stderr
    assert not list(place.rglob("*.log"))


def _interrupt_a_launch(sshd: SSHD, place: Path, answer: str) -> tuple[int, str, int]:
    """Run run_launch in a child process on a slow launch (one stage every 2 s), send it a real SIGINT once the
    server runs, and return (its exit status, its stderr, the recorded pid).  `answer`: what the y/N question
    gets, "yes", or "no terminal" (no question can be asked)."""
    log = place / "slow.log"
    script = place / "launch.py"
    script.write_text(
        "import sys\n"
        "from logsleuth.api import DiagnoseOptions\n"
        "from logsleuth.watch.launch import run_launch\n"
        "from logsleuth.sources.options import SSHOptions\n"
        "def confirm(question):\n"
        "    print('asked: ' + question, file=sys.stderr, flush=True)\n"
        "    return True\n"
        f"options = DiagnoseOptions(ssh=SSHOptions(config_file={str(sshd.config)!r}), include_user_patterns=False)\n"
        f"words = {[*_server(place)[:-1], '2']!r}\n"
        f"confirm = {'confirm' if answer == 'yes' else 'None'}\n"
        f"sys.exit(run_launch({HOST!r}, words, log_path={str(log)!r}, options=options, confirm=confirm))\n"
    )
    child = spawn([sys.executable, str(script)], stderr=subprocess.PIPE, text=True,
                             env={k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"})
    assert _wait_for(lambda: Path(f"{log}.pid").exists() and "server_args=" in log.read_text(), 30)
    pid = int(Path(f"{log}.pid").read_text())
    assert _group(pid)
    assert child.stderr is not None
    # The watch reported the log's first stage: it is following (a fixed wait was a guess a loaded machine beat).
    seen = lines_until(child.stderr, "arguments parsed")
    child.send_signal(signal.SIGINT)
    _, stderr = child.communicate(timeout=60)
    return child.returncode, "".join(seen) + stderr, pid


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.ssh
def test_ctrl_c_asks_then_stops_the_process_group(sshd: SSHD, place: Path) -> None:
    status, stderr, pid = _interrupt_a_launch(sshd, place, "yes")
    assert status == 130, stderr
    assert f"asked: stop the server on {HOST} (process group {pid})?" in stderr
    assert f"stopped process group {pid}" in stderr
    assert _group(pid) == []


@pytest.mark.ssh
def test_ctrl_c_without_a_terminal_leaves_the_server_running_and_says_how_to_stop_it(sshd: SSHD, place: Path) -> None:
    status, stderr, pid = _interrupt_a_launch(sshd, place, "no terminal")
    assert status == 130, stderr
    assert "asked:" not in stderr
    assert f"the server keeps running on {HOST}; to stop it, run there: kill -TERM -{pid}" in stderr
    assert _group(pid)


@pytest.mark.ssh
@pytest.mark.parametrize("fmt", [OutputFormat.TEXT, OutputFormat.JSON])
def test_a_server_that_dies_without_a_traceback_ends_the_watch(sshd: SSHD, place: Path, fmt: OutputFormat) -> None:
    """Killed by a signal (as by the kernel's OOM killer) after its first stage: no traceback, no ready line."""
    log = place / "killed.log"
    words = ["sh", "-c", "echo \"[2026-11-30 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1)\"; "
             "echo 'Load weight begin. avail mem=78.84 GB'; sleep 0.5; kill -KILL $$"]
    run = _launch(sshd, words, log_path=str(log), alive_check=0.3, render_options=RenderOptions(format=fmt))
    assert run.status == 1, run.stderr
    pid = int(Path(f"{log}.pid").read_text())
    said = f"{HOST}:{log}: the server exited (process group {pid} is gone) before it was ready"
    if fmt is OutputFormat.JSON:
        record = json.loads(run.stdout)
        assert record["status"] == "exited" and record["message"].startswith(said)
        assert record["lines"][-1] == "Load weight begin. avail mem=78.84 GB"
    else:
        assert run.stdout.startswith(said)
        assert run.stdout.splitlines()[-1] == "  Load weight begin. avail mem=78.84 GB"


class _Terminal(io.StringIO):
    """A stderr that says it is a terminal, as the user's is: rich draws the live view into it."""

    def isatty(self) -> bool:
        return True


@pytest.mark.ssh
def test_launch_on_a_terminal_draws_the_live_view_not_a_line_per_stage(sshd: SSHD, place: Path) -> None:
    """Issue 30, finding 7: on a terminal, launch shows the launch view watch shows (stages in place), not one
    `logsleuth: HOST:LOG: STAGE` line per stage; the outcome still comes on stdout."""
    log = place / "live.log"
    stdout, stderr = io.StringIO(), _Terminal()
    status = run_launch(HOST, _server(place), options=_options(sshd), streams=LaunchStreams(stdout, stderr),
                        log_path=str(log))
    assert status == 0, stderr.getvalue()
    pid = int(Path(f"{log}.pid").read_text())
    assert stdout.getvalue() == f"{HOST}:{log}: the server is ready (pid {pid})\n"
    shown = stderr.getvalue()
    assert "loading weights" in shown and "KV cache allocated" in shown  # drawn by the view
    assert f"logsleuth: {HOST}:{log}: loading weights" not in shown
    assert f"started pid {pid} " in shown  # what launch says before the watch is still said
