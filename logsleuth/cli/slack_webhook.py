"""Posting a Slack report to an incoming webhook (`--slack-webhook URL`, or `--post-to-slack` with the URL in
$LOGSLEUTH_SLACK_WEBHOOK).

The only network write logsleuth does, kept out of the renderers: render/slack.py only draws the text.  A
transient failure (no connection, a reset, Slack answering 429 or 5xx) is retried a few times with backoff;
a refusal (any other 4xx: a wrong URL, a revoked hook, a bad payload) is reported at once, since trying again
cannot change the answer, and so are a redirect (not followed: the report goes only to the URL given), a reply
that is not well-formed HTTP, and a reply not whole within the timeout (a deadline for the whole exchange).
Proxy variables are not used, as for --explain: the URL is a secret (logsleuth.http_exchange).
"""

from __future__ import annotations

import ipaddress
import json
import time
import urllib.parse
from collections.abc import Callable

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from logsleuth.errors import LogsleuthError
from logsleuth.http_exchange import DeadlinePassed, ExchangeError, Unreachable, exchange
from logsleuth.render.safety import escape_slack_api

ATTEMPTS = 3
_HEADERS = {"Content-Type": "application/json; charset=utf-8"}
_MAX_REPLY = 64 << 10  # Slack answers `ok` or a short error
MAX_RETRY_AFTER = 30.0  # seconds: a longer Retry-After from Slack is not waited for


class _Transient(Exception):
    """A failure worth another try; `reason` is the one line reported if the tries run out."""

    def __init__(self, reason: str, retry_after: float | None = None) -> None:
        super().__init__(reason)
        self.retry_after = retry_after


def _is_loopback(host: str | None) -> bool:
    if host == "localhost":
        return True
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _retry_after(header: str | None) -> float | None:
    try:
        return min(MAX_RETRY_AFTER, max(0.0, float(header))) if header else None
    except ValueError:  # an HTTP date: the backoff decides
        return None


def _post_once(url: str, body: bytes, host: str | None, seconds_left: float, deadline: float) -> None:
    """One try with what is left of the whole post's `deadline` (both in seconds)."""
    try:
        reply = exchange(url, body=body, headers=_HEADERS, deadline_seconds=seconds_left, max_body=_MAX_REPLY)
    except DeadlinePassed:  # not retried: a hook that slow would hold the run as long again
        raise LogsleuthError(f"--slack-webhook: no whole reply from {host} within {deadline:g} s; not posted") from None
    except Unreachable as exc:  # refused, reset, DNS
        raise _Transient(f"--slack-webhook: cannot post to {host}: {exc}") from None
    except ExchangeError as exc:  # a malformed reply, TLS: not known to be posted, and asking again changes nothing
        raise LogsleuthError(f"--slack-webhook: {host}: {exc}; not known to be posted") from None
    if 300 <= reply.status < 400:  # followed, it would be a GET to wherever the Location says
        target = urllib.parse.urlsplit(reply.headers.get("Location", "")).hostname or "elsewhere"
        raise LogsleuthError(
            f"--slack-webhook: {host} answered {reply.status}, a redirect to {target!r}; not followed, not posted"
        )
    if reply.status == 429 or reply.status >= 500:
        message = f"--slack-webhook: Slack answered {reply.status} {_detail(reply.body)}".rstrip()
        raise _Transient(message, _retry_after(reply.headers.get("Retry-After")))
    if not 200 <= reply.status < 300:
        raise LogsleuthError(f"--slack-webhook: Slack answered {reply.status} {_detail(reply.body)}".rstrip())


def _detail(body: bytes) -> str:
    return " ".join(body[:200].decode("utf-8", "replace").split())


def _wait(backoff: Callable[[RetryCallState], float], left: Callable[[], float]) -> Callable[[RetryCallState], float]:
    """The backoff, or Slack's Retry-After when it gave one; never past the deadline (`left` seconds)."""

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, _Transient) and error.retry_after is not None:
            return max(0.0, min(error.retry_after, left()))
        return max(0.0, min(backoff(state), left()))

    return wait


def _checked_url(webhook_url: str) -> urllib.parse.SplitResult:
    try:
        url = urllib.parse.urlsplit(webhook_url)
        url.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:
        raise LogsleuthError("--slack-webhook: not a URL") from None
    if url.scheme != "https" and not (url.scheme == "http" and _is_loopback(url.hostname)):
        raise LogsleuthError("--slack-webhook: the URL must start with https://")
    if url.username is not None or url.password is not None:  # `user:pass@host` would be looked up as a host
        raise LogsleuthError("--slack-webhook: the URL must not hold a user name or password (`user:pass@`)")
    return url


def post_to_slack(webhook_url: str, text: str, timeout: float = 10.0, backoff: float = 1.0) -> None:
    """Post `text` to an incoming webhook.  `&`, `<`, `>` are escaped as the API requires, which also leaves
    any `<!channel>` from a log inert.  Plain http only to loopback (tests).  `timeout`: one deadline, in
    seconds, for the whole post, its retries and the waits between them included.  `backoff`: the first wait,
    in seconds, before a retry (doubled each time)."""
    url = _checked_url(webhook_url)
    body = json.dumps({"text": escape_slack_api(text)}).encode("utf-8")
    deadline = time.monotonic() + timeout
    tries: list[_Transient] = []

    def left() -> float:
        return deadline - time.monotonic()

    def attempt() -> None:
        if tries and left() <= 0:  # the waits used up the deadline: no try that could not finish
            raise LogsleuthError(f"{tries[-1]} (tried {len(tries)} times within {timeout:g} s)")
        try:
            _post_once(webhook_url, body, url.hostname, max(left(), 0.001), timeout)
        except _Transient as exc:
            tries.append(exc)
            raise

    retrying = Retrying(
        retry=retry_if_exception(lambda error: isinstance(error, _Transient)),
        stop=stop_after_attempt(ATTEMPTS),
        wait=_wait(wait_exponential(multiplier=backoff, max=8 * backoff), left),
        reraise=True,
    )
    try:
        retrying(attempt)
    except _Transient as exc:
        raise LogsleuthError(f"{exc} (tried {ATTEMPTS} times)") from None
