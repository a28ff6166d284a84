"""Posting a Slack report to an incoming webhook (`--slack-webhook URL`, or `--post-to-slack` with the URL in
$LOGSLEUTH_SLACK_WEBHOOK).

The only network write logsleuth does, kept out of the renderers: render/slack.py only draws the text.  A
transient failure (no connection, a timeout, Slack answering 429 or 5xx) is retried a few times with backoff;
a refusal (any other 4xx: a wrong URL, a revoked hook, a bad payload) is reported at once, since trying again
cannot change the answer.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable

from tenacity import RetryCallState, Retrying, retry_if_exception, stop_after_attempt, wait_exponential

from logsleuth.errors import LogsleuthError
from logsleuth.render.safety import escape_slack_api

ATTEMPTS = 3
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


def _post_once(request: urllib.request.Request, host: str | None, timeout: float) -> None:
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read(200).decode("utf-8", "replace").strip()
        message = f"--slack-webhook: Slack answered {exc.code} {detail}".rstrip()
        if exc.code == 429 or exc.code >= 500:
            raise _Transient(message, _retry_after(exc.headers.get("Retry-After"))) from None
        raise LogsleuthError(message) from None
    except (urllib.error.URLError, OSError) as exc:  # refused, reset, DNS, timeout
        raise _Transient(f"--slack-webhook: cannot post to {host}: {getattr(exc, 'reason', exc)}") from None


def _wait(backoff: Callable[[RetryCallState], float]) -> Callable[[RetryCallState], float]:
    """The backoff, or Slack's Retry-After when it gave one."""

    def wait(state: RetryCallState) -> float:
        error = state.outcome.exception() if state.outcome else None
        if isinstance(error, _Transient) and error.retry_after is not None:
            return error.retry_after
        return backoff(state)

    return wait


def post_to_slack(webhook_url: str, text: str, timeout: float = 10.0, backoff: float = 1.0) -> None:
    """Post `text` to an incoming webhook.  `&`, `<`, `>` are escaped as the API requires, which also leaves
    any `<!channel>` from a log inert.  Plain http only to loopback (tests).  `backoff`: the first wait, in
    seconds, before a retry (doubled each time)."""
    url = urllib.parse.urlsplit(webhook_url)
    if url.scheme != "https" and not (url.scheme == "http" and _is_loopback(url.hostname)):
        raise LogsleuthError("--slack-webhook: the URL must start with https://")
    body = json.dumps({"text": escape_slack_api(text)}).encode("utf-8")
    request = urllib.request.Request(
        webhook_url, data=body, headers={"Content-Type": "application/json; charset=utf-8"}, method="POST"
    )
    retrying = Retrying(
        retry=retry_if_exception(lambda error: isinstance(error, _Transient)),
        stop=stop_after_attempt(ATTEMPTS),
        wait=_wait(wait_exponential(multiplier=backoff, max=8 * backoff)),
        reraise=True,
    )
    try:
        retrying(_post_once, request, url.hostname, timeout)
    except _Transient as exc:
        raise LogsleuthError(f"{exc} (tried {ATTEMPTS} times)") from None
