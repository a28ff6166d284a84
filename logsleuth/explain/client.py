"""One question to an OpenAI-compatible server: POST the case file to /v1/chat/completions, read the answer.

Standard library only (urllib): no new dependency for an opt-in feature.  The request goes to the URL the
user named and nowhere else: environment proxies are not used and redirects are not followed (a redirect
would send the case file to a host the user never named).  The structured answer is asked for with
`response_format` json_schema; a server that rejects that (400/422) is asked again with json_object, then
with none, and the reply is parsed out of the text (answer.read_answer).

Retries (tenacity): a refused or reset connection, 429 and 5xx are tried `attempts` times with a bounded
exponential backoff.  A timeout is not retried: a model too slow once is as slow again, and the user waits.
Every failure is one ExplainError line naming the endpoint; the API key never appears in one.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

from tenacity import Retrying, retry_if_exception_type, stop_after_attempt, wait_exponential

from logsleuth import __version__
from logsleuth.explain.answer import ANSWER_SCHEMA, Answer, read_answer
from logsleuth.explain.config import COMPLETIONS_PATH, ExplainSettings
from logsleuth.explain.errors import ExplainError
from logsleuth.explain.prompt import chat_messages

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


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # urllib then raises the 3xx as an HTTPError


_OPENER = urllib.request.build_opener(urllib.request.ProxyHandler({}), _NoRedirects())


def _without_key(text: str, settings: ExplainSettings) -> str:
    """A server may echo the request's headers in an error: the key never reaches a message."""
    return text.replace(settings.api_key, "REDACTED") if settings.api_key else text


def _http_error(exc: urllib.error.HTTPError, settings: ExplainSettings) -> Exception:
    if 300 <= exc.code < 400:
        location = exc.headers.get("Location", "elsewhere")
        return ExplainError(
            f"{settings.endpoint}: the server redirects to {location[:120]}; not followed (the case file goes only "
            "to the URL you named: give that one)"
        )
    detail = " ".join(exc.read(300).decode("utf-8", "replace").split())
    message = _without_key(f"the server answered {exc.code} {exc.reason}: {detail}".rstrip(": "), settings)
    if exc.code == 429 or exc.code >= 500:
        return _Transient(message)
    if exc.code in (400, 422):
        return _Rejected(message)
    return ExplainError(f"{settings.endpoint}: {message}")  # 401, 403, 404: asking again changes nothing


def _timed_out(settings: ExplainSettings) -> ExplainError:
    return ExplainError(
        f"{settings.endpoint}: no answer within {settings.timeout:g} s (raise timeout under [explain] in the config file)"
    )


def _exchange(request: urllib.request.Request, settings: ExplainSettings) -> bytes:
    """One request; its reply's body, or the error it becomes."""
    try:
        with _OPENER.open(request, timeout=settings.timeout) as response:
            body: bytes = response.read(MAX_REPLY_BYTES + 1)
    except urllib.error.HTTPError as exc:
        raise _http_error(exc, settings) from None
    except TimeoutError:
        raise _timed_out(settings) from None
    except urllib.error.URLError as exc:
        if isinstance(exc.reason, TimeoutError):
            raise _timed_out(settings) from None
        reason = getattr(exc.reason, "strerror", None) or exc.reason
        raise _Transient(f"cannot connect: {str(reason).lower()}") from None
    except OSError as exc:  # reset, broken pipe
        raise _Transient(f"the connection failed: {exc.strerror or exc}") from None
    if len(body) > MAX_REPLY_BYTES:
        raise ExplainError(f"{settings.endpoint}: the reply is larger than {MAX_REPLY_BYTES >> 20} MiB: not an answer")
    return body


def _with_retries(request: urllib.request.Request, settings: ExplainSettings) -> bytes:
    retrying = Retrying(
        retry=retry_if_exception_type(_Transient),
        stop=stop_after_attempt(settings.attempts),
        wait=wait_exponential(multiplier=settings.backoff, max=8 * settings.backoff),
        reraise=True,
    )
    try:
        return retrying(_exchange, request, settings)
    except _Transient as exc:
        tries = f"tried {settings.attempts} times" if settings.attempts > 1 else "tried once"
        raise ExplainError(f"{settings.endpoint}: {exc} ({tries})") from None


def _request(url: str, settings: ExplainSettings, payload: dict[str, Any] | None = None) -> urllib.request.Request:
    headers = {"Accept": "application/json", "User-Agent": f"logsleuth/{__version__}"}
    if settings.api_key:
        headers["Authorization"] = f"Bearer {settings.api_key}"
    data = None
    if payload is not None:
        headers["Content-Type"] = "application/json"
        data = json.dumps(payload).encode("utf-8")
    return urllib.request.Request(url, data=data, headers=headers, method="POST" if data else "GET")


def _reply(body: bytes, settings: ExplainSettings) -> dict[str, Any]:
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    if not isinstance(data, dict):
        start = body[:60].decode("utf-8", "replace")
        raise ExplainError(f"{settings.endpoint}: the reply is not an OpenAI-compatible JSON response: {start!r}")
    return data


def served_model(settings: ExplainSettings) -> str:
    """The model the server lists first under /models (SGLang and vLLM serve one), for a user who named none."""
    url = settings.url.split("?")[0].removesuffix(COMPLETIONS_PATH) + "/models"
    data = _reply(_with_retries(_request(url, settings), settings), settings).get("data")
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
    model = settings.model or served_model(settings)
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
            data = _reply(_with_retries(_request(settings.url, settings, payload), settings), settings)
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
