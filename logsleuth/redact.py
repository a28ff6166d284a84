"""Remove secrets (and, on request, identities) from every string of a `Report`.

Runs before any renderer, so no format can leak what it never sees.  SGLang prints
`server_args=ServerArgs(... api_key='...')` in clear text (FIELD-NOTES §7), and launch
commands, env dumps and URLs carry tokens too.  The walk is generic over the frozen
dataclasses, so a field added to the model later is covered without touching this file.
"""

from __future__ import annotations

import dataclasses
import functools
import re
import shlex
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from logsleuth.lazyre import compile_lazily
from logsleuth.models import FlagOp, Report

# A plain shell word: a pasted command stays runnable (`<redacted>` was a redirection).
REDACTED = "REDACTED"
T = TypeVar("T")

# Field, flag and variable names whose value is a secret: api_key, admin_api_key, hf_token,
# HF_TOKEN, --api-key, OPENAI_API_KEY, AWS_SECRET_ACCESS_KEY, PGPASSWORD, Pwd (ODBC), passphrase, cookie, ...
# `max_total_num_tokens` and `tokenizer_path` are not secrets: the secret word must end the name.
_SECRET_NAME = (
    r"(?:[A-Za-z0-9]+[_\-])*(?:api[_\-]?key|access[_\-]?key|token|secret|passphrase|[A-Za-z0-9]*passw(?:or)?d"
    r"|[A-Za-z0-9]*pwd|credentials?|cookies?)"
)
_SECRET_NAME_RE = compile_lazily(rf"^-*{_SECRET_NAME}$", re.IGNORECASE)
_NOT_A_SECRET = {"none", "null", "", REDACTED.lower(), "true", "false"}
# `#token: 1234` in SGLang batch lines is a count; a secret is never just a number.
_NUMBER = compile_lazily(r"^[\d.,]+$")
# `"$HF_TOKEN"`, `${API_KEY}`: a reference to a secret, not the secret (and our own command placeholder).
_VARIABLE = compile_lazily(r"^\$\{?[A-Za-z_][A-Za-z0-9_]*\}?$")
# After a secret flag, the next word is its value unless it is the next flag (`--api-key --port 1`
# is a missing value).  A value may start with one dash (`--api-key -Dash…`).
_LONG_FLAG = compile_lazily(r"^--[a-z][a-z0-9]*(?:-[a-z0-9]+)*(?:=|$)")


# PWD and OLDPWD hold the working directory (an env dump prints them), not a password.
_WORKING_DIRECTORY = {"pwd", "oldpwd"}
# A shell continuation: a backslash that ends a line (the value of a flag may be on the next line).
_CONTINUATION = r"\\\n"


def _is_secret_value(value: str, name: str = "") -> bool:
    value = value.strip("'\"")
    if name.lstrip("-").lower() in _WORKING_DIRECTORY and value.startswith(("/", "~")):
        return False
    return value.lower() not in _NOT_A_SECRET and not _NUMBER.match(value) and not _VARIABLE.match(value)


def _quoted_or_word(stop: str) -> str:
    """A value: single- or double-quoted (escapes allowed, spaces and all), or a bare word up to `stop`."""
    return rf"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[^\s"'{stop}]+"""


# One item of a list value (`'api_key': ['k1', 'k2']`, vLLM's several keys).
_LIST_ITEM = compile_lazily(r"""'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*"|[^\s,\[\]'"]+""")


def _replace_value(value: str, name: str = "") -> str:
    """The value's quotes are kept, so the text around it still parses (JSON, reprs, shell); so is a colon
    that ends it (`…/api_key=x.log: no such file`).  A list keeps its brackets: each item is replaced."""
    if value.startswith("["):
        return _LIST_ITEM.sub(lambda item: _replace_value(item[0], name), value)
    if not _is_secret_value(value, name):
        return value
    if value[:1] in ("'", '"') and len(value) > 1 and value[-1] == value[0]:
        return f"{value[0]}{REDACTED}{value[0]}"
    return REDACTED + (":" if value.endswith(":") else "")


