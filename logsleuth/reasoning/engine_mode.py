"""A component built for one engine mode run under the other (issue 28: split 19's F-05, vLLM's V0 engine refusing
LMCache's V1 KV connector, was read as a package-version mismatch).

vLLM's older V0 engine and its V1 engine each have their own API for some components, and each mode's code asserts
that the component it loads subclasses its own base class (facts/engine_modes.toml: the KV connector factory's
`assert issubclass(connector_cls, KVConnectorBase)` for V0, `… KVConnectorBase_V1)` for V1).  The assertion's base
class (or the frame of the mode's own function, when the statement is not pasted) names the mode that ran, so the
component is one of the other mode: a feature-conflict between the engine mode and the component, whose fix is to
run it under the mode it was built for.  The switch that chooses the mode (VLLM_USE_V1) is named only as the releases
have it (facts/engine_modules.json.gz: the indexed releases whose vllm/envs.py reads it).
"""

from __future__ import annotations

from logsleuth.facts.engine_modes import ModeComponent, mode_components
from logsleuth.facts.engine_modules import name_presence
from logsleuth.facts.message_templates import short_type
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-engine-mode-component"
# The class an assertion checks an object against: `issubclass(connector_cls, KVConnectorBase)`.
_CHECKED_CLASS = compile_lazily(r"\b(?:issubclass|isinstance)\(\s*[\w.\[\]]{1,80}\s*,\s*(?:[\w]+\.){0,6}(?P<cls>[A-Za-z_]\w{0,80})\s*\)")


def engine_mode(evidence: Evidence) -> Diagnosis | None:
    """An assertion of one engine mode's component check, refusing a component of the other mode."""
    final = evidence.failure.final
    statement = (final.frames[-1].source or "").strip() if final.frames else ""
    asserted = short_type(final.type) == "AssertionError" if final.type else statement.startswith("assert ")
    if not asserted:
        return None
    checked = _CHECKED_CLASS.search(f"{statement}\n{final.message}")
    functions = {(frame.function or "").rsplit(".", 1)[-1] for block in evidence.failure.exceptions for frame in block.frames}
    for row in mode_components():
        if evidence.launch.engine not in (None, row.engine):
            continue
        ran = _mode_ran(row, checked["cls"] if checked else None, functions)
        if ran is not None:
            return _diagnosis(evidence, row, ran)
    return None


def _mode_ran(row: ModeComponent, checked: str | None, functions: set[str]) -> str | None:
    """"V0" or "V1": the mode whose check refused the component, from the base class asserted, else its frame."""
    if checked in row.v0 or (checked is None and functions & set(row.v0_frames)):
        return "V0"
    if checked in row.v1 or (checked is None and functions & set(row.v1_frames)):
        return "V1"
    return None


def _switch_fact(row: ModeComponent, version: str | None) -> tuple[str, bool | None]:
    """What the releases say of the mode's switch, and whether the user's release reads it (None: not known)."""
    presence = name_presence(row.engine, f"{row.engine}.envs", row.switch)
    name = ENGINE_NAMES[row.engine]
    if presence is None or presence.in_none:
        return f"no indexed {name} release reads {row.switch}", False
    reads = presence.has(version) if version is not None else None
    spans = presence.spans()
    if reads is True:
        return f"{name} {version} reads {row.switch} (the indexed releases that read it: {spans})", True
    if reads is False:
        return f"{name} {version} does not read {row.switch}: the indexed releases that read it are {spans}", False
    if version is None:
        known = f"the {name} release is not known"
    elif version in presence.indexed:
        known = f"whether {name} {version} reads it its code's names do not show"  # a module __getattr__ over a table
    else:
        known = f"{name} {version} is not indexed"
    return f"the indexed {name} releases that read {row.switch} are {spans} ({known})", None


def _diagnosis(evidence: Evidence, row: ModeComponent, ran: str) -> Diagnosis:
    name = ENGINE_NAMES[row.engine]
    other = "V1" if ran == "V0" else "V0"
    version = evidence.launch.named_version
    switch_fact, reads = _switch_fact(row, version)
    base = (row.v0 if ran == "V0" else row.v1)[0]
    kind = f" (such as {row.v1_example})" if other == "V1" and row.v1_example else ""
    cause = (f"{name}'s {ran} engine loaded the {row.component}, and its check asserts that the {row.component} "
             f"subclasses {base}, the {ran} engine's API for it; the one the launch names does not: most often a {other} "
             f"{row.component}{kind}, built for the {other} engine. Most often the engine mode and the {row.component} "
             f"do not fit; if the mode is right, a {row.component} package made for another {name} release.")
    fallback = evidence.launch.v0_fallback if row.engine == "vllm" else None
    if other == "V1" and fallback is not None:
        # the log shows vLLM falling back to V0 by itself: the switch alone then raises "VLLM_USE_V1=1 is not
        # supported with <feature>" (engine/arg_utils.py _raise_or_fallback), so it is never set here
        feature, removable = fallback
        if removable:
            summary = (f"vLLM fell back to its V0 engine for {feature}: leave {feature} out so the V1 engine runs the "
                       f"{row.component}; or name a V0 {row.component} for the V0 engine.")
        else:
            summary = (f"Name a V0 {row.component}: vLLM runs only its V0 engine here ({feature} is not supported by "
                       f"the V1 engine), so the {row.component} must be one built for V0.")
        steps: tuple[str, ...] = (
            f"The log shows vLLM falling back to V0 ('{feature} is not supported by the V1 Engine'): setting "
            f"{row.switch}=1 with it raises 'VLLM_USE_V1=1 is not supported with {feature}'.", f"{switch_fact}.")
    elif other == "V1":
        switch = (f"do not set {row.switch}=0 (unset it, or set it to 1)" if reads is not False
                  else f"this release does not read {row.switch}")
        summary = (f"Run the {row.component} under the engine mode it was built for, the V1 engine: {switch}; "
                   f"or name a V0 {row.component} for the V0 engine.")
        steps = (f"{switch_fact}.",)
    else:
        switch = (f"set {row.switch}=0 where the release still has the V0 engine" if reads is not False
                  else f"this release does not read {row.switch}")
        summary = (f"Run the {row.component} under the engine mode it was built for: name a V1 {row.component} for "
                   f"the V1 engine, or run the V0 engine ({switch}).")
        steps = (f"{switch_fact}.",)
    env = ((row.switch, "1"),) if other == "V1" and reads is True and fallback is None else ()
    fix = Fix(summary=summary, env=env, steps=steps,
              needs_input=() if env else (f"how the launch sets the engine mode ({row.switch})",))
    return Diagnosis(
        pattern=RULE_ID, title=f"A {other} {row.component} under {name}'s {ran} engine", category="feature-conflict",
        root_cause=cause, fix=fix, references=(row.site, *row.threads), engine=row.engine,
        engine_version=evidence.launch.engine_version, basis="rule",
        evidence=(f"the {ran} engine's check asserts the {row.component} subclasses {base}", switch_fact),
    )
