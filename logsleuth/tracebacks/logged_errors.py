"""An engine's error text in a logger's ERROR record with no traceback (issue 28; the blind split): a wrapper that
catches the engine's exception and logs `str(exc)` under its own logger (Xinference's `… xinference.api.restful_api
16 ERROR    Chat completion stream got an error: [address=…, pid=…] <the engine's message>`, LLaMA-Factory's and
verl's loggers), or the engine's own record with the exception's type line left out.

The text is an error when the raise site index (facts/engine_messages.py) holds it: one of the engines' own
`raise` or `assert` sites prints exactly this message, and that site's type is the failure's.  So a record that
only reports something (`ERROR … Failed to load model qwen-0`) is no failure, and a message is never guessed from
its words.  Such a record is the failure only of a paste that shows no other (a fallback): with the traceback
present, the traceback is the failure."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import NamedTuple

from logsleuth.facts.message_templates import MIN_FIXED
from logsleuth.lazyre import compile_lazily
from logsleuth.models import LOGGED_LINE_TYPE, Failure, LineMeta, LogLine
from logsleuth.tracebacks.grammar import STRICT_EXCEPTION_LINE, embedded_failure, inline_failure, record_repr
from logsleuth.tracebacks.prose_failures import quoted_message_candidates
from logsleuth.tracebacks.typeless_errors import (
    PYDANTIC_VALIDATION_ERROR,
    VALUE_ERROR_LINE,
    type_named_by_message,
)

# The level word of a logger's record: `ERROR` or `CRITICAL` as a word of its own (`… 141 ERROR    msg`,
# `ERROR llamafactory.chat: msg`, `[ERROR] msg`, `|ERROR| msg`).
_ERROR_LEVEL = compile_lazily(r"(?:^|[\s|\[(])(?:ERROR|CRITICAL)(?:[\s|\]):]|$)")
# Where the message may start after the level word: after a logger's name and colon, a wrapper's tag or a
# sentence that introduces it (`got an error: `), at most this many places.
_STARTS = compile_lazily(r": |\] | - ")
MAX_STARTS = 4
MAX_RECORD = 4096  # a record longer than this holds a dump, not one message
NO_META = LineMeta()  # a line the normalizer stripped nothing off


def error_record_candidates(line: LogLine) -> list[str]:
    """Where an ERROR record's message may start (engine_message then reads the index), or [] for a line that is no
    such record."""
    text = line.text
    if len(text) > MAX_RECORD or len(text) < MIN_FIXED:
        return []
    if line.meta.level in ("ERROR", "CRITICAL"):
        rest = text
    elif m := _ERROR_LEVEL.search(text):
        rest = text[m.end():].lstrip(" -|:]")  # the separator after the level word (`ERROR - `, `ERROR | `)
    else:
        return []
    return _candidates(rest)


# A client's print of an HTTP error status before the server's text (`HTTP 400: …`, `Error: 400 …`, `status_code=400,
# message=…`, `400 Bad Request: …`, `Request failed (HTTP 400): …`): the status, its reason phrase, the separator.
_HTTP_ERROR_STATUS = compile_lazily(
    r"(?:^|\bHTTP(?:/\d(?:\.\d)?)?|\bstatus(?:[_ ]code)?|\b[Ee]rror(?: code)?|\bcode)\W{0,3}(?P<status>[45]\d\d)\b"
    r"(?P<reason> [A-Z][a-z]+(?: [A-Z][a-z]+){0,3})?[^\w'\"{]{0,4}(?:(?:message|detail|body|text|error)[=:]\s?)?"
)
# The error body's `param` (null unless one request parameter is at fault: vLLM's ErrorInfo, message, type, param, code,
# vllm/entrypoints/openai/protocol.py) a client printed after the message, as it prints the body's fields in order
# (`400 <message> None`): not the server's text.
_PARAM_AFTER_MESSAGE = compile_lazily(r"(?<=[.!?]) (?:None|null)$")
# The status's reason phrase alone at the start of the client's print, its number left out (`Bad Request: <the
# server's text>`, anomalyco/opencode#25230 quoting SGLang's refusal): http.HTTPStatus's phrases of the errors an
# engine answers a request with.
_REASON_PHRASE = compile_lazily(
    r"^(?:HTTP )?(?:Bad Request|Unprocessable (?:Entity|Content)|Internal Server Error|Service Unavailable|Not Found)"
    r" ?[:\-\u2013] ?"
)
_STATUS_NUMBER = compile_lazily(r"(?<![\d.])[45]\d\d(?!\d|\.\d)")
_STATUS_WORDS = ("HTTP", "status", "rror", "Bad Request", "Unprocessable", "Unavailable", "Not Found")


def may_hold_status(text: str) -> bool:
    """A cheap test before status_candidates: the line starts with a status or holds one of the words a client prints
    before one.  `code` counts only as a word of its own: SGLang's `Decode batch` metrics lines, a long log's most
    common line, hold it inside `Decode`."""
    if text[:1] in ("4", "5") or any(word in text for word in _STATUS_WORDS):
        return True
    at = text.find("code")
    while at != -1:
        if at == 0 or not text[at - 1].isalpha():
            return True
        at = text.find("code", at + 4)
    return False
# The error body both engines answer a refused request with (vLLM's and SGLang's OpenAI-compatible ErrorResponse:
# object, message, type, param, code), as a client prints it (a dict's repr or JSON): a paste that kept only its
# message and its tail (`…completion.", 'type': 'BadRequestError', 'param': None, 'code': 400}`) still says the
# server refused the request with that message.  The message is the text before the tail.
_ERROR_BODY_TAIL = compile_lazily(
    r"""['"]?,\s*['"]type['"]:\s*['"]\w+['"],\s*['"]param['"]:\s*[^,]{0,80},\s*['"]code['"]:\s*[45]\d\d\s*\}"""
)
_ERROR_BODY_HEAD = compile_lazily(r"""^.*?['"]message['"]:\s*['"]""")


def status_candidates(text: str) -> list[str]:
    """Where the server's text may start after an HTTP error status a client printed (issue 28: the blind split's
    `HTTP 400: <the engine's message>`), or [].  As for an error record, the text is the engine's only when the raise
    site index holds it (engine_message): an access log's `"POST /v1/completions HTTP/1.1" 400 Bad Request` says
    nothing after the status, so it stays a request the server answered."""
    if len(text) > MAX_RECORD or len(text) < MIN_FIXED:
        return []
    candidates: list[str] = []
    # the status regex tries its keywords at every position: only a line holding a 4xx/5xx number is worth it (not
    # a metrics line's `450.23` or `45120`: SGLang's `Decode batch` lines hold the word `code`)
    statuses = _HTTP_ERROR_STATUS.finditer(text) if _STATUS_NUMBER.search(text) else ()
    for m in (*statuses, *filter(None, (_REASON_PHRASE.match(text),))):
        # (a capitalised first word of the server's text reads as a reason phrase too: `400 As of transformers v4.44, …`)
        starts = (m.end(), m.start("reason")) if "reason" in m.groupdict() and m["reason"] else (m.end(),)
        for start in starts:
            if (rest := _PARAM_AFTER_MESSAGE.sub("", text[start:].strip())) and len(rest) >= MIN_FIXED:
                candidates.extend(_candidates(rest))
    if ("'param'" in text or '"param"' in text) and (tail := _ERROR_BODY_TAIL.search(text)) is not None:
        body = _ERROR_BODY_HEAD.sub("", text[: tail.start()]).strip().strip("`'\"").strip()
        if len(body) >= MIN_FIXED:
            candidates.append(body)
    return candidates


# A command line a paste shows (issue 28, stop 39's blind split: a launch command, then the engine's one line with no
# type): a shell prompt (`$ `, `# `, `(venv) user@host:~$ `) or an engine's launch (`vllm serve`, `python -m
# sglang.launch_server`, `sglang serve`, vLLM's `api_server`).
_COMMAND_LINE = compile_lazily(
    r"^\s*(?:[$#>] |(?:\([\w.-]+\) )?[\w.-]+@[\w.-]+:\S*[$#] )"
    r"|\b(?:vllm|sglang) serve\b|\bsglang\.launch_server\b|\bvllm\.entrypoints\.openai\.api_server\b"
)


def is_command_line(text: str) -> bool:
    """A line that runs a command: the line after it is the command's own output."""
    if not text or len(text) > MAX_RECORD:
        return False
    # (what every command line holds, before the regex: this runs on each plain line after another)
    if text.lstrip()[:1] not in ("$", "#", ">") and "@" not in text and " serve" not in text and "sglang.launch_server" not in text \
            and "api_server" not in text:
        return False
    return _COMMAND_LINE.search(text) is not None


