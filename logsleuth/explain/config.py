"""Where `--explain` sends the case file, and with which model and key.

The endpoint is the first of: `--llm-url`, $LOGSLEUTH_LLM_URL, `url` under `[explain]` in
~/.config/logsleuth/config.toml ($XDG_CONFIG_HOME).  The model likewise (`--llm-model`, $LOGSLEUTH_LLM_MODEL,
`model`), else the one the server lists first under /models.  The API key is read from the environment
variable the config's `api_key_env` names (default $LOGSLEUTH_LLM_API_KEY), never from the file itself and
never from $OPENAI_API_KEY: a key for one service must not reach a server the user runs.  A `user:password@`
in the URL is taken out of it and sent as basic authentication instead (never with a key as well).  None of
this is read unless --explain is given, so a broken config file never affects a plain diagnose.
"""

from __future__ import annotations

import math
import os
import re
import tomllib
import urllib.parse
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from logsleuth import paths
from logsleuth.errors import UsageError
from logsleuth.explain.errors import ExplainError
from logsleuth.redact import REDACTED

URL_ENV = "LOGSLEUTH_LLM_URL"
MODEL_ENV = "LOGSLEUTH_LLM_MODEL"
DEFAULT_API_KEY_ENV = "LOGSLEUTH_LLM_API_KEY"
SECTION = "explain"
DEFAULT_TIMEOUT = 60.0  # seconds for all of --explain: a local model writing ~500 tokens of JSON
ATTEMPTS = 3  # for a refused connection, a reset, 429 and 5xx; a timeout is not retried
COMPLETIONS_PATH = "/chat/completions"

# The keys `[explain]` may hold, and what each must be.
_KEYS: dict[str, type | tuple[type, ...]] = {"url": str, "model": str, "api_key_env": str, "timeout": (int, float)}


def config_file() -> Path:
    """~/.config/logsleuth/config.toml (or under $XDG_CONFIG_HOME)."""
    return paths.config_dir() / "config.toml"


@dataclass(frozen=True)
class ExplainOptions:
    """`--explain`, `--llm-url`, `--llm-model` as the command line gave them (typer-free)."""

    enabled: bool = False
    url: str | None = None
    model: str | None = None


def explain_options(explain: bool, llm_url: str | None, llm_model: str | None) -> ExplainOptions:
    """The options, refusing `--llm-url` or `--llm-model` without `--explain`: nothing is sent unless --explain
    says so, and a user who named an endpoint should hear that nothing went to it."""
    for name, value in (("--llm-url", llm_url), ("--llm-model", llm_model)):
        if value is not None and not explain:
            raise UsageError(f"{name} needs --explain: nothing is sent to a model unless --explain is given")
    return ExplainOptions(enabled=explain, url=llm_url, model=llm_model)


@dataclass(frozen=True)
class ExplainSettings:
    """Everything a request needs, resolved: where it goes, which model, the key, how long to wait."""

    url: str  # the chat-completions URL itself; the case file goes there and nowhere else
    model: str | None  # None: the first model the server lists
    api_key: str | None = field(default=None, repr=False)  # never printed, never in an error
    timeout: float = DEFAULT_TIMEOUT  # seconds for all of --explain: every request, its whole reply, retries
    # The URL's `user:password@`, taken out of it (never looked up as part of a host name), sent as basic auth.
    basic_auth: tuple[str, str] | None = field(default=None, repr=False)
    attempts: int = ATTEMPTS
    backoff: float = 1.0  # seconds before the first retry, doubled each time (at most 8x)

    @property
    def endpoint(self) -> str:
        return endpoint_label(self.url)

    def without_secrets(self, text: str) -> str:
        """`text` with the key and the URL's password (a user name alone is no secret) replaced by REDACTED: a
        server may echo them, in an error or in the answer itself, in a shape no redaction rule knows."""
        password = self.basic_auth[1] if self.basic_auth else None
        for secret in (self.api_key, password):
            if secret:
                text = text.replace(secret, REDACTED)
        return text


def endpoint_label(url: str) -> str:
    """The URL as shown to the user: scheme, host, port and path, without credentials, query or fragment."""
    parts = urllib.parse.urlsplit(url)
    host = parts.hostname or ""
    if ":" in host:  # an IPv6 address
        host = f"[{host}]"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


