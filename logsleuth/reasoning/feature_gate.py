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
refuses in the engine's own words.  The settings are those both the message's refusing clause names (before its
first `.`/`;`, and before an instruction: "please use/set", "you can pass", "set … to", "equal to", "requires") and
the check's test reads: each `and` term of the test naming some is one way to pass the check, and a term that is an
`or` over several settings is passed only by leaving all of them out.  A check that compares two settings for equality
or tests that a setting is missing (`not x`, `x is None`, `x not in names`) asks for a setting, so it is not read as a
conflict.  The sites are those of the user's release (when it is indexed) and of the traceback's raising frame's file
(a raising frame outside the engine's package is no check of the engine's); a site whose test lets the value the
message names through (`x not in (None, 'EAGLE')`) did not raise it.  Then the answer is "drop one of the two", each
flag checked in the release's catalog before it is named (a flag the release lacks is never offered), with the code
sites cited, and an upgrade offered when a newer indexed release's check lets the value through.  A message naming
one feature only ("… is incompatible with pipeline parallelism (PP > 1)") is left to the category rows.
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
ENGINE_PACKAGES = ("sglang", "vllm")
# A template that refuses a combination, in the engines' wordings of their settings checks.
_REFUSES = compile_lazily(
    r"\b(?:is|are)\s+(?:not\s+(?:yet\s+)?(?:supported|compatible)|incompatible|only\s+supported|mutually\s+exclusive)\b"
    r"|\bcannot\s+be\s+(?:used|enabled|combined)\b|\b(?:does|do)\s+not\s+(?:yet\s+)?support\b|\bonly\s+supports?\b",
    re.IGNORECASE,
)
# Where the refusing clause ends: its sentence's end, or the engine's instruction ("Please use --x", "You can pass
# `--convert …`", "set --y to 0", "--a equal to --b", "requires --c"), whose settings are asked for, not refused.
_CLAUSE_END = compile_lazily(
    r"[.;](?:\s|$)|\b(?:please\s+(?:use|set)|you\s+can\s+pass|set\s+\S.{0,80}?\bto\b|equal\s+to|requires?)\b",
    re.IGNORECASE,
)
# A setting a check's test reads: an attribute read, not a method call (`cfg.x`, `resolved_view(server_args).x`).
_READS = compile_lazily(r"\.([a-z_][a-z0-9_]*)\b(?!\s*\()")
# A test that asks for a setting rather than refusing one: two settings compared (`cfg.a == cfg.b`), or one missing
# (`not x`, `x is None`, `x not in supported_names`).
_ASKS = compile_lazily(
    r"\.[a-z_]\w*\s*[=!]=\s*[a-z_][\w()]*\.[a-z_]\w*\b|(?<!is )\bnot\s+(?!in\b)[\w(]|\bnot\s+in\s+[a-z_]|\bis\s+None\b"
)
_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
_ENV = compile_lazily(r"\b(?:" + "|".join(ENGINE_ENV_PREFIXES) + r")[A-Z0-9_]{2,60}\b")
_VALUE = compile_lazily(r"(?:\s+|=)[`'\"]?(?P<value>[A-Za-z0-9][\w.-]{0,60})")
MAX_SITES_CITED = 3


@dataclass(frozen=True, slots=True)
class GateSite:
    """One settings check of the engine's code whose template the failure's message matches."""

    engine: str
    file: str
    function: str
    guards: tuple[str, ...]  # its `if` tests, outermost first
    releases: tuple[str, ...]  # the indexed releases that hold it, oldest first


def feature_gate(evidence: Evidence) -> Diagnosis | None:
    """Two settings (or groups) the engine's own settings check refuses together: drop one of the two."""
    type_name, message = checked_as(evidence.failure.final)
    message = message.strip()
    clause = refusing_clause(message)
    named = list(dict.fromkeys([*_FLAG.findall(clause), *_ENV.findall(clause)]))
    if len(named) < 2 or not _REFUSES.search(clause):
        return None  # the cheap test first: the refusing clause names two settings, or it is not this rule's
    decided = evidence.launch.engine
    engines = (decided,) if decided in ENGINE_NAMES else tuple(ENGINE_NAMES)
    every = gate_sites(type_name or None, message, engines)
    if len({site.engine for site in every}) != 1:
        return None  # no such check, or both engines raise it and the launch decided neither
    values = {setting: found["value"] for setting in named
              if (found := _VALUE.match(clause, clause.index(setting) + len(setting))) and not found["value"].startswith("-")}
    sites = [site for site in _raised_at(evidence, every) if not _lets_through(site, values)]
    options = _options(sites[0], named) if sites else None
    if not options or any(_options(site, named) != options for site in sites[1:]):
        return None  # no check that refuses the two, or checks that read them differently
    version = evidence.launch.named_version
    if version in indexed_releases(sites[0].engine):
        held = [site for site in sites if version in site.releases]
        if not held:
            return _not_in_release(evidence, sites, options, version)
        sites = held
    return _diagnosis(evidence, sites, options, _upgrade(every, values, version), message[len(clause):])


