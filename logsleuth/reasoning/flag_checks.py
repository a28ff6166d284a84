"""The engine's own checks of its launch flags after argparse accepted them (issue 28: argument errors answered).

Two shapes, each read from the engines' code, never from one thread's wording:

- one flag needs others: "--enable-auto-tool-choice requires --tool-call-parser" (vLLM's
  `validate_parsed_serve_args`, vllm/entrypoints/openai/cli_args.py, 0.6 to 0.11; a TypeError), and SGLang's many
  ServerArgs checks of that shape ("--retraction-policy priority requires --enable-priority-scheduling", "--ssl-keyfile
  requires --ssl-certfile to be specified as well": sglang/srt/server_args.py, arg_groups/*_hook.py): add the flags
  it needs (a switch alone, a value the message names when it is one of the flag's choices or a number, else the
  user's), or leave out the one that needs them;
- a value outside a registry the engine lists: "invalid tool call parser: X (chose from { a,b })" and "invalid
  reasoning parser: …" (vLLM's `run_server` / `validate_api_server_args`, vllm/entrypoints/openai/api_server.py; a
  KeyError; 0.11 and later write "choose from"): the listed value X stands for under another spelling;
- a setting's value outside the list the running release prints: "Unknown quantization method: X. Must be one of
  [...]" (both engines' ModelConfig._verify_quantization; vLLM's tokenizer mode and prefix-caching hash algorithm):
  the listed value X stands for under another spelling, else the list and what the releases say of X.  Answered
  with no engine decided too, when every engine whose code raises the message has the same flag.

Every flag is checked against the decided engine's release (its catalog; the newest when the release is not known)
before it is named: a flag the release lacks is not offered.  basis "rule".
"""

from __future__ import annotations

import difflib

import regex

from logsleuth.facts import engine_messages
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import rejected_flags
from logsleuth.fixes.build import build_fix
from logsleuth.fixes.builders.arguments import MODEL_FAMILY_FLAGS, family_choice_fix, fitting_choice
from logsleuth.fixes.catalog import Catalog
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix, FlagOp
from logsleuth.reasoning.catalog_flags import setting_fix
from logsleuth.reasoning.evidence import Evidence

# "--A requires --B", "--A VALUE requires --B VALUE and --C" (vLLM's cli_args; SGLang's server_args checks and arg_groups
# hooks, 0.5.x: "--retraction-policy priority requires --enable-priority-scheduling", "--watermark-config requires
# --enable-watermark", "--enable-ssl-refresh requires --ssl-certfile and --ssl-keyfile to be specified").  The clause
# after "requires" ends at the sentence's end.
_REQUIRES = compile_lazily_regex(
    r"(?<![\w-])(?P<needing>--[a-z][\w-]*)(?:[ =][\w.\-]+)? (?:currently )?requires (?P<clause>--[a-z][^.;\n]*)")
_CLAUSE_FLAG = compile_lazily_regex(r"(?<![\w-])(?P<flag>--[a-z][\w-]*)(?:[ =](?P<value>-?[\w.\-]+))?")
_REGISTRY = compile_lazily_regex(
    r"invalid (?P<setting>[a-z]+(?: [a-z]+){0,3}): (?P<value>\S+) \((?:chose|choose) from \{\s*(?P<choices>[^}]*?)\s*\}\)")
# vLLM's chat serving (0.6 and later): "Error: --enable-auto-tool-choice requires tool_parser:'X' which has not been
# registered" (vllm/entrypoints/openai/serving_chat.py, later tool_parsers): the setting named by its field.
_UNREGISTERED = compile_lazily_regex(r"requires (?P<field>[a-z][a-z_]*):'(?P<value>[^']*)' which has not been registered")
# Two settings compared by their config field names, each with its value: vLLM's SchedulerConfig ("max_num_batched_tokens
# (4096) is smaller than max_model_len (32768). … Please increase max_num_batched_tokens or decrease max_model_len.",
# "max_num_batched_tokens (N) must be greater than or equal to max_num_seqs (M)": vllm/config/scheduler.py
# SchedulerConfig.verify_max_model_len / _verify_args, 0.10 to 0.33, inside a pydantic ValidationError).
_COMPARISON = compile_lazily_regex(
    r"(?<![\w.])(?P<a>[a-z][a-z0-9_]*) \((?P<av>\d+)\) (?P<verb>is|must be) (?P<rel>smaller than|less than|larger than|greater than"
    r"|bigger than)(?P<equal> or equal to)? (?P<b>[a-z][a-z0-9_]*) \((?P<bv>\d+)\)")
