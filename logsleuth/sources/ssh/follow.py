"""Following a remote log across lost connections (`watch HOST:PATH`), over either backend.  No paramiko here.

A follow is a series of legs, one remote `tail -F` each (scripts.FOLLOW_SCRIPT).  A leg ends when its connection
is lost (the server or the network went away, or the keepalives found it stalled) or its tail was killed.  Then
the file is opened again over a new connection, with tenacity: up to RECONNECT_ATTEMPTS attempts, the first at
once, then after 0.25 s, 0.5 s, … at most 10 s apart (about 45 s of outage), each announced as
"reconnecting (attempt n)…".  The next leg starts just past the last byte delivered.

Whether that offset still means the same thing is checked on the remote host just before tail starts: a file
with another inode than the one followed (rotated) or shorter than what is known to have been there (truncated:
the offset, or for the first leg the size watch saw when it opened the log) is followed from its first byte,
after a RESTART, as tail's own announcements are within a leg.  So however often the connection
drops, no byte is delivered twice and none is skipped.  (Not detected: a file truncated during an outage that
grew past the offset again before the reconnect; its inode and size look like the old file's.)

While a leg runs, a heartbeat on the host reports the file's size every second; when it is no more than what was
delivered, the follow yields ALIVE (base.py): watch takes silence for the end of a traceback only when the host
confirms it, never while the connection is frozen (before the keepalives find it stalled) or being reconnected.

The follow ends only with an error: a RemoteError (exit 3) once the attempts are used up, or when tail gives up
by itself (it cannot read the file).  It never ends as a stream does, which watch would take for "the log ended".
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from logsleuth.sources.base import ALIVE, RESTART, Progress
from logsleuth.sources.spec import ConnectionLost, RemoteError
from logsleuth.sources.ssh.run import NoShell, RemoteRun, Runner, classify_remote_error
from logsleuth.sources.ssh.scripts import (
    FOLLOW_SCRIPT,
    INODE_SCRIPT,
    FollowStart,
    TailOutput,
    new_path_units,
    parse_follow_start,
)

RECONNECT_ATTEMPTS = 10
_BACKOFF = wait_exponential(multiplier=0.25, max=10.0)
_IDLE_TICK = 0.2  # seconds, as the runs' own idle ticks
_MAX_START_LINE = 4096  # FOLLOW_SCRIPT's first line is a word and a number
# What a lost leg raises: the connection went away (RemoteError) or the marker never came (NoShell).
_LOST = (RemoteError, NoShell)
T = TypeVar("T")


class Reconnectable(Protocol):
    """A remote file that can be followed, and opened again when its connection is lost (files.SSHFileSource)."""

    name: str  # as the user wrote it: "gpu7:/var/log/sglang.log"
    host: str | None
    path: str
    notice: Progress | None  # hears "reconnecting (attempt n)…"

    @property
    def runner(self) -> Runner: ...

    def reopen(self) -> Reconnectable:
        """The same file over a new connection."""

    def size(self) -> int: ...

    def close(self) -> None: ...


@dataclass
class _Place:
    """Where the follow is: just past the last byte delivered, in the file with this inode (None: not known)."""

    offset: int
    inode: str | None = None
    restarted: bool = False  # a RESTART was the last thing delivered: another one now would say nothing new

    def delivered(self, data: bytes) -> None:
        self.offset += len(data)
        self.restarted = False

    def restart(self) -> bool:
        """The file starts over: whether to deliver a RESTART (not twice with no byte between)."""
        self.offset = 0
        fresh = not self.restarted
        self.restarted = True
        return fresh


def reconnecting_follow(source: Reconnectable, offset: int, *, attempts: int = RECONNECT_ATTEMPTS) -> Iterator[bytes]:
    """The file's bytes from `offset` on as it grows; b"" on idle polls; RESTART when it was truncated or replaced
    (then the new file from its first byte).  A lost leg is followed by a new one (module docstring).  The first
    leg's errors are raised as they come (the file was opened a moment ago), except a connection lost as it
    starts: that is reconnected as any later leg's is."""
    place = _Place(offset)
    # The size the follow's caller saw (the probe's): a file truncated since is followed from its start.
    least = max(offset, source.size())
    reopened: Reconnectable | None = None  # the file opened again, whose connection the current leg uses
    try:
        leg = _Leg(source.runner, source, place, least=least)
    except NoShell:
        raise RemoteError(f"{source.name}: the remote shell stopped accepting commands") from None
    except ConnectionLost as exc:  # dropped between tail's start and its first line reaching us
        reopened, leg = yield from _reconnect(source, place, _without_host(exc, source.host), attempts, least)
    try:
        while True:
            try:
                yield from leg.pieces(place)
            except _LOST as exc:
                reason = _without_host(exc, source.host)
            else:
                reason = leg.reason_to_reconnect()
            finally:
                leg.close()
            if reopened is not None:
                reopened.close()  # its tail is gone or going: --pid ends it with the connection
                reopened = None
            reopened, leg = yield from _reconnect(source, place, reason, attempts)
    finally:
        leg.close()
        if reopened is not None:
            reopened.close()


def _reconnect(
    source: Reconnectable, place: _Place, reason: str, attempts: int, least: int | None = None
) -> Generator[bytes, None, tuple[Reconnectable, _Leg]]:
    """The file opened again and a leg started on it (reconnect's policy).  `least`: the size the file had at
    least (default: the offset reached)."""

    def reopen_and_start() -> tuple[Reconnectable, _Leg]:
        reopened = source.reopen()
        try:
            return reopened, _Leg(reopened.runner, source, place, least=place.offset if least is None else least)
        except BaseException:
            reopened.close()
            raise

    return (yield from reconnect(source.name, source.host, source.notice, reason, reopen_and_start, attempts))


