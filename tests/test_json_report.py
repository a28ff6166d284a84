"""Every JSON report validates against the published schema."""

from __future__ import annotations

import json
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from tests.helpers import CORPUS, run_cli
from tests.logs import crash_record, launch_line, nccl_traceback, scheduler_traceback

SCHEMA = json.loads(resources.files("logsleuth").joinpath("report.schema.json").read_text())
CORPUS_LOGS = sorted(CORPUS.rglob("*.log"))


def _validate(report: dict) -> None:
    jsonschema.Draft202012Validator(SCHEMA).validate(report)


def test_schema_is_valid() -> None:
    jsonschema.Draft202012Validator.check_schema(SCHEMA)


@pytest.mark.parametrize("log", CORPUS_LOGS, ids=[str(p.relative_to(CORPUS)) for p in CORPUS_LOGS])
def test_corpus_reports_validate(log: Path) -> None:
    result = run_cli("diagnose", str(log), "--format", "json")
    assert result.exit_code in (0, 1), result.stderr
    _validate(result.json())


def test_multi_failure_and_missing_source_validate(tmp_path: Path) -> None:
    path = tmp_path / "multi.log"
    path.write_text(
        launch_line()
        + crash_record("2026-11-29 10:00:00", "TP1", nccl_traceback())
        + crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    )
    result = run_cli("diagnose", str(path), str(tmp_path / "missing.log"), "--format", "json", "--all")
    report = result.json()
    _validate(report)
    assert len(report["failures"]) == 2
    assert report["failures"][0]["exceptions"][-1]["type"] == "AssertionError"


def test_schema_rejects_a_wrong_report() -> None:
    with pytest.raises(jsonschema.ValidationError):
        _validate({"schema": "logsleuth.report/1", "sources": [], "failures": [{"count": 0}]})
