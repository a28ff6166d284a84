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


def app_traceback(final_line: str, source: str = "run()") -> str:
    """A user's own script failing with `final_line` (`Type: message`): a log no engine rule should claim."""
    return f'Traceback (most recent call last):\n  File "/app/run.py", line 3, in <module>\n    {source}\n{final_line}\n'


def category_of(log: str) -> str | None:
    """The category a pattern or a rule gives the log's first failure (None: none does; the honest category's
    general guidance, reasoning/general.py, does not count: it is what is left when no rule claims a failure)."""
    diagnosis = diagnose_text(log, OPTIONS).failures[0].diagnosis
    return diagnosis.category if diagnosis is not None and diagnosis.basis != "general" else None
