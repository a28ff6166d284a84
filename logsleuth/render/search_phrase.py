"""The phrase of one log line to search an issue tracker with: a run of the line's own text, as printed, that holds
none of the user's values.

A quoted search finds only text that is in the thread word for word, so the phrase is never pieced together: the line
is cut where a value of the user's stands (an address, a size, a count, a PID, a time, a long id or hash, a path's
directories, a file's line number, a URL, the user's installed version), every piece between two cuts is cut again at a bracket or quote it does not
close, and the piece with the most specific words wins (at most LONGEST characters of it: the best window that starts
where the piece or one of its sentences does).  What another thread of the same failure prints too stays: a version or
capability number a check requires (`below 7.0`, `at least 8.0`), an error code (`[Errno 111]`, `error code 2`), an
environment variable's setting the message advises (`CUDA_LAUNCH_BLOCKING=1`), a file's name (`custom_all_reduce.cuh`;
its line number changes with every release), the path of a URL printed after `url:` or an HTTP method
(`/computeMetadata/v1/instance/attributes/tpu-env`) less its segments that name the user (an id, a token, a user
name, a hub's org and repo).  Any other URL is cut whole: its path holds the user's bucket, webhook or account."""

from __future__ import annotations

from typing import NamedTuple

from logsleuth.lazyre import compile_lazily

# at most this many characters: search boxes take a sentence, not a paragraph
LONGEST = 200
# what of a line is read: the phrase fits in LONGEST, and the path pattern backtracks over a long run of word
# characters (a path's leading segment), so a 100 KB message line must not reach it whole
READ_AT_MOST = 1000

# the user's values, tried in this order at each position; a URL and a path leave their kept part (a URL's path after
# `url:`, a path's file name) out of the match's `cut` groups
_VALUE = compile_lazily(
    r"(?P<url>(?:https?|grpc|tcp|wss?|file|s3|gs|redis)://[^\s/()\[\]<>'\"`]*)(?P<url_path>/[^\s?#()\[\]<>'\"`]*)?(?P<query>\?[^\s()\[\]<>'\"`]*)?"
    r"|(?P<dirs>(?:[A-Za-z]:|~|[\w.\-~@+]+)?(?:[\\/][\w.\-~@+<>]+)+[\\/])(?P<file>[\w.\-~@+]*)(?P<line>(?::\d+){0,2})"
    r"|(?P<uuid>\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b)"
    r"|(?P<address>\b0x[0-9a-fA-F]+\b)"
    r"|(?P<hash>\b(?=[0-9a-f]{0,63}\d)(?=[0-9a-f]{0,63}[a-f])[0-9a-f]{8,64}\b)"
    r"|(?P<time>\b\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d(?::\d\d(?:[.,]\d+)?)?(?:Z|[+-]\d\d:?\d\d)?)?\b"
    r"|\b\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?|\b\d{1,2}:\d\d:\d\d(?:[.,]\d+)?)"
    r"|(?P<ip>\b\d{1,3}(?:\.\d{1,3}){3}(?::\d+)?\b)"
    r"|(?P<size>(?<![\w.\-])[-+]?\d+(?:\.\d+)?\s?(?:[KMGTPE]i?B|bytes|B)\b)"
    r"|(?P<number>(?<![\w.\-])[-+]?\d+(?:[.,:]\d+)*(?:[eE][-+]?\d+|\.?(?:post|dev|rc)\d*)?(?![\w]|\.\w))"
)
# a number another thread of the failure prints too: a release (three parts, or a pre/post-release), ...
_RELEASE = compile_lazily(r"\d+\.\d+\.\d+(?:[.,]\d+)*\S*|\d+(?:\.\d+)+\.?(?:post|dev|rc)\d*")
# ... a two-part number a version or a capability names (`compute capability below 7.0`, `CUDA 12.1`, `>= 8.0`), ...
_VERSION_BEFORE = compile_lazily(
    r"(?i)(?:version|capability|compute|cuda|torch|python|driver|release|transformers|vllm|sglang|triton|nccl"
    r"|flashinfer|rocm|sm|[<>=~!]=?)\W{0,3}(?:[a-z]+\W{1,3}){0,3}$"
)
# ... a capability as one integer (`Minimum capability: 80`, vLLM's quantization check) ...
_CAPABILITY_BEFORE = compile_lazily(r"(?i)capability\W{0,3}(?:[a-z]+\W{1,3}){0,3}$")
# ... an error code, a status, a signal (`[Errno 111]`, `error code 2`, `HTTP 500`, `signal 11`) ...
_CODE_BEFORE = compile_lazily(r"(?i)(?:errno|code|status|signal|error|http)\s?[:=]?\s?$")
# ... an environment variable's setting the message advises (`consider passing CUDA_LAUNCH_BLOCKING=1`, `auto-loading
# with TORCH_DEVICE_BACKEND_AUTOLOAD=0`; not a kernel's printed configuration, `NUM_MMA_Q=2`)
_ENV_SETTING_BEFORE = compile_lazily(r"\b(?:with|passing|set|setting|export|using) [A-Z][A-Z0-9]*_[A-Z0-9_]+=$")
# a path that is a URL's: after `url:` (urllib3's `Max retries exceeded with url: /…`) or an HTTP method
_URL_PATH_BEFORE = compile_lazily(r"(?i)(?:\burl\s?[:=]?\s?|\b(?:GET|POST|PUT|DELETE|HEAD|PATCH|OPTIONS) )$")
# a URL path's segment that is the user's: an id or a token (a webhook's key, a bot's token: long, letters and digits
# mixed), one holding `@` or `:` (an email, `bot123:AAH…`)
_PRIVATE_SEGMENT = compile_lazily(r"[^/]*[@:][^/]*|(?=[^/]*\d)(?=[^/]*[A-Za-z])[^/]{16,}|[^/]{40,}")
# the segment after these names a user, an org or a bucket (`/users/jdoe/keys`)
_OWNER_SEGMENTS = frozenset({"users", "user", "accounts", "account", "orgs", "organizations", "customers", "teams",
                             "projects", "buckets", "namespaces"})