def plain_candidates(line: LogLine) -> list[str]:
    """Where a plain line's message may start (no record level, no status): the whole text, then after its first
    separators (a wrapper's tag, a logger's name); [] for a line too short or too long to be one message."""
    text = line.text
    if (line.starts_record and line.meta != NO_META) or len(text) > MAX_RECORD or len(text.strip()) < MIN_FIXED:
        # a logger's record: an ERROR one is read as such (error_record_candidates), others are none.  (A line that
        # starts one only because a paste's inline-code span closed above it, nothing stripped off it, is plain:
        # dynamo's `python3 -m dynamo.sglang …` in backticks, the engine's message after the closing one.)
        return []
    if text[:1] in " \t" or _PYTHON_WARNING.search(text):
        return []  # a continuation line, or Python's `file.py:12: UserWarning: …`: no bare message (and no index read)
    if line.headed and line.meta.level in _NOT_ERROR_LEVELS:
        # a line with its own logger header at a level below ERROR (a record repeating the one above, which the
        # normalizer reads as its continuation): vLLM warns `Current vLLM config is not set.`, an assert's text too
        return []
    return _candidates(text)


def last_record_candidates(line: LogLine) -> list[str]:
    """Where the message of a paste's last record may start, when the record names no level (SGLang's `[time TP0] …`
    never does) and its words say something went wrong: SGLang logs `Rank 0 scheduler is dead. Please check if there
    are relevant logs.` so and exits.  [] for any other line: a healthy log's last record (`The server is fired up and
    ready to roll!`, a decode batch's figures) opens no index."""
    text = line.text
    if not line.starts_record or line.meta.level is not None or len(text) > MAX_RECORD or len(text.strip()) < MIN_FIXED:
        return []
    return _candidates(text) if _SAYS_TROUBLE.search(text) else []


