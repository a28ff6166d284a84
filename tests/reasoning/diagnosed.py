"""What the reasoning rules' tests share: the diagnosis logsleuth gives a pasted log, through the public API."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Diagnosis

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def first_diagnosis(log: str, options: DiagnoseOptions = OPTIONS) -> Diagnosis:
    """The diagnosis of the log's first failure group (the test fails when there is none)."""
    report = diagnose_text(log, options)
    assert report.failures, "no failure found"
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None, "no diagnosis"
    return diagnosis
