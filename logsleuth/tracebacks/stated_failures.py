"""A failure a person states only in words: the launch command pasted, no log line, the error summarised in a sentence
(issue 28: the retired blind split 14's "failure stated only in prose" miss).

`I want to serve Llama-3.2-11B-Vision, but it OOMs. Command is: vllm serve …` (vllm-project/vllm#9445) names an error
class the engines print, a CUDA out-of-memory error, in the user's words; so do `the server crashes with an illegal
memory access when …` and `it segfaults at startup`.  A reader takes such a sentence as the failure, so logsleuth
reports one, typed from the class the words name and marked as stated in words (`ExceptionBlock.stated_in_words`:
the reports say the exception is inferred, never shown as printed).  Only a sentence that says it happened counts:
a subject that failed (`it OOMs`, `the server runs out of memory`), a failure verb with the class (`crashes with an
OOM`, `fails with an illegal memory access`) or a person who met it (`I get an OOM error`); a question (`why does it
OOM?`), a hope or a negation (`to avoid OOM`, `it does not OOM`, `it might run out of memory`) states none.  As every
prose reading, the failure only of a paste that shows no other (a fallback).
"""

from __future__ import annotations

import re

from logsleuth.lazyre import compile_lazily

# The error classes the engines' processes print, as people write them, with the type and message the engines print
# for each (torch's `torch.OutOfMemoryError: CUDA out of memory.`, the CUDA runtime's `cudaErrorIllegalAddress` text
# in torch's RuntimeError, the kernel's SIGSEGV).
_OOM = r"(?:CUDA\s+|GPU\s+)?(?:OOM|out[- ]of[- ]memory)(?:\s+errors?|\s+exceptions?)?"
_ILLEGAL_ACCESS = r"(?:CUDA\s+)?(?:error:?\s+)?(?:an?\s+)?illegal\s+memory\s+access"
# An exception type named in words (`it crashes with a ValueError when …`): the type it names, its message unknown.
_NAMED_TYPE = r"(?:[A-Za-z_]\w*\.)*[A-Z]\w*?(?:Error|Exception)"
_TYPE_IN_MATCH = compile_lazily(_NAMED_TYPE + r"$")
_CLASSES = (
    ("oom", _OOM, "torch.OutOfMemoryError: CUDA out of memory"),
    ("access", _ILLEGAL_ACCESS, "RuntimeError: CUDA error: an illegal memory access was encountered"),
    ("type", _NAMED_TYPE, ""),
)
# Who or what failed: the process the paste is about, not a person (`I OOM` is no English).
_SUBJECT = (r"(?:it|this|that|(?:the\s+|my\s+|our\s+)?(?:server|engine|model|process|launch|container|pod|job|"
            r"worker|service|instance|startup|inference|vllm|sglang))")
_ADVERB = r"(?:(?:still|just|always|then|immediately|instantly|now|also|quickly|again)\s+)?"
# A subject that failed of it: `it OOMs`, `the server went OOM`, `it runs out of memory`, `it segfaults`.
_SUBJECT_FAILED = {
    "oom": r"(?:OOMs|OOMed|OOM'?d|goes\s+OOM|went\s+OOM|runs\s+out\s+of\s+(?:GPU\s+|CUDA\s+)?memory"
           r"|ran\s+out\s+of\s+(?:GPU\s+|CUDA\s+)?memory)",
    "access": r"(?:hits|hit|triggers|triggered|throws|threw|raises|raised)\s+" + _ILLEGAL_ACCESS,
    "type": r"(?:throws|threw|raises|raised|hits|hit)\s+(?:an?\s+|the\s+)?" + _NAMED_TYPE,
}
# A failure verb with the class: `crashes with an OOM`, `fails due to CUDA out of memory`, `died of a segfault`.
_FAILED_WITH = r"(?:crash(?:es|ed)?|fail(?:s|ed)?|die[sd]|abort(?:s|ed)?|exit(?:s|ed)|errors?\s+out|errored\s+out|stops|stopped)"
_WITH = r"\s+(?:with|due\s+to|because\s+of|of|on|from)\s+(?:an?\s+|the\s+)?"
# A person who met it: `I get an OOM error`, `we hit CUDA out of memory`, `I keep getting a segfault`.
_MET = (r"\b(?:I|we)\s+" + _ADVERB + r"(?:keep\s+getting|keep\s+hitting|get|got|am\s+getting|'m\s+getting|hit|am\s+hitting|"
        r"encounter(?:ed)?|run\s+into|ran\s+into|see|saw)\s+(?:an?\s+|the\s+)?")