# Words an engine's error message holds and its progress records do not (a prefilter before the index is read).
_SAYS_TROUBLE = compile_lazily(
    r"(?i)\b(?:dead|died|fail(?:ed|s|ure)?|error|cannot|can't|unable|invalid|not (?:supported|found|enough|allowed)|"
    r"must|exceed(?:s|ed)?|too (?:large|long|small|many)|please|out of)\b"
)


_NOT_ERROR_LEVELS = ("WARNING", "WARN", "INFO", "DEBUG", "TRACE")
# The warnings module's line: `/x/utils.py:212: UserWarning: …`.
_PYTHON_WARNING = compile_lazily(r"\.py:\d+: \w*Warning: ")


def _candidates(rest: str) -> list[str]:
    """Where a record's message may start: the whole text, then after each of its first separators, then where a
    sentence quotes it (prose_failures.quoted_message_candidates: quotes, bold, after CJK words)."""
    candidates = [rest.strip()]
    for n, start in enumerate(_STARTS.finditer(rest)):
        if n == MAX_STARTS:
            break
        candidates.append(rest[start.end():].strip())
    candidates.extend(quoted for quoted in quoted_message_candidates(rest) if quoted not in candidates)
    return candidates


def message_candidates(text: str) -> list[str]:
    """Where the message of a plain paragraph may start (the paste's indented last paragraph, indented_tail.py), as of
    a record's text."""
    return _candidates(text)


def is_error_record(text: str) -> bool:
    """A logger's record at level ERROR or CRITICAL whose level word the line still shows (a wrapper's format
    logsleuth does not strip: Xinference's `… xinference.api.restful_api 37502 ERROR    [address=…] …`)."""
    return len(text) <= MAX_RECORD and _ERROR_LEVEL.search(text) is not None


