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
"""

from __future__ import annotations

import re
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
    if engine_messages.engines_raising(final.type, message, (engine,)):
        return None  # a whole message of the engine's: read as it is
    options = dict(CommandLine.parse(command).options)
    method = next((" ".join(options[flag]).strip("'\" ") for flag in _METHOD_FLAGS if flag in options), "")
    modes = [mode for mode, (flags, _) in _MODES.items() if any(_turned_on(options, flag) for flag in flags)]
    if not method or not modes:
        return None
    wanted = short_type(final.type) if final.type else None
    found = {fixed_text(template): (template, mode) for kind, template in _checks(engine)
             if wanted in (None, kind) and opening_matched(template, message) >= min(len(message), MIN_CUT)
             and _names_method(template, method) and (mode := _mode_named(template, modes))}
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


def _mode_named(template: str, modes: list[str]) -> str | None:
    """The launch's parallel mode the check refuses: named in its first sentence (a later one may suggest another:
    "Please try with pipeline parallelism.")."""
    refusal = re.split(r"(?<=[.!?])\s*(?=[A-Z])", template, maxsplit=1)[0]
    return next((mode for mode in modes if re.search(_MODES[mode][1], refusal, re.IGNORECASE)), None)


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
    cause = (f"The paste cut the message ('{message}'); of {name}'s own checks, the one that opens with these words and "
             f"names what the launch gives is '{template}'. The launch asks for the quantization {method} with "
             f"{mode}, the combination that check refuses.")
    fix = Fix(summary=(f"Run {method} without {mode} (one GPU, or the parallel mode the check's message names), or use "
                       f"a checkpoint of another quantization method for {mode}. The full message in the engine's "
                       f"output confirms the check."),
              needs_input=("the parallel layout or the checkpoint",))
    return Diagnosis(pattern=RULE_ID, title=f"{method} with {mode}, which {name} does not support", category="quantization",
                     root_cause=cause, fix=fix, references=SOURCES, engine=engine,
                     engine_version=evidence.launch.engine_version, basis="rule",
                     evidence=(f"the cut message opens {name}'s check: {template}",
                               f"the launch: --quantization {method}, {mode}"))
