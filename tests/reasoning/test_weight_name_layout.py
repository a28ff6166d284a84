"""What a weight name the loader could not place shows of the checkpoint's layout, leading weight-loading's general
checks (facts/categories.toml, the weight-loading row's checks_when).

Threads: a quantization scale the loader could not place: sgl-project/sglang#5095 (gate_up_proj.input_scale), #4598
(experts.w2_weight_scale), #3604 (down_proj.weight_scale), vllm-project/vllm#34293 (qkv_proj.k_scale); a bare
`layers.N` name in SGLang's causal-LM loader: sgl-project/sglang#6917, #17535.  The KeyErrors are raised by real
CPython under the engines' file names (`params_dict[name]`)."""

from __future__ import annotations

import traceback

import pytest

from tests.reasoning.diagnosed import first_diagnosis

SCALE_STEP = "is a quantization scale tensor"
BARE_STEP = "The name starts at layers. with no model. before it"


def key_error(path: str, key: str) -> str:
    code = compile(f"def load_model():\n    params_dict = {{}}\n    params_dict[{key!r}]\nload_model()\n", path, "exec")
    try:
        exec(code, {})  # noqa: S102 - the test's own statement
    except KeyError as error:
        return "".join(traceback.format_exception(error))
    raise AssertionError("no KeyError")


def first_step(log: str) -> str:
    diagnosis = first_diagnosis(log)
    assert diagnosis.category == "weight-loading" and diagnosis.fix is not None, diagnosis
    return diagnosis.fix.steps[0]


@pytest.mark.parametrize("key", ["model.layers.31.mlp.gate_up_proj.input_scale", "model.layers.13.mlp.experts.w2_weight_scale"])
def test_a_quantization_scale_name_says_so_first(key: str) -> None:
    assert SCALE_STEP in first_step(f"KeyError: '{key}'\n")


@pytest.mark.parametrize("key", ["layers.27.self_attn.qkv_proj.k_scale", "model.layers.0.self_attn.kv_scale"])
def test_a_kv_cache_scale_is_the_attention_layers_not_the_methods(key: str) -> None:
    """vllm-project/vllm#34293's qkv_proj.k_scale: the loader's KV-scale remapping, not a quantization setting."""
    step = first_step(f"KeyError: '{key}'\n")
    assert "KV-cache scale" in step and SCALE_STEP not in step and "maybe_remap_kv_scale_name" in step


def test_a_bare_layers_name_in_sglang_says_the_prefix_is_missing() -> None:
    log = key_error("/usr/local/lib/python3.11/dist-packages/sglang/srt/model_executor/model_runner.py",
                    "layers.22.mlp.gate_up_proj.weight")
    assert BARE_STEP in first_step(log)


def test_a_bare_layers_name_in_vllm_is_no_missing_prefix() -> None:
    """Look-alike: vLLM's AutoWeightsLoader strips `model.` itself, so a bare name says nothing of the checkpoint."""
    log = key_error("/usr/local/lib/python3.11/dist-packages/vllm/model_executor/model_loader/default_loader.py",
                    "layers.22.mlp.gate_up_proj.weight")
    diagnosis = first_diagnosis(log)
    assert not any(BARE_STEP in step for step in (diagnosis.fix.steps if diagnosis.fix else ()))