# Token shapes: (prefix, characters of the rest, shortest rest, text every token holds, lower-cased).  Found
# anywhere, and also when a log wrapped them: the prefix at the end of one line, the rest at the start of the next.
_TOKEN_SHAPES = (
    ("hf_", "A-Za-z0-9", 20, ("hf_",)),  # Hugging Face
    ("sk-(?:or-|proj-|ant-)?", r"A-Za-z0-9_\-", 16, ("sk-",)),  # OpenAI, OpenRouter, Anthropic
    ("gh[pousr]_", "A-Za-z0-9", 20, ("gh",)),  # GitHub tokens
    ("github_pat_", "A-Za-z0-9_", 20, ("github_pat_",)),  # GitHub fine-grained tokens
    ("xox[abeoprs]-", r"A-Za-z0-9\-", 10, ("xox",)),  # Slack tokens
    ("(?:AKIA|ASIA)", "0-9A-Z", 16, ("akia", "asia")),  # AWS access key ids
    ("glpat-", r"A-Za-z0-9_\-", 20, ("glpat-",)),  # GitLab personal access tokens
    ("AIza", r"0-9A-Za-z_\-", 30, ("aiza",)),  # Google API keys (`?key=AIza…`)
    ("eyJ", r"A-Za-z0-9_\-.", 20, ("eyj",)),  # JWTs: base64url of `{"`, three dot-separated parts
)
_TOKENS = [
    (needles, compile_lazily(rf"\b{prefix}[{chars}]{{{shortest},}}"))
    for prefix, chars, shortest, needles in _TOKEN_SHAPES
]
# The record header a raw log line may start with, between the two parts of a wrapped token: SGLang's
# `[2026-03-14 09:26:54 TP0] `, vLLM's `WARNING 03-25 21:13:53 [file.py:12] `, after vLLM's `(VllmWorker …) `.
_RECORD_HEADER = r"(?:\([^)\n]{0,80}\)\s)?(?:[A-Z]+\s+\d\d-\d\d\s[\d:.]+\s)?\[[^\]\n]{0,80}\]\s?"
_WRAPPED_TOKENS = [
    (compile_lazily(rf"\b{prefix}(?P<rest>[{chars}]*)\n(?P<header>{_RECORD_HEADER})?(?P<tail>[{chars}]+)"), shortest)
    for prefix, chars, shortest, _ in _TOKEN_SHAPES
]
# A private key, on one line or across lines; a block cut off before its END line runs to the end.
_PRIVATE_KEY = compile_lazily(
    r"(?P<begin>-----BEGIN (?P<kind>[A-Z0-9 ]*PRIVATE KEY[A-Z0-9 ]*)-----)(?P<body>.*?)"
    r"(?P<end>-----END (?P=kind)-----|\Z)",
    re.DOTALL,
)
_LINE_CONTENT = compile_lazily(r"\S(?:[^\n]*\S)?")


def _redact_private_key(match: re.Match[str]) -> str:
    """Each line of the key becomes `REDACTED`, so a block spread over several log lines keeps its lines."""
    return match["begin"] + _LINE_CONTENT.sub(REDACTED, match["body"]) + match["end"]


def _multiline_rules(text: str) -> str:
    """The rules that look across line ends: private-key blocks and wrapped tokens."""
    if "PRIVATE KEY" in text:
        text = _PRIVATE_KEY.sub(_redact_private_key, text)
    if "\n" in text:
        for pattern, shortest in _WRAPPED_TOKENS:
            text = pattern.sub(functools.partial(_redact_wrapped, shortest=shortest), text)
    return text


def _redact_wrapped(match: re.Match[str], shortest: int) -> str:
    if len(match["rest"]) + len(match["tail"]) < shortest:
        return match.group(0)
    return f"{REDACTED}\n{match['header'] or ''}{REDACTED}"


