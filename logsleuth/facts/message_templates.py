"""A raise site's message template as a pattern: the raise site index (raise_sites-<engine>.zip) keeps each
`raise` and `assert` message as text with `{}` where the code computes text at run time
(`f"Engine core initialization failed. Failed core proc(s): {finished}"` is
`Engine core initialization failed. Failed core proc(s): {}`).  Which messages it prints, how much fixed text
it has, and the word it is filed under (facts/engine_messages.py).
"""

from __future__ import annotations

import re
from functools import lru_cache

from logsleuth.lazyre import compile_lazily

HOLE = "{}"
# A template's fixed text, holes left out, must be this long to stand for one check: "Invalid value {}" (13) is
# raised by many programs; "Engine core initialization failed" is vLLM's alone.
MIN_FIXED = 24
# A sentence's end and the next sentence's start inside what a hole printed, where the message ends in that hole: the
# message is a whole one of other words, not one the paste cut inside a value (torch's rendezvous `Timed out after 601
# seconds waiting for clients. 1/2 clients joined.` is no cut of vLLM's `Timed out after {}s waiting for {} lock: {}`).
_SENTENCE_BREAK = compile_lazily(r"[a-z][.!?] +[A-Z0-9]")
MAX_MESSAGE = 4000  # a message longer than this is not looked up (a template is a sentence or a few)
WORD = compile_lazily(r"[A-Za-z_][A-Za-z0-9_]{3,}")
# A message built with `%` or `str.format` keeps its placeholders in the index (`"model %s does not support …" % name`,
# `"… {name} …".format(name=…)`): each is a hole, like the `{}` an f-string's expression leaves.
PLACEHOLDER = compile_lazily(r"%[-#0 +]*\d*(?:\.\d+)?[sdrifxg]|\{[A-Za-z_]?[\w.\[\]]*(?:![rsa])?(?::[^{}]*)?\}")


def fixed_text(template: str) -> str:
    """The template without its holes, white space as single spaces: two templates that differ only in holes print
    the same kind of message."""
    return " ".join(template.replace(HOLE, " ").split())


def fixed_length(template: str) -> int:
    return len(fixed_text(template))


@lru_cache(maxsize=4096)
def _pattern(template: str) -> re.Pattern[str]:
    """The template as a regex over a whole message: fixed text literal (any run of white space as any run, since
    a log may rewrap it), each hole any text."""
    parts = []
    for fixed in PLACEHOLDER.sub(HOLE, template).split(HOLE):
        parts.append(r"\s+".join(re.escape(chunk) for chunk in fixed.split()) if fixed.strip() else "")
        if fixed[:1].isspace() and parts[-1]:
            parts[-1] = r"\s*" + parts[-1]
        if fixed[-1:].isspace() and parts[-1]:
            parts[-1] += r"\s*"
    return re.compile("(?s)" + ".*?".join(parts))


def template_matches(template: str, message: str) -> bool:
    """The message is what the template prints (its holes filled in), white space and backticks aside."""
    text = without_backticks(message).strip()
    if not template.strip() or len(text) > MAX_MESSAGE:
        return False
    return _pattern(without_backticks(template).strip()).fullmatch(text) is not None


def without_backticks(text: str) -> str:
    """The text without its backticks: Markdown's code marks, which a paste adds around a message or a name in it, or
    loses (GitHub renders `x` as code, and a paste wrapped whole in backticks drops the inner ones: transformers'
    ``model type `qwen2_vl` `` pasted as `model type qwen2_vl`, runpod-workers/worker-vllm#114).  A program's message
    means the same with them or without."""
    return text.replace("`", "") if "`" in text else text