# a model hub's file routes (`/{org}/{repo}/resolve/{revision}/{file}`, `/api/models/{org}/{repo}`): the org and repo
# are the user's, so the whole path is cut
_HUB_ROUTE = compile_lazily(r"/(?:resolve|blob|tree|raw)/|^/api/(?:models|datasets|spaces)/")
# a version the user has installed, not a check's threshold (`but found vllm==0.8.1`, `NCCL version 2.21.5`; not
# `minimum required version 8.0`)
_INSTALLED_BEFORE = compile_lazily(
    r"(?i)\b(?:found|installed|detected|have|got|nccl version|current version(?: is)?)\W{0,3}(?:[\w\-]+\W{1,3}){0,2}$")
# a file's name: a path's last part with an extension (`worker.py`, `NCCLUtils.hpp`, `libcudart.so.12`)
_FILE_NAME = compile_lazily(r"[\w.\-~@+]*[\w\-]\.[A-Za-z][A-Za-z0-9]{0,9}(?:\.\d+)*")

_OPENERS = {"(": ")", "[": "]", "{": "}"}
_CLOSERS = {")": "(", "]": "[", "}": "{", ">": "<"}
_QUOTES = "'\"`"
# what a piece's edges keep of no use: separators, a bracket's or a comparison's half
_LEADING = compile_lazily(r"^[\s,;:.!?)\]}>=|*&]+|^-+\s+")
_TRAILING = compile_lazily(r"[\s,;:(\[{<=|*&+\-/]+$")
# the filler word a cut leaves at a piece's end (`the maximum model length of`, `max length is`)
_DANGLING_FILLER = compile_lazily(r"(?:\s+(?:a|an|the|of|to|at|by|for|from|with|in|on|is|are|was|be|and|or|after|before))+$")
# Python logging's `name - LEVEL - ` after its time (cut as a value): a logger's name and level, searched by nobody
_LOGGING_HEADER = compile_lazily(r"^[\s,\d]*-\s+(?:[\w.]+\s+-\s+)?(?:DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL|FATAL)\s+-\s+")
_SENTENCE_START = compile_lazily(r"(?<=[.;!?])\s+(?=\S)")
# a sentence of the engine's advice (`Try increasing …`, `Please reduce …`, `Reducing block sizes … may help`): the same
# for many failures, so it is searched only when no sentence states the failure
_ADVICE = compile_lazily(
    r"(?i)(?:try|please|make sure|consider|you (?:can|may|might|should)|see|if|set|use|to (?:fix|avoid)|note|for debugging"
    r"|reduc\w*|decreas\w*|increas\w*|check|this (?:may|can|could|might)|otherwise|based on|compile with)\b"
)

