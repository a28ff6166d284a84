"""A message the paste cut short whose opening is one of the engine's checks that refuse a quantization with a
parallel mode, in a launch that gives both (issue 28: the cut words alone named no category).

The engines refuse some quantization methods with some parallel modes in their own words (the raise site index):
vLLM's and SGLang's BitsAndBytesModelLoader ("Prequant BitsAndBytes models with tensor parallelism is not supported.
Please try with pipeline parallelism.", "… with TP is not supported.Please try with PP."), vLLM's ModelConfig
("BitAndBytes quantization with TP or PP is not supported yet."), the MoE methods' "Expert Parallelism is not
supported for fused Marlin MoE method." and the like.  A paste that stops inside such a message
(vllm-project/vllm#14449: `ValueError: Prequant B`, the launch giving `--quantization bitsandbytes
--tensor-parallel-size 2`) is too short for the index's cut-message reading (MIN_FIXED), but the launch narrows it:
the template must open with the cut words, be the decided engine's, name the quantization the command gives and a
parallel mode the command turns on.  The checks that remain must refuse one combination (one check, or its wordings in
several releases: vLLM's "with TP … Please try with PP." became "with tensor parallelism …"); else nothing is said.
Only a plain refusal is read (REVIEW5 M1): a check whose refusing sentence names a condition besides the method and the
mode (a backend, a kernel, a MoE method class, a format, a shape, a hole the engine fills) refuses that condition, not
the method with the mode, and the cut words cannot tell it.  The report names every mode the check refuses, and offers
another mode only when the check's own later sentence suggests it (REVIEW5 M2: "BitAndBytes quantization with TP or PP"
refuses both).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache

from logsleuth.command_line import CommandLine
from logsleuth.facts import engine_messages
from logsleuth.facts.message_templates import fixed_text, opening_matched, short_type
from logsleuth.facts.raise_sites import read_member
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-cut-quantization-parallel"
# The parallel modes, each with the flags that turn it on (a size above 1, or the switch) and the words a check
# writes it with.
_MODES = {
    "tensor parallelism": (("--tensor-parallel-size", "-tp", "--tp-size", "--tp"), r"tensor[ _-]?parallel\w*|\bTP\b"),
    "pipeline parallelism": (("--pipeline-parallel-size", "-pp", "--pp-size", "--pp"), r"pipeline[ _-]?parallel\w*|\bPP\b"),
    "expert parallelism": (("--enable-expert-parallel", "--expert-parallel-size", "--ep-size", "--ep"),
                           r"expert[ _-]?parallel\w*|\bEP\b"),
    "data parallelism": (("--data-parallel-size", "-dp", "--dp-size", "--dp"), r"data[ _-]?parallel\w*|\bDP\b"),
}
_METHOD_FLAGS = ("--quantization", "-q")
_QUANTIZED = compile_lazily(r"(?i)quantiz|bitsandbytes|bitandbytes|\bbnb\b|awq|gptq|fp8|fp4|marlin|gguf|modelopt|int4|int8|w4a|w8a")
_PARALLEL = compile_lazily(r"(?i)parallel|\b(?:TP|PP|EP|DP)\b")
# A refusing sentence that names more than the method and the mode: its condition, not the combination, is refused.
_CONDITION = compile_lazily(r"\{|(?i:backend|kernel|\bmoe\b|format|dispatch|requires?\b|only if|divisible|divides|aligned"
                            r"|shard|flashinfer|marlin|cutlass|trtllm|triton)|[a-z0-9]Method\b|MoE")
_REFUSES = compile_lazily(r"(?i)not supported|does not support|unsupported")
MIN_CUT = 8  # characters of the cut message: fewer open too many checks to tell
SOURCES = (
    "vllm vllm/model_executor/model_loader/bitsandbytes_loader.py (earlier loader.py) BitsAndBytesModelLoader: 'Prequant "
    "BitsAndBytes models with tensor parallelism is not supported. Please try with pipeline parallelism.'; sglang "
    "sglang/srt/model_loader/loader.py the same check; the raise site index's other quantization-with-parallelism checks",
    "vllm-project/vllm#14449 (`ValueError: Prequant B`, cut by the paste, with --quantization bitsandbytes "
    "--tensor-parallel-size 2)",
)


def quantized_parallel(evidence: Evidence) -> Diagnosis | None:
    """The one check of the decided engine that the cut message opens, refusing the launch's quantization with a
    parallel mode the launch turns on."""
    engine, command = evidence.launch.engine, evidence.launch.command
    final = evidence.failure.final
    message = (final.message or "").strip()
    if engine not in ENGINE_NAMES or not command or len(message) < MIN_CUT:
        return None
    options = dict(CommandLine.parse(command).options)
    method = next((" ".join(options[flag]).strip("'\" ") for flag in _METHOD_FLAGS if flag in options), "")
    modes = [mode for mode, (flags, _) in _MODES.items() if any(_turned_on(options, flag) for flag in flags)]
    if not method or not modes:
        return None  # the cheap checks first: the index lookup below runs only for such a launch
    if engine_messages.engines_raising(final.type, message, (engine,)):
        return None  # a whole message of the engine's: read as it is
    wanted = short_type(final.type) if final.type else None
    found = {fixed_text(template): (template, mode) for kind, template in _checks(engine)
             if wanted in (None, kind) and opening_matched(template, message) >= min(len(message), MIN_CUT)
             and _plain_refusal(template) and _names_method(template, method) and (mode := _mode_named(template, modes))}
    if len({mode for _, mode in found.values()}) != 1:
        return None  # no check, or checks of different combinations: the cut words do not tell which
    # one check, or one check's wordings in different releases: the longest wording is said
    template, mode = max(found.values(), key=lambda held: len(held[0]))
    return _diagnosis(evidence, engine, message, template, method, mode)


def _turned_on(options: dict[str, tuple[str, ...]], flag: str) -> bool:
    if flag not in options:
        return False
    values = options[flag]
    if not values:
        return True  # a switch (--enable-expert-parallel)
    value = values[0].strip("'\" ")
    return value.isdigit() and int(value) > 1


def _names_method(template: str, method: str) -> bool:
    """The check names the method (`bitsandbytes` as BitsAndBytes, BitAndBytes or BNB)."""
    letters = re.sub(r"[^a-z0-9]", "", template.lower())
    wanted = re.sub(r"[^a-z0-9]", "", method.lower())
    aliases = {"bitsandbytes": ("bitsandbytes", "bitandbytes", "bnb")}.get(wanted, (wanted,))
    return bool(wanted) and any(alias in letters for alias in aliases)


def _sentences(template: str) -> tuple[str, str]:
    """The check's refusing (first) sentence and the rest ("Please try with pipeline parallelism.")."""
    parts = re.split(r"(?<=[.!?])\s*(?=[A-Z])", template, maxsplit=1)
    return parts[0], parts[1] if len(parts) > 1 else ""


