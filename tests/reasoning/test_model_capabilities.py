"""Rule rule-model-capability (reasoning/model_capabilities.py): pipeline parallelism or LoRA asked of a model class
that does not implement it in the installed release, read against the indexed releases whose class does
(facts/engine_architectures.json.gz, scripts/engine_index/architectures.py).

Real CPython prints each traceback: a mirrored engine module in a site-packages tree raises the engine's own message
(vLLM's loader and ModelConfig.verify_with_parallel_config, as the raise site index holds them).  The shapes are
vllm-project/vllm#8484 and #10178 (Qwen2VLForConditionalGeneration with LoRA on a release before its SupportsLoRA),
#3044 (GemmaForCausalLM on a release older than the first indexed), #16231 (pipeline parallelism refused) and
sgl-project/sglang PR#25284 (SGLang's runner refusing a model whose forward takes no pipeline tensors)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.facts.engine_architectures import LORA, PIPELINE_PARALLEL, implementing
from tests.helpers import traceback_in_package
from tests.reasoning.diagnosed import first_diagnosis

VLLM_BANNER = "INFO 05-21 18:19:15 [api_server.py:1043] vLLM API server version {version}\n"
RESOLVED = "(APIServer pid=1) INFO 12-01 08:41:44 [model.py:744] Resolved architecture: {arch}\n"
LORA_REFUSAL = ("raise ValueError('Model {arch} does not support LoRA, but LoRA is enabled. Support for this model may "
                "be added in the future. If this is important to you, please open an issue on github.')")
PP_REFUSAL = ("raise NotImplementedError('Pipeline parallelism is not supported for this model. Supported models "
              "implement the `SupportsPP` interface.')")


def _lora_log(tmp_path: Path, arch: str, version: str | None) -> str:
    log = traceback_in_package(tmp_path, "vllm/model_executor/model_loader/loader.py", LORA_REFUSAL.format(arch=arch))
    return (VLLM_BANNER.format(version=version) if version else "") + log


def _pp_log(tmp_path: Path, version: str | None, arch: str | None) -> str:
    log = traceback_in_package(tmp_path, "vllm/config/model.py", PP_REFUSAL)
    banner = VLLM_BANNER.format(version=version) if version else ""
    return banner + (RESOLVED.format(arch=arch) if arch else "") + log


def test_the_table_reads_the_classes_interfaces() -> None:
    qwen2_vl = implementing("vllm", LORA, "Qwen2VLForConditionalGeneration")
    assert qwen2_vl is not None and qwen2_vl.has("0.6.3.post1") is False and qwen2_vl.has("0.6.6.post1") is True
    llama4 = implementing("vllm", PIPELINE_PARALLEL, "Llama4ForConditionalGeneration")
    assert llama4 is not None and llama4.has("0.8.5.post1") is True
    # through a base class of another module: MistralForCausalLM is registered to llama's LlamaForCausalLM
    assert implementing("vllm", LORA, "MistralForCausalLM").in_every  # type: ignore[union-attr]
    # vLLM 0.5.5 read pipeline parallelism from a list of architectures, before SupportsPP
    assert implementing("vllm", PIPELINE_PARALLEL, "Qwen2ForCausalLM").has("0.5.5") is True  # type: ignore[union-attr]
    # SGLang: a forward taking pp_proxy_tensors
    sglang_llama = implementing("sglang", PIPELINE_PARALLEL, "LlamaForCausalLM")
    assert sglang_llama is not None and sglang_llama.has("0.4.5.post3") is False and sglang_llama.has("0.5.9") is True
    assert implementing("vllm", LORA, "NoSuchModelForCausalLM") is None


def test_lora_on_a_class_that_gained_it_later_names_the_releases(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_lora_log(tmp_path, "Qwen2VLForConditionalGeneration", "0.6.3.post1"))
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == ("rule-model-capability", "lora-config", "rule")
    assert "vLLM 0.6.3.post1" in diagnosis.root_cause and "0.6.6.post1 to 0.34.0" in diagnosis.root_cause
    assert diagnosis.fix is not None and diagnosis.fix.command is None and not diagnosis.fix.flags
    steps = " ".join(diagnosis.fix.steps)
    assert "--enable-lora" in steps and "merge the adapter" in steps and "0.6.6.post1 to 0.34.0" in steps
    assert "adapter_config.json" not in steps  # the adapter is not the cause


def test_a_release_older_than_every_indexed_one_is_said_so(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_lora_log(tmp_path, "GemmaForCausalLM", None))
    assert diagnosis.pattern == "rule-model-capability"
    assert "older than 0.5.5" in diagnosis.root_cause and "does not name it" in diagnosis.title


def test_a_class_the_installed_release_gives_lora_is_left_to_the_category(tmp_path: Path) -> None:
    """The table says 0.6.3.post1's LlamaForCausalLM implements LoRA: the refusal is about some other class."""
    diagnosis = first_diagnosis(_lora_log(tmp_path, "LlamaForCausalLM", "0.6.3.post1"))
    assert diagnosis.pattern != "rule-model-capability"
    assert diagnosis.category == "lora-config"


