"""`logsleuth merge` of reports made by the real `diagnose --format json` (issue 31): the fleet report the SSH
fan-out gives, in every format; malformed, foreign and future reports; time zones; health reports."""

from __future__ import annotations

import json
import socket
import time
from pathlib import Path

import jsonschema
import pytest

from logsleuth.api import diagnose, merge_reports
from logsleuth.models import Report
from logsleuth.render.options import OutputFormat
from tests.helpers import REPO, run_cli
from tests.merge.nodes import diagnose_on_node, node_reports, rack_logs, write_logs
from tests.test_fleet_report import oom

SCHEMA = json.loads((REPO / "logsleuth" / "report.schema.json").read_text())
HEALTH_SCHEMA = json.loads((REPO / "logsleuth" / "health_report.schema.json").read_text())


@pytest.fixture(scope="module")
def rack(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Path], Path]:
    return node_reports(tmp_path_factory.mktemp("rack"), rack_logs())


def outcomes(report: Report) -> list[tuple[str, str]]:
    assert report.fleet is not None
    return [(member.name.removesuffix(".log"), member.outcome) for member in report.fleet.members]


def test_the_merged_root_and_cascade_are_those_of_the_fan_out_of_the_same_logs(rack: tuple[dict[str, Path], Path]) -> None:
    logs, reports = rack
    merged = merge_reports([str(reports)])
    fanned = diagnose([str(path) for path in logs.values()])  # the fan-out of local files: a fleet report too
    assert merged.fleet is not None and fanned.fleet is not None
    assert isinstance(merged, Report)
    assert merged.fleet.root == "node03" and fanned.fleet.root == "node03.log"
    assert outcomes(merged) == outcomes(fanned)
    assert [g.fingerprint for g in merged.failures] == [g.fingerprint for g in fanned.failures]
    assert merged.fleet.root_fingerprint == fanned.fleet.root_fingerprint
    assert [g.cascade_of for g in merged.failures] == [g.cascade_of for g in fanned.failures]
    for mine, theirs in zip(merged.failures, fanned.failures, strict=True):
        assert mine.count == theirs.count
        assert mine.rank_counts == theirs.rank_counts
        assert mine.diagnosis == theirs.diagnosis
    assert merged.fleet.first_gap == fanned.fleet.first_gap == pytest.approx(602.0)
    # Each node's log is named as the SSH fan-out names a remote log, and counted for its host.
    assert merged.failures[1].sources == ("node01:" + str(logs["node01"]), "node02:" + str(logs["node02"]),
                                          "node04:" + str(logs["node04"]))
    assert dict(merged.failures[1].host_counts) == {"node01": 1, "node02": 1, "node04": 1}


@pytest.mark.parametrize("fmt", list(OutputFormat))
def test_every_format_shows_the_hosts_the_root_and_its_cascade(rack: tuple[dict[str, Path], Path], fmt: OutputFormat) -> None:
    _, reports = rack
    result = run_cli("merge", str(reports), "--format", fmt.value, "--width", "120")
    assert result.exit_code == 1, result.stderr
    out = result.stdout
    if fmt is OutputFormat.JSON:
        data = json.loads(out)
        jsonschema.Draft202012Validator(SCHEMA).validate(data)
        assert data["fleet"]["root"] == "node03"
        assert [h["outcome"] for h in data["fleet"]["hosts"]] == ["root", "cascade", "cascade", "cascade", "no-failure"]
        assert data["failures"][1]["cascade_of"] == data["failures"][0]["fingerprint"]
        return
    assert "node03 failed first" in out
    for node in ("node01", "node02", "node04", "node05"):
        assert node in out
    assert "cascade of node03" in out or "cascade of" in out and "node03" in out
    assert "out of memory" in out


def test_a_malformed_or_foreign_report_is_named_and_the_others_still_merge(rack: tuple[dict[str, Path], Path], tmp_path: Path) -> None:
    _, reports = rack
    broken = tmp_path / "node06.json"
    broken.write_text('{"schema": "logsleuth.report/1", "failures": [')  # cut off mid-write (a node died)
    foreign = tmp_path / "node07.json"
    foreign.write_text('{"kind": "something else"}')
    wrong = tmp_path / "node08.json"
    wrong.write_text('{"schema": "logsleuth.report/1", "schema_version": 1, "sources": [], "failures": [{"count": "8"}]}')
    result = run_cli("merge", str(reports), str(broken), str(foreign), str(wrong), "--format", "json")
    assert result.exit_code == 1, result.stderr  # a failure was found: as diagnose, that wins
    hosts = {h["name"]: h for h in json.loads(result.stdout)["fleet"]["hosts"]}
    assert hosts["node06.json"]["outcome"] == "unreadable" and "not JSON" in hosts["node06.json"]["error"]
    assert "not a logsleuth report" in hosts["node07.json"]["error"]
    assert "failures[0]" in hosts["node08.json"]["error"]
    assert "Traceback" not in result.stderr
    assert sum("node06.json" in line for line in result.stderr.splitlines()) == 1


