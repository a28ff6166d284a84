"""The text a report gives to search issue trackers with ("Search for:"): the words the engine printed, from the log.

Not logsleuth's own names for a failure (`sgl-router failed`, `launch failure`, `Hydra job failed`, `UsageError` for
argparse's `error:` line, a C++ type torch printed in a `what():` line): nobody's issue holds those words.  The text is
a run of the line as the log printed it, the user's values (numbers, sizes, addresses, ids, a path's directories) left
out by choosing the run between them (render/search_phrase.py), so that a quoted search finds it word for word.  The
line is the one general guidance names as the cause: the root of a cascade, not its symptom."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, ExceptionBlock, Failure
from logsleuth.render.search_phrase import search_phrase

# fewer words than this in the phrase: the exception's type is searched with it (`KeyError: 'lm_head.weight'`)
FEW_WORDS = 3
# an exception class as CPython prints it at the start of its line: `ValueError`, `torch.OutOfMemoryError`
_PRINTED_CLASS = compile_lazily(r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Warning|Exit|Interrupt)")
# the headers printed before a message that are no class: faulthandler's (`Fatal Python error: Aborted`), LLVM's
# report_fatal_error (`LLVM ERROR: …`)
PRINTED_HEADERS = frozenset({"Fatal Python error", "LLVM ERROR"})
# the message's own words, outside quotes (a quoted name is the user's: `KeyError: 'lm_head.weight'`)
_QUOTED = compile_lazily(r"'[^']*'|\"[^\"]*\"|`[^`]*`")
_WORD = compile_lazily(r"[A-Za-z]{2,}")
# A frame of Python's own library: the frozen import machinery, lib/pythonX.Y/ outside site-packages (Lib\ on Windows)
_STANDARD_LIBRARY = compile_lazily(
    r"^<frozen |[/\\]lib[/\\]python\d\.\d+[/\\](?!site-packages|dist-packages)|[/\\]Lib[/\\](?!site-packages)")


def search_text(diagnosis: Diagnosis | None, failure: Failure) -> str:
    """The words to search for: those of the line general guidance names as the cause (reasoning/root_cause.py: an
    exception of the chain, a log line before the crash, or a failure printed before this one, whose symptom this
    is), else the failure's final exception's; "" when the log holds no words of the failure's (a message only stated
    in a person's prose)."""
    if diagnosis is not None and diagnosis.basis == "general" and diagnosis.evidence:
        named = diagnosis.evidence[0].splitlines()[0] if diagnosis.evidence[0] else ""
        block = next((b for b in failure.exceptions if f"{b.type}: {b.message}".startswith(named)), None) if named else None
        if block is not None:
            return _block_words(block)
        if any(named == line.strip() for line in failure.context):  # a log line, as the log printed it
            return search_phrase(named)
        if named:
            return _earlier_words(named)
    return _block_words(failure.final)


def _earlier_words(named: str) -> str:
    """The words of a cause named outside this failure's chain and lines: an earlier failure's exception line
    (`Type: message`, reasoning/evidence.exception_lines) or a line after the crash.  The type is logsleuth's own name
    where the log printed none (`launch failure`), so only a class CPython printed is searched with the message."""
    type_name, colon, message = named.partition(": ")
    if not colon:
        return search_phrase(named)
    if _is_printed_class(type_name):
        return _message_words(type_name, message)
    return search_phrase(message)


def _block_words(block: ExceptionBlock) -> str:
    if block.read_from_prose == "stated":  # the engine's words for what a sentence said: not in the log
        return ""
    if block.typed_from_statement:  # the exception line was not pasted: its raising statement is the text left
        return _frame_words(block)
    if not block.message.strip() and _printed_type(block) and (assertion := _frame_words(block)).startswith("assert "):
        return assertion  # a bare assertion: its condition is the text its issues quote
    words = _message_words(block.type if _printed_type(block) else "", block.message)
    return words or _frame_words(block, cut=True)  # no words at all (a traceback cut before its exception line): its frames


def _message_words(printed_type: str, message: str) -> str:
    """The phrase of a message's first line; with the type CPython printed before it (`printed_type`, "" when none)
    when the phrase opens the message and says little alone (`KeyError: 'lm_head.weight'`), so that it stays the
    log's own text."""
    first = message.strip().splitlines()[0] if message.strip() else ""
    words = search_phrase(first)
    if not printed_type:
        return words
    if not words:
        # a phrase worth less is searched only with the type before it, as printed (`Fatal Python error: Aborted`;
        # not a file's name alone: `RuntimeError: at …/flashinfer_backend.py:412`)
        words = search_phrase(first, least=0.0)
        return f"{printed_type}: {words}" if words and first.startswith(words) else printed_type
    if len(_WORD.findall(_QUOTED.sub(" ", words))) < FEW_WORDS and first.startswith(words):
        return f"{printed_type}: {words}"
    return words


def _printed_type(block: ExceptionBlock) -> bool:
    """The type is a class CPython printed before the message (not one logsleuth inferred or named)."""
    return not (block.typed_from_message or block.read_from_prose) and _is_printed_class(block.type)


def _is_printed_class(type_name: str) -> bool:
    return type_name != "UsageError" and (type_name in PRINTED_HEADERS or bool(_PRINTED_CLASS.fullmatch(type_name)))


def _frame_words(block: ExceptionBlock, cut: bool = False) -> str:
    """The innermost frame's source line, the most distinctive text a traceback cut before its exception line has;
    `cut`: the innermost outside Python's own library (importlib's `return _bootstrap._gcd_import(name[level:],
    package, level)` ends every import by name in every program: the line that asked for the import says which)."""
    own = [frame for frame in block.frames if not (cut and _STANDARD_LIBRARY.search(frame.file))]
    innermost = (own or block.frames)[-1] if block.frames else None
    return search_phrase((innermost.source or "").strip()) if innermost is not None else ""