_VALUE_STOP = ",;)}\\]"
# Between a secret's name or flag and its value: a shell continuation may stand there (`--api-key \` then the
# value on the next line); a value never starts with a continuation that has nothing after it.
_GAP = rf"(?:\s|{_CONTINUATION})"
_NO_CONTINUATION = r"(?!\\(?:\n|$))"
# scheme:// or, JSON-escaped, scheme:\/\/
_SCHEME = r"\b[a-z][a-z0-9+.\-]*:(?:\\?/){2}"
# Each rule: (texts one of which a match holds, lower-cased: the rule runs only on a line that has one; the
# pattern; the replacement).  SGLang's batch lines all say `#token:`: most rules skip them.
_LINE_RULES: list[tuple[tuple[str, ...], re.Pattern[str], Callable[[re.Match[str]], str]]] = [
    # Cookie headers: the whole header value (`a=1; b=2` is two secrets)
    (("cookie",), compile_lazily(r"(?i)\b((?:set-)?cookie\s*:[ \t]*)(?=[^\s'\"])[^\n]+"), lambda m: m[1] + REDACTED),
    (
        ("authorization",),
        compile_lazily(r"(?i)\b(authorization\s*[:=]\s*[\"']?(?:bearer|basic|token)\s+)[^\s\"',]+"),
        lambda m: m[1] + REDACTED,
    ),
    (("bearer",), compile_lazily(r"(?i)\b(bearer\s+)[A-Za-z0-9._~+/\-]{8,}=*"), lambda m: m[1] + REDACTED),
    # name=value, name: value, "name": "value", name='two words', name=['k1', 'k2'] (server_args reprs, vLLM's
    # non-default args, env dumps, JSON)
    (
        ("key", "token", "secret", "passphrase", "passw", "pwd", "credential", "cookie"),
        compile_lazily(
            rf"""(?P<key>\b(?P<name>{_SECRET_NAME})\b["']?\s*[=:]{_GAP}*){_NO_CONTINUATION}"""
            rf"""(?P<value>\[[^\[\]\n]*\]|{_quoted_or_word(_VALUE_STOP)})""",
            re.IGNORECASE,
        ),
        lambda m: m["key"] + _replace_value(m["value"], m["name"]),
    ),
    # --api-key VALUE (an argparse message, a command line quoted in prose)
    (
        ("--",),
        compile_lazily(
            rf"(?P<key>(?<!\S)--(?P<name>{_SECRET_NAME})(?:{_GAP}+|={_CONTINUATION}?)){_NO_CONTINUATION}"
            rf"(?!--[a-z][a-z0-9-]*(?:[\s=]|$))(?P<value>{_quoted_or_word('')})",
            re.IGNORECASE,
        ),
        lambda m: m["key"] + _replace_value(m["value"], m["name"]),
    ),
    # An Azure SAS signature (`&sig=…`); not a signal (`sig=SIGTERM`, `sig=15`)
    (
        ("sig=",),
        compile_lazily(r"(?<![\w\-])(?P<key>sig=)(?!SIG[A-Z])(?P<value>[^\s&\"'<>,;)#]+)", re.IGNORECASE),
        lambda m: m["key"] + _replace_value(m["value"]),
    ),
    *((needles, pattern, lambda m: REDACTED) for needles, pattern in _TOKENS),
    # Slack webhooks, over http or https, JSON-escaped (`https:\/\/hooks.slack.com\/services\/…`) or bare
    (
        ("hooks.slack",),
        compile_lazily(
            r"(?i)((?:\bhttps?:(?:\\?/){2})?\bhooks\.slack\.com\\?/(?:services|workflows|triggers)\\?/)[^\s\"'<>]+"
        ),
        lambda m: m[1] + REDACTED,
    ),
    # scheme://user:password@host: the password (`/` and `@` included) runs to the last @ before the host; a
    # port (`https://host:8080/a@b`) is not a password
    (
        (":/", ":\\/"),
        compile_lazily(
            rf"({_SCHEME}[^\s:/@\\]*:)(?!\d+(?:[/?#\s\\]|$))[^\s\"'<>]*@(?=[^\s@\"'<>]*(?:[\s\"'<>]|$))",
            re.IGNORECASE,
        ),
        lambda m: f"{m[1]}{REDACTED}@",
    ),
    # scp-style user:password@host (rsync, git, scp): the password runs to the last @ before the host; not an
    # image's tag and digest (`sglang:v0.5.9@sha256:…`)
    (
        ("@",),
        compile_lazily(
            r"(?<![\w/:.@\\\-])(?P<user>[A-Za-z_][\w.\-]*:)(?!/)(?P<value>[^\s\"'<>]+)@(?!sha\d+:)"
            r"(?=[A-Za-z0-9][\w\-]*(?:\.[\w\-]+)*(?:[:/\s,;)\"']|$))"
        ),
        lambda m: f"{m['user']}{_replace_value(m['value'])}@",
    ),
]