def refusing_clause(message: str) -> str:
    """The message up to its first sentence's end or the engine's instruction, whichever comes first."""
    end = _CLAUSE_END.search(message)
    return message[: end.start()] if end else message


def gate_sites(type_name: str | None, message: str, engines: tuple[str, ...]) -> list[GateSite]:
    """The engines' settings checks (an `if` that raises, not an assert) that raise this message with a template that
    refuses a combination."""
    found: list[GateSite] = []
    for engine, modules in raising_modules(type_name, message, engines).items():
        releases = indexed_releases(engine)
        for file, function in sorted(modules):
            if not file.startswith(SETTINGS_MODULES):
                continue
            for entry in site_entries(engine, f"{file}.json"):
                template = entry.get("message") or ""
                if entry["function"] != function or not _REFUSES.search(template) or not template_matches(template, message):
                    continue
                if entry.get("condition"):
                    continue  # an assert's test is what must hold: a requirement, not a refusal
                held = sorted({n for run in entry["lines"] for n in range(run[0], run[1] + 1)})
                found.append(GateSite(engine, file, entry["function"], tuple(entry.get("guards") or ()),
                                      tuple(releases[n] for n in held if n < len(releases))))
    return found


def _terms(test: str) -> list[str]:
    """The `and` terms of a test, at the outermost level, each without its enclosing parentheses."""
    terms, depth, start = [], 0, 0
    for at, char in enumerate(test):
        depth += (char in "([{") - (char in ")]}")
        if depth == 0 and test.startswith(" and ", at):
            terms.append(test[start:at])
            start = at + 5
    terms.append(test[start:])
    stripped = []
    for term in terms:
        term = term.strip()
        while term.startswith("(") and term.endswith(")") and _balanced(term[1:-1]):
            term = term[1:-1].strip()
        stripped.append(term)
    return stripped


def _balanced(text: str) -> bool:
    depth = 0
    for char in text:
        depth += (char in "([{") - (char in ")]}")
        if depth < 0:
            return False
    return depth == 0


def _field(setting: str) -> str:
    return setting[2:].replace("-", "_") if setting.startswith("--") else setting


def _options(site: GateSite, named: list[str]) -> tuple[tuple[str, ...], ...] | None:
    """The ways to pass the check, each the settings to leave out together: per `and` term of its tests that reads
    settings the message names, those settings (an `or` term: all it reads, or no option when it reads one the
    message does not name); None when the check asks for a setting, or fewer than two ways are shown."""
    options: list[tuple[str, ...]] = []
    for term in (term for test in site.guards for term in _terms(test)):
        if _ASKS.search(term):
            return None
        reads = set(_READS.findall(term)) | {env for env in _ENV.findall(term)}
        here = tuple(setting for setting in named if _field(setting) in reads)
        if not here:
            continue  # a condition the message does not name (`disaggregation_mode == 'decode'`)
        if " or " in term and reads - {_field(setting) for setting in named}:
            return None  # an `or` over a setting the message does not name: leaving out the named ones may not pass
        if here not in options:
            options.append(here)
    flat = [setting for option in options for setting in option]
    return tuple(options) if len(options) >= 2 and len(flat) == len(set(flat)) else None


def _lets_through(site: GateSite, values: dict[str, str]) -> bool:
    """The check's test lets the value the message names through (`x not in (None, 'EAGLE')`, `x != 'EAGLE'`): the
    check did not raise this message."""
    for setting, value in values.items():
        field = re.escape(_field(setting))
        quoted = rf"['\"]{re.escape(value)}['\"]"
        excluded = rf"\.{field}\s+not\s+in\s+\([^)]*{quoted}|\.{field}\s*!=\s*{quoted}"
        if any(re.search(excluded, test) for test in site.guards):
            return True
    return False


def _raised_at(evidence: Evidence, sites: list[GateSite]) -> list[GateSite]:
    """The sites of the traceback's raising frame's file, when the paste shows that frame; none when that frame is
    not the engine's code (a launcher of the user's own raising the same words)."""
    frames = evidence.failure.final.frames
    if not frames:
        return sites
    path = frames[-1].file.replace("\\", "/")
    if not any(f"/{package}/" in f"/{path}" for package in ENGINE_PACKAGES):
        return []
    return [site for site in sites if path.endswith(site.file)]


def _upgrade(sites: list[GateSite], values: dict[str, str], version: str | None) -> str | None:
    """The first indexed release past the user's whose checks raising this message all let its value through."""
    if not sites or not values:
        return None
    indexed = indexed_releases(sites[0].engine)
    after = indexed.index(version) + 1 if version in indexed else 0
    for release in indexed[after:]:
        there = [site for site in sites if release in site.releases]
        if there and all(_lets_through(site, values) for site in there):
            return release
    return None


def _cited(site: GateSite) -> str:
    name = ENGINE_NAMES[site.engine]
    tests = " and ".join(f"({test})" if " or " in test else test for test in site.guards)
    under = f", under `if {tests}`" if tests else ""
    held = f" ({name} {site.releases[0]} to {site.releases[-1]} of the indexed releases)" if site.releases else ""
    return f"{name}'s {site.file}, in {site.function}{under}{held}"