# The method the checkpoint's config names against the one --quantization gave: both engines raise it in the same words
# (sglang/srt/configs/model_config.py ModelConfig._verify_quantization; vLLM's ModelConfig._verify_quantization,
# vllm/config.py, later vllm/config/model.py), after the compatible overrides (awq -> awq_marlin) were allowed.
_QUANT_MISMATCH = compile_lazily_regex(
    r"Quantization method specified in the model config \((?P<config>[\w.\-]+)\) does not match the quantization method "
    r"specified in the `quantization` argument \((?P<given>[\w.\-]+)\)")
# A value the engine's own check refused, naming the setting and listing what the running release has:
# "Unknown quantization method: gptq. Must be one of ['awq', 'squeezellm']." (both engines' ModelConfig
# ._verify_quantization), "Unknown tokenizer mode: x. Must be one of [...]" (vLLM's ModelConfig), "Unknown prefix caching
# hash algorithm: … Must be one of …" (vLLM's CacheConfig): the raise site index.  The list is the release's own
# (xusenlinzy/api-for-open-llm#196, HanGuo97/flute#10).
_UNKNOWN_LISTED = compile_lazily_regex(
    r"Unknown (?P<setting>[a-z][a-z0-9]*(?: [a-z][a-z0-9]*){0,5}): '?(?P<value>[\w.\-/:]+?)'?\.? "
    r"Must be one of (?P<choices>\[[^\]\n]*\]|\{[^}\n]*\})")
# The flag each of those settings is (checked in the release's catalog before it is named).
_LISTED_SETTINGS = {
    "quantization method": "--quantization",
    "tokenizer mode": "--tokenizer-mode",
    "prefix caching hash algorithm": "--prefix-caching-hash-algo",
}
# Where a refused setting's value can come from besides the flag: the checkpoint's config.json names its quantization
# method, which the engine takes when --quantization is not given (ModelConfig._verify_quantization, both engines).
_OTHER_SOURCES = {
    "--quantization": "the checkpoint's config.json (quantization_config.quant_method), which the engine reads when "
                      "the command gives no --quantization",
}
_SOURCES = {
    "requires": ("vllm/entrypoints/openai/cli_args.py: validate_parsed_serve_args "
                 "'Error: --enable-auto-tool-choice requires --tool-call-parser' (vLLM 0.6 to 0.11)",
                 "sglang/srt/server_args.py and sglang/srt/arg_groups/*_hook.py: ServerArgs' checks "
                 "'--X requires --Y' (SGLang 0.5.x, the raise site index)"),
    "unregistered": ("vllm/entrypoints/openai/serving_chat.py: OpenAIServingChat.__init__ "
                     "'Error: --enable-auto-tool-choice requires tool_parser:'…' which has not been registered' (vLLM 0.6 and later)",),
    "comparison": ("vllm/config/scheduler.py: SchedulerConfig.verify_max_model_len / _verify_args 'max_num_batched_tokens "
                   "(…) is smaller than max_model_len (…)', '… must be greater than or equal to max_num_seqs (…)' (vLLM 0.10 to 0.33)",),
    "quantization": ("sglang/srt/configs/model_config.py: ModelConfig._verify_quantization (SGLang 0.3 to 0.5.23)",
                     "vllm/config.py, vllm/config/model.py: ModelConfig._verify_quantization (vLLM 0.6 to 0.33)",
                     "vllm-project/vllm#19050: GGUF weights with the fp8 checkpoint's config.json"),
    "listed": ("sglang/srt/configs/model_config.py, vllm/config.py, vllm/config/model.py: ModelConfig._verify_quantization "
               "'Unknown quantization method: … Must be one of …'; vLLM's ModelConfig 'Unknown tokenizer mode: … Must be "
               "one of …', CacheConfig 'Unknown prefix caching hash algorithm: …' (the raise site index)",),
    "registry": ("vllm/entrypoints/openai/api_server.py: run_server / validate_api_server_args "
                 "'invalid tool call parser: … (chose from { … })', 'invalid reasoning parser: …' (vLLM 0.6 to 0.33)",),
}


