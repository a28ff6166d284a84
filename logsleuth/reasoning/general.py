"""The honest category of a failure no pattern or rule names (issue 28, item 5): filled in by its own work."""

from __future__ import annotations

from logsleuth.models import Diagnosis
from logsleuth.reasoning.evidence import Evidence


def categorize(evidence: Evidence) -> Diagnosis | None:
    """The likeliest category and its general checks (basis "general"); None until that work lands."""
    return None
