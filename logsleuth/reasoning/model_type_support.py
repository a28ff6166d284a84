"""transformers not knowing a checkpoint's model_type, read against the transformers versions that know it and the
engine releases whose transformers requirement admits one (issue 28: "upgrade transformers" with no version named,
also for a model_type no transformers release has).

The pattern common-transformers-unknown-model-type finds the failure (transformers' AutoConfig: KeyError from
`CONFIG_MAPPING[config_dict["model_type"]]`, or "The checkpoint you are trying to load has model type `X` but
Transformers does not recognize this architecture"); this module adds the facts: which indexed transformers versions
know the model type (facts/engine_architectures.json.gz, their CONFIG_MAPPING_NAMES), what the installed engine
release requires of transformers (facts/requires.json), and which indexed engine releases admit a transformers that
knows it.  A model type no indexed transformers knows is the model authors' own (config.json's auto_map) or an
engine's own config class: a transformers upgrade does not add it.

Threads: vllm-project/vllm#18450 (qwen2_5_omni on vLLM 0.8.5), opendatalab/MinerU#2658 (mineru2_qwen, a model type
of the model authors' own), gpustack/gpustack#1510 and sgl-project/sglang#4410 (gemma3 on a transformers before it).
"""

from __future__ import annotations

from dataclasses import replace

from logsleuth.facts import requires
from logsleuth.facts.engine_architectures import indexed_releases, transformers_knowing
from logsleuth.facts.engine_modules import Presence, spans_of
from logsleuth.models import ENGINE_NAMES, Diagnosis, LaunchInfo
from logsleuth.versions import matches

MODEL_TYPE_PATTERN = "common-transformers-unknown-model-type"
SOURCE = ("facts/engine_architectures.json.gz (scripts/engine_index/architectures.py): the model types each indexed "
          "transformers version's AutoConfig knows (CONFIG_MAPPING_NAMES), read from its wheel; facts/requires.json: "
          "what each engine release requires of transformers")


def with_model_type_releases(diagnosis: Diagnosis, model_type: str | None, launch: LaunchInfo) -> Diagnosis:
    """The pattern's diagnosis with the facts of which transformers versions know `model_type` and what the engine
    release admits, and the step they give first."""
    if not model_type or diagnosis.fix is None:
        return diagnosis
    knowing = transformers_knowing(model_type)
    facts, step = _read(model_type, knowing, launch)
    return replace(diagnosis, evidence=(*diagnosis.evidence, *facts),
                   fix=replace(diagnosis.fix, steps=(step, *diagnosis.fix.steps)),
                   references=(*diagnosis.references, SOURCE))


def _read(model_type: str, knowing: Presence, launch: LaunchInfo) -> tuple[list[str], str]:
    indexed = f"{knowing.indexed[0]} to {knowing.indexed[-1]}"
    if not knowing.having:
        return ([f"no indexed transformers version ({indexed}) knows the model type {model_type}"],
                f"no transformers version indexed ({indexed}) knows the model type {model_type}: it is not one of "
                "transformers' own, so upgrading transformers does not add it. It comes with the model authors' code "
                "(an auto_map in config.json, run with the trust-remote-code setting) or an engine's own "
                "configuration for it")
    spans = knowing.spans()
    oldest = " (the oldest indexed: an older one may know it too)" if knowing.having[0] == knowing.indexed[0] else ""
    facts = [f"the indexed transformers versions that know the model type {model_type}: {spans}{oldest}"]
    engine, version = launch.engine, launch.named_version
    required = requires.pin(engine, version, "transformers") if engine and version else None
    if engine is None or version is None or required is None:
        return facts, (f"the indexed transformers versions that know {model_type} are {spans}{oldest}: install one "
                       "within what the engine release requires of transformers (pip show, and its requirements), "
                       "or an engine release that requires one. A transformers that knows the model type does not "
                       "make an engine release serve the model's architecture (general guidance): a model newer than "
                       "the release usually needs a newer engine release too")
    name = ENGINE_NAMES.get(engine, engine)
    facts.append(f"{name} {version} requires {required.requirement}")
    within = [t for t in knowing.having if _admits(required.specifier, t)]
    if within:
        # An open requirement (`>=4.51.1`) admits transformers the release was never tested with: the oldest one that
        # knows the model type is the nearest to what the release was built against.
        return facts, (f"install a transformers that knows {model_type} within {name} {version}'s requirement "
                       f"({required.requirement}), the oldest such: {within[0]} among the indexed versions "
                       f"({knowing.indexed[0]} to {knowing.indexed[-1]}; a release between two indexed ones may "
                       f"know it too). {_ENGINE_TOO.format(name=name, version=version)}")
    admitting = _releases_admitting(engine, knowing.having)
    facts.append(f"no indexed transformers that knows {model_type} is within {name} {version}'s requirement")
    if not admitting:
        return facts, (f"no indexed {name} release requires a transformers that knows {model_type}: a transformers "
                       f"outside {name}'s requirement is untested with it")
    return facts, (f"{name} {version} requires {required.requirement}, and no indexed transformers within it knows "
                   f"{model_type}: the indexed {name} releases whose requirement admits one are {admitting}; install "
                   "one with the transformers it requires")


# A transformers that knows the model type is not enough: the engine release must also implement the model (vLLM 0.8.5
# admits a transformers that knows qwen2_5_omni, but registers its architecture only from 0.9.x: vllm-project/vllm#18450).
_ENGINE_TOO = ("General guidance: {name} {version} must also serve the model's architecture, and a model newer than "
               "the release usually needs a newer {name} release too (its supported-models list says which); with "
               "transformers alone it may fail next with 'architectures ... are not supported'")


def _admits(specifier: str, version: str) -> bool:
    return not specifier or matches((specifier,), version)


def _releases_admitting(engine: str, knowing: tuple[str, ...]) -> str:
    """The indexed engine releases whose transformers requirement admits one of the `knowing` versions, as runs."""
    releases = indexed_releases(engine)
    admitting = tuple(release for release in releases
                      if (pin := requires.pin(engine, release, "transformers")) is not None
                      and any(_admits(pin.specifier, t) for t in knowing))
    return spans_of(admitting, releases)
