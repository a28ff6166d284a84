"""Make log-derived text inert before it is displayed.

A log is untrusted input: it can carry terminal escape sequences (cursor movement,
window-title changes, OSC 52 clipboard writes), rich markup, code fences that would
close ours early, and chat mentions.  Renderers pass every log-derived string through
`clean()` (done once in `render.view`) and then through the escaper of their format.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence

from logsleuth.lazyre import compile_lazily

ZWSP = "\u200b"  # zero-width space: breaks a token without changing how it reads

_ESCAPE_SEQUENCES = compile_lazily(
    r"""
      \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?    # OSC: title changes, OSC 52 clipboard, hyperlinks
    | \x1b[PX^_][^\x1b]*(?:\x1b\\)?         # DCS / SOS / PM / APC strings
    | \x1b\[[0-?]*[ -/]*[@-~]               # CSI: cursor movement, colours, screen clears
    | \x1b[ -/]*[0-~]                       # the other two-byte escapes (RIS, charset switches)
    | \x9d[^\x07\x9c]*(?:\x07|\x9c)?        # 8-bit OSC
    | \x9b[0-?]*[ -/]*[@-~]                 # 8-bit CSI
    """,
    re.VERBOSE,
)
# C0/C1 controls (tab and newline are handled apart), DEL, and the bidirectional
# overrides that can make a line display in a different order than it reads.
_CONTROLS = compile_lazily("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

MAX_DISPLAY_CHARS = 400  # of one log line shown in a report; the full line stays in the log (ingest keeps 64 KiB)


# Lone surrogates: bytes that were not UTF-8 (a file name decoded with surrogateescape).  No UTF-8 stream
# can carry them, so they are shown as the byte they stand for.
_SURROGATES = compile_lazily("[\ud800-\udfff]")


def _undecodable_byte(surrogate: str, backslash: str) -> str:
    code = ord(surrogate)
    return f"{backslash}x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def escape_surrogates(text: str, backslash: str = "\\") -> str:
    """Each byte a surrogateescape surrogate (U+DC80-U+DCFF) stands for as `\\xNN`; any other lone
    surrogate as U+FFFD.  `backslash` is what writes a backslash (JSON text: two)."""
    if not _SURROGATES.search(text):
        return text
    return _SURROGATES.sub(lambda m: _undecodable_byte(m.group(0), backslash), text)


def strip_controls(text: str) -> str:
    """Remove escape sequences and control characters; tabs become spaces; undecodable bytes become `\\xNN`."""
    if "\x1b" in text or "\x9b" in text or "\x9d" in text:
        text = _ESCAPE_SEQUENCES.sub("", text)
    return escape_surrogates(_CONTROLS.sub("", text.replace("\t", "    ")))


# What a terminal does not show as itself: controls (tab and newline too), DEL, C1, zero-width and bidi marks,
# line separators, the BOM; and lone surrogates (undecodable bytes).
_UNSEEN = compile_lazily("[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff\ud800-\udfff]")
_NAMED_ESCAPES = {"\t": "\\t", "\n": "\\n", "\r": "\\r", "\\": "\\\\", "'": "\\'"}


def quote_shell_word(word: str) -> str:
    """`word` as one shell word that shows every character it holds: shlex.quote's, or, when it holds one a
    terminal would not show (a tab, ESC, a bidi override), bash's `$'…'` with that one escaped (`\\t`,
    `\\x1b`, `\\u202e`), so a printed command reads as what it runs.  An undecodable byte is `\\xNN`."""
    if not _UNSEEN.search(word):
        return shlex.quote(word)
    return "$'" + "".join(_escaped_char(char) for char in word) + "'"


def _escaped_char(char: str) -> str:
    if char in _NAMED_ESCAPES:
        return _NAMED_ESCAPES[char]
    if not _UNSEEN.match(char):
        return char
    code = ord(char)
    if 0xDC80 <= code <= 0xDCFF:
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def quote_shell_words(words: Sequence[str]) -> str:
    return " ".join(quote_shell_word(word) for word in words)


def clip(text: str, limit: int = MAX_DISPLAY_CHARS) -> str:
    if len(text) <= limit:
        return text
    return f"{text[:limit]}… (+{len(text) - limit} chars)"


def clean(text: str, limit: int = MAX_DISPLAY_CHARS) -> str:
    """One display line: no controls, no newlines, at most `limit` characters (plus a marker)."""
    return clip(strip_controls(text).replace("\n", " "), limit)


def clean_lines(text: str, limit: int = MAX_DISPLAY_CHARS) -> list[str]:
    return [clip(line, limit) for line in strip_controls(text).split("\n")]


def escape_rich_markup(text: str) -> str:
    """`[bold]` in a log is shown literally when the string goes through console markup."""
    from rich.markup import escape

    return escape(text)


_BACKTICK_RUN = compile_lazily(r"`{3,}")


def break_fences(text: str) -> str:
    """For Slack, whose fences are always three backticks: a run of 3+ backticks in log
    text gets zero-width spaces so it can neither open nor close a fence."""
    return _BACKTICK_RUN.sub(lambda m: ZWSP.join(m.group(0)), text)


def markdown_fence(lines: list[str]) -> str:
    """A CommonMark fence longer than any backtick run in the content, so no line can close it."""
    longest = max((len(run) for line in lines for run in re.findall(r"`+", line)), default=0)
    return "`" * max(3, longest + 1)


def markdown_code_span(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


# Slack and GitHub link `@name` after any non-word character ("@here", [@here], :@here), not in `a@b`.
_MENTION = compile_lazily(r"(?<!\w)@(?=\w)")
_SLACK_SPECIAL = compile_lazily(r"<(?=[!@#])")


def defang_mentions(text: str) -> str:
    """`@here`, `@channel`, `@alice` and Slack's `<!channel>`, `<@U123>` tokens stop pinging anyone."""
    text = _MENTION.sub("@" + ZWSP, text)
    return _SLACK_SPECIAL.sub("<" + ZWSP, text)


