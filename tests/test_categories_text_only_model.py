"""vLLM's model config refusing a multimodal setting for a model it reads as text-only ('`limit_mm_per_prompt` is only
supported for multimodal models.', vllm/config.py ModelConfig in the raise site index): the model is text-only, or the
release does not know its multimodal class.  Filed under unsupported-architecture with both checks, not as two
features in conflict.  The look-alike: a feature vLLM supports only for some other kind of model keeps its row."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

pytestmark = pytest.mark.usefixtures("no_rules")


def _config_refusal(message: str) -> str:
    return real_traceback(f"""
class ModelConfig:
    def __init__(self):
        raise ValueError({message!r})

ModelConfig()
""", "vllm/config.py")


@pytest.mark.parametrize("setting", ["`limit_mm_per_prompt`", "limit_mm_per_prompt", "`mm_processor_kwargs`"])
def test_a_multimodal_setting_for_a_model_read_as_text_only(setting: str) -> None:
    diagnosis = diagnose_without_patterns(_config_refusal(f"{setting} is only supported for multimodal models."))
    assert diagnosis.category == "unsupported-architecture"
    assert "text-only" in diagnosis.title
    assert any("leave it out" in step for step in diagnosis.fix.steps)


def test_another_only_supported_for_refusal_keeps_its_row() -> None:
    diagnosis = diagnose_without_patterns(_config_refusal("Chunked prefill is only supported for decoder-only models."))
    assert "text-only" not in diagnosis.title