_TOKEN = compile_lazily(r"[\w.:/+\-]*\w|\w")
_SPECIFIC = compile_lazily(r"\w(?:_|::|\.)\w|[a-z][A-Z]|[A-Za-z]\d|\d[A-Za-z]")
_STABLE_NUMBER = compile_lazily(r"\d+(?:\.\d+)+")
# a token that names a file (scoring: `worker.py:123`, `libcudart.so.12`), not a dotted name (`torch.cuda`)
_FILE_TOKEN = compile_lazily(
    r"[\w\-]+\.(?:py|pyx|cu|cuh|c|cc|cpp|cxx|h|hpp|so|json|yaml|yml|toml|safetensors|bin|pt|pth|gguf|txt|sh|whl|jinja)"
    r"(?:\.\d+)*(?P<line>(?::\d+){0,2})"
)
_STOPWORDS = frozenset({
    "a", "an", "the", "of", "to", "in", "on", "at", "by", "for", "from", "with", "and", "or", "is", "are", "was",
    "were", "be", "been", "it", "its", "this", "that", "as", "if",
})
# unquoted words enough for a phrase to name a failure alone (`out of resource: shared memory, Required`, `CUDA out of
# memory. Tried to allocate`; not `The decoder prompt`, `Total number of attention heads`)
ENOUGH = 4.5
# less than this is no search (one plain word: `File`, `Loading`); a file's name wins only with words beside it (not a
# logger's `engine.py:366` alone, not `handler.cuh: line` over the error's own sentence)
LEAST = 2.0
STRONG_LEAST = 7.0
# quoted text counts half, at most QUOTED_AT_MOST: a quoted name is the user's (a model, a kernel), a list of them one
# release's registry (the supported architectures), not the failure's words
QUOTED_AT_MOST = 2.0
# a phrase of one token is worth at most this, less than LEAST: a file's name (`smxx_layout.hpp`) names no failure
# alone; an error's name does (`CUDA_ERROR_LAUNCH_FAILED`, `EADDRINUSE`)
ONE_TOKEN_AT_MOST = 1.5
# scores at least this share of the best: the first of them wins (the message's statement, not a detail after it:
# `Timeout at NCCL work`, not `last enqueued NCCL work`; but `unhandled cuda error` over `NCCL error`)
CLOSE = 0.8
# an error's name: an errno (`EADDRINUSE`), a runtime's status (`CUDA_ERROR_LAUNCH_FAILED`, `NCCL_SYSTEM_ERROR`)
_ERROR_NAME = compile_lazily(r"E[A-Z]{4,}|[A-Z][A-Z0-9]*_(?:[A-Z0-9]+_)*(?:ERROR|FAILED|FAILURE|FAIL|INVALID|TIMEOUT)"
                             r"(?:_[A-Z0-9]+)*")


def volatile_spans(text: str) -> list[tuple[int, int]]:
    """Where the user's values stand in `text` (start, end), in order."""
    spans: list[tuple[int, int]] = []
    for m in _VALUE.finditer(text):
        kind = m.lastgroup
        if m["url"] is not None:
            if m["url_path"] and _URL_PATH_BEFORE.search(text, max(0, m.start() - 12), m.start()):
                spans.append(m.span("url"))
                spans.extend(_private_segments(text, *m.span("url_path")))
                if m["query"]:
                    spans.append(m.span("query"))
            else:
                spans.append(m.span())  # a bucket, a webhook, an account's route: the user's
        elif m["dirs"] is not None:
            if _URL_PATH_BEFORE.search(text, max(0, m.start() - 12), m.start()):
                spans.extend(_private_segments(text, *m.span()))  # a URL's path, its host not printed: the route
            elif m["file"] and _FILE_NAME.fullmatch(m["file"]):
                spans.append(m.span("dirs"))
                if m["line"]:
                    spans.append(m.span("line"))  # the line moves with every release of the file
            else:
                spans.append(m.span())  # a directory: all the user's
        elif kind == "number" and _kept_number(text, m.start(), m.group()):
            continue
        else:
            spans.append(m.span())
    return spans


def _private_segments(text: str, start: int, end: int) -> list[tuple[int, int]]:
    """The spans of a URL path's segments (`text[start:end]`) that name the user: all of a hub's file route, else an id
    or a token, and the segment after `users/`, `orgs/`, … ."""
    path = text[start:end]
    if _HUB_ROUTE.search(path):
        return [(start, end)]
    spans: list[tuple[int, int]] = []
    at = start
    owner_next = False
    for segment in path.split("/"):
        if segment and (owner_next or _PRIVATE_SEGMENT.fullmatch(segment)):
            spans.append((at, at + len(segment)))
        owner_next = segment.lower() in _OWNER_SEGMENTS
        at += len(segment) + 1
    return spans


