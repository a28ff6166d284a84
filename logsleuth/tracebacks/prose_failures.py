"""Failures a person states in a sentence instead of pasting the log (issue 28, stop 41's blind split): an assert
statement quoted inline, and whether a sentence that quotes an exception type alone says it happened.

A reader of an issue thread takes `it crashes at \\`assert self.page_size == 1\\` when I set --page-size 16` as the
failure: the engine's assert failed, so an AssertionError was raised there (vllm-project/vllm#10648: a crash "with an
`assert … ` `AssertionError`"; vllm-project/vllm#4422's title, "`assert …` fails when …"; vllm-project/vllm#7156's,
"assert error: assert …").  The statement is the check that failed, kept as the innermost frame's source, with no
place: the same shape as a traceback cut under its raising statement (raising_statement.py), and as that one the
failure only of a paste that shows no other.

A quoted type with no message (`AssertionError`) is a failure only when the sentence says it happened (`it crashes
with \\`AssertionError\\``); a question about one (`is this an \\`AssertionError\\`?`) states no failure.
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.tracebacks.grammar import EMBEDDED

# An assert statement as written in code: `assert` and an expression of at least a few characters.
ASSERT_STATEMENT = compile_lazily(r"^assert\s+(?P<test>\S.{2,})$")
# The words of a sentence that says something failed (or was raised, thrown, hit, triggered, got).
FAILURE_WORDS = compile_lazily(
    r"(?i)\b(?:fail\w*|crash\w*|die[sd]?|dying|raise[sd]?|raising|throw\w*|thrown|hit(?:s|ting)?|trigger\w*|"
    r"got|get(?:s|ting)?|abort\w*|exit(?:s|ed|ing)?|errors?(?:ed)? out|assertion\s*error|assert(?:ion)?\s+error|"
    r"encounter\w*|occur\w*|broke|breaks|stops?|stopped|kill\w*)\b"
)
# The same words in Chinese, Japanese and Korean prose, which has no word boundaries to search by: "reported an error",
# "went wrong", "failed", "error" (`启动时报错\`'X' object has no attribute 'y'\``, the retired blind split 13;
# `load模型之后报错…`, vllm-project/vllm#18124).
WIDE_FAILURE_WORDS = ("\u62a5\u9519", "\u51fa\u9519", "\u5931\u8d25", "\u9519\u8bef", "\u30a8\u30e9\u30fc", "\uc624\ub958", "\uc5d0\ub7ec")
# For a quoted type, a sentence that calls it an error or a bug says it happened too (`the error is \`KeyError\``,
# `[Bug]: \`ValueError\` when loading …`); of a quoted statement it may not (`replace \`assert …\` with an error`).
TYPE_FAILURE_WORDS = compile_lazily(r"(?i)\b(?:errors?|bug)\b")
# An assert statement after a label that says it failed, not quoted: `assert error: assert x <= y`,
# `AssertionError: assert x == y` is the grammar's (an exception line), `assertion failed: assert …`.
LABELLED_ASSERT = compile_lazily(r"(?i)\bassert(?:ion)?[ _]?(?:error|failed|failure)\s*:\s*(?P<statement>assert\s+\S.{2,})$")
# A GitHub issue title from a bug template that is the statement: `[Bug]: assert x == "y" AssertionError`,
# `[Bug]: \\`assert n == 1\\` fails when …` (the quoted form is read as a quote).
TITLE_ASSERT = compile_lazily(
    r"^\[(?:Bug|Usage|Installation|Performance|Misc)\]:?\s+(?P<statement>assert\s+\S.{2,}?)(?:\s+AssertionError)?\s*$"
)
# A question about a type (`Is this an \\`AssertionError\\`?`, `could it be a ValueError?`): asks, states nothing.
QUESTION_OPENING = compile_lazily(r"(?i)^\W*(?:is|are|was|were|could|would|should|can|does|do|did|might|may|will)\b")


def _says_failure_words(text: str, type_words: bool) -> bool:
    """Whether the text has a word that says something failed (FAILURE_WORDS, the wide-script WIDE_FAILURE_WORDS), or
    with `type_words` one that calls it an error or a bug."""
    return (FAILURE_WORDS.search(text) is not None or (type_words and TYPE_FAILURE_WORDS.search(text) is not None)
            or any(word in text for word in WIDE_FAILURE_WORDS))


def quoted_assert_statement(text: str) -> str | None:
    """The assert statement a sentence says failed, else None: quoted (backticks, bold, quotes) in a sentence that
    says something failed, after a label that says so (`assert error: assert …`), or as a bug report's title."""
    if "assert" not in text:
        return None
    for m in EMBEDDED.finditer(text):
        quoted = (m["code"] or m["bold"] or m["quoted"] or "").strip()
        if ASSERT_STATEMENT.match(quoted) and _says_it_failed(text, m.start(), m.end()):
            return _statement(quoted)  # `\`assert …\` fails`, `crashes at \`assert …\``
    labelled = LABELLED_ASSERT.search(text) or TITLE_ASSERT.match(text.strip())
    return _statement(labelled["statement"]) if labelled else None