def reconnect(
    name: str, host: str | None, notice: Progress | None, reason: str, connect: Callable[[], T],
    attempts: int = RECONNECT_ATTEMPTS,
) -> Generator[bytes, None, T]:
    """`connect()` after a lost connection, with bounded exponential backoff (module docstring), each attempt
    announced to `notice` as "NAME: REASON; reconnecting (attempt n)…", and its success as "NAME: reconnected
    (attempt n)"; RemoteError when every attempt failed.
    Yields b"" while it waits between attempts, so that watch keeps time (--timeout).  The policy of every
    follow over SSH: a remote file's (here) and a runtime's (runtime/remote.py)."""
    say = notice or (lambda _text: None)
    waits: list[float] = []  # tenacity's backoff, waited here in idle ticks instead of one sleep
    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=_BACKOFF,
        retry=retry_if_exception_type(_LOST),
        reraise=True,
        sleep=waits.append,
    )
    try:
        for attempt in retrying:
            yield from _idle(waits.pop() if waits else 0.0)
            with attempt:
                number = attempt.retry_state.attempt_number
                say(f"{name}: {reason}; reconnecting (attempt {number})…")
                try:
                    connected = connect()
                except BaseException as exc:
                    reason = _without_host(exc, host)
                    raise
                say(f"{name}: reconnected (attempt {number})")
                return connected
    except _LOST as exc:
        raise RemoteError(
            f"{name}: connection lost; gave up after {attempts} attempts to reconnect ({_without_host(exc, host)})"
        ) from None
    raise AssertionError("unreachable")  # pragma: no cover


def _idle(seconds: float) -> Iterator[bytes]:
    """Wait `seconds`, yielding b"" every idle tick."""
    until = time.monotonic() + seconds
    while (left := until - time.monotonic()) > 0:
        time.sleep(min(left, _IDLE_TICK))
        yield b""


def _without_host(exc: BaseException, host: str | None) -> str:
    """An error's text for a message that names the file already: "connection lost while reading"."""
    if isinstance(exc, NoShell):
        return "the remote shell stopped accepting commands"
    text = str(exc)
    return text[len(host) + 2 :] if host and text.startswith(f"{host}: ") else text


class _Leg:
    """One remote tail: started by the constructor (connected, FOLLOW_SCRIPT's first line read: a RemoteError or
    NoShell if not), then read with `pieces`."""

    def __init__(self, runner: Runner, source: Reconnectable, place: _Place, least: int) -> None:
        """`least`: the size the file had at least (shorter now: it was truncated)."""
        self._runner = runner
        self._name = source.name
        self._path = source.path
        self._run: RemoteRun = runner.run(
            FOLLOW_SCRIPT, self._path, place.offset, new_path_units(), place.inode or "-", least, idle_ticks=True
        )
        self._chunks = iter(self._run)
        self._said: list[bytes] = []  # tail's other messages, for the error if it gives up
        try:
            self.start, self._rest = self._read_start()
        except BaseException:
            self.close()
            raise

    def _read_start(self) -> tuple[FollowStart, bytes]:
        data = b""
        for chunk in self._chunks:
            data += chunk
            line, newline, rest = data.partition(b"\n")
            if newline:
                start = parse_follow_start(line)
                if start is None:
                    break
                return start, rest
            if len(data) > _MAX_START_LINE:
                break
        raise RemoteError(f"{self._name}: the remote follow did not start ({self._run.error_text()})")

    def pieces(self, place: _Place) -> Iterator[bytes]:
        """The file's bytes, RESTARTs where the file started over, ALIVE when a heartbeat found nothing on its way
        (base.ALIVE), b"" on idle polls; returns when tail ended."""
        place.inode = self.start.inode or None
        if self.start.how == "restart" or (self.start.how == "missing" and place.offset > 0):
            if place.restart():
                yield RESTART
        elif self.start.how == "missing":
            place.restarted = True  # nothing delivered yet: the file appearing (tail says so) is its start, not a restart
        output = TailOutput()
        for chunk in itertools.chain([self._rest] if self._rest else [], self._chunks):
            if not chunk:
                yield chunk  # an idle tick: watch keeps time
            for piece in output.feed(chunk):
                if isinstance(piece, bytes):
                    place.delivered(piece)
                    yield piece
                elif piece.alive_size is not None:
                    if piece.alive_size <= place.offset:  # nothing written is still on its way
                        yield ALIVE
                elif piece.restarts:
                    if not piece.same_file:
                        place.inode = self._inode_now()
                    if place.restart():
                        yield RESTART
                else:
                    self._said.append(piece.text)

    def _inode_now(self) -> str | None:
        """The inode the name points to now (tail announced a new file); None if it cannot be told."""
        try:
            line = self._runner.run(INODE_SCRIPT, self._path).collect().strip()
        except _LOST:
            return None
        return line.decode("ascii", "replace") if line.isdigit() else None

    def reason_to_reconnect(self) -> str:
        """Why tail ended, when another leg may do better: killed (no exit status, or 128+signal), or its session
        ended (`--pid`: exit 0).  A RemoteError when tail gave up by itself (it cannot read the file)."""
        status = self._run.exit_status
        if status is None or status <= 0 or status >= 128:
            return "the remote tail ended"
        # tail's last word is "no files remaining"; the reason it gave up came before
        reasons = [text for text in self._said if not text.startswith(b"no files remaining")]
        reason = reasons[-1].decode("utf-8", "replace") if reasons else self._run.error_text()
        raise RemoteError(f"{self._name}: {classify_remote_error(reason)}")

    def close(self) -> None:
        close = getattr(self._chunks, "close", None)
        if close:
            close()  # ends the remote tail (see FOLLOW_SCRIPT)
