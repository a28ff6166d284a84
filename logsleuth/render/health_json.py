"""JSON health report, schema `logsleuth.health/1` (logsleuth/health_report.schema.json).

Answer first, like every format: the status and verdict, then the findings, then the series with their
numbers and timestamps, then what was read.  Log text is kept as the log has it (json.dumps escapes C0
controls, render_json_text the rest), so a program reading the JSON sees the evidence unaltered but inert.
"""

from __future__ import annotations

import math
from typing import Any

from logsleuth import __version__
from logsleuth.health.model import Finding, HealthReport, Series
from logsleuth.render.health_view import health_status, verdict
from logsleuth.render.json_report import json_text, launch_json, reporter_json, source_json

SCHEMA = "logsleuth.health/1"
SCHEMA_VERSION = 1  # the number after the slash: `logsleuth merge` refuses a newer one (logsleuth/merge/read.py)


def _finding(finding: Finding) -> dict[str, Any]:
    return {
        "pattern": finding.pattern_id,
        "title": finding.title,
        "category": finding.category,
        "summary": finding.summary,
        "root_cause": finding.root_cause,
        "causes": [
            {"id": cause.id, "text": cause.text, "fix": cause.fix, "evidence": cause.evidence}
            for cause in finding.causes
        ],
        "occurrences": finding.occurrences,
        "first_seconds": finding.first_seconds,
        "last_seconds": finding.last_seconds,
        "evidence": [
            {
                "text": evidence.text,
                "offset": evidence.offset,
                "timestamp": evidence.timestamp,
                "line_number": evidence.line_number,
            }
            for evidence in finding.evidence
        ],
        "references": list(finding.references),
        "sources": list(finding.sources),
        "hosts": list(finding.hosts),
    }


def _number(value: float) -> float | None:
    """JSON has no NaN or infinity: a missing value is null."""
    return value if math.isfinite(value) else None


def _series(series: Series) -> dict[str, Any]:
    return {
        "name": series.name,
        "source": series.source or None,  # several sources: the one it was read from
        "host": series.host,
        "unit": series.unit,
        "samples": series.samples,
        "points": [{"seconds": point.seconds, "value": _number(point.value)} for point in series.points],
    }


def health_to_dict(report: HealthReport) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "tool": {"name": "logsleuth", "version": __version__},
        "status": health_status(report),
        "verdict": verdict(report),
        "batches": report.batches,
        "sampled": report.sampled,
        "speculative": report.speculative,
        "findings": [_finding(finding) for finding in report.findings],
        "series": [_series(series) for series in report.series],
        "launch": launch_json(report.launch),
        "sources": [source_json(source) for source in report.sources],
        "reporter": reporter_json(report.reporter),
        "schema_version": SCHEMA_VERSION,
        "warnings": list(report.warnings),
    }


def render_health_json(report: HealthReport) -> str:
    """Always valid UTF-8 and inert: C1 controls and bidi overrides escaped, undecodable bytes as `\\xNN`."""
    return json_text(health_to_dict(report), allow_nan=False)
