"""A checkpoint of a model family's version newer than the release's implementation of that family: the indexed
releases that implement it (issue 28: read as an unclassified ValueError, with no release named).

Some model classes serve several versions of one family and pick the implementation by the checkpoint's version,
refusing any other in their own words (the raise site index): vLLM's MiniCPMV.__new__ and SGLang's MiniCPMV.__init__
"Currently, MiniCPMV only supports versions {}. Got version: {}" (vLLM up to 0.9.2 and SGLang before 0.5 with the
versions written out: "… only supports versions 2.0, 2.5, and 2.6", "… only supports versions 2.6"), vLLM's
MiniCPMO.__new__ the same for MiniCPMO.  (vLLM's GrokForCausalLM.__new__ "Unsupported Grok version: {}" is not read: its
version comes from _get_grok_version, which returns only the two versions the dict holds, so no indexed release can
raise it.)  The
model is not unknown to the release: its architecture is registered, and only the checkpoint's version (config.json
"version", or the one read from the config) is newer than what that release implements.  Which indexed releases
implement each version is read from facts/model_versions.json (scripts/engine_index/model_versions.py: the keys of
the dict the refusing function looks the version up in).  Category unsupported-architecture: the fix is a release
that implements that version, or a checkpoint of a version the installed release lists; never editing the
checkpoint's version to one the release lists (its weights are another model's).
"""

from __future__ import annotations

from logsleuth.facts.engine_modules import Presence, spans_of
from logsleuth.facts.model_versions import ENGINES, versions_of
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence, exception_lines

RULE_ID = "rule-model-version-unsupported"
# The refusal: the family, the versions the release lists (older wording: the list alone), the checkpoint's version
# (newer wording: a tuple, "(4, 5)").  Bounded, linear on a 64 KiB line.
_REFUSAL = compile_lazily(
    r"\bCurrently, (?P<family>[A-Za-z]\w{0,40}+) only supports versions (?P<listed>[\d., and]{1,80}+)"
    r"(?:\W{0,3}Got version: \(?(?P<got>\d{1,3}(?:, ?\d{1,3}){0,3})\)?)?"
)
_NUMBERS = compile_lazily(r"\d+")
SOURCES = (
    "vllm vllm/model_executor/models/minicpmv.py MiniCPMV.__new__, minicpmo.py MiniCPMO.__new__; sglang "
    "sglang/srt/models/minicpmv.py MiniCPMV.__init__ (the raise site index)",
    "facts/model_versions.json (scripts/engine_index/model_versions.py): the versions each indexed release's "
    "refusing class implements, read from its wheel",
)


def model_version(evidence: Evidence) -> Diagnosis | None:
    """A model class refusing the checkpoint's version: the indexed releases that implement it."""
    refused = _refusal(evidence)
    if refused is None:
        return None
    family, listed, wanted = refused
    engines = (evidence.launch.engine,) if evidence.launch.engine in ENGINES else ENGINES
    # An engine whose releases never implemented every version the message lists did not print it (SGLang's MiniCPMV
    # never had 2.0, which vLLM's older wording lists).
    tables = {engine: table for engine in engines
              if (table := versions_of(engine, family)) and all(table.get(v) and table[v].having for v in listed)}
    if not tables:
        return None
    engine = evidence.launch.engine
    installed = evidence.launch.named_version if engine in tables else None
    if wanted is not None and installed is not None and engine is not None:
        presence = tables[engine].get(wanted)
        if presence is not None and presence.has(installed):
            return None  # the installed release implements it: the refusal is about something else
    lines = [line for engine, table in tables.items() if (line := _releases_line(engine, family, table, listed,
                                                                                   wanted))]
    return _diagnosis(evidence, family, listed, wanted, lines, installed)


def _refusal(evidence: Evidence) -> tuple[str, tuple[str, ...], str | None] | None:
    """The family, the versions the message lists, and the checkpoint's version when the message gives it."""
    for line in exception_lines(evidence.failure):
        if (found := _REFUSAL.search(line)) is None:
            continue
        listed = tuple(v for v in found["listed"].replace(" and ", ",").replace(" ", "").split(",") if v)
        wanted = ".".join(part.strip() for part in found["got"].split(",")) if found["got"] else None
        return found["family"], tuple(v.rstrip(".") for v in listed if v.rstrip(".")), wanted
    return None


def _releases_line(engine: str, family: str, table: dict[str, Presence], listed: tuple[str, ...],
                   wanted: str | None) -> str:
    """What the engine's indexed releases implement beyond the versions the message lists."""
    name = ENGINE_NAMES[engine]
    if wanted is not None:
        presence = table.get(wanted)
        if presence is None or not presence.having:
            newest = presence.indexed[-1] if presence else _newest(table)
            return f"no indexed {name} release (up to {newest}) implements {family} {wanted}"
        return f"{family} {wanted} is implemented by the indexed {name} releases {presence.spans()}"
    newer = [(version, presence) for version, presence in sorted(table.items(), key=_order)
             if version not in listed and presence.having]
    if not newer:
        return ""
    said = "; ".join(f"{version}: {spans_of(presence.having, presence.indexed)}" for version, presence in newer)
    return f"the indexed {name} releases that implement the {family} versions the message does not list: {said}"


def _order(item: tuple[str, Presence]) -> tuple[int, ...]:
    """A family's versions in order: "2.6" before "4.0"."""
    return tuple(int(number) for number in _NUMBERS.findall(item[0]))


def _newest(table: dict[str, Presence]) -> str:
    return next(iter(table.values())).indexed[-1]


def _diagnosis(evidence: Evidence, family: str, listed: tuple[str, ...], wanted: str | None, lines: list[str],
               installed: str | None) -> Diagnosis:
    release = f"{ENGINE_NAMES.get(evidence.launch.engine or '', 'the engine')} {installed}" if installed else \
        "the installed release"
    version = f"version {wanted}" if wanted else "version"
    implemented = f" (it implements {', '.join(listed)})" if listed else ""
    cause = (f"The checkpoint is a {family} model of a {version} that {release}'s {family} implementation does not "
             f"have{implemented}: the model family is known to the release, but this version of it was added in a "
             "later release, or in none.")
    summary = (f"Use a release that implements the checkpoint's {family} {version} (the indexed releases are named "
               "below), or a checkpoint of a version the installed release lists.")
    steps = (*lines,
             "the checkpoint's version is the \"version\" entry of its config.json; do not change it to a version the "
             "release lists: the weights are another version's model",
             "check the installed release with pip show (vllm or sglang) against the releases named")
    return Diagnosis(pattern=RULE_ID, title=f"A {family} {version} newer than the release implements",
                     category="unsupported-architecture", root_cause=cause,
                     fix=Fix(summary=summary, steps=tuple(s for s in steps if s)), references=SOURCES,
                     engine=evidence.launch.engine, engine_version=evidence.launch.engine_version, basis="rule",
                     evidence=tuple(lines))
