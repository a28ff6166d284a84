"""SGLang refusing a request longer than it can hold: "Input length (N tokens) exceeds the maximum allowed length (M
tokens)" (issue 28, stop 43's serving sweep).

SGLang's scheduler logs this (validate_input_length, facts/raise_sites-sglang.zip, when the input is at least
max_req_input_len and --allow-auto-truncate is off), and max_req_input_len is the smaller of two limits
(sglang/srt/managers/tp_worker.py: `min(context_len - 1, max_total_num_tokens - 1)`, a few tokens less in later
releases): the context length, and the KV cache's token capacity, max_total_num_tokens, which the memory left for the
cache decides.  So an allowed length below the server's context length is the KV cache's size, and raising
--context-length does not move it: sgl-project/sglang#4048 (allowed 59862 tokens with a longer context; users got
longer inputs through with more GPUs for the cache)."""

from __future__ import annotations

from logsleuth.command_line import flag_value
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.catalog_flags import release_flag
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-sglang-input-over-limit"
_OVER_LIMIT = compile_lazily(
    r"Input length \((?P<given>\d{1,12}) tokens\) exceeds the maximum allowed length \((?P<allowed>\d{1,12}) tokens\)"
)
# Later releases keep a few tokens of headroom below the smaller limit (context_len - 1 - 5).
_HEADROOM = 8
SOURCES = (
    "sglang/srt/managers/scheduler.py validate_input_length: logs 'Input length ({} tokens) exceeds the maximum "
    "allowed length ({} tokens). Use a shorter input or enable --allow-auto-truncate.' (facts/raise_sites-sglang.zip)",
    "sglang/srt/managers/tp_worker.py: max_req_input_len = min(context_len - 1, max_total_num_tokens - 1); "
    "max_total_num_tokens is the KV cache's token capacity, printed at start-up",
    "sgl-project/sglang#4048: an allowed length below the context length; more GPUs for the KV cache let longer "
    "inputs through",
)


def sglang_input_over_limit(evidence: Evidence) -> Diagnosis | None:
    found = next((m for line in (evidence.message_text, *evidence.lines) if (m := _OVER_LIMIT.search(line))), None)
    launch = evidence.launch
    if found is None or launch.engine == "vllm":
        return None
    given, allowed = int(found["given"]), int(found["allowed"])
    context = flag_value(launch, "--context-length")
    context_tokens = int(context) if context and context.isdigit() and len(context) <= 12 else None
    two_limits = ("SGLang allows an input up to the smaller of two limits: the context length, and the number of "
                  "tokens its KV cache holds (max_total_num_tokens, printed at start-up, set by the memory left for "
                  "the cache after the weights).")
    if context_tokens is not None and allowed < context_tokens - _HEADROOM:
        cause = (f"The request's input ({given} tokens) is longer than SGLang allows ({allowed} tokens). {two_limits} "
                 f"The server's context length is {context_tokens}, so the limit here is the KV cache's size: a "
                 "larger --context-length does not move it.")
    else:
        cause = (f"The request's input ({given} tokens) is longer than SGLang allows ({allowed} tokens). {two_limits} "
                 "When the allowed length is below the context length the server was started with, the KV cache's "
                 "size is the limit, and a larger --context-length does not move it.")
    steps = [
        "compare the allowed length with max_total_num_tokens in the server's start-up log: equal (less one) means "
        "the KV cache is the limit",
        "more KV cache: the model over more GPUs (tensor parallelism) leaves each GPU more memory for it",
    ]
    if (fraction := release_flag(launch, "--mem-fraction-static")) is not None:
        steps.append(f"or a higher {fraction}, in small steps: it gives the cache more memory, and too high a value "
                     "runs out of memory at start-up or under load")
    if (truncate := release_flag(launch, "--allow-auto-truncate")) is not None:
        steps.append(f"{truncate} makes the server cut the input to the limit instead of refusing it (the cut part is "
                     "not seen by the model)")
    return Diagnosis(
        pattern=RULE_ID, title="A request longer than the SGLang server can hold", category="context-length",
        root_cause=cause,
        fix=Fix(summary=("Send a shorter input, or give the KV cache room for it when the allowed length is below the "
                         "context length."), steps=tuple(steps)),
        references=SOURCES, engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"input {given} tokens, allowed {allowed} tokens"
                  + (f", context length {context_tokens}" if context_tokens is not None else ""),),
    )