def _kept_number(text: str, at: int, number: str) -> bool:
    before = text[max(0, at - 40):at]
    if number.startswith(("-", "+")):
        return bool(_CODE_BEFORE.search(before))  # an exit code (`exit code -9`), never a setting's value
    if _INSTALLED_BEFORE.search(before):
        return False  # the user's own release: threads of the failure print theirs
    return bool(
        _RELEASE.fullmatch(number)
        or (_STABLE_NUMBER.fullmatch(number) and _VERSION_BEFORE.search(before))
        or (number.isdigit() and _CAPABILITY_BEFORE.search(before))
        or _CODE_BEFORE.search(before)
        or _ENV_SETTING_BEFORE.search(before)
    )


def _unmatched(piece: str) -> list[int]:
    """The positions of the brackets and quotes `piece` opens or closes without the other half (brackets inside a
    quote are the quote's text)."""
    stack: list[tuple[str, int]] = []
    unmatched: list[int] = []
    for i, c in enumerate(piece):
        inside_quote = bool(stack) and stack[-1][0] in _QUOTES
        if c in _QUOTES and _is_quote(piece, i):
            if inside_quote and stack[-1][0] == c:
                stack.pop()
            elif not inside_quote:
                stack.append((c, i))
        elif inside_quote:
            continue
        elif c in _OPENERS or (c == "<" and _opens_angle(piece, i)):
            stack.append((c, i))
        elif c in _CLOSERS and (c != ">" or _closes_angle(piece, i)):
            if stack and stack[-1][0] == _CLOSERS[c]:
                stack.pop()
            else:
                unmatched.append(i)
    return sorted(unmatched + [i for _, i in stack])


def _opens_angle(text: str, i: int) -> bool:
    """`<` opens a name (`<Response [500]>`, `<unknown>`), not a comparison (`<=0.7.3`, `<<`)."""
    return i + 1 < len(text) and (text[i + 1].isalpha() or text[i + 1] == "_") and (i == 0 or text[i - 1] != "<")


def _closes_angle(text: str, i: int) -> bool:
    """`>` closes a name, not a comparison (`cuda>=12.8`, `>>`, `->`)."""
    return i > 0 and (text[i - 1].isalnum() or text[i - 1] in ")]'\"_") and (i + 1 == len(text) or text[i + 1] not in "=>")


def _is_quote(text: str, i: int) -> bool:
    """An apostrophe between two letters (`model's`) is no quote."""
    return not (text[i] == "'" and 0 < i < len(text) - 1 and text[i - 1].isalnum() and text[i + 1].isalnum())


def _clean_parts(piece: str, cut_after: bool) -> list[str]:
    """`piece` cut at its unmatched brackets and quotes, each part's edges cleaned; `cut_after`: a value of the user's
    was cut right after the piece (the filler word before it is left out too: `the maximum model length of`)."""
    cuts = _unmatched(piece)
    if cuts:
        bounds = [-1, *cuts, len(piece)]
        parts: list[str] = []
        for n, (a, b) in enumerate(zip(bounds, bounds[1:], strict=False)):
            parts.extend(_clean_parts(piece[a + 1:b], cut_after and n == len(bounds) - 2))
        return parts
    piece = _trimmed(_LOGGING_HEADER.sub("", piece))
    if piece[:1] in _OPENERS and piece[-1:] == _OPENERS[piece[0]] and not _unmatched(piece[1:-1]):
        piece = _trimmed(piece[1:-1])  # a bracket around all of it: `(CUDA_ERROR_LAUNCH_FAILED)`
    if cut_after:
        piece = _trimmed(_DANGLING_FILLER.sub("", piece))
    return [piece] if piece else []


def _trimmed(piece: str) -> str:
    """`piece` less its edges' separators, until none is left (`, - Engine loop failed` loses both)."""
    while (trimmed := _TRAILING.sub("", _LEADING.sub("", piece))) != piece:
        piece = trimmed
    return piece


class _Score(NamedTuple):
    """What a phrase holds: `value`, its words (a specific token, an identifier, worth more, a filler word less; quoted
    text at most QUOTED_AT_MOST); `plain`, its unquoted words alone, and `words` how many; `strong`, a file's name or a
    version outside quotes; `named`, an error's name outside quotes (`CUDA_ERROR_LAUNCH_FAILED`)."""

    value: float
    plain: float
    words: int
    strong: bool
    named: bool = False