def flag_checks(evidence: Evidence) -> Diagnosis | None:
    """A launch flag the engine's own check rejected after parsing, with the fix its message implies."""
    if found := _UNKNOWN_LISTED.search(evidence.message_text):
        return _unknown_listed(found, evidence)
    engine = evidence.launch.engine
    if engine not in ENGINE_NAMES:
        return None  # no engine decided: no release to check a flag in
    catalog = catalogs.load(engine, evidence.launch.engine_version)
    if catalog is None:
        return None
    text = evidence.message_text
    if found := _REQUIRES.search(text):
        return _requires(found, catalog, evidence)
    if found := _REGISTRY.search(text):
        return _registry(found, catalog, evidence)
    if found := _UNREGISTERED.search(text):
        return _unregistered(found, catalog, evidence)
    if found := _COMPARISON.search(text):
        return _comparison(found, catalog, evidence)
    if found := _QUANT_MISMATCH.search(text):
        return _quantization_mismatch(found, catalog, evidence)
    return None


def _quantization_mismatch(found: regex.Match[str], catalog: Catalog, evidence: Evidence) -> Diagnosis | None:
    """--quantization names another method than the checkpoint's config: leave it out (the engine reads the config's),
    or name the config's method when this release lists it."""
    info = catalog.find("--quantization")
    if info is None:
        return None
    config, given = found["config"], found["given"]
    if "gguf" in (config, given):
        return _gguf_config(config, given, evidence)
    cause = (f"The checkpoint's config says it is quantized with {config}, and --quantization {given} names another "
             f"method; {ENGINE_NAMES[catalog.engine]} accepts only the config's method (or a kernel it allows for it).")
    alternatives: tuple[Fix, ...] = ()
    if info.choices_known and config in info.choices:
        same = setting_fix(evidence.failure, evidence.launch, f"Or set --quantization {config}, the checkpoint's own method.",
                           (("--quantization", config),))
        alternatives = (same,) if same else ()
    remove = Fix(summary=f"Leave out --quantization: the engine reads the method ({config}) from the checkpoint's config.",
                 flags=(FlagOp("remove", "--quantization"),), alternatives=alternatives)
    fix = build_fix({"builder": "rule"}, evidence.failure, {}, evidence.launch, builders={"rule": lambda _ctx, _data: remove})
    return _diagnosis("quantization", "--quantization does not match the checkpoint", "quantization", cause, fix or remove,
                      evidence, (f"the engine's check: {found.group(0)}",))


