"""A JSON report read back into the model (logsleuth/merge/read.py) gives the same report: the same JSON and
the same text, on reports the real `diagnose --format json` makes of the corpus's logs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from logsleuth.merge.fields import MalformedReport
from logsleuth.merge.read import FutureSchema, report_from_json
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.json_report import report_to_dict
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.helpers import REPO, run_cli

FIXTURES = REPO / "tests" / "fixtures"
CORPUS = sorted(
    [
        *REPO.glob("examples/*.log"),
        *sorted((FIXTURES / "sglang" / "0.5.9").glob("*.log"))[:6],
        *sorted((FIXTURES / "vllm").rglob("*.log"))[:4],
        *sorted((FIXTURES / "patterns").rglob("positive*.log"))[:8],
    ]
)


@pytest.mark.parametrize("log", CORPUS, ids=[str(p.relative_to(REPO)) for p in CORPUS])
def test_a_real_report_round_trips(log: Path) -> None:
    written = run_cli("diagnose", str(log), "--format", "json", "--width", "100")
    assert written.exit_code in (0, 1), written.stderr
    data = written.json()
    report = report_from_json(data, "x.json")
    assert isinstance(report, Report)
    assert json.loads(json.dumps(report_to_dict(report))) == data
    text = run_cli("diagnose", str(log), "--format", "text", "--width", "100").stdout
    assert render(report, RenderOptions(format=OutputFormat.TEXT, width=100)) == text


def test_the_corpus_is_not_empty() -> None:
    assert len(CORPUS) >= 15 and any("vllm" in str(p) for p in CORPUS) and any("patterns" in str(p) for p in CORPUS)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        ([], "not a logsleuth report"),
        ({"schema": "other/1"}, "not a logsleuth report"),
        ({"schema": "logsleuth.diff/1"}, "a logsleuth.diff report: merge reads diagnose and health reports"),
        ({"schema": "logsleuth.report/1", "schema_version": 2}, "do not agree"),
        ({"schema": "logsleuth.report/1", "sources": [{"name": 3}], "failures": []}, "sources[0].name: expected a string"),
        ({"schema": "logsleuth.report/1", "sources": [], "failures": [{"fingerprint": "f", "count": True, "kind": "bare",
                                                                        "exceptions": [{"type": "E"}]}]}, "count: expected an integer, not true"),
        ({"schema": "logsleuth.report/1", "sources": [], "failures": [{"fingerprint": "f", "count": 1, "kind": "x",
                                                                        "exceptions": [{"type": "E"}]}]}, "kind"),
    ],
)
def test_a_malformed_report_is_one_error_naming_where(data: object, words: str) -> None:
    with pytest.raises(MalformedReport, match=words.replace("[", r"\[").replace("]", r"\]")):
        report_from_json(data, "x.json")


def test_a_newer_schema_is_refused() -> None:
    with pytest.raises(FutureSchema, match="x.json: schema_version 2"):
        report_from_json({"schema": "logsleuth.report/2", "schema_version": 2}, "x.json")
    with pytest.raises(FutureSchema):
        report_from_json({"schema": "logsleuth.health/3"}, "x.json")


def _paths(value: object, path: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
    """Every place in a JSON document."""
    found = [path] if path else []
    if isinstance(value, dict):
        for key, item in value.items():
            found.extend(_paths(item, (*path, key)))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_paths(item, (*path, index)))
    return found


def _with(document: object, path: tuple[object, ...], value: object) -> object:
    copy = json.loads(json.dumps(document))
    target = copy
    for step in path[:-1]:
        target = target[step]  # type: ignore[index]
    target[path[-1]] = value  # type: ignore[index]
    return copy


@pytest.mark.slow  # ~4,500 reads and 20 renders: a few seconds
def test_any_one_field_of_the_wrong_type_is_a_malformed_report_never_a_crash() -> None:
    """Each place of a real report (a fleet of two hosts, with a fix and its alternatives) given each JSON type
    in turn: the reader either reads it or names it malformed, and what it reads renders."""
    log = REPO / "examples" / "tp8-oom-then-nccl.log"
    data = run_cli("diagnose", str(log), str(REPO / "examples" / "eagle3-incident.log"), "--format", "json").json()
    places = _paths(data)
    assert len(places) > 300
    rendered = 0
    for index, path in enumerate(places):
        for value in (None, "x", -1, True, 2.5, [], {}, [1], {"a": 1}):
            try:
                report = report_from_json(_with(data, path, value), "x.json")
            except MalformedReport:
                continue
            if index % 25 == 0 and isinstance(report, Report):
                render(report, RenderOptions(format=OutputFormat.TEXT, width=80))
                rendered += 1
    assert rendered > 0
