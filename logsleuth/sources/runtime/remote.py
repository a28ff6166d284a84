"""Run a runtime's read-only commands on another host: the `HOST:docker:C`, `HOST:podman:C` and `HOST:journal:U`
forms.  The same argv as locally, through the SSH backend `sources/ssh/open.py` would choose for that host.

Like every remote script (scripts.py), the argv travels as positional arguments of `/bin/sh -c SCRIPT`, each
quoted by `scripts.command_line`, never pasted into the script.  The script itself only checks that the program
exists (exit 127, which becomes FileNotFoundError as a local run's would) and execs it, so the exit status and
stderr are the program's own.  A command with a time limit runs under coreutils `timeout` where the host has it.

One connection serves every command of a source (inspect, then each widening of the log); `close` ends it.

A follow (`watch HOST:docker:C`, `watch HOST:journal:U`) outlives a lost connection as `watch HOST:PATH` does: the
same attempts, backoff and "reconnecting (attempt n)…" notices (ssh/follow.py's `reconnect`).  A command has no
byte offset to resume from, so the follow starts again with the newest lines (`Command.resume`) and drops those
that overlap the end of what was delivered (link.Resumed): nothing is repeated, and nothing is lost unless more than
RESUME_LINES lines were written while the connection was down.  Its heartbeat (link.Heartbeats) makes it yield
ALIVE, as `tail -F`'s follow does, so that watch tells a frozen connection from a quiet log.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

from logsleuth.sources.base import ALIVE
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.runtime.command import Command, Finished, newest
from logsleuth.sources.runtime.link import ANCHOR, Heartbeats, Resumed, new_heartbeat
from logsleuth.sources.spec import RemoteError, RemoteSpec
from logsleuth.sources.ssh.run import NoShell, RemoteRun
from logsleuth.sources.ssh.run import Runner as ScriptRunner
from logsleuth.sources.ssh.scripts import _one_line

MISSING = 127  # POSIX: the exit status of a command that was not found
TIMED_OUT = 124  # coreutils timeout(1): the command ran out of time
# What the script says on stderr when the program is missing: an exit status of 127 alone could be the
# program's own.
_MISSING_NOTE = b"logsleuth-runtime: not found: "
_RUN_LINES = r"""
m=$1; merge=$2; limit=$3; shift 3;
printf '%s\n' "$m";
command -v "$1" >/dev/null 2>&1 || { printf 'logsleuth-runtime: not found: %s\n' "$1" >&2; exit 127; };
if [ "$limit" != 0 ] && command -v timeout >/dev/null 2>&1; then set -- timeout "$limit" "$@"; fi;
if [ "$merge" = 1 ]; then exec "$@" 2>&1; else exec "$@"; fi
"""
RUN_SCRIPT = _one_line(_RUN_LINES)
# A follow (`journalctl --follow`, `docker logs -f`) notices that our connection closed only when it next writes:
# a quiet unit would keep it running on the host for good.  So it runs beside a watcher of the session that
# started this shell ($PPID), which ends it within a second of the session; its own exit status is kept.
# Beside it, a heartbeat prints the follow's own random word ($3) every second while the command runs: delivered, it
# says that everything the command wrote before it was delivered too (link.py), which a frozen connection cannot.
_STREAM_LINES = r"""
m=$1; merge=$2; beat=$3; shift 3;
printf '%s\n' "$m";
command -v "$1" >/dev/null 2>&1 || { printf 'logsleuth-runtime: not found: %s\n' "$1" >&2; exit 127; };
if [ "$merge" = 1 ]; then "$@" 2>&1 & else "$@" & fi;
c=$!;
( while kill -0 "$PPID" 2>/dev/null; do sleep 1; done; kill "$c" 2>/dev/null ) </dev/null >/dev/null 2>&1 &
w=$!;
( while kill -0 "$c" 2>/dev/null; do sleep 1 >/dev/null 2>&1; printf '%s\n' "$beat"; done ) </dev/null 2>/dev/null &
h=$!;
wait "$c"; s=$?;
kill "$w" "$h" 2>/dev/null;
exit "$s"
"""
STREAM_SCRIPT = _one_line(_STREAM_LINES)


class RemoteCommands:
    """Runs commands on one host over one connection, opened at the first command.  Call it as a Runner
    (`command -> Finished`); `stream` follows a command (a StreamRunner); `close` ends the connection."""

    def __init__(self, remote: RemoteSpec, options: SSHOptions, name: str | None = None) -> None:
        self.remote = remote
        self.options = options
        self.name = name or remote.host  # the spec as the user wrote it, for the reconnect notices
        self._runner: ScriptRunner | None = None
        self._lock = threading.Lock()

    def _connected(self) -> ScriptRunner:
        with self._lock:
            if self._runner is None:
                from logsleuth.sources.ssh.remote_command import open_runner

                self._runner = open_runner(self.remote, self.options)
            return self._runner

    def __call__(self, command: Command) -> Finished:
        run = self._connected().run(RUN_SCRIPT, *_arguments(command, limit=command.timeout))
        output, clipped = newest(self._chunks(run, command))
        _raise_if_missing(run.exit_status, run.stderr, command)
        if run.exit_status == TIMED_OUT:
            raise TimeoutError(f"{command.argv[0]} did not finish within {command.timeout:g}s")
        return Finished(run.exit_status or 0, output, run.stderr, clipped)

    def stream(self, command: Command) -> Iterator[bytes]:
        """The command's stdout as it comes, b"" on idle ticks; ends when it exits.  No time limit: a follow
        runs until the watch ends, and closing this iterator closes the channel; the remote command ends with
        the session (STREAM_SCRIPT).  A lost connection is connected again and the command followed on with its
        `resume` (module docstring); RemoteError once reconnecting failed."""
        from logsleuth.sources.ssh.follow import reconnect

        delivered = b""  # the end of what was yielded: where a resumed follow picks up
        running, resumed = command, None
        while True:
            beat = new_heartbeat()
            beats = Heartbeats(beat)
            try:
                run = self._connected().run(STREAM_SCRIPT, "1" if running.merge_errors else "0", beat, *running.argv,
                                            idle_ticks=True)
                for chunk in run:
                    data, alive = beats.feed(chunk)
                    if resumed is not None:
                        data = resumed.feed(data)
                    if data:
                        delivered = (delivered + data)[-ANCHOR:]
                    yield data
                    if alive and beats.clear and (resumed is None or resumed.clear):
                        yield ALIVE  # every byte written before the heartbeat has been yielded
            except NoShell:
                raise self._no_shell(running) from None  # the account, not the connection: never retried
            except RemoteError as exc:  # the connection was lost, or stalled
                if command.resume is None:
                    raise
                reason = str(exc).removeprefix(f"{self.remote.host}: ")
                yield from reconnect(self.name, self.remote.host, self.options.notice, reason, self._reconnected)
                # Nothing delivered yet: the command as it was is still right (it has not shown its lines).
                running, resumed = (command.resume, Resumed(delivered)) if delivered else (command, None)
                continue
            _raise_if_missing(run.exit_status, run.stderr, running)
            return

    def call_reconnecting(self, command: Command) -> Finished:
        """As a call, but a lost connection is connected again first (the follow's attempts and notices) and the
        command run once more: the runner of a follow's `docker inspect` (runtime/follow.py).  This waits without
        idle ticks, being no stream: watch's --timeout is looked at again only after it."""
        from logsleuth.sources.ssh.follow import reconnect

        try:
            return self(command)
        except _NoUsableShell:
            raise
        except RemoteError as exc:  # the connection was lost, or stalled
            reason = str(exc).removeprefix(f"{self.remote.host}: ")
            for _tick in reconnect(self.name, self.remote.host, self.options.notice, reason, self._reconnected):
                pass
        return self(command)

    def _reconnected(self) -> ScriptRunner:
        """A new connection in place of a lost one: the same settings, one connect attempt (reconnect retries)."""
        with self._lock:
            if self._runner is not None:
                self._runner.release()
                self._runner = None
        from logsleuth.sources.ssh.remote_command import open_runner

        again = replace(self.options, connect_attempts=1, deadline=None, progress=None, hold_new_host_key=None)
        runner = open_runner(self.remote, again)
        with self._lock:
            self._runner = runner
        return runner

    def _chunks(self, run: RemoteRun, command: Command) -> Iterator[bytes]:
        try:
            yield from run
        except NoShell:
            raise self._no_shell(command) from None

    def _no_shell(self, command: Command) -> RemoteError:
        return _NoUsableShell(
            f"{self.remote.host}: the account has no usable shell, so {command.argv[0]} cannot be run there"
        )

    def close(self) -> None:
        with self._lock:
            if self._runner is not None:
                self._runner.release()
                self._runner = None


class _NoUsableShell(RemoteError):
    """The account, not the connection: never reconnected for."""


def _arguments(command: Command, *, limit: float) -> tuple[str | int, ...]:
    seconds = max(1, round(limit)) if limit else 0
    return ("1" if command.merge_errors else "0", seconds, *command.argv)


def _raise_if_missing(status: int | None, stderr: bytes, command: Command) -> None:
    if status == MISSING and _MISSING_NOTE in stderr:
        raise FileNotFoundError(command.argv[0])
