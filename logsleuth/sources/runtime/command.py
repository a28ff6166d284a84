"""A log source whose bytes are a read-only command's stdout: `docker logs --tail N`, `journalctl -n N`.

A command has no random access, so the source holds the last N lines in memory (N growing through LINE_STEPS, then
everything) and is a source of that size.  `read_latest` reads growing windows from the end of a source and stops
at its first byte, so it cannot ask for bytes before the lines held: `reading.reader.read_latest_widening` runs it, and when the
latest launch's failures may start before the lines held (the reader's own test, `launch_complete`), widens the source
(the next N) and reads again.  Each step is ten times the last, so the re-read costs at most a ninth more.

Memory: at most MAX_HELD bytes are kept, the newest, cut at a line start (the reader's own byte limit).

Running a command goes through a `Runner`, Command -> Finished: `run_local` here; the HOST: forms will pass a
runner that runs the same argv on that host over SSH (see docs/sources.md).  Arguments are always a list, never a
shell string.
"""

from __future__ import annotations

import io
import os
import selectors
import signal
import subprocess
import threading
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from logsleuth.errors import SourceError
from logsleuth.models import FACT_PREFIX
from logsleuth.sources.base import CHUNK_SIZE, DEFAULT_MAX_BYTES
from logsleuth.sources.memory import MemorySource
from logsleuth.sources.spec import printable

LINE_STEPS: tuple[int | None, ...] = (2_000, 20_000, 200_000, None)  # None: every line
MAX_HELD = DEFAULT_MAX_BYTES
IDLE_TICK = 0.04  # seconds of silence after which a stream yields b"": the watch looks at its clock that often
TIMEOUT = 120.0  # seconds for one command: `docker logs` of a long-lived container can take a while


@dataclass(frozen=True, slots=True)
class Command:
    """A read-only command to run: its argv (no shell), how long it may take, and whether its stderr is part of
    its output (`docker logs` writes the container's stderr to its own stderr)."""

    argv: tuple[str, ...]
    merge_errors: bool = False
    timeout: float = TIMEOUT
    # A follow's: how to follow on after its connection to a host was lost (runtime/remote.py).  Its output starts
    # with the newest lines again, some of them delivered already (dropped by their overlap with what was).
    resume: Command | None = None


@dataclass(frozen=True, slots=True)
class Finished:
    """What a command left: its exit status, the newest MAX_HELD bytes of its output, and its error stream."""

    returncode: int
    output: bytes
    errors: bytes
    clipped: bool = False  # output was longer than it keeps


Runner = Callable[[Command], Finished]
# A command whose output is followed (`docker logs -f`, `kubectl logs -f`, `journalctl -f`): yields its stdout as
# it comes, b"" on an idle tick (about every 40 ms, so a watch can look at its clock), and ends when the command
# exits.  Raises as a Runner does when the program cannot be started; closing the iterator stops the command.
StreamRunner = Callable[[Command], Iterator[bytes]]


