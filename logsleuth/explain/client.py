"""One question to an OpenAI-compatible server: POST the case file to /v1/chat/completions, read the answer.

Standard library only (http.client, through logsleuth.http_exchange): no new dependency for an opt-in feature.
The request goes to the URL the user named and nowhere else: environment proxies are not used and redirects
are not followed (a redirect would send the case file to a host the user never named).  The configured timeout
is one deadline for all of it (every request, every byte of every reply, every retry), and a reply that is not
well-formed HTTP is one line, never retried.
The structured answer is asked for with `response_format` json_schema; a server that rejects that (400/422) is
asked again with json_object, then with none, and the reply is parsed out of the text (answer.read_answer).

Retries (tenacity): a refused or reset connection, 429 and 5xx are tried `attempts` times with a bounded
exponential backoff.  A deadline passed is not retried: a model too slow once is as slow again, and the user
waits.  Every failure is one ExplainError line naming the endpoint; the API key never appears in one.
"""

from __future__ import annotations

import base64
import json
import time
import urllib.parse
from dataclasses import dataclass, field
from typing import Any

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from logsleuth import __version__
from logsleuth.explain.answer import ANSWER_SCHEMA, Answer, read_answer
from logsleuth.explain.config import COMPLETIONS_PATH, ExplainSettings
from logsleuth.explain.errors import ExplainError
from logsleuth.explain.prompt import chat_messages
from logsleuth.http_exchange import DeadlinePassed, ExchangeError, Reply, Unreachable, exchange

MAX_REPLY_BYTES = 1 << 20  # an answer is a few KiB; a bigger reply is not one
MAX_TOKENS = 2048  # room for the JSON answer, and for a reasoning model's thoughts before it
# Tried in order; a server that rejects one (400/422) is asked with the next.  None: no response_format.
RESPONSE_FORMATS: tuple[dict[str, Any] | None, ...] = (
    {"type": "json_schema", "json_schema": {"name": "logsleuth_explanation", "strict": True, "schema": ANSWER_SCHEMA}},
    {"type": "json_object"},
    None,
)


class _Transient(Exception):
    """Worth another try: no connection, a reset, 429, 5xx."""


class _Rejected(Exception):
    """The server refused the request as malformed (400/422): perhaps the response_format it does not take."""


@dataclass(frozen=True)
class _Request:
    """One request as http_exchange sends it."""

    url: str
    method: str
    headers: dict[str, str] = field(repr=False)  # the key, when there is one
    body: bytes | None


def _http_error(reply: Reply, settings: ExplainSettings) -> Exception:
    if 300 <= reply.status < 400:
        location = urllib.parse.urlsplit(reply.headers.get("Location", ""))
        where = f"{location.scheme}://{location.hostname}" if location.hostname else "elsewhere"
        return ExplainError(
            f"{settings.endpoint}: the server redirects to {where[:120]!r}; not followed (the case file goes only "
            "to the URL you named: give that one)"
        )
    detail = " ".join(reply.body[:300].decode("utf-8", "replace").split())
    message = settings.without_secrets(f"the server answered {reply.status} {reply.reason}: {detail}".rstrip(": "))
    if reply.status == 429 or reply.status >= 500:
        return _Transient(message)
    if reply.status in (400, 422):
        return _Rejected(message)
    return ExplainError(f"{settings.endpoint}: {message}")  # 401, 403, 404: asking again changes nothing


def _timed_out(settings: ExplainSettings) -> ExplainError:
    return ExplainError(
        f"{settings.endpoint}: no answer within {settings.timeout:g} s (raise timeout under [explain] in the config "
        "file)"
    )


def _exchange(request: _Request, settings: ExplainSettings, deadline: float) -> bytes:
    """One request; its reply's body, or the error it becomes.  `deadline` (time.monotonic) holds for the whole
    of --explain, so a server that drips its replies a byte at a time, or fails slowly, cannot hold the report."""
    left = deadline - time.monotonic()
    if left <= 0:
        raise _timed_out(settings)
    try:
        reply = exchange(request.url, method=request.method, body=request.body, headers=request.headers,
                         deadline_seconds=left, max_body=MAX_REPLY_BYTES)
    except DeadlinePassed:
        raise _timed_out(settings) from None
    except Unreachable as exc:
        raise _Transient(str(exc)) from None
    except ExchangeError as exc:  # a malformed reply, TLS: the same again if asked again
        raise ExplainError(f"{settings.endpoint}: {exc}") from None
    if not 200 <= reply.status < 300:
        raise _http_error(reply, settings)
    return reply.body


