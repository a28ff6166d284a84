"""A KeyError whose key is a parameter's dotted name, pasted without its frames (facts/categories.toml, the
weight-loading row): the model's load_weights looking a checkpoint tensor up in its own parameters
(`param = params_dict[name]`, sglang/srt/models/*.py and vllm/model_executor/models/*.py) and not finding it.  The
line is CPython's own: the test raises the KeyError and diagnoses what CPython prints for it."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def key_error_line(key: str) -> str:
    params_dict: dict[str, object] = {}
    with pytest.raises(KeyError) as caught:
        params_dict[key]  # noqa: B018 - the lookup is the point
    return f"KeyError: {caught.value}\n"


@pytest.mark.parametrize("key", ["model.layers.0.mlp.experts.w2_weight_scale", "model.layers.12.self_attn.qkv_proj.bias",
                                 "model.layers.3.mlp.down_proj.qweight"])
def test_a_parameter_name_key_error_is_weight_loading(key: str) -> None:
    (group,) = diagnose_text(key_error_line(key), OPTIONS).failures
    assert group.diagnosis is not None and group.diagnosis.category == "weight-loading"


@pytest.mark.parametrize("key", ["llama", "attention_backend", "model.config.name"])
def test_other_keys_are_not(key: str) -> None:
    (group,) = diagnose_text(key_error_line(key), OPTIONS).failures
    assert group.diagnosis is None or group.diagnosis.category != "weight-loading"