def run_local(command: Command, keep: int = MAX_HELD) -> Finished:
    """Run the command here (no shell) and keep the newest `keep` bytes of its stdout.  `merge_errors`: stderr
    goes into the same pipe as stdout, so lines written to both keep the order they were written in (one pipe, one
    sequence of writes: `docker logs` writes each frame of the container's stdout and stderr as it demuxes them).

    Raises FileNotFoundError / PermissionError when the program cannot be started, TimeoutError after
    `timeout` seconds (the command is killed)."""
    argv, merge_errors, timeout = command.argv, command.merge_errors, command.timeout
    process = subprocess.Popen(
        list(argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_errors else subprocess.PIPE,
    )
    errors: list[bytes] = []
    drain = None if merge_errors else threading.Thread(target=lambda: errors.append(_read_all(process)), daemon=True)
    if drain is not None:
        drain.start()
    timed_out = threading.Event()

    def kill() -> None:
        timed_out.set()
        process.kill()

    timer = threading.Timer(timeout, kill)
    timer.start()
    try:
        output, clipped = newest(_chunks(process), keep)
        returncode = process.wait()
    finally:
        timer.cancel()
    if drain is not None:
        drain.join()
    if timed_out.is_set():
        raise TimeoutError(f"{argv[0]} did not finish within {timeout:g}s")
    return Finished(returncode, output, b"".join(errors), clipped)


def stream_local(command: Command) -> Iterator[bytes]:
    """Run the command here (no shell) and yield its stdout as it comes (stderr too when `merge_errors`), b""
    after every IDLE_TICK of silence; end when it exits.  Closing the iterator (or an exception in the caller,
    KeyboardInterrupt included) kills the command.  Raises FileNotFoundError / PermissionError / OSError when it
    cannot be started."""
    process = subprocess.Popen(
        list(command.argv),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if command.merge_errors else subprocess.DEVNULL,
        bufsize=0,
    )
    assert process.stdout is not None
    try:
        with selectors.DefaultSelector() as selector:
            selector.register(process.stdout, selectors.EVENT_READ)
            while True:
                if not selector.select(IDLE_TICK):
                    yield b""
                    continue
                chunk = os.read(process.stdout.fileno(), CHUNK_SIZE)
                if not chunk:  # every writer closed the pipe: the command exited
                    return
                yield chunk
    finally:
        if process.poll() is None:
            process.kill()
        process.wait()
        process.stdout.close()


def _read_all(process: subprocess.Popen[bytes]) -> bytes:
    assert process.stderr is not None
    return process.stderr.read()


def newest(chunks: Iterable[bytes], keep: int = MAX_HELD) -> tuple[bytes, bool]:
    """The last `keep` bytes of a stream, cut to start at a line, and whether any were dropped.  Any stream: a
    local pipe, or a remote run's stdout (the SSH runner of the HOST: forms)."""
    held = bytearray()
    clipped = False
    for chunk in chunks:
        held += chunk
        if len(held) > keep + CHUNK_SIZE:  # deleting a bytearray's head is cheap (CPython moves its start)
            del held[: len(held) - keep]
            clipped = True
    if len(held) > keep:
        del held[: len(held) - keep]
        clipped = True
    if clipped:
        newline = held.find(b"\n")
        del held[: newline + 1]
    return bytes(held), clipped


def _chunks(process: subprocess.Popen[bytes]) -> Iterator[bytes]:
    stdout = process.stdout
    assert isinstance(stdout, io.BufferedReader)  # Popen's pipes are buffered unless bufsize=0
    while chunk := stdout.read1(CHUNK_SIZE):
        yield chunk


class CommandSource:
    """The newest lines of a runtime's log, fetched by a command, as a Source.

    `command_for(lines)` builds the command for the last `lines` lines (None: all); `explain(finished)` returns
    the one-line error message for a failed run, or None when it succeeded."""

    def __init__(
        self,
        name: str,
        host: str | None,
        command_for: Callable[[int | None], Command],
        explain: Callable[[Finished], str | None],
        runner: Runner = run_local,
        *,
        steps: tuple[int | None, ...] = LINE_STEPS,
    ) -> None:
        self.name = name
        self.host = host
        self._trailer = b""
        self._command_for = command_for
        self._explain = explain
        self._runner = runner
        self._steps = steps
        self._step = -1
        self._log = b""
        self._held = MemorySource(b"", name)  # the log, then the trailer
        self.whole = False  # every line the runtime has is held
        # What the report should say about where the log came from, e.g. that a restarted pod's previous
        # container was read (SourceInfo.note); None when there is nothing to say.
        self.note: str | None = None
        self.on_close: Callable[[], None] | None = None  # ends what the runner holds (an SSH connection)

    # -- Source ------------------------------------------------------------------------------------------

    def size(self) -> int:
        if self._step < 0:
            self.widen()
        return self._held.size()

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        return self._held.read_range(start, end)

    def close(self) -> None:
        self._log = b""
        self._held = MemorySource(b"", self.name)
        if self.on_close is not None:
            on_close, self.on_close = self.on_close, None
            on_close()

    def set_trailer(self, trailer: bytes) -> None:
        """Bytes that follow the log, whatever its window (one line per runtime fact, see docker.py)."""
        self._trailer = _ending_in_newline(trailer)
        self._held = MemorySource(self._log + self._trailer, self.name)

    # -- widening ----------------------------------------------------------------------------------------

    def widen(self, *, to_all: bool = False) -> bool:
        """Fetch the next, larger number of lines (`to_all`: every line at once, for `--all`).  False when every
        line is already held (nothing changes)."""
        if self.whole:
            return False
        self._step = len(self._steps) - 1 if to_all else self._step + 1
        lines = self._steps[self._step]
        finished = run_checked(self._runner, self._command_for(lines), self.name, self._explain)
        self._log = _ending_in_newline(finished.output)
        self._held = MemorySource(self._log + self._trailer, self.name)
        self.whole = lines is None or finished.clipped or self._log.count(b"\n") < lines
        return True


def run_checked(runner: Runner, command: Command, name: str, explain: Callable[[Finished], str | None]) -> Finished:
    """Run a command for the source `name` (its spelling names the host, if any); every way it can fail becomes
    a one-line SourceError."""
    program = command.argv[0]
    try:
        finished = runner(command)
    except FileNotFoundError:
        raise SourceError(printable(f"{name}: {program} is not installed (not found on PATH)")) from None
    except PermissionError:
        raise SourceError(printable(f"{name}: {program} cannot be run (permission denied)")) from None
    except TimeoutError:
        raise SourceError(printable(f"{name}: {program} did not finish within {command.timeout:g}s")) from None
    except OSError as error:  # not an executable (ENOEXEC), too many processes, …
        raise SourceError(printable(f"{name}: {program} cannot be run ({error.strerror or error})")) from None
    message = explain(finished)
    if message is not None:
        raise SourceError(printable(f"{name}: {message}"))
    return finished


def _ending_in_newline(data: bytes) -> bytes:
    return data if not data or data.endswith(b"\n") else data + b"\n"


def fact_line(subject: str, facts: list[str]) -> str:
    """The marked line that states what the runtime knows: `[logsleuth: container web: exited, OOMKilled …]`."""
    return f"{FACT_PREFIX}{subject}: {', '.join(facts)}]"


def signal_name(exit_code: int, number: int = 0) -> str | None:
    """The name of the signal that killed a container's main process: `number` when the runtime says it, else
    from the shell convention 128 + N that Docker and the kubelet use for the exit code; None when not killed."""
    number = number or (exit_code - 128 if exit_code > 128 else 0)
    try:
        return signal.Signals(number).name if number else None
    except ValueError:
        return None


def last_line(text: bytes) -> str:
    """The last non-empty line of a command's error output, decoded: what it says went wrong."""
    lines = [line.strip() for line in text.decode("utf-8", "replace").splitlines() if line.strip()]
    return lines[-1] if lines else ""