def _class_pattern(name: str, words: str) -> re.Pattern[str]:
    # A type a person says they met (`I get a ValueError when I pass "--tp 2"`) is not read: such a sentence often
    # quotes what it was about rather than the error (tests/test_fatal_output_found8.py); a process that failed with it is.
    met = rf"|(?i:{_MET})(?:{words})\b" if name != "type" else ""
    return compile_lazily(
        rf"(?i:\b{_SUBJECT}\s+{_ADVERB})(?:{_SUBJECT_FAILED[name]})\b"
        rf"|(?i:\b{_FAILED_WITH}{_WITH})(?:{words})\b" + met
    )


_PATTERNS = tuple((name, _class_pattern(name, words), failure) for name, words, failure in _CLASSES)
# The words that cheaply admit a line to the patterns above (most lines have none).
_CLASS_WORD = compile_lazily(r"(?i)OOM|out[- ]of[- ]memory|illegal\s+memory|Error\b|Exception\b")
# Words before the match, in its sentence, that make it no statement: a negation, a hope, a condition, a purpose
# (`it does not OOM`, `to avoid OOM`, `if it runs out of memory`, `it should not crash with an OOM`).
_HEDGE = compile_lazily(
    r"(?i)\b(?:not|never|no|without|avoid\w*|prevent\w*|might|may|could|would|will|should|if|whether|unless|to|"
    r"hope\w*|expect\w*|fear|worr\w*|risk\w*|before|until|can't|cannot|won't|wouldn't|doesn't|didn't|don't|isn't)\b"
    r"|n't\b"
)
# A sentence that asks (`Why does it OOM?`, `Does it crash with an OOM for you?`): states nothing.
_QUESTION_OPENING = compile_lazily(
    r"(?i)^\W*(?:why|how|what|when|is|are|was|were|could|would|should|can|does|do|did|might|may|will|any)\b")
_SENTENCE_END = compile_lazily(r"[.!?;\u3002\uff01\uff1f\uff1b](?=\s|$)")
# Where a sentence's clause starts: after a comma or colon, at `but` or `and` (`I want to serve X, but it OOMs`: the
# `to` of the first clause hedges nothing of the second).
_CLAUSE_BREAK = compile_lazily(r"[,:]\s|\bbut\b|\band\b")
MAX_STATING_LINE = 2000  # a sentence is short; a long line is a dump or a config


def stated_failure(text: str) -> str | None:
    """`Type: message` of the error class a sentence of this line says the run failed with, else None."""
    if len(text) > MAX_STATING_LINE or _CLASS_WORD.search(text) is None:
        return None
    for _, pattern, failure in _PATTERNS:
        for match in pattern.finditer(text):
            if _states_it(text, match.start(), match.end()):
                return failure or _TYPE_IN_MATCH.search(match.group())[0]  # type: ignore[index]
    return None


def _states_it(text: str, start: int, end: int) -> bool:
    """Whether the sentence holding text[start:end] says it happened: no hedge before the match in its clause, and
    the sentence asks nothing."""
    opening = max((found.end() for found in _SENTENCE_END.finditer(text, 0, start)), default=0)
    closing = _SENTENCE_END.search(text, end)
    sentence = text[opening:closing.end() if closing else len(text)]
    clause = _CLAUSE_BREAK.split(text[opening:start])[-1]
    return (_HEDGE.search(clause) is None and not sentence.rstrip().endswith("?")
            and _QUESTION_OPENING.match(sentence) is None)