def opening_matched(template: str, message: str) -> int:
    """How much of the template's fixed text a message that stops short of the template's end matches (a paste
    cut mid-sentence, or that kept only the first sentence): the message is the template's opening, holes filled
    in, cut anywhere after; 0 when it is not.  A whole match counts too (template_matches says so first)."""
    text = _cut_text(without_backticks(message))
    template = without_backticks(template)
    if not text or len(text) > MAX_MESSAGE or not template.strip():
        return 0
    parts = _fixed_parts(template)
    if not _could_open(parts, text):
        return 0
    for count in range(len(parts), 0, -1):  # the longest opening first: the most fixed text matched
        done, cut = parts[:count - 1], parts[count - 1]
        if not done:  # the message is a cut of the template's first fixed text
            if cut and cut.startswith(text):
                return len(text)
            continue
        m = _opening_pattern(done).fullmatch(text)
        if m is None:
            continue
        rest, fixed = m["rest"], sum(len(part) for part in done)
        if not rest:
            return fixed
        # the rest is what the hole printed, then the start of the next fixed text (it may stop mid-word)
        starts = [i for i in range(len(rest) + 1) if cut.startswith(rest[i:].lstrip())]
        if cut and starts[0] == len(rest) and _SENTENCE_BREAK.search(rest):
            # fixed text follows the hole, yet the hole would run on past a sentence's end to the message's end: a
            # whole message of other words, not a cut.  A hole that ends the template may hold sentences (a torch
            # OOM message in SGLang's `Capture cuda graph failed: {}`), so it is never refused for that.
            continue
        return fixed + len(rest[starts[0]:].lstrip())
    return 0


@lru_cache(maxsize=16)
def _cut_text(message: str) -> str:
    """The message as a cut is compared: its end (an ellipsis, dots) left out, white space as single spaces."""
    return " ".join(_without_cut_end(message.strip()).split())


def _without_cut_end(text: str) -> str:
    """The text without the end a paste gives a message it cut short: an ellipsis, three dots or more, white space.
    Walked back by hand: the regex it replaces, `(?:\\s|\\.\\.\\.+|…)+$`, backtracked exponentially on a run of
    dots followed by more text (40 dots: a second) and quadratically on a run of spaces (CI's fuzz test)."""
    end = len(text)
    while end:
        if text[end - 1].isspace() or text[end - 1] == "…":
            end -= 1
            continue
        dots = end
        while dots and text[dots - 1] == ".":
            dots -= 1
        if end - dots < 3:
            break
        end = dots
    return text[:end]


@lru_cache(maxsize=8192)
def _fixed_parts(template: str) -> tuple[str, ...]:
    """The template's fixed texts between its holes, white space as single spaces ("" where two holes meet)."""
    return tuple(" ".join(part.split()) for part in PLACEHOLDER.sub(HOLE, template.strip()).split(HOLE))


def _could_open(parts: tuple[str, ...], text: str) -> bool:
    """A quick test before the regex: a template that starts with fixed text is opened only by a message that starts
    with it (or that it starts with); one that starts with a hole only by a message holding enough of the first fixed
    text after it to tell."""
    first = parts[0]
    if first:
        return text.startswith(first) or first.startswith(text)
    following = next((part for part in parts if part), "")
    return following[:MIN_FIXED] in text if len(following) >= MIN_FIXED else following in text


@lru_cache(maxsize=1024)
def _opening_pattern(parts: tuple[str, ...]) -> re.Pattern[str]:
    """The template's first fixed texts, each hole between them any text, then what follows (`rest`)."""
    return re.compile("(?s)" + ".*?".join(re.escape(part) for part in parts) + r"(?P<rest>.*)")  # (white space folded)


def opening_word(template: str) -> str | None:
    """The word a template is filed under for its cut messages: the longest word no hole touches within its first
    MIN_FIXED characters of fixed text, which any cut of it long enough to tell (MIN_FIXED) holds whole."""
    pieces = template.split(HOLE)
    best: str | None = None
    seen = 0
    for number, fixed in enumerate(pieces):
        for found in WORD.finditer(fixed):
            touches_hole = (found.start() == 0 and number > 0) or (found.end() == len(fixed) and number < len(pieces) - 1)
            if seen + len(" ".join(fixed[:found.end()].split())) > MIN_FIXED:
                return best
            word = found.group()
            if not touches_hole and (best is None or (len(word), word) > (len(best), best)):
                best = word
        seen += len(" ".join(fixed.split()))
    return best


def anchor_word(template: str) -> str | None:
    """The word a template is filed under: its longest word of fixed text that no hole touches (a hole next to
    `_size` may print `tp_size`), so the same word stands whole in every message the template prints."""
    pieces = template.split(HOLE)
    best: str | None = None
    for number, fixed in enumerate(pieces):
        for found in WORD.finditer(fixed):
            touches_hole = (found.start() == 0 and number > 0) or (found.end() == len(fixed) and number < len(pieces) - 1)
            word = found.group()
            if not touches_hole and (best is None or (len(word), word) > (len(best), best)):
                best = word
    return best


def short_type(name: str) -> str:
    """`vllm.v1.engine.exceptions.EngineDeadError` -> `EngineDeadError`."""
    return name.rsplit(".", 1)[-1]
