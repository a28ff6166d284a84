"""The class a message names the failing object by (facts/engine_classes.py): with no frame pasted, a class only one
engine's code defines names that engine, and a class either engine defines makes the failure the engine's own code
failing (engine-bug), not a setting a memory word in the attribute's name suggests.

The messages are CPython's own: each test makes the real error on a class of that name and diagnoses its last line,
as a paste that kept only the error line shows it (sgl-project/sglang#9614: a bare `'<model class>' object has no
attribute 'tp_size'`, fixed in the engine's code)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.facts.engine_classes import (
    class_in_message,
    defined_by,
    engines_defining,
    only_engine_defining,
)

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def attribute_error(class_name: str, attribute: str) -> str:
    """The line CPython prints for a missing attribute on an instance of `class_name`."""
    instance = type(class_name, (), {})()
    with pytest.raises(AttributeError) as caught:
        getattr(instance, attribute)
    return f"AttributeError: {caught.value}"


def keyword_error(class_name: str, keyword: str) -> str:
    """The line CPython prints for an unexpected keyword given to `class_name`'s constructor."""
    def __init__(self: object) -> None:
        pass

    __init__.__qualname__ = f"{class_name}.__init__"
    cls = type(class_name, (), {"__init__": __init__})
    with pytest.raises(TypeError) as caught:
        cls(**{keyword: 1})
    return f"TypeError: {caught.value}"


def diagnosis_of(line: str):  # noqa: ANN201 - the report's first failure's Diagnosis
    report = diagnose_text(line + "\n", OPTIONS)
    assert report.failures, line
    return report.failures[0].diagnosis


def test_the_message_shapes_name_their_class() -> None:
    assert class_in_message(attribute_error("ForwardBatch", "spec_info").partition(": ")[2]) == "ForwardBatch"
    assert class_in_message(keyword_error("EngineArgs", "foo").partition(": ")[2]) == "EngineArgs"
    assert class_in_message("type object 'ServerArgs' has no attribute 'add_cli_args'") == "ServerArgs"
    assert class_in_message("'NoneType' object is not subscriptable") is None
    assert class_in_message("module 'sglang' has no attribute 'x'") is None


def test_the_data_knows_each_engines_own_classes() -> None:
    # sglang/srt/model_executor/forward_batch_info.py defines ForwardBatch; vllm/v1/worker/gpu_model_runner.py
    # GPUModelRunner; both engines have a ModelRunner; transformers' modeling_utils.py defines PreTrainedModel.
    assert only_engine_defining("ForwardBatch") == "sglang"
    assert only_engine_defining("GPUModelRunner") == "vllm"
    assert engines_defining("ModelRunner") == {"sglang", "vllm"}
    assert only_engine_defining("ModelRunner") is None
    assert "transformers" in defined_by("PreTrainedModel")
    assert only_engine_defining("PreTrainedModel") is None
    assert defined_by("NoneType") == frozenset()


@pytest.mark.parametrize(("class_name", "engine"), [("ForwardBatch", "sglang"), ("GPUModelRunner", "vllm")])
def test_a_bare_error_on_one_engines_class_names_that_engine(class_name: str, engine: str) -> None:
    diagnosis = diagnosis_of(attribute_error(class_name, "spec_info"))
    assert diagnosis.category == "engine-bug"
    assert diagnosis.engine == engine
    assert class_name in diagnosis.root_cause


def test_a_class_both_engines_define_is_the_engines_code_but_names_neither() -> None:
    # The attribute's name holds memory words (kv pool): the object is the engine's, so it is not serving-memory.
    diagnosis = diagnosis_of(attribute_error("ModelRunner", "token_to_kv_pool_allocator"))
    assert diagnosis.category == "engine-bug"
    assert diagnosis.engine is None


@pytest.mark.parametrize("class_name", ["NoneType", "PreTrainedModel", "MyTrainer"])
def test_a_class_no_engine_defines_decides_no_engine(class_name: str) -> None:
    diagnosis = diagnosis_of(attribute_error(class_name, "generate_batch"))
    assert diagnosis.engine is None
    assert diagnosis.category != "engine-bug"


@pytest.mark.parametrize("class_name", ["Qwen2VLConfig", "PixtralProcessor"])
def test_a_transformers_class_an_engine_vendors_decides_no_engine(class_name: str) -> None:
    """SGLang keeps copies of some transformers classes (sglang/srt/configs/: Qwen2VLConfig; its multimodal
    processors: PixtralProcessor); transformers' models/ defines the originals, which any program runs (a vLLM run
    too).  A bare error on one must not name SGLang."""
    assert {"sglang", "transformers"} <= defined_by(class_name)
    assert only_engine_defining(class_name) is None
    for line in (attribute_error(class_name, "vision_start_token_id"), keyword_error(class_name, "fps")):
        assert diagnosis_of(line).engine is None


@pytest.mark.parametrize("class_name", ["Qwen2_5_VLProcessor", "PixtralProcessor"])
@pytest.mark.parametrize("keyword", ["video_processor", "chat_template"])
def test_a_bare_signature_error_on_a_transformers_class_is_a_version_mismatch(class_name: str, keyword: str) -> None:
    """The call does not fit the installed transformers' class: its API is not the one the caller was written for
    (an engine's vendored copy of the class does not make it the engine's bug; the keyword's name, a chat
    template's, is no tokenizer problem)."""
    diagnosis = diagnosis_of(keyword_error(class_name, keyword))
    assert diagnosis.category == "dependency-version"
    assert "transformers' code" in diagnosis.root_cause
    assert diagnosis.engine is None


def test_an_engine_only_class_stays_the_engines_bug_and_a_tokenizer_class_its_category() -> None:
    assert diagnosis_of(keyword_error("ForwardBatch", "spec_info")).category == "engine-bug"
    # The tokenizer row's own words name it first: the dependency rule only fills an unclassified answer.
    assert diagnosis_of(attribute_error("Qwen2TokenizerFast", "foo_bar")).category == "tokenizer"


@pytest.mark.parametrize(("attribute", "not_category"), [("max_model_len", "context-length"), ("quantization_config", "quantization")])
def test_the_name_of_a_missing_attribute_does_not_choose_the_category(attribute: str, not_category: str) -> None:
    """CPython quotes the identifier the code used; a category's plain words inside it (context length, quantization)
    say nothing of what went wrong."""
    assert diagnosis_of(attribute_error("NoneType", attribute)).category != not_category
    # The same words in the engine's own sentence still count.
    assert diagnosis_of("ValueError: User-specified max_model_len (40000) is greater than the derived max_model_len "
                        "(32768)").category == "context-length"


def test_a_model_class_transformers_also_defines_is_still_the_engines_code() -> None:
    """The engines write their own model classes (`Qwen2ForCausalLM` in sglang/srt/models/ and
    vllm/model_executor/models/), whatever transformers' models/ defines: a bare error on one is the engine's code
    failing, not a transformers version."""
    assert {"sglang", "vllm", "transformers"} <= defined_by("Qwen2ForCausalLM")
    assert engines_defining("Qwen2ForCausalLM") == {"sglang", "vllm"}
    assert diagnosis_of(attribute_error("Qwen2ForCausalLM", "foo_weights")).category == "engine-bug"