_MARKDOWN_INLINE = compile_lazily(r"([\\\[\]*_|])")
# Maximal backtick runs only, as CommonMark pairs them: "```" never counts as a span opener.
_CODE_SPAN = compile_lazily(r"(?<!`)(`{1,2})(?!`)([^`\n]+?)(?<!`)\1(?!`)")


# What opens a block when it starts a line (after the inline escaping, which already took care of `*`, `_`,
# `|`, `<`, `>` and backtick fences): ATX headings, bullet and ordered list markers, setext underlines and
# thematic breaks, tilde fences.  Leading blanks are dropped: four of them open a code block.
_BLOCK_START = compile_lazily(
    r"^[ \t]*(?:(?=#{1,6}(?:[ \t]|$)|[-+](?:[ \t]|$)|=+[ \t]*$|(?:-[ \t]*){3,}$|~{3,})|(\d{1,9})(?=[.)](?:[ \t]|$)))",
    re.MULTILINE,
)


def escape_markdown_block_start(text: str) -> str:
    """`# x`, `1. x`, `- x`, `---` at the start of a line are shown as text, not as a heading, list or rule."""
    return _BLOCK_START.sub(lambda m: f"{m.group(1)}\\" if m.group(1) else "\\", text.lstrip(" \t"))


def escape_markdown_prose(text: str) -> str:
    """Prose (root cause, fix) may quote log text: no HTML, links, emphasis, tables, fences,
    headings, lists or mentions.  Code spans (one or two backticks, as pattern authors write
    them) are kept: nothing inside a code span is interpreted."""
    parts = _CODE_SPAN.split(text)
    # re.split with two groups yields [prose, ticks, code, prose, ticks, code, ..., prose]
    out = []
    for index in range(0, len(parts), 3):
        prose = parts[index].replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
        prose = _MARKDOWN_INLINE.sub(r"\\\1", prose)
        out.append(defang_mentions(_BACKTICK_RUN.sub(lambda m: "\\`" * len(m.group(0)), prose)))
        if index + 2 < len(parts):
            out.append(parts[index + 1] + parts[index + 2] + parts[index + 1])
    return escape_markdown_block_start("".join(out))


def escape_slack_api(text: str) -> str:
    """Slack's API and webhooks treat only `&`, `<`, `>` as control characters."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
