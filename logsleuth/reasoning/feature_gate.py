"""An engine's own check refusing two of its settings together (issue 28: split 19's A-01, a gate between a
disaggregation flag and speculative decoding, was read as a spec-decoding-size problem).

Both engines check their launch settings after parsing them, and many checks refuse a combination: SGLang's
ServerArgs and its arg_groups hooks ("--disaggregation-decode-enable-radix-cache is incompatible with speculative
decoding (--speculative-algorithm EAGLE)", "--enable-two-batch-overlap and --enforce-shared-experts-fusion cannot be
used together.", "--enable-hisparse does not support --enable-mixed-chunk yet."), vLLM's EngineArgs and config classes
("--enable-return-routed-experts is incompatible with …", "`--data-parallel-hybrid-lb` and `--data-parallel-external-lb`
cannot be enabled together").  Such a failure is decided from the raise site index, never from the message's words
alone: the message must match a template of the engine's code raised in a settings module (server_args.py,
arg_groups/, arg_utils.py, config/), at a check whose `if` tests (or assert) read two settings or more, whose template
refuses in the engine's own words, and the message must name two settings (flags, or the engine's environment
variables).  Then the answer is "drop one of the two", each flag checked in the release's catalog before it is named
(a flag the release lacks is never offered), with the code sites cited.  A message naming one feature only ("… is
incompatible with pipeline parallelism (PP > 1)") is left to the category rows, whose narrower readings may hold.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from logsleuth.facts.engine_messages import raising_modules
from logsleuth.facts.message_templates import template_matches
from logsleuth.facts.raise_sites import indexed_releases, site_entries
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.build import build_fix
from logsleuth.fixes.builders.parallel import flag_as_given
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix, FlagOp
from logsleuth.pydantic_display import checked_as
from logsleuth.reasoning.engine_words import flag_facts
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.message_settings import ENGINE_ENV_PREFIXES

RULE_ID = "rule-feature-gate"
# The engines' modules that check the launch settings after parsing (the raise site index's files).
SETTINGS_MODULES = (
    "sglang/srt/server_args.py", "sglang/srt/arg_groups/", "vllm/engine/arg_utils.py", "vllm/config/", "vllm/config.py",
    "vllm/entrypoints/openai/cli_args.py",
)
# A template that refuses a combination, in the engines' wordings of their settings checks.
_REFUSES = compile_lazily(
    r"\b(?:is|are)\s+(?:not\s+(?:yet\s+)?(?:supported|compatible)|incompatible|only\s+supported|mutually\s+exclusive)\b"
    r"|\bcannot\s+be\s+(?:used|enabled|combined)\b|\b(?:does|do)\s+not\s+(?:yet\s+)?support\b|\bonly\s+supports?\b",
    re.IGNORECASE,
)
# A setting a check's test reads: `self.x`, `server_args.x`, `cfg.x`, `parallel_config.x`.
_READS = compile_lazily(r"\b(?:self|cfg|server_args|args|engine_args|[a-z_]*config)\.([a-z_][a-z0-9_]*)\b")
_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_ENV = compile_lazily(r"\b(?:" + "|".join(ENGINE_ENV_PREFIXES) + r")[A-Z0-9_]{2,60}\b")
MAX_SITES_CITED = 3


@dataclass(frozen=True, slots=True)
class GateSite:
    """One settings check of the engine's code whose template the failure's message matches."""

    engine: str
    file: str
    function: str
    guards: tuple[str, ...]  # its `if` tests (and an assert's test), outermost first
    releases: tuple[str, ...]  # the indexed releases that hold it, oldest first


def feature_gate(evidence: Evidence) -> Diagnosis | None:
    """Two settings the engine's own settings check refuses together: drop one of the two."""
    type_name, message = checked_as(evidence.failure.final)
    message = message.strip()
    named = list(dict.fromkeys([*_FLAG.findall(message), *_ENV.findall(message)]))
    if len(named) < 2:
        return None  # the cheap test first: the message names two settings, or it is not this rule's
    decided = evidence.launch.engine
    engines = (decided,) if decided in ENGINE_NAMES else tuple(ENGINE_NAMES)
    sites = gate_sites(type_name or None, message, engines)
    if len({site.engine for site in sites}) != 1:
        return None  # no such check, or both engines raise it and the launch decided neither
    return _diagnosis(evidence, sites, named[:2])