def _comparison(found: regex.Match[str], catalog: Catalog, evidence: Evidence) -> Diagnosis | None:
    """Two settings whose values the engine compared: the first set to the second's value (the smallest change that
    passes the check), or the second to the first's."""
    first, second = catalog.by_field(found["a"]), catalog.by_field(found["b"])
    if first is None or second is None:
        return None  # a field no flag of this release sets
    smaller = found["rel"] in ("smaller than", "less than")
    # "X is smaller than Y" complains X < Y (X must be at least Y); "X must be greater than Y" asks for X > Y.
    at_least = smaller if found["verb"] == "is" else not smaller
    strict = found["verb"] == "must be" and not found["equal"]
    a_value, b_value = int(found["av"]), int(found["bv"])
    target = b_value + (1 if strict else 0) if at_least else b_value - (1 if strict else 0)
    other = a_value - (1 if strict else 0) if at_least else a_value + (1 if strict else 0)
    if target <= 0 or other <= 0:
        return None
    direction = "at least" if at_least else "at most"
    cause = (f"{ENGINE_NAMES[catalog.engine]} compared two settings: {first.name} ({a_value}) must be {direction} "
             f"{second.name} ({b_value}){' and not equal' if strict else ''}, and it is not.")
    move = "lower" if at_least else "higher"
    alternative = setting_fix(evidence.failure, evidence.launch, f"Or set {second.name} to {other} ({move}).",
                              ((second.name, str(other)),))
    fix = setting_fix(evidence.failure, evidence.launch, f"Set {first.name} to {target} ({direction} {second.name}).",
                      ((first.name, str(target)),), alternatives=(alternative,) if alternative else ())
    if fix is None:
        return None
    return _diagnosis("comparison", f"{first.name} and {second.name} disagree", "invalid-flag-value", cause, fix, evidence,
                      (f"the engine's check: {found.group(0)}",
                       f"{found['a']} is {first.name} and {found['b']} is {second.name} in {_release(catalog)}"))


def _unregistered(found: regex.Match[str], catalog: Catalog, evidence: Evidence) -> Diagnosis | None:
    """A parser name the release does not register; the message names its field (`tool_parser`), the flag is the
    release's flag that spells it closest (`--tool-call-parser`)."""
    spelled = "--" + found["field"].replace("_", "-")
    close = difflib.get_close_matches(spelled, catalog.names(), n=1, cutoff=0.8)
    if not close:
        return None
    flag, value = close[0], found["value"]
    info = catalog.find(flag)
    choices = list(info.choices) if info is not None and info.choices_known else []
    best = fitting_choice(flag, value, choices) if choices else None
    cause = (f"{flag} was given '{value}', and this {ENGINE_NAMES[catalog.engine]} registers no parser of that name: a "
             f"misspelt name, a parser of a later release, or a plugin's parser whose plugin was not loaded.")
    if best is None and choices and flag in MODEL_FAMILY_FLAGS:
        fix = family_choice_fix(flag, value, choices)
    elif best is not None:
        fix = Fix(summary=f"Use {flag} {best}, the nearest this release has (check that it is the one for your model).",
                  flags=(FlagOp("set", flag, best),))
    else:
        fix = Fix(summary=f"Set {flag} to a parser this release registers (`--help` lists them), or load the plugin "
                          f"that registers '{value}'.", flags=(FlagOp("set", flag, None),), needs_input=(flag,))
    return _diagnosis("unregistered", f"{flag} names a parser this release does not register", "invalid-flag-value",
                      cause, fix, evidence, (f"the engine's check: {found.group(0)}",))


def _requires(found: regex.Match[str], catalog: Catalog, evidence: Evidence) -> Diagnosis | None:
    needing = found["needing"]
    needed = [(m["flag"], m["value"]) for m in _CLAUSE_FLAG.finditer(found["clause"])]
    if catalog.find(needing) is None or not needed or any(catalog.find(flag) is None for flag, _ in needed):
        return None  # a flag this release lacks is never offered
    ops: list[FlagOp] = []
    asked: list[str] = []
    said: list[str] = []
    for flag, word in needed:
        info = catalog.find(flag)
        assert info is not None  # checked above
        if not info.takes_value:
            ops.append(FlagOp("add", flag, ""))  # a switch: written alone
            said.append(flag)
        elif word is not None and (word in info.choices or _NUMBER.fullmatch(word)):
            ops.append(FlagOp("set", flag, word))  # the value the engine's message names
            said.append(f"{flag} {word}")
        else:
            ops.append(FlagOp("add", flag, None))  # its value is the user's
            asked.append(flag)
            choices = f" (one of {', '.join(info.choices)})" if info.choices and info.choices_known else ""
            said.append(f"{flag} with the value you need{choices}")
    name = ENGINE_NAMES[catalog.engine]
    wanted = " and ".join(flag for flag, _ in needed)
    cause = (f"{name} checks its flags after parsing them: {needing} only works together with {wanted}, and the "
             f"command gave {needing} without it.")
    leave_out = Fix(summary=f"Or leave out {needing}.", flags=(FlagOp("remove", needing),))
    summary = f"Add {' and '.join(said)}."
    fix = None
    if not asked:  # every value known: the user's own launch with them, when the log shows it
        fix = setting_fix(evidence.failure, evidence.launch, summary, tuple((op.flag, op.value or "") for op in ops),
                          alternatives=(leave_out,))
    fix = fix or Fix(summary=summary, flags=tuple(ops), needs_input=tuple(asked), alternatives=(leave_out,))
    return _diagnosis("requires", f"{needing} needs {wanted}", "missing-flag", cause, fix, evidence,
                      (f"the engine's check: {found.group(0).strip()}", f"{wanted} and {needing} are flags of {_release(catalog)}"))


