"""Stop 40's fresh blind split, in generic words (issue 28): engine-internal errors that are no NameError (an enum value
one part of the release does not know, a case left unwritten) and the engines' max-length checks failing on the
model's rope scaling (read as context-length then; from stop 48 the model's support, unsupported-architecture).  Each with a look-alike where it must not fire.

The shapes are the code sites' (CPython's enum.py, vLLM's _get_and_verify_max_len, SGLang's get_context_length);
tracebacks are printed by the real interpreter (tests.helpers.real_traceback)."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

# The honest category alone: the reasoning rules set aside.
pytestmark = pytest.mark.usefixtures("no_rules")
SGLANG_BANNER = "[2026-03-02 10:00:00] sglang version 0.5.9\n"


ENUM_CONVERSION = """
    import enum

    class AttentionBackendEnum(enum.Enum):
        FLASH_ATTN = "FLASH_ATTN"

    def backend_of(name):
        return AttentionBackendEnum(name)

    backend_of("FLASHINFER_MLA")
    """


def test_an_enum_value_the_engines_own_code_does_not_know_is_an_engine_bug() -> None:
    """CPython's enum.py raises the ValueError for the engine's caller: the caller's frame places it."""
    traceback = real_traceback(ENUM_CONVERSION, "vllm/attention/selector.py")
    assert "is not a valid AttentionBackendEnum" in traceback and "enum.py" in traceback
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "engine-bug", diagnosis
    assert "vLLM" in diagnosis.title


def test_a_case_the_engine_left_unwritten_is_an_engine_bug() -> None:
    traceback = real_traceback("""
        def fused_experts(dtype):
            raise NotImplementedError(f"fused MoE is not implemented for dtype {dtype}")

        fused_experts("float8_e5m2")
        """, "sglang/srt/layers/moe/fused_moe_triton/fused_moe.py")
    diagnosis = diagnose_without_patterns(SGLANG_BANNER + traceback)
    assert diagnosis.category == "engine-bug", diagnosis
    assert "SGLang 0.5.9" in diagnosis.title


def test_the_same_enum_error_in_a_users_script_is_no_engine_bug() -> None:
    diagnosis = diagnose_without_patterns(real_traceback(ENUM_CONVERSION, "app.py"))
    assert diagnosis.category != "engine-bug", diagnosis


MAX_LEN_CHECKS = [
    # vLLM 0.4-0.6 vllm/config.py _get_and_verify_max_len
    ("vllm/config.py", """
        def _get_and_verify_max_len(hf_config, max_model_len, rope_scaling):
            if rope_scaling is not None:
                if rope_scaling["type"] != "su":
                    assert "factor" in rope_scaling
        _get_and_verify_max_len(None, None, {"type": "dynamic", "original_max_position_embeddings": 8192})
        """),
    # vLLM 0.11 vllm/config/model.py _get_and_verify_max_len
    ("vllm/config/model.py", """
        def _get_and_verify_max_len(hf_config, max_model_len, rope_scaling):
            if rope_scaling is not None:
                rope_type = rope_scaling["rope_type"]
        _get_and_verify_max_len(None, None, {"type": "yarn", "factor": 4.0})
        """),
    # SGLang get_context_length (an older layout that indexed the factor)
    ("sglang/srt/hf_transformers_utils.py", """
        def get_context_length(config):
            rope_scaling = config
            if rope_scaling:
                rope_scaling_factor = rope_scaling["factor"]
        get_context_length({"rope_type": "default"})
        """),
]


@pytest.mark.parametrize(("path", "code"), MAX_LEN_CHECKS, ids=["vllm-assert", "vllm-rope-type", "sglang-factor"])
def test_the_max_length_check_failing_on_rope_scaling_is_no_context_length_setting(path: str, code: str) -> None:
    """A rope scaling the release does not read is no context-length setting (no --max-model-len or --context-length
    is offered): the engine and the installed transformers disagreeing on the config's form (stop 51, split 14's
    QwenLM/Qwen2-VL thread; stop 48 read it as the model's support)."""
    diagnosis = diagnose_without_patterns(real_traceback(code, path))
    assert diagnosis.category == "dependency-version", diagnosis
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "rope_scaling" in steps and "config.json" in steps
    assert "--max-model-len" not in steps and "--context-length" not in steps


