"""A model architecture the engine's registry does not have (issue 28: read as a feature conflict, or answered with
"check the supported models" and no release named).

The engines refuse a checkpoint whose config.json "architectures" entry their model registry lacks, in their own
words (the raise site index):
- vLLM vllm/model_executor/models/registry.py _raise_for_unsupported: "Model architectures {} are not supported for
  now. Supported architectures: {}"; its Transformers fallback (model_loader/utils.py resolve_transformers_arch, later
  registry.py _try_resolve_transformers): "{} has no vLLM implementation and the Transformers implementation is not
  compatible with vLLM.", "The Transformers implementation of {} is not compatible with vLLM.", "Cannot find model
  module. '{}' is not a registered model in the Transformers library …";
- SGLang sglang/srt/models/registry.py: "Model architectures {} are not supported for now. Supported architectures:
  {}", before 0.4 "Unsupported architectures: {}. Supported list: {}".
Which indexed releases register the architecture is read from facts/engine_architectures.json.gz (the registries of
the released wheels), so the report names them, and the transformers each pins (facts/requires.json), never a guess.
A release that registers the architecture and still refuses it failed to import the model's module (SGLang logs
"Ignore import error when loading sglang.srt.models.…"): that error, not the release, is the cause.

Threads: vllm-project/vllm#16146 (BertForMaskedLM, a head no indexed release before 0.29 registers),
vllm-project/vllm#18516 (Qwen2_5OmniForConditionalGeneration on a 0.8 release; registered from the indexed 0.9.2).
"""

from __future__ import annotations

from dataclasses import replace

from logsleuth.facts import requires
from logsleuth.facts.engine_architectures import Support, indexed_releases, supported
from logsleuth.facts.engine_modules import Presence, spans_of
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix
from logsleuth.reasoning.evidence import Evidence, exception_lines

RULE_ID = "rule-architecture-not-registered"
# The patterns that match the registries' refusal (patterns/*/unsupported-architecture.toml): their general upgrade
# advice gives way to this rule's reading, which names the releases (api.py, with_registry_releases).
REGISTRY_PATTERNS = frozenset({"vllm-unsupported-architecture", "sglang-unsupported-architecture"})
ENGINES = ("vllm", "sglang")
# An architecture is a class name: `Qwen3ForCausalLM`, `LlamaModel`, `GPT2LMHeadModel`, `QWenLMHeadModel`.
# One whole word (possessive, bounded: linear on a 64 KiB line); the message around it says it is an architecture.
_CLASS = r"\b[A-Z]\w{0,200}+\b"
_REFUSALS = compile_lazily(
    r"Model architectures \[(?P<listed>[^\]]{1,2000})\] (?:are|is) not supported\b"
    rf"|Unsupported architectures?: (?P<sglang>{_CLASS})"
    rf"|\b(?P<fallback>{_CLASS}) has no vLLM implementation"
    rf"|The Transformers implementation of '?(?P<bridge>{_CLASS})'? is not compatible with vLLM"
    rf"|Cannot find model module\. '?(?P<module>{_CLASS})'? is not a registered model in the Transformers library"
)
_LISTED = compile_lazily(r"""['"]([A-Za-z_]\w{0,200})['"]""")
# SGLang's registry skips a model module whose import fails and logs it (sglang/srt/models/registry.py
# import_model_classes); the architecture is then missing from a release that has it.
_SKIPPED_IMPORT = compile_lazily(r"Ignore import error when loading (?P<module>[\w.]+)")
_TRANSFORMERS_BACKEND = compile_lazily(r"model[-_]impl[\s=:'\"]+transformers")
SOURCES = (
    "facts/engine_architectures.json.gz (scripts/engine_index/architectures.py): the architectures each indexed "
    "release's model registry names, read from its wheel",
    "vllm vllm/model_executor/models/registry.py _raise_for_unsupported: 'Model architectures {} are not supported for "
    "now. Supported architectures: {}'; vllm/model_executor/model_loader/utils.py resolve_transformers_arch: '{} has "
    "no vLLM implementation and the Transformers implementation is not compatible with vLLM.'",
    "sglang sglang/srt/models/registry.py: 'Model architectures {} are not supported for now. Supported architectures: "
    "{}' (before 0.4: 'Unsupported architectures: {}. Supported list: {}'); import_model_classes logs 'Ignore import "
    "error when loading {}' and skips the module",
)