_NUMBER = compile_lazily_regex(r"-?\d+(?:\.\d+)?")


def _registry(found: regex.Match[str], catalog: Catalog, evidence: Evidence) -> Diagnosis | None:
    flag = "--" + found["setting"].replace(" ", "-")
    if catalog.find(flag) is None:
        return None
    value = found["value"]
    choices = [choice.strip() for choice in found["choices"].split(",") if choice.strip()]
    best = fitting_choice(flag, value, choices)
    listed = ", ".join(choices)
    cause = (f"{flag} was given '{value}', which this {ENGINE_NAMES[catalog.engine]} does not register; the engine "
             f"lists the values it has: {listed}.")
    if best is not None:
        fix = Fix(summary=f"{flag} takes one of the listed values; '{value}' is not one of them: the nearest is {best} "
                          f"(check that it is the one for your model).", flags=(FlagOp("set", flag, best),))
    else:
        fix = Fix(summary=f"Set {flag} to one of: {listed} (the one for your model; a value of a later release "
                          f"needs that release).", flags=(FlagOp("set", flag, None),), needs_input=(flag,))
    return _diagnosis("registry", f"{flag} value is not one this release has", "invalid-flag-value", cause, fix, evidence,
                      (f"the engine's check: {found.group(0)}",))


def _unknown_listed(found: regex.Match[str], evidence: Evidence) -> Diagnosis | None:
    """A setting's value the running release does not list, in the engine's own words: the listed value it stands for
    under another spelling, else the list and what the releases say of the value (the user's pick)."""
    flag = _listed_setting_flag(found["setting"], evidence)
    if flag is None:
        return None
    value, choices = found["value"], _listed(found["choices"])
    if not choices:
        return None
    best = fitting_choice(flag, value, choices)
    other = _OTHER_SOURCES.get(flag)
    source = f"{flag}, or {other}" if other else flag
    from_checkpoint = bool(other and evidence.launch.command and not _command_gives(evidence, flag))
    if from_checkpoint:
        source = f"{other}: the command shown gives no {flag}, so the value is not the user's flag"
    cause = (f"The engine refused '{value}' as the {found['setting']}: the release that ran lists only "
             f"{', '.join(choices)}. The value comes from {source}.")
    if best is not None:
        fix = setting_fix(evidence.failure, evidence.launch, f"Use {flag} {best}: '{value}' is that name spelt otherwise.",
                          ((flag, best),)) or Fix(summary=f"Use {flag} {best}: '{value}' is that name spelt otherwise.",
                                                  flags=(FlagOp("set", flag, best),))
    else:
        fix = _unlisted_value_fix(flag, value, choices, evidence, other)
    if from_checkpoint:  # the checkpoint's method, which this release cannot load: not a flag the user set
        return _diagnosis("listed", f"the checkpoint's {found['setting']} is not one this release lists", "quantization",
                          cause, fix, evidence, (f"the engine's check: {found.group(0)}",))
    return _diagnosis("listed", f"{flag} value is not one this release lists", "invalid-flag-value", cause, fix, evidence,
                      (f"the engine's check: {found.group(0)}",))