def test_a_keyerror_in_the_config_that_reads_no_rope_scaling_is_not_the_rope_check() -> None:
    traceback = real_traceback("""
        def _get_and_verify_max_len(hf_config, max_model_len, rope_scaling):
            return hf_config["max_position_embeddings"]
        _get_and_verify_max_len({}, None, None)
        """, "vllm/config.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert "rope scaling" not in diagnosis.title, diagnosis


def _importing(module: str, importer: str) -> str:
    """Real CPython's ImportError of `from MODULE import merge_and_dispatch` at a frame of `importer`: the module and its
    parents stand in sys.modules without the name (an installed copy of another release)."""
    parts = module.split(".")
    return real_traceback(f"""
        import sys
        import types

        for depth in range(1, {len(parts) + 1}):
            name = ".".join({parts!r}[:depth])
            stub = types.ModuleType(name)
            stub.__file__ = "/venv/lib/python3.11/site-packages/" + name.replace(".", "/") + "/__init__.py"
            sys.modules[name] = stub

        from {module} import merge_and_dispatch
        """, importer)


@pytest.mark.parametrize(("module", "importer", "engine"), [
    ("sglang.srt.layers.moe.utils", "sglang/srt/layers/moe/fused_moe_triton/layer.py", "SGLang"),
    ("vllm.distributed.parallel_state", "vllm/v1/worker/gpu_model_runner.py", "vLLM"),
], ids=["sglang", "vllm"])
def test_an_engine_module_importing_a_name_its_own_engine_lacks_is_a_mixed_install(
        module: str, importer: str, engine: str) -> None:
    diagnosis = diagnose_without_patterns(_importing(module, importer))
    assert diagnosis.category == "dependency-version", diagnosis
    assert f"mixed install of {engine}" in diagnosis.title
    assert "Reinstall the release cleanly" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


@pytest.mark.parametrize(("module", "importer"), [
    ("vllm.model_executor.layers.linear", "sglang/srt/layers/linear.py"),  # the other engine's module: two packages
    ("vllm.distributed.parallel_state", "app.py"),  # a user's script
], ids=["other-engine", "user-script"])
def test_an_import_across_packages_is_no_mixed_install(module: str, importer: str) -> None:
    diagnosis = diagnose_without_patterns(_importing(module, importer))
    assert "mixed install" not in diagnosis.title, diagnosis


def unknown_rope_type(rope_type: str, rotary_file: str) -> str:
    """What the real interpreter prints when an engine's rotary embeddings refuse `rope_type`
    (get_rope's 'Unknown RoPE scaling type {}', in both engines' layers)."""
    return real_traceback(f"""
        def get_rope(rope_scaling):
            scaling_type = rope_scaling["rope_type"]
            raise ValueError(f"Unknown RoPE scaling type {{scaling_type}}")

        get_rope({{"rope_type": "{rope_type}"}})
        """, rotary_file)


def test_the_rotary_embeddings_refusal_of_a_rope_type_is_the_models_rope_scaling() -> None:
    # 'mrope': a type the product leaves to this row with the rules on too ('longrope2', known to no release, is the
    # rule's: tests/reasoning/test_rope_type.py)
    traceback = unknown_rope_type("mrope", "sglang/srt/layers/rotary_embedding.py")
    diagnosis = diagnose_without_patterns(SGLANG_BANNER + traceback)
    assert diagnosis.category == "dependency-version", diagnosis  # the engine and transformers disagreeing (stop 51)
    assert "rope_scaling" in diagnosis.title


def test_a_traceback_cut_at_the_rotary_embeddings_raise_is_read_from_the_indexed_message() -> None:
    """Cut right after `raise ValueError(` in vLLM's get_rope (line 184 in 0.13-0.15): the raise site index's template
    ("Dynamic rope scaling must contain either 'alpha' or 'factor' field") names what the cut message no longer does."""
    cut = ("INFO 03-02 10:00:00 [__init__.py:216] Automatically detected platform cuda.\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.12/dist-packages/vllm/model_executor/layers/rotary_embedding/__init__.py", '
           "line 184, in get_rope\n"
           "    raise ValueError(\n")
    diagnosis = diagnose_without_patterns(cut)
    assert diagnosis.category == "dependency-version", diagnosis  # the engine and transformers disagreeing (stop 51)
    assert "message template" in diagnosis.root_cause


def test_transformers_own_rope_scaling_check_is_not_the_engines() -> None:
    """transformers' _rope_scaling_validation in its own frame: the installed transformers reading a newer config
    layout, not the engine's rope check (the unsupported-architecture or dependency row's, by its words)."""
    traceback = real_traceback("""
        def _rope_scaling_validation(rope_scaling):
            raise ValueError(
                "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, "
                f"got {rope_scaling}")

        _rope_scaling_validation({"factor": 8.0, "rope_type": "llama3"})
        """, "site-packages/transformers/models/llama/configuration_llama.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert "rope scaling (its config" not in diagnosis.title, diagnosis


@pytest.mark.parametrize("message", [
    "Cannot find model module. 'Glm4vMoeForConditionalGeneration' is not a registered model in the Transformers library "
    "(only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present in the model config's "
    "'auto_map' (relevant if the model is custom).",
    "The Transformers implementation of 'Ernie4_5_VLMoeForConditionalGeneration' is not compatible with vLLM.",
], ids=["not-registered", "backend-not-compatible"])
def test_vllms_registry_finding_no_way_to_run_the_model_is_an_unsupported_model(message: str) -> None:
    """vLLM's registry (_try_resolve_transformers) when neither its own models nor the Transformers backend run the
    architecture: a model the installed release does not support."""
    traceback = real_traceback(f"""
        def _try_resolve_transformers(architecture):
            raise ValueError({message!r})

        _try_resolve_transformers("X")
        """, "vllm/model_executor/models/registry.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "unsupported-architecture", diagnosis
    assert "supports the model's architecture" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_another_thing_not_compatible_with_vllm_is_no_unsupported_model() -> None:
    diagnosis = diagnose_without_patterns("INFO 03-02 10:00:00 [__init__.py:216] Automatically detected platform cuda.\n"
                           "RuntimeError: The installed flashinfer 0.2.0 is not compatible with vLLM, requires flashinfer>=0.2.5\n")
    assert diagnosis.category != "unsupported-architecture", diagnosis


@pytest.mark.parametrize("message", [
    "operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:47 NPU function error: "
    "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507048",
    "The Inner error is reported as above. The process exits for this inner error, and the current working operator "
    "name is SelfAttentionOperation.",
], ids=["npu-function-error", "inner-operator-error"])
def test_an_npu_operator_failure_under_the_hardware_plugin_is_the_devices_runtime(message: str) -> None:
    """torch_npu's words for a device runtime failure, raised through vllm-ascend's model runner (vllm-ascend#2800)."""
    traceback = real_traceback(f"""
        def _generate_dummy_run_hidden_states():
            raise RuntimeError({message!r})

        _generate_dummy_run_hidden_states()
        """, "site-packages/vllm_ascend/worker/model_runner_v1.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "cuda-error", diagnosis
    assert "Ascend NPU" in diagnosis.title
    assert "CANN" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_a_cuda_error_is_not_read_as_the_npus() -> None:
    diagnosis = diagnose_without_patterns("RuntimeError: CUDA error: an illegal instruction was encountered\n")
    assert "Ascend" not in diagnosis.title, diagnosis
