"""An exception message the paste cut where it ends: the log (or the user's copy of it) stopped mid-message, often
mid-word (`ValueError: The model's max seq len (4096) is larger than the maximum number of tok`).  The failure is still
the failure, its message kept as cut; it is marked truncated (models.ExceptionBlock.truncated) so reports say the log
is incomplete there and the reasoning reads the whole check's words from the raise site index rather than the cut
ones (reasoning/general.py `_cut_message_words`).

A message is read as cut only on evidence: it stops inside a word or a clause and the raise site index holds a check
whose message this one opens but does not match whole (facts/engine_messages: an engine's, else a package's), or a
quote or bracket the message opened and never closed on its last line (`KeyError: 'model.layers.0.mlp.gate_pro`).  A
message that merely lacks a full stop is whole (many checks print none), and one that ends a sentence may be an older
release's whole message."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.facts.engine_messages import engines_raising, package_raised_as
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure

MAX_CUT_MESSAGE = 4096  # characters of a message looked up: a longer one is a dump, not a check's text
# A quote opened at a word's start on the last line and never closed: `'`, `"` or a backtick after a space, a bracket,
# `=` or `:`, with no closing one after it.
_OPEN_QUOTE = compile_lazily(r"(?:^|[\s(\[{=:,])(?P<quote>['\"`])[^'\"`\n]{1,300}$")
_PAIRS = (("(", ")"), ("[", "]"), ("{", "}"))
# A span the line quotes: a bracket inside it is the message's subject, not its syntax (CPython's SyntaxError "'(' was
# never closed").
_QUOTED = compile_lazily(r"'[^'\n]*'|\"[^\"\n]*\"|`[^`\n]*`")
# An apostrophe inside a word (`Can't`, `model's`) is no quote: taken off before quotes are paired.
_APOSTROPHE = compile_lazily(r"(?<=\w)'(?=\w)")


def marked_cut(failure: Failure) -> Failure:
    """The failure with its last exception marked truncated when its message stops short where the paste ends, else
    the failure as it is."""
    final = failure.final
    message = final.message.rstrip()
    if final.truncated or not final.type or not message or len(message) > MAX_CUT_MESSAGE or message.endswith(("...", "…")):
        return failure
    if not (_left_open(message.splitlines()[-1]) or (_stops_mid_sentence(message) and _opens_a_longer_message(final.type, message))):
        return failure
    return replace(failure, exceptions=(*failure.exceptions[:-1], replace(final, truncated=True)), truncated=True)


def _left_open(last_line: str) -> bool:
    """A quote or bracket the line opened and did not close: the text after it was cut."""
    bare = _QUOTED.sub("", _APOSTROPHE.sub("", last_line))
    if _OPEN_QUOTE.search(bare) is not None:
        return True
    return any(bare.count(opening) > bare.count(closing) for opening, closing in _PAIRS)


def _stops_mid_sentence(message: str) -> bool:
    """The message ends inside a word or a clause, not at a sentence's or a quote's end: a message that ends with a
    full stop and opens a longer check of the index is another release's shorter message (vLLM 0.2's bfloat16 check
    ended at the GPU's capability, later releases go on with the dtype advice: vllm-project/vllm#1157)."""
    return message[-1:].isalnum() or message[-1:] in ",(-_/"


def _opens_a_longer_message(type_name: str, message: str) -> bool:
    """The raise site index holds a check whose message this one opens, holes filled in, and none it matches whole."""
    joined = " ".join(message.split())
    if engines_raising(type_name, joined):
        return False
    if engines_raising(type_name, joined, cut=True):
        return True
    return package_raised_as(joined) is None and package_raised_as(joined, cut=True) is not None