# A line with no level word that says it reports an error: the word error as a word of its own.  Not "exception":
# CPython's chain separators ("The above exception was the direct cause …") and the engines' announcements
# ("WorkerProc hit an exception.") say it of the traceback that follows, and name nothing.
# Or a step that says it failed and why (`Capture cuda graph failed: invalid argument`): not a bare `… failed to start.`,
# which announces the traceback after it as "hit an exception" does.
_STATED_ERROR = compile_lazily(r"(?i)\berror\b|\bfailed: \S")
# A wrapper's tag at the start of a record's text: Xinference's `[address=0.0.0.0:35197, pid=418773] `.
_WRAPPER_TAG = compile_lazily(r"^\[[^\]]*=[^\]]*\]\s*")


class RecordNaming(NamedTuple):
    """What an error record above a cut traceback names it: the type, the message, whether the record states the
    failure in words of its own (then `ERROR: <its text>`), and whether the type is inferred (CPython's template of a
    message whose type the record did not print: only then does the report say so)."""

    type_name: str
    message: str
    own_words: bool
    inferred: bool = False


def record_naming(failure: Failure, record: str, *, error_level: bool = False) -> RecordNaming | None:
    """What the error record printed right above a traceback whose exception line the paste cut off names it (vLLM's
    `ERROR … [engine.py:160] Error in model execution: …`, SGLang's `Scheduler hit an exception: …`, a wrapper's
    `ERROR … failed: …`), as a RecordNaming: its `Type: message` when it quotes one, else an
    engine's own message (the raise site index gives its type).  An ERROR record that states the failure in words of
    its own (Xinference logging `str(exc)` of torch's `Timed out after 601 seconds waiting for clients. 1/2 clients
    joined.` above the traceback it cut) names it as `ERROR: <its text>`, as glog's E records are (the person reading
    the paste points at that record): own_words is then True.  An ERROR or CRITICAL record (its level word on the line,
    or `error_level`: the normalizer took its header off) that is only an exception's repr names it by the repr
    (vLLM's `logger.exception(repr(e))`); a repr at any other level is an object's, no error.  None for a record whose
    text is none of these."""
    if (read := _record_text(record)) is None:
        return None
    level, rest = read
    if (level is not None or error_level) and (logged_repr := record_repr(rest)) is not None:
        return RecordNaming(*logged_repr, own_words=False)
    candidates = _candidates(rest)
    quoted = (next((text for text in candidates if STRICT_EXCEPTION_LINE.match(text)), None) or engine_message(candidates)
              or _named_in_sentence(rest))
    if quoted is not None and quoted.startswith(f"{LOGGED_LINE_TYPE}: ") and (
            cpython := type_named_by_message(said := quoted[len(LOGGED_LINE_TYPE) + 2:])) is not None:
        # CPython's own message, its type not printed (SGLang's request handler logs `Error in request: {e}`,
        # srt/entrypoints/openai/serving_base.py, over the traceback): the type its template names, said inferred
        return RecordNaming(cpython, said, own_words=False, inferred=True)
    m = STRICT_EXCEPTION_LINE.match(quoted) if quoted is not None else None
    if m is not None:
        return RecordNaming(m["type"], m["msg"] or "", own_words=False)
    if (level is not None or (_STATED_ERROR.search(rest) and not failure.final.typed_from_statement)) and len(
            stated := _WRAPPER_TAG.sub("", rest).strip()) >= MIN_FIXED:
        # an ERROR record, or a line of no level that says it is an error (`Error in request: …`, a wrapper's
        # `got an error: …`) above a traceback that names no type at all: the person reading the paste points at it
        return RecordNaming(LOGGED_LINE_TYPE, stated, own_words=True)
    return None


def named_by_logged_error(failure: Failure, record: str) -> Failure:
    """A traceback whose exception line the paste cut off, named by a line above it that is an error the engine's code
    logs before it raises (the raise site index's logged sites): SGLang logs `Piecewise CUDA Graph failed with error:
    <the error>` and its workaround (srt/compilation/piecewise_context_manager.py) before the scheduler's traceback;
    what it logged is the error.  Only a logged template that carries the error's text in a hole: one in fixed words
    (`EngineCore failed to start.`) announces a failure and names none.  Any other line names nothing here
    (record_naming reads the rest)."""
    if (read := _record_text(record)) is None:
        return failure
    from logsleuth.facts.engine_messages import logs_an_error_text  # the index is read only for such lines

    candidates = _candidates(read[1])
    if any(STRICT_EXCEPTION_LINE.match(text) for text in candidates):
        return failure  # it quotes the exception, type and all (`Scheduler hit an exception: ValueError: …`): the next read's
    message = next((text for text in candidates if len(text) >= MIN_FIXED and logs_an_error_text(text)), None)
    return failure if message is None else _named(failure, LOGGED_LINE_TYPE, message)


