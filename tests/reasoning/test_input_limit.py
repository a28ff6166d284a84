"""Rule rule-sglang-input-over-limit (reasoning/input_limit.py): SGLang's scheduler refusing a request longer than
max_req_input_len, the smaller of the context length and the KV cache's token capacity.

The lines are SGLang's own record (validate_input_length's template, facts/raise_sites-sglang.zip) as a server log
prints it; sgl-project/sglang#4048 is the thread (an allowed length far below the context length)."""

from __future__ import annotations

from tests.reasoning.diagnosed import first_diagnosis

RECORD = ("[2025-03-04 10:12:44] Input length (160062 tokens) exceeds the maximum allowed length (59862 tokens). "
          "Use a shorter input or enable --allow-auto-truncate.\n")
LAUNCH = "python3 -m sglang.launch_server --model-path /models/DeepSeek-R1 --tp 8 --context-length {}\n"


def test_an_allowed_length_below_the_context_length_is_the_kv_cache_s_size() -> None:
    diagnosis = first_diagnosis(LAUNCH.format(163840) + RECORD)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-sglang-input-over-limit", "context-length", "rule")
    assert "context length is 163840, so the limit here is the KV cache's size" in diagnosis.root_cause
    assert diagnosis.fix is not None and not diagnosis.fix.flags  # no corrected command: no value is known to fit
    assert any("--mem-fraction-static" in step and "runs out of memory" in step for step in diagnosis.fix.steps)


def test_without_the_context_length_both_limits_are_named() -> None:
    diagnosis = first_diagnosis(RECORD)
    assert diagnosis.pattern == "rule-sglang-input-over-limit"
    assert "smaller of two limits" in diagnosis.root_cause and "context length is" not in diagnosis.root_cause


def test_an_allowed_length_at_the_context_length_is_not_called_the_cache() -> None:
    record = RECORD.replace("59862", "163834")
    diagnosis = first_diagnosis(LAUNCH.format(163840) + record)
    assert "so the limit here is the KV cache's size" not in diagnosis.root_cause


def test_other_engines_and_clients_wordings_are_not_this_rule() -> None:
    vllm = ("INFO 05-08 21:27:20 [__init__.py:239] vLLM version 0.8.5\n"
            "ERROR 05-08 21:27:27 [serving_chat.py:198] ValueError: This model's maximum context length is 8192 tokens. "
            "However, you requested 8203 tokens (7691 in the messages, 512 in the completion). Please reduce the "
            "length of the messages or completion.\n")
    assert first_diagnosis(vllm).pattern != "rule-sglang-input-over-limit"