def _unlisted_value_fix(flag: str, value: str, choices: list[str], evidence: Evidence, other: str | None) -> Fix:
    """The list, what the decided engine's releases say of the value, and the pick left to the user.  A flag the
    command does not show is not set: the value came from elsewhere (the checkpoint's config, for --quantization)."""
    engine = evidence.launch.engine
    releases = (rejected_flags.value_releases(engine, evidence.launch.named_version, flag, value, tuple(choices))
                if engine in ENGINE_NAMES else None)
    where = f" {releases[:1].upper()}{releases[1:]}." if releases else ""
    summary = (f"'{value}' is not among the values this release lists for {flag} ({', '.join(choices)}), under any "
               f"spelling: the release that ran does not have it.{where} Use a release that has '{value}' if one does, "
               f"or one of the listed values")
    if _command_gives(evidence, flag) or other is None:
        return Fix(summary=summary + f": set {flag} to the one you mean.", flags=(FlagOp("set", flag, None),),
                   needs_input=(flag,))
    return Fix(summary=summary + f" ({flag} when you give it; a checkpoint made with a listed method otherwise).")


def _listed_setting_flag(setting: str, evidence: Evidence) -> str | None:
    """The flag the message's setting words name, in every engine that may have raised it (the decided one, else
    those whose indexed code raises this message): the same flag in each newest catalog, else None."""
    engine = evidence.launch.engine
    engines = (engine,) if engine in ENGINE_NAMES else tuple(
        sorted(engine_messages.engines_raising(evidence.failure.final.type, evidence.failure.final.message)))
    flags = set()
    for name in engines:
        catalog = catalogs.load(name, evidence.launch.engine_version if name == engine else None)
        flags.add(_flag_named(setting, catalog) if catalog is not None else None)
    return flags.pop() if len(flags) == 1 else None


def _flag_named(setting: str, catalog: Catalog) -> str | None:
    """The flag the setting's words name (_LISTED_SETTINGS), when the release has it."""
    flag = _LISTED_SETTINGS.get(setting)
    return flag if flag is not None and catalog.find(flag) is not None else None


def _listed(text: str) -> list[str]:
    """The values of a Python list or set the message printed: its quoted items, else its comma-separated words."""
    quoted = regex.findall(r"'([^']*)'", text)
    return quoted or [word.strip() for word in text.strip("[]{}").split(",") if word.strip()]


def _command_gives(evidence: Evidence, flag: str) -> bool:
    command = evidence.launch.command or ""
    spellings = (flag, "--" + flag[2:].replace("-", "_"))
    return any(regex.search(rf"(?<![\w-]){regex.escape(spelling)}(?![\w-])", command) for spelling in spellings)


def _gguf_config(config: str, given: str, evidence: Evidence) -> Diagnosis:
    """GGUF weights read with the config.json of the checkpoint they came from (vllm-project/vllm#19050: an fp8
    model's config beside its GGUF quantization): the weights decide, so --quantization stays; the config's
    quantization_config is what does not belong."""
    other = config if given == "gguf" else given
    cause = (f"The weights are GGUF, and the config.json read with them names {other} in its quantization_config (it is "
             "the original checkpoint's config): the engine cannot load GGUF weights as that method.")
    fix = Fix(summary=f"Keep the GGUF weights' quantization; read them with a config.json whose quantization_config "
                      f"does not name {other} (remove that block from the config.json beside the GGUF file, or use the "
                      "unquantized model's config).")
    return _diagnosis("quantization", "GGUF weights with another method's config", "quantization", cause, fix, evidence,
                      (f"the config names {other}, the weights are gguf",))


def _release(catalog: Catalog) -> str:
    return f"{ENGINE_NAMES[catalog.engine]} {catalog.version}"


def _diagnosis(name: str, title: str, category: str, cause: str, fix: Fix, evidence: Evidence,
               facts: tuple[str, ...]) -> Diagnosis:
    return Diagnosis(
        pattern=f"rule-flag-checks-{name}",
        title=title,
        category=category,
        root_cause=cause,
        fix=fix,
        references=_SOURCES[name],
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=facts,
    )