def architecture_support(evidence: Evidence) -> Diagnosis | None:
    architectures = _refused_architectures(evidence)
    # Both engines word the registry's refusal alike: with no engine known, no release of either is named (the
    # engine-unknown diagnosis gives the category's neutral checks).
    engine = evidence.launch.engine if evidence.launch.engine in ENGINES else None
    if not architectures or engine is None:
        return None
    architecture = architectures[0]
    support = supported(engine, architecture)
    if support is None:
        return None
    presence = support.serving
    installed = evidence.launch.named_version
    skipped = next((m["module"] for line in evidence.lines if (m := _SKIPPED_IMPORT.search(line))), None)
    if presence.in_every or (installed is not None and presence.has(installed)):
        return _registered_but_refused(evidence, engine, installed, architecture, skipped)
    if not presence.having:
        return _in_no_release(evidence, engine, architecture, presence)
    return _in_other_releases(evidence, engine, installed, architecture, support, skipped)


def with_registry_releases(diagnosis: Diagnosis, evidence: Evidence) -> Diagnosis:
    """A registry pattern's diagnosis (REGISTRY_PATTERNS) with this rule's reading of the releases in place of its
    general upgrade advice; the pattern's id and category stay (the engine is known there)."""
    reasoned = architecture_support(evidence)
    if reasoned is None:
        return diagnosis
    return replace(diagnosis, title=reasoned.title, root_cause=reasoned.root_cause, fix=reasoned.fix,
                   evidence=reasoned.evidence, references=(*diagnosis.references, *reasoned.references))


def _refused_architectures(evidence: Evidence) -> list[str]:
    for line in exception_lines(evidence.failure):
        found = _REFUSALS.search(line)
        if found is None:
            continue
        if found["listed"] is not None:
            return _LISTED.findall(found["listed"])
        return [next(name for name in found.groups()[1:] if name)]
    return []


def _released_pin(engine: str, version: str) -> str:
    """` (vLLM 0.9.2 requires transformers>=4.51.1)` when requires.json has the pin, else ''."""
    pinned = requires.pinned_requirement(engine, version, "transformers")
    return f" ({ENGINE_NAMES[engine]} {version} requires {pinned})" if pinned else ""


def _in_other_releases(evidence: Evidence, engine: str, installed: str | None, architecture: str,
                       support: Support, skipped: str | None) -> Diagnosis:
    name = ENGINE_NAMES[engine]
    presence = support.serving
    spans = presence.spans()
    first = presence.having[0]
    facts = [f"{architecture} is served by the indexed {name} releases {spans}"]
    if support.converted_in:
        facts.append(f"the indexed releases {spans_of(support.converted_in, presence.indexed)} serve it by converting "
                     f"the registered {' or '.join(support.converted_from)} (vLLM's model config maps an "
                     "architecture's suffix to a task)")
    if installed is not None:
        facts.append(f"the installed {name} {installed} does not register it")
        cause = (f"The checkpoint's architecture {architecture} (the \"architectures\" entry of its config.json) is "
                 f"not in {name} {installed}'s model registry; the indexed {name} releases that serve it are "
                 f"{spans}.")
        summary = f"Use a {name} release that serves {architecture}: {spans} (indexed releases)."
    else:
        cause = (f"The checkpoint's architecture {architecture} (the \"architectures\" entry of its config.json) is not "
                 f"in the installed {name}'s model registry. The indexed {name} releases that serve it are {spans}: "
                 f"the log does not name the installed release, and a release older than {first} (or between two "
                 f"indexed releases before it) lacks it.")
        summary = (f"Check the installed {name} (pip show {engine}); {architecture} is served by the indexed "
                   f"releases {spans}.")
    steps = [_release_step(name, engine, architecture, presence)]
    if skipped is not None:
        steps.insert(0, f"the log shows the registry skipping {skipped} after an import error: if that module is "
                        f"{architecture}'s, that import error is the cause in a release that registers it")
    steps.append(_checkpoint_step(architecture))
    return _diagnosis(evidence, engine, f"{architecture} is not in this {name} release's model registry",
                      cause, Fix(summary=summary, steps=tuple(steps)), facts)