def _record_text(record: str) -> tuple[re.Match[str] | None, str] | None:
    """A record's ERROR level (None: a line of no level) and its text after it; None for a record too long to read."""
    if len(record) > MAX_RECORD:
        return None
    level = _ERROR_LEVEL.search(record)
    return level, record[level.end():].lstrip(" -|:]") if level else record


def _named(failure: Failure, type_name: str, message: str, *, inferred: bool = False) -> Failure:
    """The failure with its cut exception line given back as `type_name: message`, said to be cut; `inferred`: the
    record printed no type and CPython's template of the message named it (record_naming knows which, a message
    alone does not: `hit an exception: TypeError: …` prints the type its template would name)."""
    block = replace(failure.final, type=type_name, message=message, truncated=True, typed_from_statement=False,
                    typed_from_message=inferred)
    return replace(failure, exceptions=(*failure.exceptions[:-1], block), truncated=True)


class LineAbove(NamedTuple):
    """A line of content above a traceback's header, and the readers that read it (scanner._lines_above)."""

    text: str
    says_error: bool  # an error line within ERROR_SAID_REACH: record_naming reads it
    may_be_logged: bool  # may be an error the engine's code logs: named_by_logged_error reads it
    error_level: bool = False  # an ERROR or CRITICAL record's text, its header taken off by the normalizer


# The engines' records of "the loop died", logged right above the traceback that killed it: they name no error, only
# which process died (vllm/v1/engine/core.py run_engine_core: logger.exception("EngineCore encountered a fatal
# error."), 0.8 on; v1/executor/multiproc_executor.py worker_busy_loop: "WorkerProc hit an exception.";
# sglang/srt/managers/scheduler.py run_scheduler_process: f"Scheduler hit an exception: {traceback}", its traceback on
# the line after when a wrapper splits it).  Nothing above them is the traceback's, so the traceback stays cut and its
# frames are read (reasoning/frame_shapes.py).
LOOP_DIED_RECORD = compile_lazily(r"^\s*(?:EngineCore encountered a fatal error|WorkerProc hit an exception"
                                  r"|Scheduler hit an exception:?)\.?\s*$")


def named_by_lines_above(failure: Failure, lines: tuple[LineAbove, ...]) -> Failure:
    """A traceback whose exception line the paste cut off, named by the lines above its header, nearest first: the
    first that is an error the engine's code logs, or that quotes the exception or an engine's message, names it (a
    nearer `Capture failed: RuntimeError: …` outranks a farther logged error: review 1 of stop 50).  A line that states
    an error only in words of its own (an ERROR record's text, `To work around this error, …`) names it when no line
    farther up is an error the engine logged, whose workaround lines the engine prints after it (SGLang's piecewise
    CUDA graph failure); the nearest such line, as before."""
    in_own_words: Failure | None = None
    for line in lines:
        if LOOP_DIED_RECORD.match(line.text):
            break  # the traceback's own record: it names nothing, and the records above it are older
        if line.may_be_logged and (named := named_by_logged_error(failure, line.text)) is not failure:
            return named
        if not line.says_error or in_own_words is not None or (
                naming := record_naming(failure, line.text, error_level=line.error_level)) is None:
            continue
        if not naming.own_words:
            return _named(failure, naming.type_name, naming.message, inferred=naming.inferred)
        in_own_words = _named(failure, naming.type_name, naming.message)
    return in_own_words or failure


