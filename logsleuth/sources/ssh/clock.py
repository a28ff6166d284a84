"""A remote host's clock against ours, for a fleet report (diagnosis/fleet.py): logs on different hosts are stamped
by different clocks, and two failures a second apart say nothing about their order when the clocks are further
apart than that.

One read-only command, `date +%s.%N`, bracketed by our own clock: the remote time was read somewhere between
`before` and `after`, so the offset is the remote time minus the midpoint, within half the round trip (plus the
remote clock's resolution: whole seconds where `date` has no `%N`).  It runs over whatever a source already uses to
run its scripts (a `run.Runner`: a paramiko exec channel or one `ssh` process), so it costs one more exec on a
connection that is open anyway.  No paramiko here.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from typing import Protocol, runtime_checkable

from logsleuth.errors import SourceError
from logsleuth.models import ClockOffset
from logsleuth.sources.spec import RemoteError
from logsleuth.sources.ssh.run import NoShell, RemoteRun

# The marker first, as every script prints it (scripts.py); LC_ALL=C so that no locale changes the digits.
CLOCK_SCRIPT = "m=$1; printf '%s\\n' \"$m\"; LC_ALL=C date +%s.%N"
_EPOCH = re.compile(rb"\s*(?P<seconds>\d{9,12})(?:\.(?P<fraction>\d{1,9}))?")


class RunsScripts(Protocol):
    """What runs a remote script on one host: `run.Runner` (both backends) has this."""

    def run(self, script: str, *args: str | int, idle_ticks: bool = False) -> RemoteRun: ...


@runtime_checkable
class KnowsRemoteClock(Protocol):
    """A source that can measure its host's clock (a remote file read over SSH, or its helper-process proxy)."""

    def remote_clock(self) -> ClockOffset: ...


def measure_clock(runner: RunsScripts, host: str, *, now: Callable[[], float] = time.time) -> ClockOffset:
    """`host`'s clock against ours, over `runner`.  Raises RemoteError (one line) when the answer is not a time."""
    before = now()
    run = runner.run(CLOCK_SCRIPT)
    try:
        body = run.collect()
    except NoShell:
        raise RemoteError(f"{host}: cannot read the remote clock (the account runs no shell)") from None
    after = now()
    match = _EPOCH.match(body)
    if match is None or run.exit_status not in (0, None):
        raise RemoteError(f"{host}: cannot read the remote clock ({run.error_text() if run.exit_status else 'no time'})")
    remote = int(match["seconds"])
    fraction = match["fraction"]
    resolution = 0.0
    if fraction:
        remote_time = remote + int(fraction) / 10 ** len(fraction)
    else:  # `date` without %N printed `S.N` or `S.%N`: whole seconds, read anywhere within that second
        remote_time, resolution = remote + 0.5, 0.5
    return ClockOffset(offset=remote_time - (before + after) / 2, uncertainty=(after - before) / 2 + resolution)


def clock_of(source: object) -> ClockOffset | None:
    """The clock of the host a source lives on; None for a source that cannot tell (a local file, SFTP only)
    or when the query fails: a fleet report then says less, and the diagnosis goes on."""
    if not isinstance(source, KnowsRemoteClock):
        return None
    try:
        return source.remote_clock()
    except SourceError:
        return None