def _with_retries(request: _Request, settings: ExplainSettings, deadline: float) -> bytes:
    retrying = Retrying(
        retry=retry_if_exception_type(_Transient),
        stop=stop_after_attempt(settings.attempts),
        wait=wait_exponential(multiplier=settings.backoff, max=8 * settings.backoff),
        reraise=True,
    )
    try:
        return retrying(_exchange, request, settings, deadline)
    except _Transient as exc:
        tries = f"tried {settings.attempts} times" if settings.attempts > 1 else "tried once"
        raise ExplainError(f"{settings.endpoint}: {exc} ({tries})") from None


def _request(url: str, settings: ExplainSettings, payload: dict[str, Any] | None = None) -> _Request:
    headers = {"Accept": "application/json", "User-Agent": f"logsleuth/{__version__}"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    elif settings.basic_auth is not None:  # the URL's `user:password@`, taken out of it (config.py)
        pair = ":".join(settings.basic_auth).encode("utf-8")
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    data = None
    if payload is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(payload).encode("utf-8")
    return _Request(url, "POST" if data else "GET", headers, data)


def _reply(body: bytes, settings: ExplainSettings) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (ValueError, RecursionError):  # not JSON, not UTF-8, a number too long, nested too deeply
        data = None
    if not isinstance(data, dict):
        start = body[:60].decode("utf-8", "replace")
        raise ExplainError(f"{settings.endpoint}: the reply is not an OpenAI-compatible JSON response: {start!r}")
    return data


def served_model(settings: ExplainSettings, deadline: float | None = None) -> str:
    """The model the server lists first under /models (SGLang and vLLM serve one), for a user who named none."""
    url = settings.url.split("?")[0].removesuffix(COMPLETIONS_PATH) + "/models"
    deadline = time.monotonic() + settings.timeout if deadline is None else deadline
    data = _reply(_with_retries(_request(url, settings), settings, deadline), settings).get("data")
    first = data[0] if isinstance(data, list) and data and isinstance(data[0], dict) else {}
    name = first.get("id")
    if not isinstance(name, str) or not name:
        raise ExplainError(f"{settings.endpoint}: no model named and the server lists none: give --llm-model NAME")
    return name


def _content(data: dict[str, Any], settings: ExplainSettings) -> str:
    try:
        choice = data["choices"][0]
        content = choice["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise ExplainError(f"{settings.endpoint}: the reply is not an OpenAI-compatible chat completion") from None
    if not isinstance(content, str) or not content.strip():
        raise ExplainError(f"{settings.endpoint}: the model answered nothing (finish reason {choice.get('finish_reason')})")
    return content


def ask_model(case_text: str, settings: ExplainSettings) -> tuple[str, Answer]:
    """Send the case file; the model's name (as the server says it) and its checked answer."""
    deadline = time.monotonic() + settings.timeout  # for all of it: the model's name, each format, each retry
    model = settings.model or served_model(settings, deadline)
    rejected: _Rejected | None = None
    for response_format in RESPONSE_FORMATS:
        payload: dict[str, Any] = {
            "model": model,
            "messages": chat_messages(case_text),
            "temperature": 0,
            "max_tokens": MAX_TOKENS,
        }
        if response_format is not None:
            payload["response_format"] = response_format
        try:
            data = _reply(_with_retries(_request(settings.url, settings, payload), settings, deadline), settings)
        except _Rejected as exc:
            rejected = exc
            continue
        answered_by = data.get("model")
        name = answered_by if isinstance(answered_by, str) and answered_by else model
        content = _content(data, settings)
        try:
            return name, read_answer(content)
        except ExplainError as exc:  # which model answered so, and where
            raise ExplainError(f"{settings.endpoint}: {name}: {exc.detail}") from None
    raise ExplainError(f"{settings.endpoint}: {rejected}")