def states_the_failure(text: str, quoted: str) -> bool:
    """Whether a sentence that quotes an exception type alone (`quoted`, no message) says it happened."""
    start = text.find(quoted)
    return start < 0 or _says_it_failed(text, start, start + len(quoted), type_words=True)


def _says_it_failed(text: str, start: int, end: int, type_words: bool = False) -> bool:
    """Whether the sentence around the quote at text[start:end] says something failed: a failure word outside the
    quote (the quote's own `AssertionError` says nothing happened), and no question about it (`is this …?`)."""
    opening = max(text.rfind(mark, 0, start) for mark in SENTENCE_ENDS) + 1
    closing = min((found for mark in SENTENCE_ENDS if (found := text.find(mark, end)) >= 0), default=len(text))
    sentence = text[opening : closing + 1]
    around = text[opening:start] + " " + text[end : closing + 1]
    asks = sentence.rstrip().endswith("?") and bool(QUESTION_OPENING.match(sentence))
    return _says_failure_words(around, type_words) and not asks


# What ends a sentence in prose (a period inside a quote or a number is skipped: the quote is cut out before).
SENTENCE_ENDS = (". ", "? ", "! ")


def _statement(text: str) -> str:
    """The statement without the sentence's closing punctuation (`assert x == 1.` -> `assert x == 1`)."""
    statement = text.strip()
    while statement and statement[-1] in ".,;:" and not statement.endswith("..."):
        statement = statement[:-1].rstrip()
    return statement


# A message a sentence quotes without its type (issue 28: the blind splits' "not found" misses): `But I hit the error
# "**The checkpoint you are trying to load has model type `x` but Transformers does not recognize this architecture.**
# This could be …"` (Tencent-Hunyuan/Hunyuan-4B#2), `load模型之后报错No available memory for the cache blocks. …`
# (vllm-project/vllm#18124: the message right after the Chinese words for "reported the error").  Where it may start:
# after an opening quote, bold or code mark, a full-width colon, or where Latin text follows CJK text.  Only the raise
# site index decides it is a message (logged_errors.engine_message): a quote of anything else names nothing.
_OPENERS = ('"', "\u201c", "\u300c", "**", "`", "\uff1a")
_CLOSERS = {'"': '"', "\u201c": "\u201d", "\u300c": "\u300d", "**": "**", "`": "`", "\uff1a": ""}
MAX_QUOTED_STARTS = 4
MAX_QUOTING_LINE = 4096


def quoted_message_candidates(text: str) -> list[str]:
    """Where a message a sentence quotes may start and end: from each of the first few openers to its closer, and to
    the line's end (a quote that runs past a bold span's end), bold marks and closing quotes taken off; [] for a line
    with none."""
    if len(text) > MAX_QUOTING_LINE:
        return []
    candidates: list[str] = []
    for start, opener in _openings(text)[:MAX_QUOTED_STARTS]:
        rest = text[start:]
        closer = _CLOSERS[opener]
        end = rest.find(closer) if closer else -1
        for span in ((rest[:end], rest) if end > 0 else (rest,)):
            message = span.replace("**", "").strip().rstrip("\"\u201d\u300d").strip()
            if message.endswith("'") and message.count("'") % 2:
                message = message[:-1].rstrip()  # a closing quote of the sentence's, not the message's own name
            if message and message not in candidates:
                candidates.append(message)
    return candidates


