"""Remove secrets (and, on request, identities) from every string of a `Report`.

Runs before any renderer, so no format can leak what it never sees.  SGLang prints
`server_args=ServerArgs(... api_key='...')` in clear text (FIELD-NOTES §7), and launch
commands, env dumps and URLs carry tokens too.  The walk is generic over the frozen
dataclasses, so a field added to the model later is covered without touching this file.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import Any, TypeVar

from logsleuth.models import Report

REDACTED = "<redacted>"
T = TypeVar("T")

# Field, flag and variable names whose value is a secret: api_key, admin_api_key, hf_token,
# HF_TOKEN, --api-key, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, password, ...
# `max_total_num_tokens` and `tokenizer_path` are not secrets: the secret word must end the name.
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_\-])*(?:api[_\-]?key|access[_\-]?key|token|secret|passw(?:or)?d|credentials?)"
)
_SECRET_NAME_RE = re.compile(rf"^-*{_SECRET_NAME}$", re.IGNORECASE)
_NOT_A_SECRET = {"none", "null", "''", '""', "", REDACTED, "true", "false"}
# `#token: 1234` in SGLang batch lines is a count; a secret is never just a number.
_NUMBER = re.compile(r"^[\d.,]+$")


def _is_secret_value(value: str) -> bool:
    value = value.strip("'\"")
    return value.lower() not in _NOT_A_SECRET and not _NUMBER.match(value)


_RULES: list[tuple[re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    # name=value, name: value, "name": "value", name='value' (server_args reprs, env dumps, JSON)
    (
        re.compile(
            rf"""(?P<key>\b{_SECRET_NAME}\b["']?\s*[=:]\s*)(?P<q>["']?)(?P<value>[^\s"',;)}}\]]+)(?P=q)""",
            re.IGNORECASE,
        ),
        lambda m: f"{m['key']}{m['q']}{REDACTED}{m['q']}" if _is_secret_value(m["value"]) else m.group(0),
    ),
    # --api-key VALUE, --hf-token VALUE (a launch command)
    (
        re.compile(
            rf"(?P<key>(?<!\S)--{_SECRET_NAME}\s+)(?P<q>[\"']?)(?P<value>[^\s\"']+)(?P=q)", re.IGNORECASE
        ),
        lambda m: f"{m['key']}{m['q']}{REDACTED}{m['q']}" if not m["value"].startswith("-") else m.group(0),
    ),
    (
        re.compile(r"(?i)\b(authorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[^\s\"',]+"),
        lambda m: m[1] + REDACTED,
    ),
    (re.compile(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"), lambda m: m[1] + REDACTED),
    # Token shapes, wherever they appear.
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), lambda m: REDACTED),
    (re.compile(r"\bsk-(?:or-|proj-|ant-)?[A-Za-z0-9_\-]{16,}"), lambda m: REDACTED),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), lambda m: REDACTED),
    # scheme://user:password@host
    (
        re.compile(r"(\b[a-z][a-z0-9+.\-]*://[^\s:/@]*:)[^\s/@]+@", re.IGNORECASE),
        lambda m: f"{m[1]}{REDACTED}@",
    ),
]


def redact_secrets(text: str) -> str:
    for pattern, replacement in _RULES:
        text = pattern.sub(replacement, text)
    return text


# Fields holding (name, value) pairs, where the name says whether the value is a secret.
_NAME_VALUE_FIELDS = {"server_args", "env"}


def _redact_pairs(
    pairs: tuple[tuple[str, str], ...], transform: Callable[[str], str]
) -> tuple[tuple[str, str], ...]:
    return tuple(
        (
            transform(name),
            REDACTED if _SECRET_NAME_RE.match(name) and _is_secret_value(value) else transform(value),
        )
        for name, value in pairs
    )


def _walk(value: T, transform: Callable[[str], str]) -> T:
    """Apply `transform` to every string in nested frozen dataclasses and tuples."""
    result: Any
    if isinstance(value, str):
        result = transform(value)
    elif isinstance(value, tuple):
        result = tuple(_walk(item, transform) for item in value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        changes = {
            f.name: _redact_pairs(getattr(value, f.name), transform)
            if f.name in _NAME_VALUE_FIELDS and transform is redact_secrets
            else _walk(getattr(value, f.name), transform)
            for f in dataclasses.fields(value)
            if f.init
        }
        result = dataclasses.replace(value, **changes)
    else:
        result = value
    return result


class Anonymizer:
    """Stable placeholders: the same host, IP or user gets the same name throughout one report."""

    _IPV4 = re.compile(
        r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])"
    )
    _HOME = re.compile(r"(/home/|/Users/|/export/home/|[A-Za-z]:\\Users\\)([^/\\\s'\"]+)")
    _USER_AT = re.compile(
        r"(?<![\w.\-])([A-Za-z_][\w.\-]*)@(?=[A-Za-z0-9][\w.\-]*[:/\s]|[A-Za-z0-9][\w.\-]*$)"
    )
    _URL_USER = re.compile(r"(\b[a-z][a-z0-9+.\-]*://)([^\s:/@]+)(?=(?::[^\s/@]*)?@)", re.IGNORECASE)
    _KEEP_IPS = {"127.0.0.1", "0.0.0.0"}

    def __init__(self, hosts: list[str]) -> None:
        self.names: dict[tuple[str, str], str] = {}
        for host in hosts:
            self._placeholder(self._kind(host), host)
        # Longest first, so `gpu-node-12` is not replaced as `gpu-node-1` + `2`.
        self._host_pattern = (
            re.compile(
                "|".join(
                    rf"(?<![\w\-.]){re.escape(h)}(?![\w\-])" for h in sorted(hosts, key=len, reverse=True)
                )
            )
            if hosts
            else None
        )

    def _kind(self, host: str) -> str:
        return "ip" if self._IPV4.fullmatch(host) else "host"

    def _placeholder(self, kind: str, original: str) -> str:
        key = (kind, original)
        if key not in self.names:
            count = sum(1 for known_kind, _ in self.names if known_kind == kind)
            self.names[key] = f"{kind}-{count + 1}"
        return self.names[key]

    def __call__(self, text: str) -> str:
        if self._host_pattern is not None:
            text = self._host_pattern.sub(lambda m: self._placeholder(self._kind(m[0]), m[0]), text)
        text = self._IPV4.sub(
            lambda m: m[0] if m[0] in self._KEEP_IPS else self._placeholder("ip", m[0]), text
        )
        text = self._HOME.sub(lambda m: m[1] + self._placeholder("user", m[2]), text)
        text = self._URL_USER.sub(lambda m: m[1] + self._placeholder("user", m[2]), text)
        return self._USER_AT.sub(lambda m: self._placeholder("user", m[1]) + "@", text)


def _known_hosts(report: Report) -> list[str]:
    hosts: list[str] = []
    for group in report.failures:
        hosts.extend(group.hosts)
        if group.failure.meta.host:
            hosts.append(group.failure.meta.host)
    for source in report.sources:
        # `user@host:path` / `host:path` sources name their host.
        match = re.match(r"^(?:[^@/\s]+@)?([A-Za-z0-9][\w.\-]*):(?!//)", source.name)
        if match and not re.fullmatch(r"[A-Za-z]", match[1]):  # not a Windows drive letter
            hosts.append(match[1])
    return [host for host in dict.fromkeys(hosts) if host not in Anonymizer._KEEP_IPS and host != "localhost"]


def redact_report(report: Report, *, secrets: bool = True, anonymize: bool = False) -> Report:
    """A copy of `report` with secrets replaced by `<redacted>` and, with `anonymize`,
    host names, IP addresses and user names replaced by `host-1`, `ip-1`, `user-1`."""
    if secrets:
        report = _walk(report, redact_secrets)
    if anonymize:
        report = _walk(report, Anonymizer(_known_hosts(report)))
    return report
