"""Connecting with retries, whatever carries the connection (paramiko or OpenSSH's `ssh`); no paramiko here.

Refused or reset connections, timeouts and a server dropping the handshake (sshd's MaxStartups) are retried
with exponential backoff (0.25 s, 0.5 s, … max 2 s); authentication and host-key failures never are.  After
several attempts the message states how many and the real time they took.  `deadline` (a time.monotonic()
value) bounds the whole: no attempt starts once it could not start before it.  A timeout the deadline brought
about states the seconds the user set for it (`watch --timeout 2`: "timed out after 2 s"), not a measured time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TypeVar

from tenacity import RetryCallState, Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential
from tenacity.stop import stop_base

from logsleuth.sources.base import Progress
from logsleuth.sources.spec import RemoteError

T = TypeVar("T")


class TransientConnectError(RemoteError):
    """Worth retrying: refused, reset, timed out, dropped during the handshake (sshd MaxStartups).

    `head` is the message; for a timeout it ends before "timed out", so that the final message can state every
    attempt and the real time they took (`after_attempts`)."""

    def __init__(self, head: str, *, timeout: float | None = None, detail: str = "") -> None:
        self.head, self.timeout, self.detail = head, timeout, detail
        super().__init__(self.after_attempts(1, timeout or 0.0))

    def after_attempts(self, attempts: int, elapsed: float, *, limit: float | None = None) -> str:
        """The message after `attempts` taking `elapsed` seconds; `limit`: the seconds the user set for the
        deadline that ended them, stated instead of the time measured."""
        if self.timeout is None:
            return self.head + (f" ({attempts} attempts in {seconds(elapsed)} s)" if attempts > 1 else "")
        if limit is not None:
            elapsed = limit
        took = f"{attempts} attempts in {seconds(elapsed)}" if attempts > 1 else seconds(limit or self.timeout)
        return f"{self.head} timed out after {took} s{self.detail}"


def seconds(value: float) -> str:
    """A duration as messages show it: `31`, `2.5`, `1`."""
    return f"{value:.0f}" if value >= 10 else f"{value:.1f}".removesuffix(".0")


def with_retries(
    name: str,
    attempts: int,
    deadline: float | None,
    attempt: Callable[[], T],
    *,
    progress: Progress | None = None,
    deadline_seconds: float | None = None,
) -> T:
    """`attempt()`, repeated while it raises TransientConnectError, at most `attempts` times and never past
    `deadline`.  `progress` hears "connecting to NAME…" before each attempt ("… (attempt 2)" after the first).
    `deadline_seconds`: the seconds the user set for the deadline, which a timeout it brings about states."""
    backoff = wait_exponential(multiplier=0.25, max=2.0)
    at_deadline = _StopAtDeadline(deadline, backoff)
    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)) | at_deadline,
        wait=backoff,
        retry=retry_if_exception_type(TransientConnectError),
        reraise=True,
    )
    started = time.monotonic()
    number = 0
    try:
        for try_ in retrying:
            with try_:
                number = try_.retry_state.attempt_number
                if progress:
                    progress(f"connecting to {name}…" + (f" (attempt {number})" if number > 1 else ""))
                return attempt()
    except TransientConnectError as exc:
        now = time.monotonic()
        # The deadline ended connecting: it stopped the retries, or cut the last attempt's timeout to the time left.
        deadline_ended_it = deadline is not None and (at_deadline.stopped or now >= deadline)
        limit = deadline_seconds if deadline_ended_it else None
        raise RemoteError(exc.after_attempts(number, now - started, limit=limit)) from None
    raise AssertionError("unreachable")  # pragma: no cover


class _StopAtDeadline(stop_base):
    """No further attempt when it could not start before the deadline."""

    def __init__(self, deadline: float | None, backoff: wait_exponential) -> None:
        self.deadline = deadline
        self.backoff = backoff
        self.stopped = False  # it ended the retries

    def __call__(self, retry_state: RetryCallState) -> bool:
        if self.deadline is not None and time.monotonic() + self.backoff(retry_state) >= self.deadline:
            self.stopped = True
        return self.stopped


def time_left(alias: str, where: str, timeout: float, deadline: float | None) -> float:
    """`timeout`, cut to the time left before `deadline`; a deadline already past is a timeout at once."""
    if deadline is not None:
        timeout = min(timeout, deadline - time.monotonic())
        if timeout <= 0:
            raise TransientConnectError(f"{alias}: connection to {where}", timeout=0.0)
    return timeout