def _score(phrase: str) -> _Score:
    quoted_spans = _quoted_spans(phrase)
    plain = quoted = 0.0
    words = 0
    strong = named = False
    for m in _TOKEN.finditer(phrase):
        token = m.group()
        is_quoted = any(a <= m.start() < b for a, b in quoted_spans)
        file = _FILE_TOKEN.fullmatch(token)
        if (file is not None and file["line"]) or _STABLE_NUMBER.fullmatch(token) or _ERROR_NAME.fullmatch(token):
            # a code site, a version a check requires, an error's name: what the same failure prints
            weight, strong = 4.0, strong or not is_quoted
            named = named or (not is_quoted and _ERROR_NAME.fullmatch(token) is not None)
        elif file is not None or "/" in token or _SPECIFIC.search(token):
            weight = 2.0
        elif token.isdigit():
            weight = 1.0
        elif len(token) < 2:
            weight = 0.0
        else:
            weight = 0.25 if token.lower() in _STOPWORDS else 1.0
        if is_quoted:
            quoted += weight / 2
        else:
            plain += weight
            words += weight >= 1.0
    value = plain + min(quoted, QUOTED_AT_MOST)
    if words + (quoted > 0) < 2 and not _ERROR_NAME.fullmatch(phrase.strip("()[]{} ")):
        value = min(value, ONE_TOKEN_AT_MOST)
    return _Score(value, plain, words, strong, named)


def _quoted_spans(phrase: str) -> list[tuple[int, int]]:
    spans: list[tuple[int, int]] = []
    opened: tuple[str, int] | None = None
    for i, c in enumerate(phrase):
        if c in _QUOTES and _is_quote(phrase, i):
            if opened is None:
                opened = (c, i)
            elif opened[0] == c:
                spans.append((opened[1], i))
                opened = None
    return spans


def _windows(part: str, cut_after: bool) -> list[str]:
    """`part` itself when it fits, else its windows of at most LONGEST characters that start where it or one of its
    sentences starts, each ending at a word's end."""
    if len(part) <= LONGEST:
        return [part]
    windows = []
    for start in (0, *(m.end() for m in _SENTENCE_START.finditer(part))):
        window = part[start:start + LONGEST + 1]
        cut = len(window) > LONGEST
        if cut:
            window = window[:LONGEST]
            window = window[: window.rfind(" ")] if " " in window else window
        windows.extend(_clean_parts(window, cut_after=cut or cut_after))
    return windows


def search_phrase(text: str, least: float = LEAST) -> str:
    """The phrase of `text` (one line) to search for: its most specific run of the engine's words as printed, no value
    of the user's in it; "" when none is worth `least` (the caller that searches an exception's type with the phrase
    takes any word: `Fatal Python error: Aborted`)."""
    text = text[:READ_AT_MOST]
    candidates: list[str] = []
    start = 0
    for a, b in [*volatile_spans(text), (len(text), len(text))]:
        if a > start:
            cut_after = a < len(text)
            for part in _clean_parts(text[start:a], cut_after):
                candidates.extend(_windows(part, cut_after))
        start = max(start, b)
    return _chosen(candidates, least)


def _chosen(candidates: list[str], least: float) -> str:
    """The most specific candidate holding a code site or a version (the tokens that find the same failure's threads:
    `custom_all_reduce.cuh:37`, `below 7.0`); else the first that says enough alone, advice aside (the message's
    opening words name the failure: `CUDA out of memory. Tried to allocate`, not the advice after it); else the most
    specific.  A piece naming the error (`CUDA_ERROR_LAUNCH_FAILED`) beats one that only says an error happened."""
    scored = [(candidate, _score(candidate)) for candidate in candidates]
    strong = [pair for pair in scored if pair[1].strong and pair[1].value >= STRONG_LEAST]
    if strong:
        return max(strong, key=lambda pair: pair[1].value)[0]
    if named := [pair for pair in scored if pair[1].named]:
        return max(named, key=lambda pair: pair[1].value)[0]
    stated = [pair for pair in scored if not _ADVICE.match(pair[0])] or scored
    enough = next((candidate for candidate, score in stated if score.plain >= ENOUGH and score.words >= 2), None)
    if enough is not None:
        return enough
    top = max((score.value for _, score in stated), default=0.0)
    floor = max(top * CLOSE, least)
    return next((candidate for candidate, score in stated if score.value >= floor and score.value > 0), "")