def _shown(url: str) -> str:
    """A URL that may not parse, for an error: without `user:password@` (up to the last `@`: a password may
    hold a `/`), query or fragment."""
    return repr(re.sub(r"//[^?#]*@", "//", url).split("?")[0].split("#")[0][:120])


def _split(url: str) -> urllib.parse.SplitResult:
    try:
        parts = urllib.parse.urlsplit(url.strip())
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number
    except ValueError:  # its own message may quote what follows a `:`, a password cut at a `/` among it
        raise ExplainError(f"not a URL: {_shown(url)} (no host, or a port that is not a number)") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ExplainError(f"the endpoint must be an http:// or https:// URL with a host, not {_shown(url)}")
    return parts


def completions_url(url: str) -> str:
    """`http://gpu7:30000`, `…/v1` or `…/v1/chat/completions` (as OpenAI clients take a base URL): the URL of the
    chat-completions endpoint, without the user information (`url_credentials`).  Only http and https, with a
    host."""
    parts = _split(url)
    path = parts.path.rstrip("/")
    if not path.endswith(COMPLETIONS_PATH):
        path = (path or "/v1") + COMPLETIONS_PATH
    netloc = parts.netloc.rpartition("@")[2]  # `user:password@` never goes into a host name (DNS) or a label
    return urllib.parse.urlunsplit((parts.scheme, netloc, path, parts.query, ""))


def url_credentials(url: str) -> tuple[str, str] | None:
    """The URL's `user:password@`, percent-decoded, for basic authentication; None without one."""
    parts = _split(url)
    if not parts.username and not parts.password:  # none, or an empty `@`
        return None
    return urllib.parse.unquote(parts.username or ""), urllib.parse.unquote(parts.password or "")


def read_config(path: Path) -> dict[str, object]:
    """The `[explain]` table of the config file, checked; {} when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    except (OSError, UnicodeDecodeError) as exc:
        raise ExplainError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ExplainError(f"{path}: {exc}") from None
    table = data.get(SECTION, {})
    if not isinstance(table, dict):
        raise ExplainError(f"{path}: [{SECTION}] must be a table")
    for key, value in table.items():
        expected = _KEYS.get(key)
        if expected is None:
            raise ExplainError(f"{path}: [{SECTION}] has no key {key!r} (known: {', '.join(_KEYS)})")
        if not isinstance(value, expected) or isinstance(value, bool):
            raise ExplainError(f"{path}: [{SECTION}] {key} has the wrong type ({type(value).__name__})")
    return table


def _first(*values: object) -> str | None:
    return next((value.strip() for value in values if isinstance(value, str) and value.strip()), None)


def resolve_settings(
    options: ExplainOptions, environ: Mapping[str, str] | None = None, config_file: Path | None = None
) -> ExplainSettings:
    """The settings for `options`, from the command line, the environment and the config file (in that order).
    `config_file=None` reads none (tests); the CLI passes `config_file()`."""
    environ = os.environ if environ is None else environ
    table = read_config(config_file) if config_file is not None else {}
    where = config_file or "the config file"
    url = _first(options.url, environ.get(URL_ENV), table.get("url"))
    if url is None:
        raise ExplainError(
            f"no endpoint: give --llm-url URL, set {URL_ENV}, or set url under [{SECTION}] in {where}; "
            "nothing was sent"
        )
    key_env = _first(table.get("api_key_env")) or DEFAULT_API_KEY_ENV
    api_key = environ.get(key_env) or None
    if api_key is None and "api_key_env" in table:
        raise ExplainError(f"{where} names {key_env} as the API key's variable, but it is not set; nothing was sent")
    timeout = float(table.get("timeout", DEFAULT_TIMEOUT))  # type: ignore[arg-type]
    if not math.isfinite(timeout) or timeout <= 0:
        raise ExplainError(f"{where}: [{SECTION}] timeout must be a number of seconds above 0")
    credentials = url_credentials(url)
    if credentials is not None and api_key is not None:
        raise ExplainError(
            f"the endpoint's URL holds a user and password and {key_env} holds an API key: give one of them, "
            "not both; nothing was sent"
        )
    return ExplainSettings(
        url=completions_url(url),
        model=_first(options.model, environ.get(MODEL_ENV), table.get("model")),
        api_key=api_key,
        timeout=timeout,
        basic_auth=credentials,
    )