def gate_sites(type_name: str | None, message: str, engines: tuple[str, ...]) -> list[GateSite]:
    """The engines' settings checks that raise this message: in a settings module, whose tests read two settings or
    more (or one that the message names as a flag: the function returned early without the other), with a template
    that refuses a combination."""
    found: list[GateSite] = []
    # The fields the message's flags set (`--enable-mixed-chunk` is enable_mixed_chunk): a hook that returns early
    # without the first feature tests only the second in its `if` (SGLang's arg_groups/*_hook.py).
    named_fields = {flag[2:].replace("-", "_") for flag in _FLAG.findall(message)}
    for engine, modules in raising_modules(type_name, message, engines).items():
        releases = indexed_releases(engine)
        for file, function in sorted(modules):
            if not file.startswith(SETTINGS_MODULES):
                continue
            for entry in site_entries(engine, f"{file}.json"):
                template = entry.get("message") or ""
                if entry["function"] != function or not _REFUSES.search(template) or not template_matches(template, message):
                    continue
                tests = tuple(entry.get("guards") or ()) + ((entry["condition"],) if entry.get("condition") else ())
                read = set(entry.get("fields") or ()) | {name for test in tests for name in _READS.findall(test)}
                if len(read) < 2 and not read & named_fields:
                    continue  # a check of one setting the message does not name: not a gate between two
                held = sorted({n for run in entry["lines"] for n in range(run[0], run[1] + 1)})
                found.append(GateSite(engine, file, entry["function"], tests, tuple(releases[n] for n in held if n < len(releases))))
    return found


def _newest(site: GateSite) -> tuple[int, ...]:
    indexed = indexed_releases(site.engine)
    return (max((indexed.index(r) for r in site.releases if r in indexed), default=-1), len(site.releases))


def _cited(site: GateSite) -> str:
    name = ENGINE_NAMES[site.engine]
    tests = " and ".join(site.guards)
    under = f", under `if {tests}`" if tests else ""
    held = f" ({name} {site.releases[0]} to {site.releases[-1]} of the indexed releases)" if site.releases else ""
    return f"{name}'s {site.file}, in {site.function}{under}{held}"


def _diagnosis(evidence: Evidence, sites: list[GateSite], named: list[str]) -> Diagnosis:
    engine = sites[0].engine
    name = ENGINE_NAMES[engine]
    version = evidence.launch.named_version
    catalog = catalogs.load(engine, evidence.launch.engine_version)
    first, second = named
    # the newest releases' checks first: the release that ran is more likely a recent one
    newest = sorted(sites, key=lambda site: _newest(site), reverse=True)
    cited = list(dict.fromkeys(_cited(site) for site in newest))[:MAX_SITES_CITED]
    flags = [setting for setting in named if setting.startswith("--")]
    checked = [f"`{flag}` {flag_facts(flag, engine, version)}" for flag in flags]
    offered = [flag for flag in flags if catalog is not None and catalog.find(flag) is not None]
    cause = (f"{name}'s own settings check refuses {first} together with {second}: the message is that check's "
             f"(the raise site index: {cited[0]}). It is a combination the release does not run, not a "
             "size or value to tune: one of the two has to go.")
    summary = f"Drop one of the two: {first} or {second} ({name} refuses them together); keep the one you need."
    steps = (f"Leave out {first}, or leave out {second}: the check reads both, and either one alone passes it.",
             "A later release may lift the restriction: its release notes or the same check in its code say from which release.")
    fix = _fix(evidence, summary, steps, offered, named)
    return Diagnosis(
        pattern=RULE_ID, title=f"{first} and {second} cannot run together in {name}", category="feature-conflict",
        root_cause=cause, fix=fix, references=tuple(f"the raise site index: {where}" for where in cited),
        engine=engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the engine's settings check: {cited[0]}", *checked),
    )


def _fix(evidence: Evidence, summary: str, steps: tuple[str, ...], offered: list[str], named: list[str]) -> Fix:
    """Leave out the first flag, or (as the alternative) the second: the user's own command with it removed when the
    log shows one that gives it; only flags the release's catalog has are offered as changes."""
    if not offered:
        return Fix(summary=summary, steps=steps, needs_input=("which of the two settings to keep",))

    def build(ctx: FixContext, _data: dict[str, object]) -> Fix:
        given = [flag for flag in offered if ctx.command is None or ctx.command.has(flag_as_given(ctx, flag))]
        if not given:
            return Fix(summary=summary, steps=steps, needs_input=("which of the two settings to keep",))
        options = [Fix(summary=f"Leave out {flag}.", flags=(FlagOp("remove", flag_as_given(ctx, flag)),)) for flag in given]
        return Fix(summary=summary, flags=options[0].flags, steps=steps, alternatives=tuple(options[1:]))

    built = build_fix({"builder": "rule"}, evidence.failure, {}, evidence.launch, builders={"rule": build})
    return built or Fix(summary=summary, steps=steps, needs_input=("which of the two settings to keep",))
