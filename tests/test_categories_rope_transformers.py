"""transformers' own Llama config class refusing Llama 3.1's rope_scaling (transformers before 4.43,
configuration_llama.py _rope_scaling_validation: '`rope_scaling` must be a dictionary with two fields, `type` and
`factor`, got {…}'; some releases say 'with with') is a transformers older than the model's config
(dependency-version), not an architecture the engine lacks (foundation-model-stack/foundation-model-stack#384,
StartHua/Comfyui_CXH_joy_caption#35).  The engine's own failure reading rope_scaling keeps its row."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)
from tests.test_categories_cat7 import unknown_rope_type

pytestmark = pytest.mark.usefixtures("no_rules")

LLAMA31 = ("{'factor': 8.0, 'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192, "
           "'rope_type': 'llama3'}")


@pytest.mark.parametrize("wording", ["must be a dictionary with two fields", "must be a dictionary with with two fields"])
def test_transformers_refusing_a_newer_rope_scaling_is_an_old_transformers(wording: str) -> None:
    traceback = real_traceback(f"""
def _rope_scaling_validation(rope_scaling):
    raise ValueError(f"`rope_scaling` {wording}, `type` and `factor`, got {{rope_scaling}}")

_rope_scaling_validation({LLAMA31})
""", "transformers/models/llama/configuration_llama.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "dependency-version"
    assert "transformers" in diagnosis.title
    assert any("upgrade transformers" in step for step in diagnosis.fix.steps)


def test_the_engine_failing_on_a_rope_type_it_does_not_know_keeps_the_engines_row() -> None:
    """Both are dependency-version since stop 51, but the engine's get_rope refusing a type is its own row, whose
    checks are the engine release against the installed transformers, not transformers' older config class.  'mrope'
    (Qwen2-VL's config-level type, under a transformers the release does not expect) is a type the rule leaves to the
    row with the rules on too (a type no release handles is the rule's: tests/reasoning/test_rope_type.py)."""
    traceback = unknown_rope_type("mrope", "vllm/model_executor/layers/rotary_embedding.py")
    assert "Unknown RoPE scaling type mrope" in traceback
    title = diagnose_without_patterns(traceback).title
    assert "reading the model's rope_scaling differently" in title and "older than the model's config" not in title
