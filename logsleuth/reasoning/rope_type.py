"""A RoPE scaling type the engine's get_rope refuses, read against what each indexed release handles
(rule `rule-rope-type-unknown`).

The engines' rotary embedding (`get_rope`: vllm/model_executor/layers/rotary_embedding, sglang/srt/layers/
rotary_embedding) compares the config's rope scaling type with each type it implements and raises "Unknown RoPE
scaling type X" for any other.  The raise site index holds those comparisons as the check's guards
(`not scaling_type == 'yarn'`), per release, so which types each release handles is read from it:
- a type a later release of the launch's engine handles and the launch's release does not: the model is newer than
  the release, and the fix is that newer release (dependency-version), never the old release's older transformers,
  which refuses a newer rope_scaling again ("`rope_scaling` must be a dictionary with two fields", before 4.43);
- a type no indexed release of either engine handles ('extended'): most likely written by hand, in the launch's
  override of the model's config (vLLM's --rope-scaling, --hf-overrides; SGLang's --json-model-override-args) or in
  an edited config.json, so the value is what to fix (invalid-flag-value).  An override flag is named only when the
  launch gives it and its own value sets the rope (vllm-project/vllm#6689: `--rope-scaling '{"type": "extended", …}'`
  for Llama 3.1, whose own config needs none);
- any other type (some release handles it) is the engine and the installed transformers disagreeing on the config's
  form: the dependency-version row of facts/categories.toml."""

from __future__ import annotations

import ast
import json
import re
from functools import lru_cache

from logsleuth.command_line import flag_value, split_words
from logsleuth.facts.raise_sites import indexed_releases, member_names, site_entries
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence
from logsleuth.versions import version_key

RULE_ID = "rule-rope-type-unknown"
_UNKNOWN_TYPE = compile_lazily(
    r"\bUnknown RoPE scaling type:? ['\"]?(?P<type>[A-Za-z][\w.-]{0,40}?)['\"]?(?:$|[\s,;.])")
_ROTARY_FILE = compile_lazily(r"/layers/rotary_embedding(?:\.py|/[\w]+\.py)\.json$")
_COMPARED = re.compile(r"scaling_type == '([\w.-]+)'|scaling_type in \[([^\]]*)\]")
_QUOTED = re.compile(r"'([\w.-]+)'")
# The launch's overrides of the model's config, as flags and as the names a settings dump gives them.
_OVERRIDE = compile_lazily(
    r"(?<![\w-])(?:--(?P<flag>rope-scaling|hf-overrides|json-model-override-args)\b"
    r"|(?P<field>rope_scaling|hf_overrides|json_model_override_args)\s*=\s*(?!None\b)(?=['\"{]))")
# The keys of a general override's value that set the rope (transformers' rope_scaling, and rope_parameters from v5).
_ROPE_KEYS = frozenset({"rope_scaling", "rope_parameters", "rope_type"})
# Types a model's config.json names that the engines read under another key rather than compare in get_rope:
# Qwen2-VL's "mrope" (vLLM reads "mrope_section" under default/yarn; transformers 4.45's dev builds read the type back
# as "default", vllm-project/vllm#8388), so the engine refusing it is the engine and transformers disagreeing.
_CONFIG_ALIASES = frozenset({"mrope"})
SOURCES = (
    "vllm vllm/model_executor/layers/rotary_embedding.py (rotary_embedding/__init__.py from 0.11) get_rope, sglang "
    "sglang/srt/layers/rotary_embedding.py (rotary_embedding/factory.py) get_rope: raise ValueError(f\"Unknown RoPE "
    "scaling type {scaling_type}\") after comparing it with each type the release implements (the raise site index)",
    "vllm-project/vllm#6689 (vLLM 0.5.3.post1 launched with --rope-scaling type 'extended' for Llama 3.1)",
)