def _line_rules(text: str) -> str:
    lowered = text.lower()
    for needles, pattern, replacement in _LINE_RULES:
        if any(needle in lowered for needle in needles):
            text = pattern.sub(replacement, text)
            lowered = text.lower()
    return text


# --- commands: word by word, so that every replacement is a whole shell word ---------------------------

# One shell word, quotes and escapes included; an unterminated quote (a cut-off line) runs to the end.  A
# backslash before a newline is a continuation, space between words; one that ends the text is a word, `\`.
_WORD = compile_lazily(r"""(?:[^\s'"\\]+|\\(?!\n).?|'[^']*(?:'|$)|"(?:[^"\\]|\\.)*(?:"|$))+""")
_CUT_CONTINUATION = "\\"
# Where a flag's values end: the next option, or shell syntax (`> log`, `2>&1`, `|`, `;`, `&&`, a comment).
_SHELL_SYNTAX = compile_lazily(r"^(?:[|&;()<>#]|\d*[<>])")
_ASSIGNMENT = compile_lazily(r"^[A-Za-z_][A-Za-z0-9_]*=")
# Where a launch command starts inside a log line (`+ python -m sglang.launch_server …` from `bash -x`).
# An engine's container image (`docker run … vllm/vllm-openai:v0.9.0 --model …`) starts one too.
_LAUNCH = compile_lazily(
    r"(?<!\S)(?:\S*/)?(?:python[\d.]*\s+(?:-\S+\s+)*?-m\s+(?:sglang|vllm)\b|(?:sglang|vllm)\s+serve\b"
    r"|(?:vllm/vllm-openai|lmsysorg/sglang)(?::\S+)?(?=\s))"
)
# Names that say what a secret is but not whose: the engine's name goes in front (SGLANG_API_KEY).
_GENERIC_WORDS = {
    "API", "KEY", "APIKEY", "ADMIN", "ACCESS", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL",
    "CREDENTIALS", "COOKIE", "COOKIES",
}


def _unquote(word: str) -> str:
    try:
        parts = shlex.split(word)
    except ValueError:  # an unterminated quote
        return word.strip("'\"")
    return parts[0] if len(parts) == 1 else word


def _variable_for(flag: str, engine: str, number: int = 1) -> str:
    """`--hf-token` -> HF_TOKEN; `--api-key` -> SGLANG_API_KEY (VLLM_API_KEY for vLLM, which reads that); the
    second value of a flag that takes several (vLLM's `--api-key k1 k2`) -> VLLM_API_KEY_2."""
    variable = re.sub(r"\W", "_", flag.lstrip("-")).upper()
    variable = f"{engine}_{variable}" if set(variable.split("_")) <= _GENERIC_WORDS else variable
    return variable if number == 1 else f"{variable}_{number}"


def _placeholder(variable: str) -> str:
    return f'"${variable}"'


def _is_value_of(word: str, value: str, values_so_far: int) -> bool:
    """Whether a word after a secret flag is one of its values.  The first may start with one dash (`--api-key
    -Dx`); vLLM's `--api-key` takes several (`--api-key k1 k2`): every word up to the next option or shell syntax."""
    if values_so_far == 0:
        return not _LONG_FLAG.match(value)
    return not value.startswith("-") and not _SHELL_SYNTAX.match(word)


