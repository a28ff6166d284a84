"""Rule rule-architecture-not-registered (reasoning/architecture_support.py): an architecture the engine's model
registry lacks, read against the indexed releases that serve it (facts/engine_architectures.json.gz).

Real CPython prints each traceback: a mirrored engine module in a site-packages tree raises the engine's own message
(vLLM's resolve_transformers_arch and _raise_for_unsupported, SGLang's registry, as the raise site index holds them).
The shapes are vllm-project/vllm#18516 (Qwen2_5OmniForConditionalGeneration on a 0.8 release),
vllm-project/vllm#16228 (a user's own class no release registers), vllm-project/vllm#10481 (LlamaModel before 0.6.6)
and sgl-project/sglang#2356 (Qwen2ForCausalLM, which every release registers)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.facts.engine_architectures import registered, supported, transformers_knowing
from tests.helpers import traceback_in_package, traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

VLLM_FALLBACK = ("raise ValueError('{arch} has no vLLM implementation and the Transformers implementation is not "
                 "compatible with vLLM. Try setting VLLM_USE_V1=0.')")
REGISTRY_REFUSAL = "raise ValueError(\"Model architectures ['{arch}'] are not supported for now. Supported architectures: ['LlamaForCausalLM']\")"
VLLM_BANNER = "INFO 05-21 18:19:15 [api_server.py:1043] vLLM API server version {version}\n"


def _vllm_fallback(tmp_path: Path, arch: str, version: str | None = None) -> str:
    log = traceback_in_package(tmp_path, "vllm/model_executor/model_loader/utils.py", VLLM_FALLBACK.format(arch=arch))
    return (VLLM_BANNER.format(version=version) if version else "") + log


def test_the_facts_read_the_registries() -> None:
    omni = registered("vllm", "Qwen2_5OmniForConditionalGeneration")
    assert omni is not None and omni.has("0.8.5.post1") is False and omni.has("0.9.2") is True
    assert registered("sglang", "Qwen2ForCausalLM").in_every  # type: ignore[union-attr]
    # vLLM from 0.10 converts a head its registry lacks from the registered causal model (_SUFFIX_TO_DEFAULTS).
    classifier = supported("vllm", "Qwen2ForSequenceClassification")
    assert classifier is not None and "0.10.1.1" in classifier.converted_in
    assert classifier.converted_from == ("Qwen2ForCausalLM",)


def test_an_architecture_newer_than_the_installed_release_names_the_releases(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_vllm_fallback(tmp_path, "Qwen2_5OmniForConditionalGeneration", "0.8.5.post1"))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-architecture-not-registered", "unsupported-architecture", "rule")
    assert "0.9.2 to 0.34.0" in diagnosis.root_cause and "vLLM 0.8.5.post1" in diagnosis.root_cause
    assert diagnosis.fix is not None and any("0.9.2 or later" in step for step in diagnosis.fix.steps)
    assert diagnosis.fix.command is None and not diagnosis.fix.flags


def test_without_a_version_the_releases_bound_what_to_check(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_vllm_fallback(tmp_path, "Qwen2_5OmniForConditionalGeneration"))
    assert diagnosis.pattern == "rule-architecture-not-registered"
    assert "does not name the installed release" in diagnosis.root_cause
    assert diagnosis.fix is not None and "pip show vllm" in diagnosis.fix.summary


def test_an_architecture_no_release_registers_is_not_an_upgrade(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_vllm_fallback(tmp_path, "MyModelForCausalLM", "0.8.1"))
    assert diagnosis.category == "unsupported-architecture"
    assert "an upgrade within them does not add one" in diagnosis.root_cause
    assert diagnosis.fix is not None and not any("install a vLLM release" in step for step in diagnosis.fix.steps)


def test_an_architecture_every_release_registers_points_to_its_module_failing(tmp_path: Path) -> None:
    log = traceback_in_package(tmp_path, "sglang/srt/models/registry.py",
                               REGISTRY_REFUSAL.format(arch="Qwen2ForCausalLM"))
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "sglang-unsupported-architecture"  # the registry pattern, read by the rule
    assert "every indexed SGLang release" in diagnosis.title and "module failed to load" in diagnosis.root_cause
    assert diagnosis.fix is not None and "no other release is needed" in diagnosis.fix.summary


def test_the_registry_pattern_gives_way_to_the_releases(tmp_path: Path) -> None:
    """vllm-unsupported-architecture matches "are not supported for now"; its advice gives way to the releases."""
    log = traceback_in_package(tmp_path, "vllm/model_executor/models/registry.py",
                               REGISTRY_REFUSAL.format(arch="LlamaModel"))
    diagnosis = first_diagnosis(VLLM_BANNER.format(version="0.6.3.post1") + log)
    assert (diagnosis.pattern, diagnosis.category) == ("vllm-unsupported-architecture", "unsupported-architecture")
    assert "0.6.6.post1 to 0.34.0" in diagnosis.root_cause and "EAGLE" not in diagnosis.root_cause
    assert diagnosis.fix is not None and any("0.6.6.post1 or later" in step for step in diagnosis.fix.steps)


def test_with_no_engine_known_no_release_is_named(tmp_path: Path) -> None:
    """Both engines word the refusal alike: a bare line names neither engine's releases."""
    diagnosis = first_diagnosis("ValueError: Model architectures ['LlamaModel'] are not supported for now.\n")
    assert diagnosis.pattern != "rule-architecture-not-registered" and "0.6.6.post1" not in diagnosis.root_cause