# pydantic-core's last line of a ValidationError's display, one per error: "For further information visit
# https://errors.pydantic.dev/{version}/v/{error type}" (pydantic-core src/errors/validation_exception.rs), four spaces
# in.  A paste that cut the error's header and message keeps only it (xorbitsai/inference#4652: vLLM's config
# validation over Xinference's cut traceback).
_VALIDATION_LINK = compile_lazily(r"^\s*For further information visit https://errors\.pydantic\.dev/[\w.]{1,16}/v/(?P<kind>\w{1,40})\s*$")
_VALIDATION_LINES = ("validation error", VALUE_ERROR_LINE, "[type=")


def named_by_validation_link(failure: Failure) -> Failure:
    """A traceback cut before its exception line whose nearest context line is pydantic's closing link of a validation
    error, the error's own lines lost: the ValidationError is the failure, its message said to be cut.  Not when the
    error's own lines are there (typeless_errors reads `Value error, …` as the failure itself)."""
    context = failure.context
    if not context or any(words in line for line in context for words in _VALIDATION_LINES):
        return failure
    if (link := _VALIDATION_LINK.match(context[-1])) is None:
        return failure
    # (its kind alone: the class and the message were on the lines the paste lost; the report shows the link above)
    return _named(failure, PYDANTIC_VALIDATION_ERROR, link["kind"], inferred=True)


def _named_in_sentence(text: str) -> str | None:
    """The exception a sentence above the traceback names, quoted or not (`… fails with a RuntimeError: invalid
    argument in …`, sgl-project/sglang#9706's prose above its cut traceback), else None."""
    if "rror" not in text and "xception" not in text:
        return None
    return embedded_failure(text) or (inline_failure(text) if "rror: " in text or "xception: " in text else None)


def engine_message(candidates: list[str], *, cut: bool = False, logged: bool = False) -> str | None:
    """`Type: message` of the first candidate an engine's indexed raise site raises, else None.  `cut`: a candidate
    may be the opening of the site's message, the paste stopped short of its end (engine_messages.raised_as).
    `logged`: a candidate no site raises may be one an engine logs as an error and exits after (SGLang's `Rank 0
    scheduler is dead. Please check if there are relevant logs.`, logger.error before its launcher re-raises), printed
    as a bare line with no record header: `ERROR: message`, as an error record's own text is named."""
    from logsleuth.facts.engine_messages import (  # the index is read only for such records
        engines_logging,
        package_raised_as,
        raised_as,
    )

    for message in candidates:
        if len(message) >= MIN_FIXED and (type_name := raised_as(message, cut=cut)) is not None:
            return f"{type_name}: {message}"
    if (cpython := next((text for text in candidates if type_named_by_message(text) is not None), None)) is not None:
        # CPython's own message of a TypeError or AttributeError (a wrapper logging str(exc)): a record of it, which
        # typeless_errors.typed_by_message types by the message, said to be inferred
        return f"{LOGGED_LINE_TYPE}: {cpython}"
    for message in candidates:
        # a package's (transformers', flashinfer's …), after the engines' and CPython's: it types, it names no engine
        if len(message) >= MIN_FIXED and (type_name := package_raised_as(message, cut=cut)) is not None:
            return f"{type_name}: {message}"
    if logged:
        return next((f"{LOGGED_LINE_TYPE}: {message}" for message in candidates if len(message) >= MIN_FIXED and engines_logging(message)), None)
    return None


# A site of an engine's HTTP request handling: its OpenAI-compatible serving classes (vLLM's and SGLang's
# entrypoints/openai/serving_*.py, vLLM's newer entrypoints/**/serving.py) and FastAPI exception handlers (vLLM's
# server_utils.py `exception_handler`/`http_exception_handler`, entrypoints/serve/exception_handling/).  What such a
# site logs fails one request: the handler answers it with an error body and the server serves on.
_REQUEST_HANDLER_FILE = compile_lazily(r"/entrypoints/.*(?:serving|server_utils|exception_handl|speech_to_text)")


def logged_by_request_handler(message: str) -> bool:
    """Whether an engine's indexed site that logs or raises this message is in its HTTP request handling
    (_REQUEST_HANDLER_FILE, or a function named as an exception handler)."""
    from logsleuth.facts.engine_messages import raising_modules  # the index is read only for such records

    return any(_REQUEST_HANDLER_FILE.search(f"/{file}") is not None or function.endswith("_handler")
               for sites in raising_modules(None, message).values() for file, function in sites)