def test_pipeline_parallelism_with_the_resolved_architecture_names_the_releases(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_pp_log(tmp_path, "0.33.0", "AriaForConditionalGeneration"))
    assert (diagnosis.pattern, diagnosis.category) == ("rule-model-capability", "parallel-config")
    assert "AriaForConditionalGeneration" in diagnosis.title and "vLLM 0.33.0" in diagnosis.title
    assert "0.34.0" in diagnosis.root_cause
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "--pipeline-parallel-size 1" in steps and "divide" in steps
    # review L6 of stop 48: the category row's caveat kept (a tp x pp layout may span nodes, vllm-project/vllm#16231)
    assert "across nodes tensor parallelism needs a fast interconnect" in steps


def test_pipeline_parallelism_without_the_architecture_is_the_categorys(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_pp_log(tmp_path, "0.33.0", None))
    assert diagnosis.pattern != "rule-model-capability"
    assert diagnosis.category == "parallel-config"
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "tensor parallelism instead" in steps and "Try a newer release of vLLM: the parts may agree" not in steps


def test_a_release_between_indexed_ones_that_implement_it_is_left_to_the_category(tmp_path: Path) -> None:
    """Guards review H2 of stop 48: vLLM 0.12.0 is not indexed, and LlamaForCausalLM implements SupportsPP in every
    indexed release (0.11.2 and 0.13.0 around it): the refusal is about another model (a draft model's config is
    checked too), never "0.12.0 is older than 0.5.5" with releases to install that already have it."""
    diagnosis = first_diagnosis(_pp_log(tmp_path, "0.12.0", "LlamaForCausalLM"))
    assert diagnosis.pattern != "rule-model-capability"
    assert diagnosis.category == "parallel-config"
    assert "older than" not in diagnosis.root_cause


def test_a_resolved_architecture_every_release_gives_it_is_left_to_the_category(tmp_path: Path) -> None:
    """Guards review H2 of stop 48: the "Resolved architecture" line names the target model, which every indexed
    release implements pipeline parallelism for; without a banner the release is unknown, and the line is logged
    only from 0.11, so "older than the first indexed release" cannot follow."""
    diagnosis = first_diagnosis(_pp_log(tmp_path, None, "LlamaForCausalLM"))
    assert diagnosis.pattern != "rule-model-capability"
    assert "older than" not in diagnosis.root_cause


def test_a_later_wording_naming_a_class_every_release_gives_it_is_left_to_the_category(tmp_path: Path) -> None:
    """Guards review H2 of stop 48: "{} does not support LoRA yet." (the model runners, after 0.5.5) naming
    GemmaForCausalLM, which implements LoRA in every indexed release, does not show an older release than the
    index; only the loader's old "Model {} does not support LoRA, but LoRA is enabled" wording does."""
    log = traceback_in_package(tmp_path, "vllm/v1/worker/lora_model_runner_mixin.py",
                               "raise ValueError('GemmaForCausalLM does not support LoRA yet.')")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern != "rule-model-capability"
    assert "older than" not in diagnosis.root_cause


def test_a_release_the_log_names_between_indexed_ones_uses_its_neighbours(tmp_path: Path) -> None:
    """Guards review H2 of stop 48: Qwen2VLForConditionalGeneration gained LoRA between 0.6.3.post1 (without) and
    0.6.6.post1 (with); vLLM 0.6.4, not indexed, sits between them, so the rule still answers, naming the releases
    that have it, while 0.12.0 (both neighbours have it) is left to the category."""
    diagnosis = first_diagnosis(_lora_log(tmp_path, "Qwen2VLForConditionalGeneration", "0.6.4"))
    assert diagnosis.pattern == "rule-model-capability" and "0.6.6.post1 to 0.34.0" in diagnosis.root_cause
    newer = first_diagnosis(_lora_log(tmp_path / "newer", "Qwen2VLForConditionalGeneration", "0.12.0"))
    assert newer.pattern != "rule-model-capability"


def test_a_runners_lora_refusal_is_not_the_resolved_models(tmp_path: Path) -> None:
    """Guards review M1 of stop 48: "MRV2 PCP does not support LoRA yet." (vllm v1/worker/gpu/pcp_manager.py) names
    no model class, so the log's Resolved architecture must not be said to lack LoRA."""
    log = traceback_in_package(tmp_path, "vllm/v1/worker/gpu/pcp_manager.py",
                               "raise ValueError('MRV2 PCP does not support LoRA yet.')")
    diagnosis = first_diagnosis(VLLM_BANNER.format(version="0.33.0") + RESOLVED.format(
        arch="Qwen2VLForConditionalGeneration") + log)
    assert diagnosis.pattern != "rule-model-capability"
    assert "does not implement LoRA" not in diagnosis.title


def test_a_model_class_the_registry_does_not_hold_is_read_by_the_resolved_architecture(tmp_path: Path) -> None:
    """Guards review M1 of stop 48: a refusal naming a model-shaped class no indexed registry holds (the class
    behind a registered architecture may be named otherwise) counts as naming none, so the log's Resolved
    architecture answers (AriaForConditionalGeneration implements LoRA only in 0.34.0 of the indexed releases)."""
    log = traceback_in_package(tmp_path, "vllm/v1/worker/lora_model_runner_mixin.py",
                               "raise ValueError('AriaTextPluginForCausalLM does not support LoRA yet.')")
    diagnosis = first_diagnosis(VLLM_BANNER.format(version="0.33.0") + RESOLVED.format(
        arch="AriaForConditionalGeneration") + log)
    assert diagnosis.pattern == "rule-model-capability"
    assert "AriaForConditionalGeneration" in diagnosis.title and "0.34.0" in diagnosis.root_cause