def test_a_gpu_architecture_is_not_a_model_architecture(tmp_path: Path) -> None:
    """The look-alike: a kernel refusing the GPU ("Unsupported architecture: sm_75") names no model class."""
    log = traceback_in_package(tmp_path, "vllm/attention/backend.py", "raise RuntimeError('Unsupported architecture: sm_75')")
    assert first_diagnosis(log).pattern != "rule-architecture-not-registered"


# transformers not knowing a model_type (reasoning/model_type_support.py): the pattern
# common-transformers-unknown-model-type finds it, the facts name the transformers versions that know the model type.
# Shapes: vllm-project/vllm#18450 (KeyError: 'qwen2_5_omni' on vLLM 0.8.5), opendatalab/MinerU#2658 (mineru2_qwen, a
# model type of the model authors' own), gpustack/gpustack#1510 (gemma3 through vLLM's get_config).
CONFIG_MAPPING = '''
class _LazyConfigMapping(dict):
    def __getitem__(self, key):
        raise KeyError(key)

CONFIG_MAPPING = _LazyConfigMapping()

def from_pretrained(config_dict):
    return CONFIG_MAPPING[config_dict["model_type"]]
'''


def _unknown_model_type(tmp_path: Path, model_type: str, banner: str = "") -> str:
    done = traceback_of_installed(
        tmp_path, {"transformers/models/auto/configuration_auto.py": CONFIG_MAPPING},
        f"from transformers.models.auto.configuration_auto import from_pretrained\n"
        f"from_pretrained({{'model_type': {model_type!r}}})\n")
    assert "KeyError" in done.stderr, done.stderr
    return banner + done.stderr


def test_the_transformers_facts_read_the_auto_config_mapping() -> None:
    assert transformers_knowing("qwen2_5_omni").having[0] == "4.54.1"
    assert transformers_knowing("gemma3").in_every  # 5.x moved the mapping into auto_mappings.py: still read
    assert not transformers_knowing("mineru2_qwen").having


def test_a_model_type_newer_than_the_release_s_transformers_names_the_oldest_that_knows_it(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_unknown_model_type(tmp_path, "qwen2_5_omni", VLLM_BANNER.format(version="0.8.5")))
    assert diagnosis.pattern == "common-transformers-unknown-model-type"
    assert "vLLM 0.8.5 requires transformers>=4.51.1" in diagnosis.evidence
    assert diagnosis.fix is not None and "the oldest such: 4.54.1" in diagnosis.fix.steps[0]


def test_a_model_type_no_transformers_knows_is_not_a_transformers_upgrade(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_unknown_model_type(tmp_path, "mineru2_qwen"))
    assert diagnosis.fix is not None and "upgrading transformers does not add it" in diagnosis.fix.steps[0]
    assert any("no indexed transformers version" in fact for fact in diagnosis.evidence)
