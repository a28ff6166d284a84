"""Posting a Slack report to an incoming webhook (`--slack-webhook URL`).

The only network write logsleuth does, kept out of the renderers: render/slack.py only draws the text.
"""

from __future__ import annotations

import ipaddress
import json
import urllib.error
import urllib.parse
import urllib.request

from logsleuth.errors import LogsleuthError
from logsleuth.render.safety import escape_slack_api


def _is_loopback(host: str | None) -> bool:
    if host == "localhost":
        return True
    try:
        return host is not None and ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def post_to_slack(webhook_url: str, text: str, timeout: float = 10.0) -> None:
    """Post `text` to an incoming webhook.  `&`, `<`, `>` are escaped as the API requires,
    which also leaves any `<!channel>` from a log inert.  Plain http only to loopback (tests)."""
    url = urllib.parse.urlsplit(webhook_url)
    if url.scheme != "https" and not (url.scheme == "http" and _is_loopback(url.hostname)):
        raise LogsleuthError("--slack-webhook: the URL must start with https://")
    body = json.dumps({"text": escape_slack_api(text)}).encode("utf-8")
    request = urllib.request.Request(
        webhook_url, data=body, headers={"Content-Type": "application/json; charset=utf-8"}, method="POST"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            response.read()
    except urllib.error.HTTPError as exc:
        detail = exc.read(200).decode("utf-8", "replace").strip()
        raise LogsleuthError(f"--slack-webhook: Slack answered {exc.code} {detail}".rstrip()) from None
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        raise LogsleuthError(f"--slack-webhook: cannot post to {url.hostname}: {reason}") from None