def test_a_report_of_a_newer_schema_is_refused_in_one_line(rack: tuple[dict[str, Path], Path], tmp_path: Path) -> None:
    _, reports = rack
    data = json.loads((reports / "node03.json").read_text())
    data["schema"], data["schema_version"] = "logsleuth.report/2", 2
    future = tmp_path / "node09.json"
    future.write_text(json.dumps(data))
    result = run_cli("merge", str(reports), str(future))
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "node09.json" in result.stderr and "schema_version 2" in result.stderr


def test_exit_status_without_a_failure_and_without_a_readable_report(tmp_path: Path) -> None:
    logs = write_logs(tmp_path / "logs", {"node05": rack_logs()["node05"], "node06": rack_logs()["node05"]})
    for node, path in logs.items():
        assert diagnose_on_node(node, path, tmp_path / "healthy").exit_code == 0
    healthy = run_cli("merge", str(tmp_path / "healthy"))
    assert healthy.exit_code == 0, healthy.stderr
    assert "2 hosts: 2 no failure" in healthy.stdout
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "x.json").write_text("not json")
    assert run_cli("merge", str(tmp_path / "bad")).exit_code == 3
    assert run_cli("merge", str(tmp_path / "empty-and-missing")).exit_code == 3


def test_the_json_report_names_its_machine_and_schema_version(tmp_path: Path) -> None:
    log = write_logs(tmp_path, {"n": oom()})["n"]
    named = run_cli("diagnose", str(log), "--format", "json", "--host", "gpu-17")
    data = named.json()
    assert data["schema_version"] == 1
    assert data["reporter"]["host"] == "gpu-17"
    assert data["failures"][0]["firsts"] == [
        {"source": str(log), "host": None, "timestamp": "2025-11-06 02:10:01", "line": data["failures"][0]["first_line"],
         "offset": data["failures"][0]["offset"]}
    ]
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    plain = run_cli("diagnose", str(log), "--format", "json").json()
    assert plain["reporter"]["host"] == socket.gethostname()