def _command_words(command: str) -> Iterator[tuple[re.Match[str], str | None, str | None]]:
    """Each word of `command` with its replacement (None: unchanged) and the secret value it gives, if any."""
    engine = "VLLM" if re.search(r"\bvllm\b", command.split(" -", 1)[0]) else "SGLANG"
    value_of: str | None = None  # the secret flag (or variable) whose values come next
    values = 0  # how many of its values were seen
    several = True  # a flag may take several; a variable (`HF_TOKEN=\` then the value) one
    for word in _WORD.finditer(command):
        if word.group(0) == _CUT_CONTINUATION:  # the value is on a line not in view: nothing to replace here
            continue
        value = _unquote(word.group(0))
        if value_of is not None and (several or not values) and _is_value_of(word.group(0), value, values):
            values += 1
            if _is_secret_value(value, value_of):
                yield word, _placeholder(_variable_for(value_of, engine, values)), value
            else:
                yield word, None, None
            continue
        value_of = None
        name, equals, assigned = value.partition("=")
        secret_name = bool(_SECRET_NAME_RE.match(name))
        # `--api-key=\` or `HF_TOKEN=\` then the value on the next line: one shell word, the value the next here
        continued = equals and not assigned and command.startswith("\\\n", word.end())
        if value.startswith("--") and secret_name:
            value_of, values, several = (None if equals and not continued else name), 0, not equals
            if equals and _is_secret_value(assigned, name):
                yield word, f"{name}={_placeholder(_variable_for(name, engine))}", assigned
            else:
                yield word, None, None
        elif equals and secret_name and _ASSIGNMENT.match(value):  # HF_TOKEN=… before the program
            value_of, values, several = (name if continued else None), 0, False
            if _is_secret_value(assigned, name):
                yield word, f"{name}={_placeholder(name)}", assigned
            else:
                yield word, None, None
        else:
            redacted = redact_secrets(value)
            yield word, shlex.quote(redacted) if redacted != value else None, None


def redact_command(command: str) -> str:
    """A launch or corrected command with each secret replaced by a quoted shell variable named after the
    flag or variable (`--api-key "$SGLANG_API_KEY"`, `HF_TOKEN="$HF_TOKEN"`): still one runnable shell line
    that says what to supply.  Words without a secret are kept exactly as written."""
    out: list[str] = []
    position = 0
    for word, replacement, _ in _command_words(command):
        if replacement is not None:
            out.extend((command[position : word.start()], replacement))
            position = word.end()
    out.append(command[position:])
    return "".join(out)


def _command_start(line: str) -> int | None:
    """Where a launch command starts in a log line, with the variable assignments before it."""
    if "sglang" not in line and "vllm" not in line:
        return None
    found = _LAUNCH.search(line)
    if found is None:
        return None
    start = found.start()
    for word in reversed(list(_WORD.finditer(line, 0, start))):
        if not (_ASSIGNMENT.match(word.group(0)) or word.group(0) == "env"):
            break
        start = word.start()
    return start


def _redact_line(line: str) -> str:
    """One log line, or several joined by shell continuations (a command written over lines)."""
    if not _may_hold_a_secret(line):
        return line
    start = _command_start(line)
    if start is None:
        return _line_rules(line)
    return _line_rules(line[:start]) + redact_command(line[start:])


# Every rule above needs one of these in the text: a rule's text, or an engine's name (a launch command).  Most
# strings of a report (frame paths, function names, source lines) have none, and skip the ~25 rules.
_MAYBE_SECRET = tuple(sorted({needle for needles, _, _ in _LINE_RULES for needle in needles} | {"sglang", "vllm"}))


def _may_hold_a_secret(text: str) -> bool:
    lowered = text.lower()
    return any(needle in lowered for needle in _MAYBE_SECRET)


def _logical_lines(text: str) -> Iterator[str]:
    r"""The lines of `text`, a line that ends in a shell continuation (`\`) joined with the next: the value of
    `--api-key \` is on the line after it."""
    continued: list[str] = []
    for line in text.split("\n"):
        continued.append(line)
        if not line.endswith("\\"):
            yield "\n".join(continued)
            continued = []
    if continued:
        yield "\n".join(continued)


