"""A report of a real failure with secrets planted in its log, and the case file built from it."""

from __future__ import annotations

import pytest

from logsleuth.models import Report
from tests.logs import crash_record, scheduler_traceback, sglang_record

# Secrets planted in the log: none may leave the machine, whatever the report shows.
PLANTED_API_KEY = "sk-plantedSecretKey0123456789abcdef"
PLANTED_HF_TOKEN = "hf_PlantedHuggingFaceToken0123456789"
PLANTED = (PLANTED_API_KEY, PLANTED_HF_TOKEN)


def planted_log() -> str:
    return (
        sglang_record("2026-03-14 09:26:50", "", "sglang version 0.5.9")
        + sglang_record(
            "2026-03-14 09:26:51",
            "",
            f"server_args=ServerArgs(model_path='/models/llama', tp_size=2, dp_size=3, api_key='{PLANTED_API_KEY}')",
        )
        + sglang_record("2026-03-14 09:26:54", "TP0", f"WARNING env HF_TOKEN={PLANTED_HF_TOKEN} is set")
        + crash_record("2026-03-14 09:26:55", "TP0", scheduler_traceback())
    )


@pytest.fixture(scope="session")
def planted_report() -> Report:
    """Not redacted, as `diagnose --no-redact` has it: what is sent must be redacted all the same."""
    from logsleuth.api import DiagnoseOptions, diagnose_text

    report = diagnose_text(planted_log(), DiagnoseOptions(include_user_patterns=False))
    assert report.primary is not None
    assert any(secret in repr(report) for secret in PLANTED), "the test log must carry its planted secrets"
    return report

