"""Rule rule-gguf-architecture-unknown (reasoning/gguf_loader.py): a GGUF file whose architecture the GGUF reader the
engine goes through does not know (issue 28, stop 40: the advice blamed the engine release).

The tracebacks are printed by real CPython: a mirrored `load_gguf_checkpoint` (transformers' modeling_gguf_pytorch_utils.py)
raises its own wording for an architecture missing from its map, as huggingface/transformers#43366 (vLLM, gpt-oss)
and huggingface/transformers#37002 (SGLang, gemma3) show it; transformers 5's reader and vLLM's gguf weight loader
raise theirs (facts/raise_sites-transformers.zip, facts/raise_sites-vllm.zip)."""

from __future__ import annotations

from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis

VLLM_0112 = "(APIServer pid=41) INFO 01-20 09:00:00 [api_server.py:1839] vLLM API server version 0.11.2\n"
SGLANG_LAUNCH = "python3 -m sglang.launch_server --model-path /models/gemma-3-27b-it-Q4_K_M.gguf --port 30000\n"
TRANSFORMERS_4 = """
    def load_gguf_checkpoint(architecture):
        if architecture not in ("llama", "qwen2"):
            raise ValueError(f"GGUF model with architecture {architecture} is not supported yet.")

    load_gguf_checkpoint(GIVEN)
"""
TRANSFORMERS_4_OLD = """
    def load_gguf_checkpoint(architecture):
        if architecture not in ("llama", "qwen2"):
            raise ValueError(f"Architecture {architecture} not supported")

    load_gguf_checkpoint(GIVEN)
"""
TRANSFORMERS_5 = """
    GGUF_CONFIG_ARCHS = {"llama", "qwen2"}

    def get_gguf_config(architecture):
        if architecture not in GGUF_CONFIG_ARCHS:
            raise ValueError(
                f"Cannot rebuild a config from a GGUF file of architecture {architecture!r}. "
                f"Supported: {sorted(GGUF_CONFIG_ARCHS)}."
            )

    get_gguf_config(GIVEN)
"""


def _raised(code: str, architecture: str, filename: str) -> str:
    return real_traceback(code.replace("GIVEN", repr(architecture)), filename)


def test_an_architecture_transformers_gguf_support_lacks_points_at_transformers_not_the_release() -> None:
    log = VLLM_0112 + _raised(TRANSFORMERS_4, "gpt-oss", "transformers/modeling_gguf_pytorch_utils.py")
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-gguf-architecture-unknown", "unsupported-architecture", "rule")
    assert diagnosis.title == "transformers' GGUF support does not read GGUF architecture gpt-oss"
    assert diagnosis.fix is not None and "transformers release that reads GGUF architecture 'gpt-oss'" in diagnosis.fix.summary
    assert "vLLM 0.11.2 accepts it" in diagnosis.fix.summary
    assert diagnosis.fix.needs_input and not diagnosis.fix.flags and diagnosis.fix.command is None
    assert "a newer vLLM release alone does not help" in diagnosis.root_cause
    # vLLM's own message for a remote GGUF file names --hf-config-path: the config from elsewhere, a flag 0.11.2 has
    assert any("--hf-config-path" in step for step in diagnosis.fix.steps)


def test_sglang_and_transformers_5_wording() -> None:
    log = SGLANG_LAUNCH + _raised(TRANSFORMERS_5, "gemma3", "transformers/integrations/gguf/gguf_config_mapping.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-gguf-architecture-unknown"
    assert "GGUF architecture gemma3" in diagnosis.title and "SGLang" in diagnosis.root_cause
    assert diagnosis.fix is not None and not any("--hf-config-path" in step for step in diagnosis.fix.steps)


def test_the_old_wording_is_read_only_under_transformers_gguf_code() -> None:
    under_gguf = SGLANG_LAUNCH + _raised(TRANSFORMERS_4_OLD, "chatglm", "transformers/modeling_gguf_pytorch_utils.py")
    assert first_diagnosis(under_gguf).pattern == "rule-gguf-architecture-unknown"
    elsewhere = SGLANG_LAUNCH + _raised(TRANSFORMERS_4_OLD, "chatglm", "mytool/convert.py")
    assert first_diagnosis(elsewhere).pattern != "rule-gguf-architecture-unknown"


def test_vllms_gguf_weight_loader_points_at_the_gguf_package() -> None:
    code = """
        def _get_gguf_weights_map(model_type):
            raise RuntimeError(f"Unknown gguf model_type: {model_type}")

        _get_gguf_weights_map("olmo3")
    """
    log = VLLM_0112 + real_traceback(code, "vllm/model_executor/model_loader/gguf_loader.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-gguf-architecture-unknown"
    assert diagnosis.title == "the gguf package's architecture table does not read GGUF architecture olmo3"
