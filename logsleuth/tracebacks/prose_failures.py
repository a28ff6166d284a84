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
    said = FAILURE_WORDS.search(around) or (type_words and TYPE_FAILURE_WORDS.search(around))
    return bool(said) and not asks


# What ends a sentence in prose (a period inside a quote or a number is skipped: the quote is cut out before).
SENTENCE_ENDS = (". ", "? ", "! ")


def _statement(text: str) -> str:
    """The statement without the sentence's closing punctuation (`assert x == 1.` -> `assert x == 1`)."""
    statement = text.strip()
    while statement and statement[-1] in ".,;:" and not statement.endswith("..."):
        statement = statement[:-1].rstrip()
    return statement