def _release_step(name: str, engine: str, architecture: str, presence: Presence) -> str:
    """Install a release that registers the architecture: from the first on when every later indexed release keeps it,
    else one of the runs (a later release may list it under another name, or serve it another way)."""
    first = presence.having[0]
    pin = _released_pin(engine, first)
    if presence.spans() == f"{first} to {presence.indexed[-1]}":
        return (f"install a {name} release that serves {architecture}, {first} or later among the indexed "
                f"releases{pin}, with the transformers it requires")
    return (f"the indexed {name} releases {presence.spans()} serve {architecture}; the releases after them do not "
            f"list it (check a newer release's supported models for the name it serves it by)")


def _in_no_release(evidence: Evidence, engine: str, architecture: str, presence: Presence) -> Diagnosis:
    name = ENGINE_NAMES[engine]
    indexed = f"{presence.indexed[0]} to {presence.indexed[-1]}"
    cause = (f"No indexed {name} release ({indexed}) registers the architecture {architecture} (the \"architectures\" "
             f"entry of the checkpoint's config.json): {name} has no implementation of its own for it in those releases, so "
             "an upgrade within them does not add one.")
    steps = [_checkpoint_step(architecture),
             "General guidance: a checkpoint whose config.json has an auto_map (its own modelling code) can be loaded "
             "through transformers only with the trust-remote-code setting; a model the engine does not implement "
             "needs another engine, or an out-of-tree model plugin"]
    if engine == "vllm" and _TRANSFORMERS_BACKEND.search(_launch_text(evidence)):
        steps.insert(0, "the launch asks for the Transformers backend (model_impl transformers): without it, vLLM uses "
                        "its own implementation where the release has one")
    return _diagnosis(evidence, engine, f"No indexed {name} release ({indexed}) implements {architecture}", cause,
                      Fix(summary=f"Serve a checkpoint whose architecture {name} implements, or another engine.",
                          steps=tuple(steps)),
                      [f"{architecture} is registered in no indexed {name} release ({indexed})"])


def _registered_but_refused(evidence: Evidence, engine: str, installed: str | None, architecture: str,
                            skipped: str | None) -> Diagnosis:
    """The release registers the architecture (the installed one, or every indexed one when the log names none), so
    the registry's refusal means the model's module did not load."""
    name = ENGINE_NAMES[engine]
    release = f"{name} {installed}" if installed else f"every indexed {name} release"
    where = f" (the log shows the registry skipping {skipped} after an import error)" if skipped else ""
    cause = (f"{release[0].upper()}{release[1:]} registers {architecture}, yet the registry refused it: the "
             f"model's module failed to load{where}. That error, logged before this one, is the cause, not the "
             "release.")
    first = indexed_releases(engine)[0] if indexed_releases(engine) else None
    older = f" (unless the installed release is older than {first}, the first indexed)" if first and not installed else ""
    cause = cause.replace(" That error,", f"{older} That error,") if older else cause
    fact = (f"{architecture} is registered in {name} {installed}" if installed
            else f"{architecture} is registered in every indexed {name} release{older}")
    return _diagnosis(evidence, engine, f"{architecture} is in {release}, but its module did not load", cause,
                      Fix(summary=f"Fix the error that kept {architecture}'s module from loading (logged above); no "
                                  "other release is needed.",
                          steps=("the first error in the log (an ImportError, a compiler or CUDA error while "
                                 "importing the model's module) names what failed",)),
                      [fact],
                      category="dependency-version" if skipped else "unsupported-architecture")


def _checkpoint_step(architecture: str) -> str:
    return (f"check the checkpoint's config.json: \"architectures\" names {architecture}; a checkpoint saved with "
            "another head or by a fine-tuning tool may name a class the model's usual checkpoints do not")


def _launch_text(evidence: Evidence) -> str:
    launch = evidence.launch
    return " ".join([launch.command or "", *(f"{k}={v}" for k, v in launch.server_args)])


def _diagnosis(evidence: Evidence, engine: str, title: str, cause: str, fix: Fix, facts: list[str],
               category: str = "unsupported-architecture") -> Diagnosis:
    return Diagnosis(
        pattern=RULE_ID, title=title, category=category, root_cause=cause, fix=fix, references=SOURCES,
        engine=engine, engine_version=evidence.launch.engine_version, basis="rule", evidence=tuple(facts))