def _newest(site: GateSite) -> tuple[int, ...]:
    indexed = indexed_releases(site.engine)
    return (max((indexed.index(r) for r in site.releases if r in indexed), default=-1), len(site.releases))


def _shown(option: tuple[str, ...]) -> str:
    return " and ".join(option)


def _not_in_release(evidence: Evidence, sites: list[GateSite], options: tuple[tuple[str, ...], ...],
                    version: str) -> Diagnosis:
    """The stated release holds no check that raises the message: the release or the command is not the one that
    ran, so no command is built."""
    engine = sites[0].engine
    name = ENGINE_NAMES[engine]
    cited = list(dict.fromkeys(_cited(site) for site in sorted(sites, key=_newest, reverse=True)))[:MAX_SITES_CITED]
    first, second = _shown(options[0]), _shown(options[1])
    cause = (f"{name}'s own settings check refuses {first} together with {second}, but no such check of {name} "
             f"{version} raises this message (the raise site index: {cited[0]}): the release that ran is another, "
             "or the command is not the one that ran.")
    summary = f"Check which {name} release ran and with which command: {name} {version} does not raise this message."
    fix = Fix(summary=summary, steps=(f"`pip show {engine}` in the environment that ran it names its release.",),
              needs_input=(f"the {name} release that ran",))
    return Diagnosis(
        pattern=RULE_ID, title=f"{first} and {second} cannot run together in {name}", category="feature-conflict",
        root_cause=cause, fix=fix, references=tuple(f"the raise site index: {where}" for where in cited),
        engine=engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the engine's settings check: {cited[0]}", f"none of the indexed checks is in {name} {version}"),
    )


def _diagnosis(evidence: Evidence, sites: list[GateSite], options: tuple[tuple[str, ...], ...], upgrade: str | None,
               rest: str) -> Diagnosis:
    engine = sites[0].engine
    name = ENGINE_NAMES[engine]
    version = evidence.launch.named_version
    catalog = catalogs.load(engine, evidence.launch.engine_version)
    first, second = _shown(options[0]), _shown(options[1])
    # the newest releases' checks first: the release that ran is more likely a recent one
    cited = list(dict.fromkeys(_cited(site) for site in sorted(sites, key=_newest, reverse=True)))[:MAX_SITES_CITED]
    flags = [setting for option in options for setting in option if setting.startswith("--")]
    checked = [f"`{flag}` {flag_facts(flag, engine, version)}" for flag in flags]
    offered = [option for option in options
               if all(s.startswith("--") and catalog is not None and catalog.find(s) is not None for s in option)]
    cause = (f"{name}'s own settings check refuses {first} together with {second}: the message is that check's "
             f"(the raise site index: {cited[0]}). It is a combination the release does not run, not a "
             "size or value to tune: one of the two has to go.")
    summary = f"Drop one of the two: {first} or {second} ({name} refuses them together); keep the one you need."
    ways = " or ".join(f"without {_shown(option)}" for option in options)
    steps = [f"The check refuses only when each of its terms holds: {ways}, its test no longer holds."]
    if rest.strip(" .;"):
        steps.append(f"The engine says: {rest.strip(' .;')}.")
    if upgrade is not None:
        steps.append(f"Or upgrade: {name} {upgrade}'s check lets this value through (the raise site index), so both "
                     "settings can stay.")
    fix = _fix(evidence, summary, tuple(steps), offered)
    return Diagnosis(
        pattern=RULE_ID, title=f"{first} and {second} cannot run together in {name}", category="feature-conflict",
        root_cause=cause, fix=fix, references=tuple(f"the raise site index: {where}" for where in cited),
        engine=engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the engine's settings check: {cited[0]}", *checked),
    )


def _fix(evidence: Evidence, summary: str, steps: tuple[str, ...], offered: list[tuple[str, ...]]) -> Fix:
    """Leave out the first group of settings, or (as the alternative) the other: the user's own command with them
    removed when the log shows one that gives them; only flags the release's catalog has are offered as changes."""
    asked = ("which of the two settings to keep",)
    if not offered:
        return Fix(summary=summary, steps=steps, needs_input=asked)

    def build(ctx: FixContext, _data: dict[str, object]) -> Fix:
        options = []
        for option in offered:
            given = [flag_as_given(ctx, flag) for flag in option]
            given = [flag for flag in given if ctx.command is None or ctx.command.has(flag)]
            if given:
                options.append(Fix(summary=f"Leave out {' and '.join(given)}.",
                                   flags=tuple(FlagOp("remove", flag) for flag in given)))
        if not options:
            return Fix(summary=summary, steps=steps, needs_input=asked)
        return Fix(summary=summary, flags=options[0].flags, steps=steps, alternatives=tuple(options[1:]))

    built = build_fix({"builder": "rule"}, evidence.failure, {}, evidence.launch, builders={"rule": build})
    return built or Fix(summary=summary, steps=steps, needs_input=asked)