def _diagnose_in_zone(node: str, log: Path, reports: Path, zone: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """What a node whose clock is in `zone` writes."""
    monkeypatch.setenv("TZ", zone)
    time.tzset()
    try:
        assert diagnose_on_node(node, log, reports).exit_code == 1
    finally:
        monkeypatch.undo()
        time.tzset()


def test_nodes_in_different_zones_are_ordered_in_utc(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """paris logs 03:10:01 local (01:10:01 UTC), london 02:10:01 UTC: paris failed first, an hour earlier,
    although its printed time is later."""
    logs = write_logs(tmp_path / "logs", {"london": oom("02:10:01", "TP1"), "paris": oom("03:10:01", "TP2")})
    reports = tmp_path / "reports"
    reports.mkdir()
    _diagnose_in_zone("london", logs["london"], reports, "UTC0", monkeypatch)
    _diagnose_in_zone("paris", logs["paris"], reports, "CET-2", monkeypatch)  # POSIX TZ: two hours east of UTC
    paris = json.loads((reports / "paris.json").read_text())
    assert paris["reporter"]["utc_offset_seconds"] == 7200 and paris["sources"][0]["utc_offset_seconds"] == 7200
    merged = merge_reports([str(reports)])
    assert merged.fleet is not None and merged.fleet.root == "paris"
    assert merged.fleet.first_gap == pytest.approx(3600.0)


def test_a_merge_of_merged_reports_keeps_every_node(rack: tuple[dict[str, Path], Path], tmp_path: Path) -> None:
    """Ten thousand nodes can merge as a tree: racks first, then the racks' reports."""
    _, reports = rack
    files = sorted(reports.glob("*.json"))
    first = run_cli("merge", *map(str, files[:2]), "--format", "json", "-o", str(tmp_path / "a.json"))
    second = run_cli("merge", *map(str, files[2:]), "--format", "json", "-o", str(tmp_path / "b.json"))
    assert first.exit_code == second.exit_code == 1
    tree = merge_reports([str(tmp_path / "a.json"), str(tmp_path / "b.json")])
    flat = merge_reports([str(reports)])
    assert outcomes(tree) == outcomes(flat)
    assert [g.fingerprint for g in tree.failures] == [g.fingerprint for g in flat.failures]


HEALTH = REPO / "tests" / "fixtures" / "health" / "0.5.9"


def test_health_reports_merge_as_health_of_several_sources(tmp_path: Path) -> None:
    reports = tmp_path / "health"
    reports.mkdir()
    for node, log in (("node01", "accept-near-one.log"), ("node02", "accept-near-one.log"), ("node03", "healthy.log")):
        result = run_cli("health", str(HEALTH / log), "--format", "json", "--host", node, "-o", str(reports / f"{node}.json"))
        assert result.exit_code in (0, 1), result.stderr
    merged = run_cli("merge", str(reports), "--format", "json")
    assert merged.exit_code == 1, merged.stderr
    data = merged.json()
    jsonschema.Draft202012Validator(HEALTH_SCHEMA).validate(data)
    accept = next(f for f in data["findings"] if "accept" in f["pattern"])
    assert accept["sources"] == [f"node01:{HEALTH / 'accept-near-one.log'}", f"node02:{HEALTH / 'accept-near-one.log'}"]
    assert accept["hosts"] == ["node01", "node02"]  # a node's local log is on that node, as the fan-out names it
    assert {s["host"] for s in data["series"]} == {"node01", "node02", "node03"}
    assert {s["source"] for s in data["series"]} == {f"{n}:{HEALTH / log}" for n, log in
                                                    (("node01", "accept-near-one.log"), ("node02", "accept-near-one.log"),
                                                     ("node03", "healthy.log"))}
    for fmt in ("text", "rich", "markdown", "slack"):
        out = run_cli("merge", str(reports), "--format", fmt, "--width", "120")
        assert out.exit_code == 1 and "node01" in out.stdout, (fmt, out.stderr)


def test_a_health_report_among_crash_reports_is_left_out_with_a_warning(rack: tuple[dict[str, Path], Path], tmp_path: Path) -> None:
    _, reports = rack
    health = tmp_path / "node10.json"
    run_cli("health", str(HEALTH / "healthy.log"), "--format", "json", "--host", "node10", "-o", str(health))
    result = run_cli("merge", str(reports), str(health), "--format", "json")
    assert result.exit_code == 1
    data = result.json()
    assert "node10" not in [h["name"] for h in data["fleet"]["hosts"]]
    assert any("health report" in w and "node10.json" in w for w in data["warnings"])
    assert "health report" in result.stderr


def test_anonymize_replaces_the_reporting_machines_name(tmp_path: Path) -> None:
    log = write_logs(tmp_path, {"n": oom()})["n"]
    data = run_cli("diagnose", str(log), "--format", "json", "--host", "gpu-secret-17", "--anonymize").json()
    assert "gpu-secret-17" not in json.dumps(data)
    assert data["reporter"]["host"].startswith("host-")


def test_two_reports_of_one_host_name_stay_two_hosts(tmp_path: Path) -> None:
    """Containers that all call themselves `localhost`, reading the same path: each report stays its own host,
    named after its file, and a warning says why."""
    reports = tmp_path / "reports"
    reports.mkdir()
    log = tmp_path / "server.log"
    for node, text in (("a", oom()), ("b", rack_logs()["node01"])):  # one path, each container's own log
        log.write_text(text)
        written = run_cli("diagnose", str(log), "--format", "json", "--host", "localhost", "-o", str(reports / f"{node}.json"))
        assert written.exit_code == 1, written.stderr
    merged = merge_reports([str(reports)])
    assert isinstance(merged, Report) and merged.fleet is not None
    assert [member.name for member in merged.fleet.members] == ["localhost", "b"]
    assert merged.fleet.root == "localhost" and merged.fleet.members[1].outcome == "cascade"
    assert any("localhost" in warning and "b.json" in warning for warning in merged.warnings)


def test_a_merge_keeps_at_most_the_live_reports_groups_and_counts_the_rest(rack: tuple[dict[str, Path], Path], tmp_path: Path) -> None:
    """150 nodes, each a distinct failure (a real report copied with its fingerprint and time changed): 100 groups
    kept, the root first, the other 50 counted; every node still has its line."""
    _, reports = rack
    real = json.loads((reports / "node01.json").read_text())
    many = tmp_path / "many"
    many.mkdir()
    for number in range(150):
        data = json.loads(json.dumps(real))
        data["reporter"]["host"] = f"gpu{number:03d}"
        failure = data["failures"][0]
        failure["fingerprint"] = f"{number:016x}"
        failure["timestamp"] = failure["firsts"][0]["timestamp"] = f"2025-11-06 03:{number // 60:02d}:{number % 60:02d}"
        (many / f"gpu{number:03d}.json").write_text(json.dumps(data))
    merged = merge_reports([str(many)])
    assert isinstance(merged, Report) and merged.fleet is not None
    assert len(merged.failures) == 100 and merged.omitted_groups == 50 and merged.omitted_failures == 50
    assert merged.fleet.root == "gpu000" and merged.failures[0].fingerprint == f"{0:016x}"
    assert len(merged.fleet.members) == 150
