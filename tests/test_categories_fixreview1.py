"""Stop 49, review 1's faults in the stop's own rows (issue 28), in generic words.

- M1: InternLM2's own Hugging Face class names its parameters `tok_embeddings`, `attention.wo`, `feed_forward.w1`
  under `model.` (vllm/model_executor/models/internlm2.py, sglang/srt/models/internlm2.py, and the InternVL language
  model built on it): only a bare native name (Mistral's consolidated.safetensors) is the native-format file.
"""

from __future__ import annotations

from tests.helpers import diagnose_without_patterns, real_traceback


def _raised_in(path: str, function: str, statement: str) -> str:
    return real_traceback(f"""
def {function}(name):
    {statement}

{function}("x")
""", path)


def _missing_tensor(path: str, name: str) -> str:
    return _raised_in(path, "load_weights", f"params_dict = {{}}\n    param = params_dict['{name}']")


def test_internlm2s_own_names_are_not_a_native_weights_file() -> None:
    for path, name in (("vllm/model_executor/models/internlm2.py", "model.layers.0.attention.wo.weight"),
                       ("sglang/srt/models/internlm2.py", "model.tok_embeddings.weight"),
                       ("vllm/model_executor/models/internvl.py",
                        "language_model.model.layers.3.feed_forward.w2.weight")):
        found = diagnose_without_patterns(_missing_tensor(path, name))
        assert found.category == "weight-loading", name
        assert "native-format" not in found.title, name


def test_a_bare_native_name_still_names_the_native_weights_file() -> None:
    for name in ("layers.0.attention.wk.weight", "tok_embeddings.weight"):
        found = diagnose_without_patterns(_missing_tensor("vllm/model_executor/models/llama.py", name))
        assert "native-format weights file" in found.title, name
