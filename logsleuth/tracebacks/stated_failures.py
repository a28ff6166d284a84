"""A failure a person states only in words: the launch command pasted, no log line, the error summarised in a sentence
(issue 28: the retired blind split 14's "failure stated only in prose" miss).

`I want to serve Llama-3.2-11B-Vision, but it OOMs. Command is: vllm serve …` (vllm-project/vllm#9445) names an error
class the engines print, a CUDA out-of-memory error, in the user's words.  A reader takes such a sentence as the
failure, so logsleuth reports one, typed as torch's CUDA out-of-memory error and marked as stated in words
(`ExceptionBlock.read_from_prose == "stated"`: the reports say the exception is inferred, never shown as printed).
Only the out-of-memory class is read: it is the one class a thread evidences (the other classes a person may name,
an illegal memory access or an exception type, read as often as a description of a behaviour or of a PR's purpose).
Only a sentence that says it happened, and was not got past, counts: a subject that failed (`it OOMs`, `the server
runs out of memory`), a failure verb with the class (`crashes with an OOM`) or a person who met it (`I get an OOM
error`).  None is read from a question (`why does it OOM?`), a hope or a negation (`to avoid OOM`, `it does not
OOM`), a condition (`if it OOMs`, `whenever the server runs out of memory`, `in case the model OOMs`), a past the
sentence or its line says was got past (`previously`, `earlier`, `it OOMed before I set …; now it works`, `so we use
…`, `solved`), a fix's or a PR's description (`this PR fixes the bug where …`), or host memory (`the pod OOMs`, `runs
out of RAM`: the kernel's or the cgroup's kill, not CUDA's error; no type is guessed for it).  As every prose reading,
the failure only of a paste that shows no other (a fallback).
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily

# The out-of-memory class as people write it; torch prints it as `torch.OutOfMemoryError: CUDA out of memory.`
_OOM = r"(?:CUDA\s+|GPU\s+)?(?:OOM|out[- ]of[- ]memory)(?:\s+errors?|\s+exceptions?)?"
CUDA_OOM = "torch.OutOfMemoryError: CUDA out of memory"
# Who or what failed: the process the paste is about, not a person (`I OOM` is no English) and not a container, a pod
# or a job (their OOM is the host's or the cgroup's memory).
_SUBJECT = (r"(?:it|this|that|(?:the\s+|my\s+|our\s+)?(?:server|engine|model|process|launch|"
            r"worker|startup|inference|vllm|sglang))")
_ADVERB = r"(?:(?:still|just|always|then|immediately|instantly|now|also|quickly|again)\s+)?"
# A subject that failed of it: `it OOMs`, `the server went OOM`, `it runs out of memory`.
_SUBJECT_FAILED = (r"(?:OOMs|OOMed|OOM'?d|goes\s+OOM|went\s+OOM|runs\s+out\s+of\s+(?:GPU\s+|CUDA\s+)?memory"
                   r"|ran\s+out\s+of\s+(?:GPU\s+|CUDA\s+)?memory)")
# A failure verb with the class: `crashes with an OOM`, `fails due to CUDA out of memory`.
_FAILED_WITH = r"(?:crash(?:es|ed)?|fail(?:s|ed)?|die[sd]|abort(?:s|ed)?|exit(?:s|ed)|errors?\s+out|errored\s+out|stops|stopped)"
_WITH = r"\s+(?:with|due\s+to|because\s+of|of|on|from)\s+(?:an?\s+|the\s+)?"
# A person who met it: `I get an OOM error`, `we hit CUDA out of memory`.
_MET = (r"\b(?:I|we)\s+" + _ADVERB + r"(?:keep\s+getting|keep\s+hitting|get|got|am\s+getting|'m\s+getting|hit|am\s+hitting|"
        r"encounter(?:ed)?|run\s+into|ran\s+into|see|saw)\s+(?:an?\s+|the\s+)?")
_STATED_OOM = compile_lazily(
    rf"(?i:\b{_SUBJECT}\s+{_ADVERB})(?:{_SUBJECT_FAILED})\b"
    rf"|(?i:\b{_FAILED_WITH}{_WITH})(?:{_OOM})\b"
    rf"|(?i:{_MET})(?:{_OOM})\b"
)
# The words that cheaply admit a line to the pattern above (most lines have none).
_CLASS_WORD = compile_lazily(r"(?i)OOM|out[- ]of[- ]memory")
# Words before the match, in its clause, that make it no statement: a negation, a hope, a purpose (`it does not
# OOM`, `to avoid OOM`, `it should not crash with an OOM`).
_HEDGE = compile_lazily(
    r"(?i)\b(?:not|never|no|without|avoid\w*|prevent\w*|might|may|could|would|will|should|whether|to|"
    r"hope\w*|expect\w*|fear|worr\w*|risk\w*|until|can't|cannot|won't|wouldn't|doesn't|didn't|don't|isn't)\b"
    r"|n't\b"
)
# Words anywhere before the match in its sentence (no clause break resets them: `if you use batch 512 and it OOMs`,
# `in case the model OOMs, …`) that make it a condition, a past or a description: a condition, a time before now,
# a fix or a PR that it is about.
_CONDITION_OR_PAST = compile_lazily(
    r"(?i)\b(?:if|unless|whenever|when|once|in\s+case|previously|earlier|before|used\s+to|formerly|"
    r"PR|pull\s+request|fix(?:es|ed)?|bug\s+where|the\s+issue\s+where)\b"
)
# A condition after the match (`it OOMs if the batch is 512`): a behaviour, not a run.
_CONDITION_AFTER = compile_lazily(r"(?i)\b(?:if|unless|whenever|in\s+case)\b")
# Words from the match's sentence to the end of its line that say the run got past it (`now it works fine`,
# `the upgrade solved it`, `so we use batch 128`, `which was my fault`): a past fix, no failure.
_GOT_PAST = compile_lazily(
    r"(?i)\b(?:works?|worked|working|solved|fixed|resolved|no\s+longer|my\s+fault|runs\s+fine|"
    r"so\s+(?:I|we)\s+(?:now\s+)?(?:use|set|lowered|switched|reduced))\b"
)
# A later line that says the run got past it (`Now it works after lowering the batch.`, `Solved by upgrading.`): fewer
# words than in the sentence's own line, since a later line's `works` is often about something else (`the same
# command works for a smaller model`).
_GOT_PAST_LATER = compile_lazily(
    r"(?i)\b(?:now\s+(?:it\s+|everything\s+|all\s+)?(?:works|runs|is\s+running)|works\s+now|solved|fixed\s+it|resolved|"
    r"no\s+longer\s+(?:OOMs?|crash\w*|fails?)|so\s+(?:I|we)\s+(?:now\s+)?(?:use|set|lowered|switched|reduced))\b"
)


def got_past_later(text: str) -> bool:
    """Whether a line after a stated failure says the run got past it: the stated failure is then a past fix."""
    return len(text) <= MAX_STATING_LINE and _GOT_PAST_LATER.search(text) is not None


# Host memory, not the GPU's: the kernel's or the container's OOM kill (categories.toml's host-memory), no CUDA error.
_HOST_MEMORY = compile_lazily(
    r"(?i)\b(?:RAM|CPU|host|system\s+memory|swap|cgroup|container|pod|docker|kubernetes|k8s|OOM[- ]?kill\w*|killed)\b"
)
# A sentence that asks (`Why does it OOM?`, `Does it crash with an OOM for you?`): states nothing.
_QUESTION_OPENING = compile_lazily(
    r"(?i)^\W*(?:why|how|what|when|is|are|was|were|could|would|should|can|does|do|did|might|may|will|any)\b")
_SENTENCE_END = compile_lazily(r"[.!?;\u3002\uff01\uff1f\uff1b](?=\s|$)")
# Where a clause starts: after a comma or colon, at `but` (`I want to serve X, but it OOMs`: the `to` of the first
# clause hedges nothing of the second).  Never at `and`: `if you use batch 512 and it OOMs` is still the condition.
_CLAUSE_BREAK = compile_lazily(r"[,:]\s|\bbut\b")
MAX_STATING_LINE = 2000  # a sentence is short; a long line is a dump or a config


def stated_failure(text: str) -> str | None:
    """`Type: message` of the CUDA out-of-memory error a sentence of this line says the run failed with, else None."""
    if len(text) > MAX_STATING_LINE or _CLASS_WORD.search(text) is None:
        return None
    for match in _STATED_OOM.finditer(text):
        if _states_it(text, match.start(), match.end()):
            return CUDA_OOM
    return None


def _states_it(text: str, start: int, end: int) -> bool:
    """Whether the sentence holding text[start:end] says the run failed of GPU memory: no hedge before the match in
    its clause, no condition, past or fix before it in its sentence nor a condition after it, nothing to the end of
    the line that says the run got past it, no host memory, and the sentence asks nothing."""
    opening = max((found.end() for found in _SENTENCE_END.finditer(text, 0, start)), default=0)
    closing = _SENTENCE_END.search(text, end)
    sentence_end = closing.end() if closing else len(text)
    sentence = text[opening:sentence_end]
    before = text[opening:start]
    clause = _CLAUSE_BREAK.split(before)[-1]
    return (_HEDGE.search(clause) is None
            and _CONDITION_OR_PAST.search(before) is None
            and _CONDITION_AFTER.search(text, end, sentence_end) is None
            and _GOT_PAST.search(text, opening) is None
            and _HOST_MEMORY.search(sentence) is None
            and not sentence.rstrip().endswith("?")
            and _QUESTION_OPENING.match(sentence) is None)
