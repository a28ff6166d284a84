"""`watch HOST:PATH` against a network that fails for real: the sshd process serving the follow is killed (10 times
in one follow), the remote `tail` is killed, the log is truncated and rotated, reconnecting becomes impossible,
and the watcher itself is killed.  Then realistic launches replayed (scripts/replay_launch.py) and watched over
the same sshd.

Everything is real: the private sshd of conftest.py, the remote `tail -F`, SIGKILL by pid.  The process that
serves a follow is found from its remote `tail` (the one following our log: its command line names the log and
`--pid=`), walking up its parents to the per-connection `sshd: USER@notty` (sshd_server.Gate does the same for a
held exec).  Only processes found that way are signalled.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from sshd_server import SSHD, _command, _parent, free_port

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.errors import LogsleuthError, SourceError
from logsleuth.sources.base import ALIVE, RESTART
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions
from logsleuth.watch.follow import WatchEvent, watch_spec
from tests.helpers import spawn

pytestmark = pytest.mark.ssh

BACKENDS = ("paramiko", "openssh")
_SESSION_SSHD = re.compile(r"^sshd: \S+@notty$")  # the unprivileged per-connection process that moves the bytes


# -- the remote processes ---------------------------------------------------------------------------------


def _argv(pid: int) -> list[bytes]:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read().split(b"\0")[:-1]
    except OSError:
        return []


def remote_tails(log: Path) -> set[int]:
    """The pids of the remote `tail -F` processes following `log` (FOLLOW_SCRIPT's: `--pid=` and the path)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            argv = _argv(int(entry))
            if argv and argv[0].endswith(b"tail") and str(log).encode() in argv and any(
                word.startswith(b"--pid=") for word in argv
            ):
                found.add(int(entry))
    return found


def serving_sshd(tail: int) -> int | None:
    """The `sshd: USER@notty` process above a remote tail: the one that serves its connection."""
    pid = tail
    while pid > 1:
        pid = _parent(pid)
        if _SESSION_SSHD.match(_command(pid)):
            return pid
    return None


def wait_for(condition: Callable[[], object], seconds: float, what: str) -> object:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out after {seconds} s waiting for {what}")


def new_tail(log: Path, old: set[int], watch: subprocess.Popen[str] | None = None) -> int:
    """A remote tail following `log` that is not one of `old` (the follow has reconnected).  `watch`: the process
    that follows; its end stops the wait, and the failure shows what it printed."""

    def found_or_ended() -> set[int] | bool:
        return remote_tails(log) - old or (watch is not None and watch.poll() is not None)

    found = wait_for(found_or_ended, 120, "a new remote tail")  # generous: a reconnect backs off, and a busy machine is slow
    if watch is not None and not isinstance(found, set):
        _out, err = watch.communicate()
        raise AssertionError(f"the watch ended (exit {watch.returncode}) before a new remote tail: {err}")
    assert isinstance(found, set) and len(found) == 1, found
    return found.pop()


def kill_serving_sshd(tail: int) -> None:
    sshd = serving_sshd(tail)
    assert sshd is not None, f"no sshd serves tail {tail}"
    os.kill(sshd, signal.SIGKILL)


def assert_no_tail_left(log: Path) -> None:
    """`tail --pid=$PPID` notices its session is gone within a second; allow a minute on a busy machine (a deadline that fails only on a hang)."""
    wait_for(lambda: not remote_tails(log), 60, f"the remote tails to end: {remote_tails(log)}")


# -- the log and its reader ---------------------------------------------------------------------------------


def numbered(prefix: str, count: int, first: int = 0) -> bytes:
    return b"".join(b"%s line %06d\n" % (prefix.encode(), n) for n in range(first, first + count))


class Appender(threading.Thread):
    """Appends numbered lines to a log, one write each, until stopped; `written` is what it wrote."""

    def __init__(self, path: Path, prefix: str, interval: float = 0.004) -> None:
        super().__init__(daemon=True)
        self.path, self.prefix, self.interval = path, prefix, interval
        self.count = 0
        self._done = threading.Event()

    def run(self) -> None:
        while not self._done.is_set():
            with self.path.open("ab") as handle:
                handle.write(numbered(self.prefix, 1, self.count))
            self.count += 1
            time.sleep(self.interval)

    def stop(self) -> bytes:
        self._done.set()
        if self.is_alive():
            self.join()
        return numbered(self.prefix, self.count)


class Reader(threading.Thread):
    """Drains a follow in its own thread (as watch would), so that the test can break things meanwhile."""

    def __init__(self, chunks: Iterator[bytes]) -> None:
        super().__init__(daemon=True)
        self.chunks = chunks
        self.received: list[bytes] = []
        self.error: BaseException | None = None
        self._done = threading.Event()

    def run(self) -> None:
        try:
            for chunk in self.chunks:
                if self._done.is_set():
                    break
                if chunk and chunk != ALIVE:  # the heartbeat's confirmations are not the log's bytes
                    self.received.append(chunk)
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which asserts on it
            self.error = exc
        finally:
            self.chunks.close()  # type: ignore[attr-defined]  # in the thread that runs the generator

    def generations(self) -> list[bytes]:
        """The bytes received, split where a RESTART came."""
        parts = [b""]
        for chunk in list(self.received):
            if chunk == RESTART:
                parts.append(b"")
            else:
                parts[-1] += chunk
        return parts

    def wait_until(self, expected: list[bytes], seconds: float = 30) -> None:
        def arrived() -> bool:
            if self.error is not None:
                raise AssertionError(f"the follow failed: {self.error}")
            return self.generations() == expected

        try:
            wait_for(arrived, seconds, "the expected lines")
        except AssertionError:
            got = self.generations()
            raise AssertionError(f"received {[len(part) for part in got]} bytes per generation, wanted "
                                 f"{[len(part) for part in expected]}; last: {got[-1][-80:]!r}") from None

    def stop(self) -> None:
        self._done.set()
        self.join(30)
        assert not self.is_alive(), "the follow did not end"


def ssh_options(sshd: SSHD, backend: str) -> SSHOptions:
    return SSHOptions(config_file=str(sshd.config), backend=backend)  # type: ignore[arg-type]


@pytest.fixture
def log(sshd: SSHD, request: pytest.FixtureRequest) -> Iterator[Path]:
    path = sshd.logs / f"faults-{request.node.name.replace('[', '-').rstrip(']')}.log"
    path.write_bytes(b"")
    yield path
    path.unlink(missing_ok=True)
    path.with_suffix(".log.1").unlink(missing_ok=True)


# -- the tests ----------------------------------------------------------------------------------------------


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("backend", BACKENDS)
def test_ten_drops_a_truncation_and_a_rotation_lose_and_repeat_nothing(sshd: SSHD, log: Path, backend: str) -> None:
    """One follow of a log being appended to: its serving sshd is killed 10 times, then the log is truncated
    (copytruncate), then rotated (mv plus a new file).  The lines received are exactly the lines written, each
    once, in order, with one RESTART before the truncated log's and one before the new file's."""
    log.write_bytes(numbered("first", 50))
    appender = Appender(log, "first")
    appender.count = 50
    notices: list[str] = []
    options = replace(ssh_options(sshd, backend), notice=notices.append)
    (source,) = open_sources(f"logsleuth-alias:{log}", options)
    reader = Reader(source.follow(0))  # type: ignore[attr-defined]
    reader.start()
    appender.start()
    killed: set[int] = set()
    try:
        for _ in range(10):
            tail = new_tail(log, killed)
            before = len(b"".join(reader.received))
            wait_for(lambda before=before: len(b"".join(reader.received)) > before, 90, "lines through the new connection")
            kill_serving_sshd(tail)
            killed.add(tail)
        new_tail(log, killed)
        first = appender.stop()
        reader.wait_until([first])

        truncated = numbered("second", 100)
        assert len(truncated) < len(first)  # tail sees the size shrink
        with log.open("r+b") as handle:
            handle.truncate(0)
            handle.write(truncated)
        reader.wait_until([first, truncated])

        log.rename(log.with_suffix(".log.1"))
        rotated = numbered("third", 30)
        log.write_bytes(rotated)
        reader.wait_until([first, truncated, rotated])
        with log.open("ab") as handle:
            handle.write(numbered("third", 5, 30))
        reader.wait_until([first, truncated, numbered("third", 35)])
    finally:
        appender.stop()
        reader.stop()
        source.close()
    assert reader.error is None, reader.error
    assert reader.received.count(RESTART) == 2
    assert sum("reconnecting (attempt 1)" in notice for notice in notices) == 10, notices
    assert_no_tail_left(log)


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("event", ["truncated", "rotated", "grown"])
def test_what_happened_while_the_connection_was_down(sshd: SSHD, log: Path, backend: str, event: str) -> None:
    """The log changes while no tail watches it: the reconnect tells by inode and size whether to resume (it only
    grew) or to start the new file over after a RESTART (truncated, or rotated to a file at least as long)."""
    old = numbered("old", 40)
    log.write_bytes(old)
    (source,) = open_sources(f"logsleuth-alias:{log}", ssh_options(sshd, backend))
    reader = Reader(source.follow(0))  # type: ignore[attr-defined]
    reader.start()
    try:
        reader.wait_until([old])
        tail = new_tail(log, set())
        if event == "rotated":  # the process that wrote it is gone: nothing to receive but the new file
            log.rename(log.with_suffix(".log.1"))
        kill_serving_sshd(tail)
        wait_for(lambda: tail not in remote_tails(log), 60, "the old tail to end")
        if event == "truncated":
            with log.open("r+b") as handle:
                handle.truncate(0)
                handle.write(numbered("new", 10))
        elif event == "rotated":
            log.write_bytes(numbered("new", 60))  # longer than the old file: only the inode tells
        else:
            with log.open("ab") as handle:
                handle.write(numbered("old", 10, 40))
        expected = {
            "truncated": [old, numbered("new", 10)],
            "rotated": [old, numbered("new", 60)],
            "grown": [numbered("old", 50)],
        }[event]
        reader.wait_until(expected)
        time.sleep(0.5)  # nothing more comes
        assert reader.generations() == expected
    finally:
        reader.stop()
        source.close()
    assert reader.error is None, reader.error


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_log_truncated_between_opening_and_following_starts_over(sshd: SSHD, log: Path, backend: str) -> None:
    """watch takes the size when it opens the log and follows from there: a copytruncate in between is a RESTART
    (the bytes that follow are a new file's), not a continuation of the old one."""
    log.write_bytes(numbered("old", 40))
    (source,) = open_sources(f"logsleuth-alias:{log}", ssh_options(sshd, backend))
    assert source.size() == len(numbered("old", 40))
    with log.open("r+b") as handle:
        handle.truncate(0)
        handle.write(numbered("new", 5))
    reader = Reader(source.follow(0))  # type: ignore[attr-defined]
    reader.start()
    try:
        reader.wait_until([b"", numbered("new", 5)])
    finally:
        reader.stop()
        source.close()
    assert reader.error is None, reader.error


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_killed_remote_tail_is_restarted_from_where_it_was(sshd: SSHD, log: Path, backend: str) -> None:
    log.write_bytes(numbered("line", 20))
    (source,) = open_sources(f"logsleuth-alias:{log}", ssh_options(sshd, backend))
    reader = Reader(source.follow(0))  # type: ignore[attr-defined]
    reader.start()
    try:
        reader.wait_until([numbered("line", 20)])
        killed: set[int] = set()
        for round_ in range(3):
            tail = new_tail(log, killed)
            os.kill(tail, signal.SIGKILL)
            killed.add(tail)
            with log.open("ab") as handle:
                handle.write(numbered("line", 10, 20 + 10 * round_))
            reader.wait_until([numbered("line", 30 + 10 * round_)])
    finally:
        reader.stop()
        source.close()
    assert reader.error is None, reader.error
    assert_no_tail_left(log)


@pytest.mark.parametrize("backend", BACKENDS)
def test_giving_up_reconnecting_is_one_line_error(sshd: SSHD, log: Path, backend: str) -> None:
    """The host stops accepting connections: after a bounded number of attempts the follow raises SourceError
    with one line naming the log, the attempts and the last reason (watch exits 3), never an end of stream.
    While it waits between attempts it yields idle ticks, so that watch keeps time (--timeout)."""
    from logsleuth.sources.ssh.follow import reconnecting_follow

    config = sshd.write_config(f"giving-up-{backend}", _config_for_port(sshd, sshd.port))
    log.write_bytes(numbered("line", 5))
    options = SSHOptions(config_file=str(config), backend=backend)  # type: ignore[arg-type]
    (source,) = open_sources(f"logsleuth-alias:{log}", options)
    chunks = reconnecting_follow(source, 0, attempts=3)  # type: ignore[arg-type]
    received = b""
    started = 0.0
    ticks_while_down = 0
    try:
        with pytest.raises(SourceError) as raised:
            for chunk in chunks:
                received += chunk if chunk != ALIVE else b""
                ticks_while_down += bool(started) and chunk == b""
                if received == numbered("line", 5) and not started:
                    config.write_text(_config_for_port(sshd, free_port()))  # nothing listens there
                    kill_serving_sshd(new_tail(log, set()))
                    started = time.monotonic()
    finally:
        chunks.close()
        source.close()
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith(f"logsleuth-alias:{log}: connection lost; gave up after 3 attempts to reconnect"), message
    assert "connection refused" in message
    assert time.monotonic() - started < 60  # three reconnects and their backoff: a bound only a hang fails
    assert ticks_while_down >= 3  # 0.25 s + 0.5 s of backoff, in 0.2 s ticks
    assert_no_tail_left(log)


def _config_for_port(sshd: SSHD, port: int) -> str:
    return (
        f"Host logsleuth-alias\n    HostName 127.0.0.1\n    Port {port}\n"
        f"Host *\n    User logsleuth-test\n    IdentityFile {sshd.client_key}\n    IdentitiesOnly yes\n"
        f"    UserKnownHostsFile {sshd.root}/client/known_hosts\n"
    )


# -- the CLI end to end -------------------------------------------------------------------------------------

STAGES = [
    b"[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1)\n",
    b"[2026-11-29 10:00:01] Init torch distributed begin.\n",
    b"[2026-11-29 10:00:02] Load weight begin. avail mem=78.84 GB\n",
    b"[2026-11-29 10:00:09] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.1 GB\n",
    b"[2026-11-29 10:00:10] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB\n",
]
READY = b"[2026-11-29 10:00:22] The server is fired up and ready to roll!\n"


def start_watch(sshd: SSHD, log: Path, backend: str) -> subprocess.Popen[str]:
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    return spawn(
        [sys.executable, "-m", "logsleuth", "watch", f"logsleuth-alias:{log}", "--ssh-config", str(sshd.config),
         "--ssh-backend", backend, "--timeout", "90"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment,
    )


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.parametrize("backend", BACKENDS)
def test_cli_watch_is_ready_after_several_drops(sshd: SSHD, log: Path, backend: str) -> None:
    """`logsleuth watch HOST:PATH` while its connection is killed 4 times during the launch: it says it
    reconnects, sees every stage, and exits 0 on ready (not 3, and not 0 before the server is ready)."""
    log.write_bytes(STAGES[0])
    process = start_watch(sshd, log, backend)
    killed: set[int] = set()
    try:
        for stage in STAGES[1:]:
            tail = new_tail(log, killed)
            time.sleep(0.3)
            kill_serving_sshd(tail)
            killed.add(tail)
            with log.open("ab") as handle:  # written while the connection is down
                handle.write(stage)
        new_tail(log, killed)
        assert process.poll() is None, process.communicate()
        with log.open("ab") as handle:
            handle.write(READY)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, stderr
    assert stdout.strip().endswith("the server is ready")
    assert stderr.count("reconnecting (attempt 1)") == 4, stderr
    for label in ("loading weights", "KV cache allocated"):
        assert label in stderr, stderr
    assert_no_tail_left(log)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("how", ["SIGINT", "SIGKILL"])
def test_the_remote_tail_goes_with_the_watch(sshd: SSHD, log: Path, backend: str, how: str) -> None:
    """Ctrl-C, or the watcher killed outright: the remote tail does not outlive it."""
    log.write_bytes(STAGES[0])
    process = start_watch(sshd, log, backend)
    try:
        new_tail(log, set())
        process.send_signal(getattr(signal, how))
        process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == (130 if how == "SIGINT" else -signal.SIGKILL)
    assert_no_tail_left(log)


# -- replayed launches (scripts/replay_launch.py) over the test sshd ----------------------------------------

REPLAY = Path(__file__).resolve().parents[2] / "scripts" / "replay_launch.py"


def start_replay(scenario: str, log: Path, *extra: str) -> subprocess.Popen[bytes]:
    log.unlink(missing_ok=True)
    process = subprocess.Popen([sys.executable, str(REPLAY), scenario, str(log), "--speed", "20", *extra])
    wait_for(lambda: log.exists() and log.stat().st_size > 0, 60, "the replay's first line")
    return process


def watch_events(sshd: SSHD, log: Path, timeout: float = 60) -> list[WatchEvent]:
    options = DiagnoseOptions(ssh=SSHOptions(config_file=str(sshd.config), backend="paramiko"))
    return list(watch_spec(f"logsleuth-alias:{log}", options, timeout=timeout))


def test_a_replayed_launch_to_ready_is_watched_to_ready(sshd: SSHD, log: Path) -> None:
    replay = start_replay("ready", log)
    events = watch_events(sshd, log)
    assert replay.wait(30) == 0
    assert events[-1].kind == "ready"
    keys = [event.stage.key for event in events if event.stage]
    for key in ("distributed", "weights", "weights-loaded", "kv-cache", "cuda-graph", "cuda-graph-done", "http"):
        assert key in keys, keys


def test_a_replayed_tp4_crash_is_diagnosed_with_its_four_ranks(sshd: SSHD, log: Path) -> None:
    replay = start_replay("tp4-crash", log)
    events = watch_events(sshd, log)
    assert replay.wait(30) == 0
    assert events[-1].kind == "failure" and events[-1].report is not None
    (failure,) = events[-1].report.failures
    assert sorted(failure.ranks) == ["TP0", "TP1", "TP2", "TP3"]
    assert failure.failure.final.type == "torch.OutOfMemoryError"
    assert "ready" not in [event.kind for event in events]


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_a_replayed_stall_is_not_ready(sshd: SSHD, log: Path) -> None:
    replay = start_replay("stall", log, "--stall", "30")
    try:
        with pytest.raises(LogsleuthError) as raised:
            watch_events(sshd, log, timeout=15)  # the stall lasts 30 s: this deadline is the one met
    finally:
        replay.kill()
        replay.wait()
    assert "initialising torch distributed" in str(raised.value)


def test_a_replayed_crash_after_ready(sshd: SSHD, log: Path) -> None:
    """watch stops at ready (after-ready following is another option); the crash that comes later is in the log
    for diagnose to find."""
    replay = start_replay("crash-after-ready", log)
    events = watch_events(sshd, log)
    assert events[-1].kind == "ready"
    assert replay.wait(30) == 0
    report = diagnose([f"logsleuth-alias:{log}"], DiagnoseOptions(ssh=SSHOptions(config_file=str(sshd.config))))
    (failure,) = report.failures
    assert failure.failure.final.type == "RuntimeError"
    assert "illegal memory access" in failure.failure.final.message


# -- a connection frozen while a traceback is being written -------------------------------------------------
#
# The connection goes through tests/ssh/counting_proxy.py (a ProxyCommand that records its pid): SIGSTOP on that
# pid freezes the link for real (nothing passes either way, nothing is closed) until the keepalives (1 s here)
# find it stalled and the follow reconnects through a new proxy.  The watch runs on a clock the test moves
# forward: the grace for an unfinished traceback runs out when the test says so, never by the machine's speed.

COUNTING_PROXY = Path(__file__).with_name("counting_proxy.py")
HALF_TRACEBACK = (
    b"Traceback (most recent call last):\n"
    b'  File "/opt/sglang/python/sglang/launch_server.py", line 14, in <module>\n'
    b"    launch_server(server_args)\n"
    b'  File "/opt/sglang/python/sglang/srt/entrypoints/http_server.py", line 880, in launch_server\n'
    b"    tokenizer_manager = TokenizerManager(server_args)\n"
)
REST_OF_TRACEBACK = b"RuntimeError: written while the connection was frozen\n"
GRACE = 60.0  # seconds of the watch's clock, which the test moves forward by JUMP at once
JUMP = 1000.0


class MovableClock:
    """time.monotonic(), plus whatever the test adds."""

    def __init__(self) -> None:
        self.added = 0.0

    def __call__(self) -> float:
        return time.monotonic() + self.added


class BackgroundWatch(threading.Thread):
    """watch() of one remote log in a thread, its events collected; `finish` stops it (watch's own `stop`)."""

    def __init__(self, source: object, follow: Callable[[int], Iterator[bytes]], options: DiagnoseOptions,
                 clock: MovableClock, **settings: Any) -> None:
        super().__init__(daemon=True)
        self.source, self.follow, self.options, self.clock = source, follow, options, clock
        self.settings = settings
        self.events: list[WatchEvent] = []
        self.error: BaseException | None = None
        self._stopping = threading.Event()

    def run(self) -> None:
        from logsleuth.watch.follow import watch

        try:
            for event in watch(self.source, self.follow, self.options, incomplete_grace=GRACE,  # type: ignore[arg-type]
                               clock=self.clock, stop=self._stopping.is_set, **self.settings):
                self.events.append(event)
        except BaseException as exc:  # noqa: BLE001 - handed to the test, which asserts on it
            self.error = exc

    def wait_for_stage(self, text: str | None = None) -> None:
        """The backlog is read (its stages are shown only then): the half traceback has arrived.  `text`: wait for
        the last line of a chunk read live to hold it instead (watch's `details`)."""
        def seen(event: WatchEvent) -> bool:
            return event.kind == "stage" if text is None else event.kind == "line" and text in (event.text or "")

        wait_for(lambda: self.error or any(seen(event) for event in self.events), 120, "the backlog")
        assert self.error is None, self.error

    def outcome(self, meanwhile: Callable[[], None], close: Callable[[], None], text: str | None = None) -> WatchEvent:
        """Run the watch; once half the traceback arrived (wait_for_stage), run `meanwhile` and move the watch's
        clock past the grace.  The watch's last event, a failure; `close` closes its source."""
        self.start()
        try:
            self.wait_for_stage(text)
            meanwhile()
            self.clock.added = JUMP  # the grace is long over
            self.finish()
        finally:
            close()
        assert self.error is None, self.error
        outcome = self.events[-1]
        assert outcome.kind == "failure" and outcome.report is not None, [event.kind for event in self.events]
        return outcome

    def finish(self, seconds: float = 30) -> None:
        self.join(seconds)
        if self.is_alive():
            self._stopping.set()
            self.join(30)
            raise AssertionError(f"the watch did not end within {seconds} s; events: {[e.kind for e in self.events]}")


def proxied_config(sshd: SSHD, name: str, counter: Path, port: int, backend: str) -> Path:
    return sshd.write_config(
        name,
        f"Host logsleuth-alias\n    HostName 127.0.0.1\n    Port {port}\n"
        f"    ProxyCommand {sys.executable} {COUNTING_PROXY} {counter} %p\n"
        "    ServerAliveInterval 1\n    ServerAliveCountMax 1\n"
        f"Host *\n    User logsleuth-test\n    IdentityFile {sshd.client_key}\n    IdentitiesOnly yes\n"
        f"    UserKnownHostsFile {sshd.root}/client/known_hosts\n"
        + (sshd.choose_openssh if backend == "openssh" else ""),
    )


def proxy_pids(counter: Path) -> list[int]:
    return [int(line) for line in counter.read_text().split()]


def signal_proxies(counter: Path, signum: int) -> None:
    """Signal the proxies this test started (their pids are in `counter`) that are still running: SIGSTOP freezes
    the follow's connection, which goes through one of them (the openssh backend's probe had a connection of its
    own, over by now or idle); SIGKILL ends them, a stopped one too."""
    for pid in proxy_pids(counter):
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signum)


@pytest.fixture
def frozen_setup(sshd: SSHD, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[tuple[Path, Path]]:
    """(the client config through the proxy, the proxy's pid file); the proxies are ended afterwards."""
    backend = request.node.callspec.params["backend"]
    counter = tmp_path / "proxies"
    counter.write_text("")
    config = proxied_config(sshd, f"frozen-{backend}-{os.getpid()}", counter, sshd.port, backend)
    try:
        yield config, counter
    finally:
        signal_proxies(counter, signal.SIGKILL)


def watch_half_a_traceback(
    config: Path, backend: str, log: Path, meanwhile: Callable[[], None], *, attempts: int | None = None,
    notices: list[str] | None = None,
) -> WatchEvent:
    """Watch `log` (the stages and half a traceback) with a long grace; once the backlog is read, run `meanwhile`
    and move the watch's clock past the grace.  The watch's last event, a failure."""
    from logsleuth.sources.ssh.follow import reconnecting_follow

    ssh = SSHOptions(config_file=str(config), backend=backend, notice=None if notices is None else notices.append)  # type: ignore[arg-type]
    log.write_bytes(b"".join(STAGES) + HALF_TRACEBACK)
    (source,) = open_sources(f"logsleuth-alias:{log}", ssh)
    follow = source.follow if attempts is None else (  # type: ignore[attr-defined]
        lambda offset: reconnecting_follow(source, offset, attempts=attempts))  # type: ignore[arg-type]
    return BackgroundWatch(source, follow, DiagnoseOptions(ssh=ssh), MovableClock()).outcome(meanwhile, source.close)


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_traceback_cut_by_a_frozen_connection_is_reported_whole_after_the_reconnect(
    log: Path, backend: str, frozen_setup: tuple[Path, Path]
) -> None:
    """The connection freezes after the first half of a traceback arrived; the rest is written meanwhile.  The grace
    for an unfinished traceback runs out long before the keepalives find the connection stalled: the half must not
    be reported.  The follow reconnects, reads the rest, and the whole traceback is the failure."""
    config, counter = frozen_setup

    def freeze_then_finish_the_traceback() -> None:
        signal_proxies(counter, signal.SIGSTOP)
        with log.open("ab") as handle:
            handle.write(REST_OF_TRACEBACK)

    notices: list[str] = []
    outcome = watch_half_a_traceback(config, backend, log, freeze_then_finish_the_traceback, notices=notices)
    assert outcome.report is not None and outcome.source_lost is None
    (group,) = outcome.report.failures
    assert (group.failure.final.type, group.failure.final.message) == (
        "RuntimeError", "written while the connection was frozen")
    assert any("reconnecting (attempt 1)" in notice for notice in notices), notices


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_traceback_the_process_left_unfinished_is_reported_once_the_host_confirms_the_silence(
    log: Path, backend: str, frozen_setup: tuple[Path, Path]
) -> None:
    """The same half traceback on a live connection: the process really stopped writing.  Once the grace is over
    and the host has confirmed that nothing is on its way, the traceback is reported as it is (cut short)."""
    config, _ = frozen_setup
    outcome = watch_half_a_traceback(config, backend, log, lambda: None)
    assert outcome.report is not None and outcome.source_lost is None
    (group,) = outcome.report.failures
    assert group.failure.truncated
    assert "launch_server" in [frame.function for frame in group.failure.final.frames]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_connection_that_never_comes_back_reports_the_half_traceback_as_cut_short(
    sshd: SSHD, log: Path, backend: str, frozen_setup: tuple[Path, Path]
) -> None:
    """Frozen, then no reconnect succeeds: what arrived is reported, with the error that says it may be cut short
    (watch exits 3: the source was lost), not as a confident diagnosis."""
    config, counter = frozen_setup

    def freeze_for_good() -> None:
        # Nothing listens there, and no proxy is asked: each attempt is refused at once.
        config.write_text(_config_for_port(sshd, free_port()) + "    ServerAliveInterval 1\n    ServerAliveCountMax 1\n"
                          + (sshd.choose_openssh if backend == "openssh" else ""))
        signal_proxies(counter, signal.SIGSTOP)

    outcome = watch_half_a_traceback(config, backend, log, freeze_for_good, attempts=1)
    assert outcome.report is not None and outcome.source_lost is not None
    assert outcome.source_lost.startswith(f"logsleuth-alias:{log}: connection lost; gave up after 1 attempts")
    assert outcome.source_lost.endswith("the failure above is what arrived before the source was lost, and may be "
                                        "cut short")
    (group,) = outcome.report.failures
    assert group.failure.truncated


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("frozen", [True, False], ids=["frozen", "alive"])
def test_a_unit_whose_connection_freezes_mid_traceback_is_reported_whole(
    sshd: SSHD, backend: str, frozen: bool, frozen_setup: tuple[Path, Path]
) -> None:
    """`watch HOST:journal:UNIT` (journalctl on the host is the stand-in of tests/runtime/standins: no journald runs
    here): the same freeze after half a traceback.  The follow's heartbeat stops with the link, so the grace does
    not report the half; after the reconnect the rest is read and the whole traceback is the failure.  On a live
    link the heartbeat confirms the silence, and the half is reported as it is."""
    from test_runtime_ssh import install_standins

    from logsleuth.sources.runtime.follow import open_followed
    from tests.runtime.test_follow import set_unit

    stamp = "2026-11-30T22:10:31+0000 gpu7 python3[4187]: "
    before = [stamp + line for line in (b"".join(STAGES) + HALF_TRACEBACK).decode().splitlines()]
    runtime = install_standins(sshd)
    runtime.unit("sglang.service", before, {"LoadState": "loaded", "ActiveState": "active", "Result": "success"})
    config, counter = frozen_setup
    notices: list[str] = []
    ssh = SSHOptions(config_file=str(config), backend=backend, notice=notices.append)  # type: ignore[arg-type]
    followed = open_followed("logsleuth-runtime@logsleuth-alias:journal:sglang.service", ssh)

    def freeze_then_finish_the_traceback() -> None:
        if frozen:
            signal_proxies(counter, signal.SIGSTOP)
            set_unit(runtime, "sglang.service", [*before, stamp + REST_OF_TRACEBACK.decode().strip()])

    watching = BackgroundWatch(followed.source, followed.follow, DiagnoseOptions(ssh=ssh), MovableClock(),
                               details=True, confirms_silence=followed.confirms_silence)
    outcome = watching.outcome(freeze_then_finish_the_traceback, followed.close, "TokenizerManager(server_args)")
    assert outcome.report is not None
    (group,) = outcome.report.failures
    if not frozen:
        assert group.failure.truncated
        return
    assert (group.failure.final.type, group.failure.final.message) == (
        "RuntimeError", "written while the connection was frozen")
    assert any("reconnecting (attempt 1)" in notice for notice in notices), notices