# A message retyped by hand rather than copied: the writer's spacing around punctuation (`… this architecture .`,
# `( … )`) and an editor's curled quotes (`model type ‘x’`) where the program printed none and ASCII marks
# (CPython's and the engines' messages quote with ASCII marks only).  A retyped message is read with those undone.
# No thread of an engine message retyped so is cited: the shape is taken from argparse's line retyped by hand
# (datawhalechina/self-llm#459), its test built.  `(?<! )`: a run of spaces is tried from its first space only
# (from each of its spaces, the search was quadratic in the run).
_SPACE_BEFORE_MARK = compile_lazily(r"(?<! ) +(?=[.,;:!?)\]])|(?<=[(\[]) +")
CURLED_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})


def retyped_variants(candidates: list[str]) -> list[str]:
    """The candidates a person retyped, their spacing around punctuation and curled quotes undone (only those that
    change; [] for none)."""
    variants = []
    for message in candidates:
        undone = " ".join(_SPACE_BEFORE_MARK.sub("", message.translate(CURLED_QUOTES)).split())
        if undone != " ".join(message.split()) and undone not in variants:
            variants.append(undone)
    return variants


def _openings(text: str) -> list[tuple[int, str]]:
    """(where the quoted text starts, its opener), in the order they come, none inside a quote already found (a
    message's own backticks); a CJK-to-Latin boundary's opener is the full-width colon's (no closer)."""
    found: list[tuple[int, str]] = []
    at = 0
    while at < len(text) and len(found) < MAX_QUOTED_STARTS:
        opener = next((mark for mark in _OPENERS if text.startswith(mark, at)), None)
        if opener is not None:
            at += len(opener)
            found.append((at, opener))
            closer = _CLOSERS[opener]
            end = text.find(closer, at) if closer else -1
            at = end + len(closer) if end > at else at
            continue
        if at and text[at].isascii() and text[at].isalpha() and _is_cjk(text[at - 1]):
            found.append((at, "\uff1a"))
        at += 1
    return found


def _is_cjk(char: str) -> bool:
    """A character of Chinese, Japanese or Korean text (the CJK blocks and their punctuation)."""
    return "\u2e80" <= char <= "\u9fff" or "\uac00" <= char <= "\ud7af" or "\uff00" <= char <= "\uffef"


def may_quote_a_failure(text: str) -> bool:
    """A cheap test before the index is read: the line quotes something (or has CJK text) and says something failed or
    errored."""
    if len(text) > MAX_QUOTING_LINE or not any(mark in text for mark in _OPENERS) and not any(map(_is_cjk, text[:200])):
        return False
    return _says_failure_words(text, type_words=True)


def quotes_a_failure(text: str, quoted: str) -> bool:
    """Whether a sentence that quotes a message (`quoted`) says it happened: as for a type alone, a failure word or
    `error` outside the quote, and no question."""
    return states_the_failure(text, quoted)


# The tail of CPython's ImportError for a name a module does not define, its opening lost where a person retyped or
# copied only the part that matters (`SOME_NAME' from 'transformers.models.x.modeling_x` under "it fails with this
# error:", the retired blind split 13): CPython's template is "cannot import name %R from %R (%S)"
# (Python/ceval.c, import_from), and no other message of CPython's or of the engines puts a quoted name, then ` from `,
# then a quoted dotted module, so the fragment is that error.  Only a whole line or a whole code span is read, and only
# in a sentence (or under one) that says something failed: a name and a module in passing name nothing.
IMPORT_NAME_TAIL = compile_lazily(
    r"^'?(?P<name>[A-Za-z_]\w*)' from '(?P<module>[A-Za-z_]\w*(?:\.\w+)+)'?(?P<file> \([^()\n]{1,300}\))?$"
)


def import_name_fragment(text: str, above: str) -> str | None:
    """`ImportError: cannot import name 'X' from 'y.z'` for a line (or a code span in it) that is only that error's
    tail, in a sentence that says something failed or under one (`above`, the line of content before it), else None."""
    if "' from '" not in text or len(text) > MAX_QUOTING_LINE:
        return None
    whole = text.strip().strip("`").strip()
    if (m := IMPORT_NAME_TAIL.match(whole)) is not None:
        said = _says_it_failed(above, len(above), len(above), type_words=True) if above.strip() else False
    else:
        spans = (span for span in EMBEDDED.finditer(text) if span["code"] is not None)
        found = next(((span, m) for span in spans if (m := IMPORT_NAME_TAIL.match(span["code"].strip()))), None)
        if found is None:
            return None
        span, m = found
        said = _says_it_failed(text, span.start(), span.end(), type_words=True)
    if not said:
        return None
    return f"ImportError: cannot import name '{m['name']}' from '{m['module']}'{m['file'] or ''}"