def _plain_refusal(template: str) -> bool:
    """The check refuses the method with the mode, no condition besides (no backend, kernel, class, shape, hole)."""
    refusal, _ = _sentences(template)
    return bool(_REFUSES.search(refusal)) and not _CONDITION.search(refusal)


def _modes_in(text: str, modes: Iterable[str] = _MODES) -> list[str]:
    return [mode for mode in modes if re.search(_MODES[mode][1], text, re.IGNORECASE)]


def _mode_named(template: str, modes: list[str]) -> str | None:
    """The launch's parallel mode the check refuses: named in its first sentence (a later one may suggest another:
    "Please try with pipeline parallelism.")."""
    return next(iter(_modes_in(_sentences(template)[0], modes)), None)


@lru_cache(maxsize=2)
def _checks(engine: str) -> tuple[tuple[str, str], ...]:
    """(type, template) of every indexed check of the engine that names a quantization and a parallel mode."""
    found: set[tuple[str, str]] = set()
    for number in range(engine_messages.SHARDS):
        member = read_member(engine, f"{engine_messages.RAISED}/{number}.json")
        for entries in (member or {}).values():
            found.update((entry[0], entry[1]) for entry in entries if _PARALLEL.search(entry[1]) and _QUANTIZED.search(entry[1]))
    return tuple(sorted(found))


def _diagnosis(evidence: Evidence, engine: str, message: str, template: str, method: str, mode: str) -> Diagnosis:
    name = ENGINE_NAMES[engine]
    refusal, rest = _sentences(template)
    refused = " or ".join(_modes_in(refusal)) or mode  # every mode the check refuses, as it refuses them
    suggested = [other for other in _modes_in(rest) if other not in _modes_in(refusal)]
    instead = (f"with {suggested[0]} (the check's own message suggests it) or on one GPU" if suggested
               else "on one GPU")
    cause = (f"The paste cut the message ('{message}'); of {name}'s own checks, the one that opens with these words and "
             f"names what the launch gives is '{template}'. The launch asks for the quantization {method} with "
             f"{mode}, and that check refuses {method} with {refused}.")
    fix = Fix(summary=(f"Run {method} without {refused}: {instead}; or use a checkpoint of another quantization "
                       f"method. The full message in the engine's output confirms the check."),
              needs_input=("the parallel layout or the checkpoint",))
    return Diagnosis(pattern=RULE_ID, title=f"{method} with {refused}, which {name}'s check refuses", category="quantization",
                     root_cause=cause, fix=fix, references=SOURCES, engine=engine,
                     engine_version=evidence.launch.engine_version, basis="rule",
                     evidence=(f"the cut message opens {name}'s check: {template}",
                               f"the launch: --quantization {method}, {mode}"))
