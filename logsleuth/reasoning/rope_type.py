"""A RoPE scaling type that no release of either engine handles: a value written by hand (rule `rule-rope-type-unknown`).

The engines' rotary embedding (`get_rope`: vllm/model_executor/layers/rotary_embedding, sglang/srt/layers/
rotary_embedding) compares the config's rope scaling type with each type it implements and raises "Unknown RoPE
scaling type X" for any other.  The raise site index holds those comparisons as the check's guards
(`not scaling_type == 'yarn'`), per release, so which types some release handles is read from it.  A type that
some release handles and this one does not is the engine and the config's transformers disagreeing (the
dependency-version row of facts/categories.toml); a type that no indexed release of either engine handles
('extended') is no model's or transformers' form: someone wrote it, in the launch's override of the model's config
(vLLM's --rope-scaling, --hf-overrides; SGLang's --json-model-override-args) or in an edited config.json, so the value
is what to fix (invalid-flag-value).  An override flag is named only when the launch gives it (vllm-project/vllm#6689:
`--rope-scaling '{"type": "extended", …}'` for Llama 3.1, whose own config needs none)."""

from __future__ import annotations

import re
from functools import lru_cache

from logsleuth.facts.raise_sites import member_names, site_entries
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence

RULE_ID = "rule-rope-type-unknown"
_UNKNOWN_TYPE = compile_lazily(r"\bUnknown RoPE scaling type:? ['\"]?(?P<type>[A-Za-z][\w.-]{0,40}?)['\"]?(?:$|[\s,;.])")
_ROTARY_FILE = compile_lazily(r"/layers/rotary_embedding(?:\.py|/[\w]+\.py)\.json$")
_COMPARED = re.compile(r"scaling_type == '([\w.-]+)'|scaling_type in \[([^\]]*)\]")
_QUOTED = re.compile(r"'([\w.-]+)'")
# The launch's overrides of the model's config, as flags and as the names a settings dump gives them.
_OVERRIDE = compile_lazily(
    r"(?<![\w-])(?:--(?P<flag>rope-scaling|hf-overrides|json-model-override-args)\b"
    r"|(?P<field>rope_scaling|hf_overrides|json_model_override_args)\s*=\s*(?!None\b)['\"{])")
_OVERRIDE_REACH = 400  # how far past a general override's name its value is read for the rope
SOURCES = (
    "vllm vllm/model_executor/layers/rotary_embedding.py (rotary_embedding/__init__.py from 0.11) get_rope, sglang "
    "sglang/srt/layers/rotary_embedding.py (rotary_embedding/factory.py) get_rope: raise ValueError(f\"Unknown RoPE "
    "scaling type {scaling_type}\") after comparing it with each type the release implements (the raise site index)",
    "vllm-project/vllm#6689 (vLLM 0.5.3.post1 launched with --rope-scaling type 'extended' for Llama 3.1)",
)


@lru_cache(maxsize=1)
def handled_rope_types() -> frozenset[str]:
    """Every rope scaling type some indexed release of SGLang or vLLM handles in get_rope, read from the guards of its
    "Unknown RoPE scaling type" check."""
    names: set[str] = set()
    for engine in ("vllm", "sglang"):
        for member in member_names(engine):
            if not _ROTARY_FILE.search("/" + member):
                continue
            for entry in site_entries(engine, member):
                if not str(entry.get("message", "")).startswith("Unknown RoPE scaling type"):
                    continue
                for guard in entry.get("guards", ()):
                    for single, listed in _COMPARED.findall(guard):
                        names.update([single] if single else _QUOTED.findall(listed))
    return frozenset(names)


def _handled_somewhere(rope_type: str, handled: frozenset[str]) -> bool:
    """Whether some release handles the type, or the family a compound name of theirs extends (`bailing_mrope` and
    `telechat3-yarn` extend `mrope` and `yarn`: a model's config may name the family alone)."""
    families = {re.split(r"[_-]", name)[-1] for name in handled if re.search(r"[_-]", name)}
    return rope_type.lower() in handled or rope_type.lower() in families


def _overrides_given(evidence: Evidence) -> list[str]:
    """The config overrides the launch gives (`--rope-scaling`, `json_model_override_args='{…}'`), as written."""
    texts = [evidence.launch.command or "", *evidence.lines,
             *(f"{name}={value}" for name, value in evidence.launch.server_args)]
    given: list[str] = []
    for text in texts:
        for found in _OVERRIDE.finditer(text):
            name = f"--{found['flag']}" if found["flag"] else found["field"]
            # A general override (--hf-overrides '{"architectures": …}') counts only when it sets the rope.
            general = "rope" not in name.replace("-", "_")
            if name not in given and (not general or "rope" in text[found.end():found.end() + _OVERRIDE_REACH]):
                given.append(name)
    return given


def rope_type_unknown(evidence: Evidence) -> Diagnosis | None:
    found = evidence.first_match(_UNKNOWN_TYPE)
    handled = handled_rope_types()
    if found is None or not handled or _handled_somewhere(found["type"], handled):
        return None
    rope_type = found["type"]
    known = ", ".join(sorted(n for n in handled if not re.search(r"[_-]", n)))
    given = _overrides_given(evidence)
    root_cause = (f"The engine's rotary embedding refused the rope scaling type '{rope_type}'. No indexed release of "
                  "vLLM or SGLang handles a type of that name, so it is not a form a model's config or transformers writes: it was written by hand, in an override of "
                  "the model's config or in an edited config.json.")
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
        f"the rope types the engines' releases handle: {known} (and model-specific variants); a model's own type (its config.json's rope_scaling, "
        "\"rope_type\" or \"type\") needs no override",
        "to extend the context on purpose, use a type the release implements (yarn, dynamic, linear) with its "
        "\"factor\", and check the model's card for what it was trained with"))
    evidence_lines = (f"the rope type the engine refused: {rope_type}",
                      *(f"the launch overrides the model's config: {name}" for name in given))
    return Diagnosis(
        pattern=RULE_ID, title=f"A RoPE scaling type no engine release knows ('{rope_type}'): a value written by hand",
        category="invalid-flag-value", root_cause=root_cause, fix=fix, references=SOURCES,
        engine=evidence.launch.engine, engine_version=evidence.launch.engine_version, basis="rule",
        evidence=evidence_lines)