@lru_cache(maxsize=2)
def handled_by_release(engine: str) -> dict[str, frozenset[str]]:
    """The rope scaling types each indexed release of the engine handles in get_rope, read from the guards of its
    "Unknown RoPE scaling type" check (each check's `lines` say which releases hold it), releases oldest first."""
    releases = indexed_releases(engine)
    types: dict[str, set[str]] = {release: set() for release in releases}
    for member in member_names(engine):
        if not _ROTARY_FILE.search("/" + member):
            continue
        for entry in site_entries(engine, member):
            if not str(entry.get("message", "")).startswith("Unknown RoPE scaling type"):
                continue
            compared = {name for guard in entry.get("guards", ()) for single, listed in _COMPARED.findall(guard)
                        for name in ([single] if single else _QUOTED.findall(listed))}
            for first, last, *_ in entry.get("lines", ()):
                for release in releases[first:last + 1]:
                    types[release].update(compared)
    return {release: frozenset(names) for release, names in types.items()}


@lru_cache(maxsize=1)
def handled_rope_types() -> frozenset[str]:
    """Every rope scaling type some indexed release of SGLang or vLLM handles in get_rope."""
    return frozenset(name for engine in ("vllm", "sglang") for names in handled_by_release(engine).values()
                     for name in names)


def _first_newer_release_handling(rope_type: str, engine: str | None, version: str | None) -> str | None:
    """The first indexed release of the launch's engine, newer than its release, that handles the type while that
    release does not (a type newer than the release: Llama 3.1's llama3 before the release that added it)."""
    current = version_key(version) if engine and version else None
    if engine is None or current is None:
        return None
    by_release = handled_by_release(engine)
    own = by_release.get(str(version))
    if own is not None and (not own or rope_type in own):
        return None  # the index read no guard of this release's check (SGLang before 0.4.3): what it handles is unknown
    newer = [release for release, names in by_release.items()
             if rope_type in names and (key := version_key(release)) is not None and key > current]
    return min(newer, key=lambda release: version_key(release) or current, default=None)


