"""Fork the SSH helper process first thing when a command line may name a remote log (see ssh_worker.py).

This runs in the console entry point before typer or any other logsleuth module is imported, so it imports
nothing that Python has not loaded at start-up: whatever ran here would delay the helper too.  The test is a
cheap one (`diagnose` and a source with a colon); the helper makes the exact check (`looks_remote`, which
needs the spec parser) and exits at once when no source is remote.

`LOGSLEUTH_SSH_WORKER=0` turns the helper off; without `os.fork` (Windows) there is none.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

_COMMANDS = ("diagnose",)  # watch follows a log for minutes: its start-up time does not matter
# The options of `diagnose` that take a value (cli.py), so that their values are not taken for sources.
# tests/ssh/test_ssh_worker.py checks this against the real command.
DIAGNOSE_VALUE_OPTIONS = frozenset(
    {"--format", "-f", "--cmd", "--engine-version", "--patterns", "--max-bytes", "--output", "-o", "--width",
     "--max-chars", "--ssh-config", "-F", "--slack-webhook"}
)

# (pid, fd the parent reads answers from, fd it writes requests to), set in the parent after the fork.
started: tuple[int, int, int] | None = None


class CommandLine:
    """The words of a command line sorted the way click sorts them: command, sources, options."""

    def __init__(self, argv: list[str]) -> None:
        self.positional: list[str] = []
        self.values: dict[str, str] = {}
        self.flags: set[str] = set()
        words = iter(argv)
        for word in words:
            if word == "--":
                self.positional.extend(words)
            elif word.startswith("--"):
                name, equals, value = word.partition("=")
                if name in DIAGNOSE_VALUE_OPTIONS:
                    self.values[name] = value if equals else next(words, "")
                else:
                    self.flags.add(name)
            elif word.startswith("-") and word != "-":
                name = word[:2]
                if name in DIAGNOSE_VALUE_OPTIONS:
                    self.values[name] = word[2:] or next(words, "")
                else:
                    self.flags.add(word)
            else:
                self.positional.append(word)

    @property
    def command(self) -> str | None:
        return self.positional[0] if self.positional else None

    @property
    def sources(self) -> list[str]:
        return self.positional[1:]

    def value(self, *names: str) -> str | None:
        return next((self.values[name] for name in names if name in self.values), None)


def may_name_a_remote_log(argv: list[str]) -> bool:
    line = CommandLine(argv)
    return line.command in _COMMANDS and any(":" in word for word in line.sources)


def fork_if_remote(argv: list[str]) -> None:
    global started
    if started is not None or not hasattr(os, "fork") or os.environ.get("LOGSLEUTH_SSH_WORKER") == "0":
        return
    if not may_name_a_remote_log(argv):
        return
    to_child_read, to_child_write = os.pipe()
    to_parent_read, to_parent_write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the helper: never returns
        os.close(to_child_write)
        os.close(to_parent_read)
        from logsleuth.sources.ssh_worker_child import child_main

        child_main(to_child_read, to_parent_write, argv)
    os.close(to_child_read)
    os.close(to_parent_write)
    started = (pid, to_parent_read, to_child_write)


def stop(grace: float = 1.0) -> None:
    """Close the pipes (the helper exits at end of stream) and reap it.  A helper still there after `grace`
    seconds is terminated, then killed: a helper stuck on a frozen server never holds up logsleuth's exit
    (this returns within about grace + 1 s)."""
    global started
    if started is None:
        return
    (pid, *fds), started = started, None
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)
    for signal_number in (15, 9):  # SIGTERM, then SIGKILL (without importing signal)
        if _reaped(pid, grace):
            return
        with contextlib.suppress(OSError):
            os.kill(pid, signal_number)
        grace = 0.5
    _reaped(pid, grace)


def _reaped(pid: int, seconds: float) -> bool:
    """Whether the helper has exited (and is reaped) within `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            done, _status = os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            return True
        if done:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.001)
