"""The rule for a RoPE scaling type the engine's get_rope refuses (reasoning/rope_type.py), after review 5 of stop 51.

- An override of the model's config is named only when its own value sets the rope: `--hf-overrides` with no rope key
  is not, whatever follows it on the line (`--rope-theta`, a model name holding the letters "rope").
- A type a later release of the launch's engine handles is the model newer than the release: the fix is that newer
  release, never the old release's older transformers (transformers before 4.43 refuses Llama 3.1's rope_scaling
  with "`rope_scaling` must be a dictionary with two fields": foundation-model-stack/foundation-model-stack#384).
- The types listed are the user's release's when the raise site index holds it, else labelled as across releases.
- Types compare exactly, as the engines' get_rope does; a null type and a refusal raised outside a shown get_rope are
  not the rule's.
The engine's message and its raising function are vLLM's and SGLang's get_rope (rotary_embedding: raise
ValueError(f"Unknown RoPE scaling type {scaling_type}")); vllm-project/vllm#6689 is the hand-written 'extended'."""

from __future__ import annotations

import pytest

from logsleuth.models import Fix
from tests.helpers import real_traceback
from tests.reasoning.diagnosed import first_diagnosis
from tests.test_categories_cat7 import unknown_rope_type

_NO_FIX = Fix(summary="")
ROTARY = "vllm/model_executor/layers/rotary_embedding.py"


def _banner(version: str) -> str:
    return f"INFO 05-21 18:19:15 [api_server.py:1043] vLLM API server version {version}\n"


@pytest.mark.parametrize("launch", [
    "vllm serve m --hf-overrides '{\"max_position_embeddings\": 65536}' --rope-theta 1000000\n",
    "python -m sglang.launch_server --model-path m --json-model-override-args '{\"architectures\": [\"X\"]}' "
    "--served-model-name my-europe-model\n",
], ids=["rope-theta-after", "europe-after"])
def test_an_override_whose_own_value_sets_no_rope_is_not_named(launch: str) -> None:
    diagnosis = first_diagnosis(launch + unknown_rope_type("extended", ROTARY))
    assert diagnosis.pattern == "rule-rope-type-unknown", diagnosis.title
    summary = (diagnosis.fix or _NO_FIX).summary
    assert "--hf-overrides" not in summary and "--json-model-override-args" not in summary
    assert "general guidance" in summary


def test_a_settings_dump_override_whose_value_sets_the_rope_is_named() -> None:
    dump = "server_args=ServerArgs(model_path='m', json_model_override_args='{\"rope_scaling\": {\"type\": \"x1\"}}')\n"
    diagnosis = first_diagnosis(dump + unknown_rope_type("x1", ROTARY))
    assert "json-model-override-args" in (diagnosis.fix or _NO_FIX).summary


def test_a_type_a_later_release_handles_is_a_newer_release_not_the_old_pinned_transformers() -> None:
    """vLLM 0.5.5's get_rope has no 'mllama4' (0.8.5.post1's has, in the raise site index)."""
    diagnosis = first_diagnosis(_banner("0.5.5") + unknown_rope_type("mllama4", ROTARY))
    assert (diagnosis.pattern, diagnosis.category) == ("rule-rope-type-unknown", "dependency-version")
    fix = diagnosis.fix or _NO_FIX
    assert "0.8.5.post1" in fix.summary
    assert "pip show" not in " ".join((fix.summary, *fix.steps))


def test_the_types_listed_are_the_users_releases_when_the_index_holds_it() -> None:
    known = first_diagnosis(_banner("0.6.3.post1") + unknown_rope_type("extended", ROTARY))
    step = (known.fix or _NO_FIX).steps[0]
    assert "vllm 0.6.3.post1 handles" in step and "mllama4" not in step  # mllama4 came in a later release
    unknown = first_diagnosis(unknown_rope_type("extended", ROTARY))
    assert "across all indexed releases" in (unknown.fix or _NO_FIX).steps[0]


@pytest.mark.parametrize("rope_type", ["YaRN", "scaling"])
def test_types_compare_exactly_as_the_engines_do(rope_type: str) -> None:
    """No release compares case-insensitively, and 'scaling' is only the tail of deepseek_llama_scaling."""
    diagnosis = first_diagnosis(unknown_rope_type(rope_type, ROTARY))
    assert (diagnosis.pattern, diagnosis.category) == ("rule-rope-type-unknown", "invalid-flag-value")
    assert "likely" in diagnosis.title and "most likely written by hand" in diagnosis.root_cause


def test_a_null_type_or_a_refusal_outside_get_rope_is_not_a_value_written_by_hand() -> None:
    assert first_diagnosis(unknown_rope_type("None", ROTARY)).pattern != "rule-rope-type-unknown"
    elsewhere = real_traceback("""
        def load_settings(settings):
            raise ValueError(f"Unknown RoPE scaling type {settings['kind']}")

        load_settings({"kind": "extended"})
        """, "myapp/settings.py")
    assert first_diagnosis(elsewhere).pattern != "rule-rope-type-unknown"


def test_qwen2_vls_config_level_mrope_stays_with_the_version_row() -> None:
    assert first_diagnosis(unknown_rope_type("mrope", ROTARY)).pattern != "rule-rope-type-unknown"
