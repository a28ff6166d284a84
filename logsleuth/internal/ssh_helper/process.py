"""Fork the SSH helper process first thing when a command line may name a remote log (see parent.py).

This runs in the console entry point before typer or any other logsleuth module is imported, so it imports
nothing that Python has not loaded at start-up: whatever ran here would delay the helper too.  The test is a
cheap one (`diagnose` or `watch` and a source with a colon); the helper makes the exact check (`looks_remote`, which
needs the spec parser) and exits at once when no source is remote.

`LOGSLEUTH_SSH_WORKER=0` turns the helper off; without `os.fork` (Windows) there is none.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time

from logsleuth.internal.ssh_helper.argv import may_name_a_remote_log

# (pid, fd the parent reads answers from, fd it writes requests to), set in the parent after the fork.
started: tuple[int, int, int] | None = None


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
        from logsleuth.internal.ssh_helper.child import child_main

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