def redact_secrets(text: str) -> str:
    """Log text with every secret replaced by `REDACTED` (in a launch command: by shell variables)."""
    if not _may_hold_a_secret(text):
        return text
    return "\n".join(_redact_line(line) for line in _logical_lines(_multiline_rules(text)))


def redact_lines(lines: tuple[str, ...]) -> tuple[str, ...]:
    """Strings that were consecutive log lines (context, cascade): a token wrapped at a line end, or a key
    spread over lines, is seen across them.  Each string stays one string."""
    if len(lines) > 1 and not any("\n" in line for line in lines):
        redacted = redact_secrets("\n".join(lines)).split("\n")
        if len(redacted) == len(lines):
            return tuple(redacted)
    return tuple(redact_secrets(line) for line in lines)


def secret_by_name(name: str, value: str) -> bool:
    """Whether `value` is a secret because of the name it goes by (`OPENAI_API_KEY`, `--api-key`, `api_key`): then
    all of it is, spaces and all, whatever it looks like."""
    return bool(_SECRET_NAME_RE.match(name)) and _is_secret_value(value, name)


def _redact_pairs(pairs: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """(name, value) fields: the name says whether the value is a secret."""
    return tuple(
        (redact_secrets(name), REDACTED if secret_by_name(name, value) else redact_secrets(value))
        for name, value in pairs
    )


def _redact_flag_ops(ops: tuple[FlagOp, ...]) -> tuple[FlagOp, ...]:
    """A flag operation's value is a secret when its flag says so (`set --api-key VALUE`)."""
    return tuple(
        dataclasses.replace(op, value=REDACTED) if op.value and secret_by_name(op.flag, op.value) else op
        for op in _walk(ops, redact_secrets)
    )


# Fields whose strings are not plain log text.
_SECRET_FIELDS: dict[str, Callable[[Any], Any]] = {
    "command": lambda value: redact_command(value) if isinstance(value, str) else value,
    "server_args": _redact_pairs,
    "env": _redact_pairs,
    "flags": _redact_flag_ops,
}


def _walk(
    value: T,
    transform: Callable[[str], str],
    fields: dict[str, Callable[[Any], Any]] | None = None,
    lines: Callable[[tuple[str, ...]], tuple[str, ...]] | None = None,
) -> T:
    """Apply `transform` to every string in nested frozen dataclasses and tuples.  `fields`: dataclass fields
    handled by their own function; `lines`: how a tuple of strings (consecutive log lines) is handled."""
    result: Any
    if isinstance(value, str):
        result = transform(value)
    elif isinstance(value, tuple):
        if lines is not None and value and all(isinstance(item, str) for item in value):
            result = lines(value)
        else:
            result = tuple(_walk(item, transform, fields, lines) for item in value)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        special = fields or {}
        changes = {
            f.name: special[f.name](getattr(value, f.name))
            if f.name in special
            else _walk(getattr(value, f.name), transform, fields, lines)
            for f in dataclasses.fields(value)
            if f.init
        }
        result = dataclasses.replace(value, **changes)
    else:
        result = value
    return result


class Anonymizer:
    """Stable placeholders: the same host, IP or user gets the same name throughout one report."""

    _IPV4 = compile_lazily(
        r"(?<![\w.])(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)(?![\w.])"
    )
    _HOME = compile_lazily(r"(/home/|/Users/|/export/home/|[A-Za-z]:\\Users\\)([^/\\\s'\"]+)")
    _USER_AT = compile_lazily(
        r"(?<![\w.\-])([A-Za-z_][\w.\-]*)@(?=[A-Za-z0-9][\w.\-]*[:/\s]|[A-Za-z0-9][\w.\-]*$)"
    )
    _URL_USER = compile_lazily(r"(\b[a-z][a-z0-9+.\-]*://)([^\s:/@]+)(?=(?::[^\s/@]*)?@)", re.IGNORECASE)
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


def _known_hosts(report: Any) -> list[str]:
    hosts: list[str] = []
    for group in getattr(report, "failures", ()):
        hosts.extend(group.hosts)
        if group.failure.meta.host:
            hosts.append(group.failure.meta.host)
    reporter = getattr(report, "reporter", None)  # the machine that wrote the report (its name, or --host's)
    if reporter is not None:
        hosts.append(reporter.host)
    for source in report.sources:
        if source.host:
            hosts.append(source.host)
        # `user@host:path` / `host:path` sources name their host.
        match = re.match(r"^(?:[^@/\s]+@)?([A-Za-z0-9][\w.\-]*):(?!//)", source.name)
        if match and not re.fullmatch(r"[A-Za-z]", match[1]):  # not a Windows drive letter
            hosts.append(match[1])
    return [host for host in dict.fromkeys(hosts) if host not in Anonymizer._KEEP_IPS and host != "localhost"]


def _signatures_in_context(report: Report) -> Report:
    """A group's `signature` repeats the first line of its final exception's message, so a token the log
    wrapped at the end of that line goes on at the start of the message's second line: redacted with that
    line in view, as the message itself is."""
    groups = []
    redacted: dict[tuple[str, str], str] = {}  # (fingerprint, signature as it was) -> redacted
    for group in report.failures:
        following = group.failure.final.message.split("\n")[1:2]
        if following:
            signature = redact_secrets("\n".join([group.signature, *following])).split("\n")[0]
            redacted[(group.fingerprint, group.signature)] = signature
            group = dataclasses.replace(group, signature=signature)
        groups.append(group)
    report = dataclasses.replace(report, failures=tuple(groups))
    if report.fleet is None:
        return report
    members = tuple(  # a fleet member names its first failure by the same signature
        dataclasses.replace(member, signature=redacted.get((member.fingerprint or "", member.signature), member.signature))
        for member in report.fleet.members
    )
    return dataclasses.replace(report, fleet=dataclasses.replace(report.fleet, members=members))


# A value shorter than this is not looked for elsewhere in a report: replacing every `abc` would garble the text.
_SHORTEST_KNOWN_SECRET = 6


def command_secrets(command: str) -> set[str]:
    """The secret values a command gives (its secret flags' values, its secret variables'), as the shell reads
    them: a log may repeat one where no rule knows it for a key (`unrecognized arguments: k2`)."""
    values = (value for _, _, value in _command_words(command))
    return {value for value in values if value is not None and len(value) >= _SHORTEST_KNOWN_SECRET}


def _known_secrets(report: Report) -> set[str]:
    """The secrets the report's launch gave, to be found wherever the log repeats them."""
    launch = report.launch
    known = command_secrets(launch.command) if launch.command else set()
    for name, value in launch.server_args:
        unquoted = value.strip("'\"")
        if secret_by_name(name, unquoted) and len(unquoted) >= _SHORTEST_KNOWN_SECRET:
            known.add(unquoted)
    return known


def without_secrets(known: set[str]) -> Callable[[str], str]:
    """A function that replaces each of the `known` secret values (`command_secrets`) wherever a text holds it."""
    if not known:
        return lambda text: text
    pattern = re.compile("|".join(re.escape(value) for value in sorted(known, key=len, reverse=True)))
    return lambda text: pattern.sub(REDACTED, text) if text else text


def redact_report(report: T, *, secrets: bool = True, anonymize: bool = False) -> T:
    """A copy of `report` (a crash `Report`, or any other report of frozen dataclasses: health, diff) with
    secrets replaced by `REDACTED` (in commands by `"$VARIABLE"`) and, with `anonymize`, host names, IP
    addresses and user names replaced by `host-1`, `ip-1`, `user-1`.  A secret the launch command gave is
    replaced wherever the report repeats it."""
    if secrets:
        in_context: Any = _signatures_in_context(report) if isinstance(report, Report) else report
        known = _known_secrets(report) if isinstance(report, Report) else set()
        report = _walk(in_context, redact_secrets, _SECRET_FIELDS, redact_lines)
        if known:
            report = _walk(report, without_secrets(known))
    if anonymize:
        report = _walk(report, Anonymizer(_known_hosts(report)))
    return report