def _parsed(value: object) -> object:
    """An override's value as data: a dict given as such, or its JSON or Python-literal text (None if neither)."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except (ValueError, RecursionError):
        pass
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _sets_rope(value: object) -> bool:
    """Whether a general override's value sets a rope key, at its top level or in a config nested one level down
    (`text_config`).  A value that does not parse is not counted: what it sets is unknown."""
    data = _parsed(value)
    if not isinstance(data, dict):
        return False
    nested = [set(inner) for inner in data.values() if isinstance(inner, dict)]
    return any(_ROPE_KEYS & keys for keys in [set(data), *nested])


def _value_after(text: str) -> str | None:
    """The value that starts `text` (what follows an override's name): a `{…}` literal, or else the next shell word
    (after `=` or a space).  None when it cannot be read (an unbalanced quote, a cut line)."""
    text = text.lstrip(" =")
    if text.startswith("{"):
        depth = 0
        for position, char in enumerate(text):
            depth += {"{": 1, "}": -1}.get(char, 0)
            if depth == 0:
                return text[:position + 1]
        return None
    try:
        words, _ = split_words(text)
    except ValueError:
        return None
    return words[0].value if words else None


def _overrides_given(evidence: Evidence) -> list[str]:
    """The config overrides the launch gives that set the rope (`--rope-scaling`, or `--hf-overrides`,
    `json_model_override_args='{…}'` whose own value has a rope key), as written."""
    given: list[str] = []
    for flag in ("--rope-scaling", "--hf-overrides", "--json-model-override-args"):
        value = flag_value(evidence.launch, flag)
        if value and (flag == "--rope-scaling" or _sets_rope(value)):
            given.append(flag)
    for line in evidence.lines:
        for found in _OVERRIDE.finditer(line):
            name = f"--{found['flag']}" if found["flag"] else found["field"]
            value = _value_after(line[found.end():])
            general = "rope" not in name
            if name not in given and f"--{name.replace('_', '-')}" not in given and value \
                    and (not general or _sets_rope(value)):
                given.append(name)
    return given


def _raised_in_get_rope(evidence: Evidence) -> bool:
    """Whether the refusal was raised in an engine's get_rope, or the paste shows no frame to say otherwise."""
    frames = [frame for block in evidence.failure.exceptions for frame in block.frames]
    return not frames or any(frame.function == "get_rope" for frame in frames)


def _types_listed(engine: str | None, version: str | None) -> str:
    """The plain rope types the user's release handles when the index holds it, else those of every indexed release
    of both engines, labelled so (model-specific compound names left out)."""
    by_release = handled_by_release(engine) if engine in ("vllm", "sglang") else {}
    if by_release.get(str(version)):
        names, where = by_release[str(version)], f"the rope types {engine} {version} handles"
    else:
        names = handled_rope_types()
        where = "the rope types across all indexed releases of vLLM and SGLang (not all are in yours)"
    plain = ", ".join(sorted(name for name in names if not re.search(r"[_-]", name)))
    return f"{where}: {plain} (and model-specific variants)"


def rope_type_unknown(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_UNKNOWN_TYPE)
    if found is None or found["type"] == "None" or not _raised_in_get_rope(evidence):
        return None  # a null type is a config with no type, not a value written by hand
    rope_type, launch = found["type"], evidence.launch
    newer = _first_newer_release_handling(rope_type, launch.engine, launch.engine_version)
    if newer is not None:
        return _newer_than_release(evidence, rope_type, newer)
    handled = handled_rope_types()
    if not handled or rope_type in handled or rope_type in _CONFIG_ALIASES:
        return None  # a type some release handles: the engine and transformers disagreeing (categories.toml)
    given = _overrides_given(evidence)
    root_cause = (f"The engine's rotary embedding refused the rope scaling type '{rope_type}'. No indexed release of "
                  "vLLM or SGLang handles a type of that name, so it was most likely written by hand, in an override "
                  "of the model's config or in an edited config.json (a model newer than the indexed releases could "
                  "also name a new type).")
    if given:
        summary = (f"Fix or drop the rope scaling the launch sets with {' and '.join(given)}: '{rope_type}' is no rope "
                   "type the engine knows. Most models' config.json already carries the rope_scaling they were "
                   "trained with, and then no override is needed.")
    else:
        summary = (f"Find where '{rope_type}' was set and fix or drop it (general guidance): an override of the "
                   "model's config in the launch (a rope-scaling or config-override setting), or an edited "
                   "config.json. Most models' config.json already carries the rope_scaling they were trained with, "
                   "and then no override is needed.")
    fix = Fix(summary=summary, steps=(
        f"{_types_listed(launch.engine, launch.engine_version)}; a model's own type (its config.json's "
        "rope_scaling, \"rope_type\" or \"type\") needs no override",
        "to extend the context on purpose, use a type the release implements (yarn, dynamic, linear) with its "
        "\"factor\", and check the model's card for what it was trained with"))
    evidence_lines = (f"the rope type the engine refused: {rope_type}",
                      *(f"the launch overrides the model's config: {name}" for name in given))
    return Diagnosis(
        pattern=RULE_ID,
        title=f"A RoPE scaling type no indexed engine release handles ('{rope_type}'): likely written by hand",
        category="invalid-flag-value", root_cause=root_cause, fix=fix, references=SOURCES,
        engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=evidence_lines)


def _newer_than_release(evidence: Evidence, rope_type: str, newer: str) -> Diagnosis:
    """A type a later release of the launch's engine handles and the launch's release does not: the model is newer
    than the release, so a newer release is the fix (the release's own older transformers would refuse the config
    again, "`rope_scaling` must be a dictionary with two fields" for llama3 before transformers 4.43)."""
    launch = evidence.launch
    release = f"{launch.engine} {launch.engine_version}"
    return Diagnosis(
        pattern=RULE_ID, title=f"A RoPE scaling type newer than {release} ('{rope_type}')",
        category="dependency-version",
        root_cause=(f"The engine's rotary embedding refused the rope scaling type '{rope_type}': {release} does not "
                    f"implement it, and {newer} is the first newer indexed release that does. The model's config (as "
                    "the installed transformers reads it) is newer than the release."),
        fix=Fix(summary=(f"Upgrade {launch.engine} to {newer} or later (with the transformers it pins), which "
                         f"implements the rope type '{rope_type}'."),
                steps=(f"{_types_listed(launch.engine, launch.engine_version)}; the model's config.json names "
                       f"'{rope_type}'",)),
        references=SOURCES, engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(f"the rope type the engine refused: {rope_type}",
                  f"the first newer indexed {launch.engine} release that handles it: {newer}"))
