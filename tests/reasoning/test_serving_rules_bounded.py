"""The serving rules' regexes (pooling_checkpoint, input_limit, lora_adapter's no-adapter) read a 64 KiB message in
one pass: long runs placed where each regex repeats.  A hang guard, not a timing (the alarm fires only on a hang)."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from tests.reasoning.diagnosed import app_traceback
from tests.test_fuzz import no_hang

NO_PATTERNS = PatternSet(patterns=[], errors=[])
RUN = 60_000


@pytest.mark.parametrize("message", [
    "ValueError: There is no module or parameter named 'embed_tokens" + "." * RUN + "' in Qwen3ForCausalLM",
    "ValueError: There is no module or parameter named 'layers' in " + "Qwen" * (RUN // 4),
    "ValueError: Input length (" + "1" * RUN + " tokens) exceeds the maximum allowed length (2 tokens)",
    "ValueError: Loading lora x failed: No adapter found for " + "/a" * (RUN // 2),
    "ValueError: " + "failed: No adapter found for " * (RUN // 29),
])
def test_a_long_serving_message_is_read_in_one_pass(message: str) -> None:
    with no_hang():
        report = diagnose_text(app_traceback(message), DiagnoseOptions(), patterns=NO_PATTERNS)
    assert report.failures
