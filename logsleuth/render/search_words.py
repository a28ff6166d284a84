"""The text a report gives to search issue trackers with ("Search for:"): the words the engine printed, from the log.

Not logsleuth's own names for a failure (`sgl-router failed`, `launch failure`, `Hydra job failed`, `UsageError` for
argparse's `error:` line, a C++ type torch printed in a `what():` line): nobody's issue holds those words.  The
message's variable parts (numbers, paths, addresses, ids, URLs) are left out, since they are the user's own and
another thread's differ; what stays is in the log, in the log's order."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, ExceptionBlock, Failure

# at most this many characters, cut at a word: search boxes take a sentence, not a paragraph
LONGEST = 200
# fewer words than this left of the message: the exception's type is searched with it (`KeyError: 'lm_head.weight'`)
FEW_WORDS = 3
# what of a message is read for them: the words kept fit in LONGEST, and the patterns below backtrack over a long run
# of word characters (a path's leading segment), so a 100 KB message line must not reach them whole
READ_AT_MOST = 1000
_VARIABLE = compile_lazily(
    r"(?:https?|grpc|tcp|file)://[^\s()\[\]<>'\"`]+"  # a URL: the user's host and port
    r"|(?:[A-Za-z]:|[\w.\-~@+]+)?(?:[\\/][\w.\-~@+]+){2,}[\\/]?(?::\d+){0,2}"  # a path (with its line)
    r"|\b[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}\b"  # a UUID (a request's)
    r"|\b0x[0-9a-fA-F]+\b"  # an address
    r"|\b(?=[0-9a-f]{0,63}\d)(?=[0-9a-f]{0,63}[a-f])[0-9a-f]{8,64}\b"  # a hash or a hex id
    r"|(?<![\w.])[-+]?\d+(?:[.:,]\d+)*(?:[eE][-+]?\d+|\.(?:post|dev|rc)\d*)?(?!\w|\.\w)"  # a number: a size, a time, a version
)
_GONE = "\x00"  # where a variable part was, until the brackets and quotes around nothing else are taken out
# what removing them leaves: brackets and quotes around nothing else, a space before a comma
_LEFT_OVER = (
    (compile_lazily(r"(?:[(\[{<'\"`])[\s\x00,;:]*\x00[\s\x00,;:]*(?:[)\]}>'\"`])"), ""),
    (compile_lazily(r"\x00"), " "),
    (compile_lazily(r"([(\[{])\s*[,;]\s*"), r"\1"),
    (compile_lazily(r"\s*,(?:\s*,)+"), ","),
    (compile_lazily(r"([:;])\s*,"), r"\1"),
    (compile_lazily(r"\s+([,.;:)\]}])"), r"\1"),
)
# an exception class as CPython prints it at the start of its line: `ValueError`, `torch.OutOfMemoryError`
_PRINTED_CLASS = compile_lazily(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)")
# the headers printed before a message that are no class: faulthandler's (`Fatal Python error: Aborted`), LLVM's
# report_fatal_error (`LLVM ERROR: …`)
PRINTED_HEADERS = frozenset({"Fatal Python error", "LLVM ERROR"})
# the message's own words, outside quotes (a quoted name is the user's: `KeyError: 'lm_head.weight'`)
_QUOTED = compile_lazily(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_WORD = compile_lazily(r"[A-Za-z]{2,}")


def variable_parts_left_out(text: str) -> str:
    """`text` without its numbers, paths, addresses, ids and URLs, and the empty brackets they leave."""
    text = _VARIABLE.sub(_GONE, text[:READ_AT_MOST])
    for _ in range(2):
        for pattern, replacement in _LEFT_OVER:
            text = pattern.sub(replacement, text)
    text = " ".join(text.split()).strip(" ,;:-<>=")
    if len(text) <= LONGEST:
        return text
    cut = text[:LONGEST]
    return cut[: cut.rfind(" ")] if " " in cut else cut


def search_text(diagnosis: Diagnosis | None, failure: Failure) -> str:
    """The words to search for: those of the line general guidance names as the cause (reasoning/root_cause.py: an
    exception of the chain, or a log line before the crash), else the failure's final exception's; "" when the log
    holds no words of the failure's (a message only stated in a person's prose)."""
    if diagnosis is not None and diagnosis.basis == "general" and diagnosis.evidence:
        named = diagnosis.evidence[0].splitlines()[0] if diagnosis.evidence[0] else ""
        block = next((b for b in failure.exceptions if f"{b.type}: {b.message}".startswith(named)), None) if named else None
        if block is not None:
            return _block_words(block)
        if any(named == line.strip() for line in failure.context):  # a log line, its record's header and all
            return variable_parts_left_out(named)
    return _block_words(failure.final)


def _block_words(block: ExceptionBlock) -> str:
    if block.read_from_prose == "stated":  # the engine's words for what a sentence said: not in the log
        return ""
    if block.typed_from_statement:  # the exception line was not pasted: its raising statement is the text left
        return _frame_words(block)
    first = block.message.strip().splitlines()[0] if block.message.strip() else ""
    words = variable_parts_left_out(first)
    if len(_WORD.findall(_QUOTED.sub(" ", words))) >= FEW_WORDS:
        return words
    if _printed_type(block):
        if not words and (assertion := _frame_words(block)).startswith("assert "):
            return assertion  # a bare assertion: its condition is the text its issues quote
        return f"{block.type}: {words}" if words else block.type
    return words or _frame_words(block)  # no words at all (a traceback cut before its exception line): its frames


def _printed_type(block: ExceptionBlock) -> bool:
    """The type is a class CPython printed before the message (not one logsleuth inferred or named)."""
    return (not (block.typed_from_message or block.read_from_prose) and block.type != "UsageError"
            and (block.type in PRINTED_HEADERS or bool(_PRINTED_CLASS.fullmatch(block.type))))


def _frame_words(block: ExceptionBlock) -> str:
    """The innermost frame's source line, the most distinctive text a traceback cut before its exception line has."""
    innermost = block.frames[-1] if block.frames else None
    return (innermost.source or "").strip() if innermost is not None else ""
