"""A fleet: several hosts' logs diagnosed together (issue 14, item 3).  Each host is a local file here (the SSH
version is tests/ssh/test_multinode.py); the logs come from the project's fixture engine, real CPython
tracebacks under SGLang's record format, with the scenario's own times and ranks."""

from __future__ import annotations

import json
from dataclasses import replace
from functools import cache
from pathlib import Path

import jsonschema
import pytest

from logsleuth.api import diagnose
from logsleuth.diagnosis.fleet import build_fleet, event_time
from logsleuth.diagnosis.grouping import is_cascade
from logsleuth.models import ClockOffset, Report
from logsleuth.render import render
from logsleuth.render.json_report import report_to_dict
from logsleuth.render.options import OutputFormat, RenderOptions
from scripts.pattern_fixtures.cases import all_cases
from scripts.pattern_fixtures.engine import render as render_case
from tests.helpers import real_traceback
from tests.logs import crash_record, noise, scheduler_traceback, weights_traceback

SCHEMA = json.loads((Path(__file__).parent.parent / "logsleuth" / "report.schema.json").read_text())
OOM_CASE = ("sglang-gpu-oom-forward", "positive-0.5.9-decode")  # crashes 4 records after its stamp
NCCL_CASE = ("sglang-nccl-watchdog-timeout", "positive-0.5.9-blocking-wait")  # 2 records after


@cache
def engine_log(case: tuple[str, str], crash_at: str, ranks: str) -> str:
    """The fixture engine's log for `case`, its crash record stamped `crash_at` (HH:MM:SS on 2025-11-06)."""
    chosen = next(c for c in all_cases() if (c.pattern, c.name) == case)
    records_before = 4 if case == OOM_CASE else 2
    hours, minutes, seconds = (int(part) for part in crash_at.split(":"))
    total = hours * 3600 + minutes * 60 + seconds - records_before
    stamp = f"2025-11-06 {total // 3600:02d}:{total % 3600 // 60:02d}:{total % 60:02d}"
    return render_case(replace(chosen, stamp=stamp, ranks=ranks), header="")


def oom(at: str = "02:10:01", ranks: str = "TP3") -> str:
    return engine_log(OOM_CASE, at, ranks)


def nccl_timeout(at: str, ranks: str) -> str:
    return engine_log(NCCL_CASE, at, ranks)


def write_hosts(tmp_path: Path, logs: dict[str, str]) -> list[str]:
    paths = []
    for name, text in logs.items():
        path = tmp_path / f"{name}.log"
        path.write_text(text)
        paths.append(str(path))
    return paths


def member(report: Report, source: str):  # type: ignore[no-untyped-def]
    assert report.fleet is not None
    return next(m for m in report.fleet.members if m.source == source)


def text_of(report: Report, fmt: OutputFormat, **options: object) -> str:
    return render(report, RenderOptions(format=fmt, width=120, **options))  # type: ignore[arg-type]


@pytest.fixture
def rack(tmp_path: Path) -> tuple[list[str], Report]:
    """node03 runs out of memory first; node01, node02 and node04 time out in NCCL ten minutes later; node05 is
    clean; node06's log is missing.  node03 is third on the command line."""
    paths = write_hosts(
        tmp_path,
        {
            "node01": nccl_timeout("02:20:03", "TP1"),
            "node02": nccl_timeout("02:20:04", "TP2"),
            "node03": noise(5, "2025-11-06 02:09:00") + oom(),
            "node04": nccl_timeout("02:20:03", "TP4"),
            "node05": noise(20, "2025-11-06 02:19:00"),
        },
    )
    paths.append(str(tmp_path / "node06.log"))  # never written
    return paths, diagnose(paths)


def test_the_earliest_failure_across_hosts_is_the_root_and_later_cascades_are_its(rack: tuple[list[str], Report]) -> None:
    paths, report = rack
    fleet = report.fleet
    assert fleet is not None and fleet.order_known
    assert fleet.root == "node03.log"  # a local file is labelled by its name, as pdsh labels a host
    root, cascade = report.failures[0], report.failures[1]
    assert root.diagnosis is not None and root.diagnosis.pattern == "sglang-gpu-oom-forward"
    assert fleet.root_fingerprint == root.fingerprint
    assert cascade.diagnosis is not None and cascade.diagnosis.pattern == "sglang-nccl-watchdog-timeout"
    assert cascade.cascade_of == root.fingerprint and root.cascade_of is None
    assert sorted(cascade.sources) == sorted([paths[0], paths[1], paths[3]])
    assert dict(cascade.rank_counts) == {"TP1": 1, "TP2": 1, "TP4": 1}
    assert dict(root.rank_counts) == {"TP3": 1}
    outcomes = [(m.source, m.outcome) for m in fleet.members]
    assert outcomes == [
        (paths[2], "root"),
        (paths[0], "cascade"),  # 02:20:03
        (paths[3], "cascade"),  # 02:20:03, given after node01
        (paths[1], "cascade"),  # 02:20:04
        (paths[4], "no-failure"),
        (paths[5], "unreadable"),
    ]
    assert member(report, paths[2]).timestamp == "2025-11-06 02:10:01"
    assert fleet.first_gap == pytest.approx(602.0)


def test_an_unreadable_host_is_listed_with_its_error(rack: tuple[list[str], Report]) -> None:
    paths, report = rack
    missing = member(report, paths[5])
    assert missing.outcome == "unreadable"
    assert missing.error is not None and "no such file" in missing.error
    text = text_of(report, OutputFormat.TEXT)
    row = next(line for line in text.splitlines() if line.lstrip().startswith("node06.log"))
    assert row.split()[1:] == ["unreadable", "no", "such", "file"]


def test_every_format_puts_one_line_per_host_before_the_groups(rack: tuple[list[str], Report]) -> None:
    paths, report = rack
    for fmt in (OutputFormat.TEXT, OutputFormat.RICH, OutputFormat.MARKDOWN):
        text = text_of(report, fmt)
        first_group = text.index("CUDA out of memory", text.index("node06.log"))
        for path in paths:
            assert text.index(Path(path).name) < first_group, (fmt, path)
        assert "failed first" in text
        assert f"cascade of {Path(paths[2]).name}" in text
        assert "on node03.log" in text  # the cascade group says whose cascade it is


def test_the_json_report_carries_the_fleet_and_validates(rack: tuple[list[str], Report]) -> None:
    paths, report = rack
    data = json.loads(text_of(report, OutputFormat.JSON))
    jsonschema.Draft202012Validator(SCHEMA).validate(data)
    fleet = data["fleet"]
    assert fleet["root"] == "node03.log"
    assert [host["source"] for host in fleet["hosts"]][:2] == [paths[2], paths[0]]
    assert [host["outcome"] for host in fleet["hosts"]] == ["root", "cascade", "cascade", "cascade", "no-failure", "unreadable"]
    assert fleet["hosts"][5]["error"].endswith("no such file")
    assert data["failures"][1]["cascade_of"] == data["failures"][0]["fingerprint"]
    assert data["failures"][1]["rank_counts"] == {"TP1": 1, "TP4": 1, "TP2": 1} or sorted(
        data["failures"][1]["rank_counts"]
    ) == ["TP1", "TP2", "TP4"]


def test_a_single_source_has_no_fleet(tmp_path: Path) -> None:
    (path,) = write_hosts(tmp_path, {"node03": oom()})
    report = diagnose([path])
    assert report.fleet is None
    assert "json" and report_to_dict(report)["fleet"] is None


def test_times_compare_as_times_not_as_text(tmp_path: Path) -> None:
    """A collector's ISO time with a zone (03:10:01+01:00 is 02:10:01 UTC) against SGLang's 02:12:00: as text the
    SGLang one sorts first; as times the weight-loading KeyError on node-a came first."""
    stamped = "".join(f"2025-11-06T03:10:01.000000000+01:00 {line}\n" for line in weights_traceback().splitlines())
    paths = write_hosts(
        tmp_path,
        {"node-b": crash_record("2025-11-06 02:12:00", "TP0", scheduler_traceback()), "node-a": stamped},
    )
    report = diagnose(paths)
    assert report.fleet is not None and report.fleet.order_known
    assert report.fleet.root == "node-a.log"
    assert report.failures[0].failure.final.type == "KeyError"
    assert member(report, paths[0]).outcome == "failed"  # a cause of its own, after the root


def test_without_timestamps_the_order_is_unknown_and_said(tmp_path: Path) -> None:
    nccl = real_traceback(
        'raise RuntimeError("NCCL error: remote process exited or there was a network error")',
        "site-packages/sglang/srt/distributed/parallel_state.py",
    )
    paths = write_hosts(tmp_path, {"node01": nccl, "node02": scheduler_traceback()})
    report = diagnose(paths)
    fleet = report.fleet
    assert fleet is not None and not fleet.order_known
    assert fleet.root == "node02.log"  # the usual order: the cause before the cascade
    assert member(report, paths[0]).outcome == "cascade"
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        assert "order unknown" in text_of(report, fmt).lower(), fmt


def test_clocks_that_differ_more_than_the_gap_make_the_root_uncertain(tmp_path: Path) -> None:
    paths = write_hosts(
        tmp_path, {"node01": nccl_timeout("02:10:03", "TP1"), "node03": oom("02:10:01", "TP3")}
    )
    report = diagnose(paths)
    assert report.fleet is not None and not report.fleet.root_uncertain
    # Clocks as sources/ssh/clock.py measures them: node01 is 4 s ahead of node03 (±0.1 s each).
    sources = [
        replace(report.sources[0], clock=ClockOffset(offset=4.0, uncertainty=0.1)),
        replace(report.sources[1], clock=ClockOffset(offset=0.0, uncertainty=0.1)),
    ]
    fleet, groups = build_fleet(sources, report.failures, lambda group: is_cascade(group.failure))
    assert fleet is not None
    assert fleet.clock_spread == pytest.approx(4.2)
    assert fleet.first_gap == pytest.approx(2.0)
    assert fleet.root_uncertain
    skewed = replace(report, sources=tuple(sources), failures=tuple(groups), fleet=fleet)
    for fmt in (OutputFormat.TEXT, OutputFormat.MARKDOWN, OutputFormat.SLACK):
        assert "clocks differ by up to 4.2 s, more than the 2.0 s between the first two failures" in text_of(skewed, fmt)
    assert json.loads(text_of(skewed, OutputFormat.JSON))["fleet"]["root_uncertain"] is True
    # Clocks within the gap: the root stands.
    close = [replace(s, clock=ClockOffset(offset=0.5 * i, uncertainty=0.1)) for i, s in enumerate(report.sources)]
    fleet, _ = build_fleet(close, report.failures, lambda group: is_cascade(group.failure))
    assert fleet is not None and not fleet.root_uncertain


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_slack_summarises_a_large_fleet_within_its_limit(tmp_path: Path) -> None:
    logs = {f"node{n:02d}": nccl_timeout("02:20:03", f"TP{n}") for n in range(1, 65) if n not in (3, 7, 9)}
    logs["node03"] = oom()
    logs["node07"] = noise(10, "2025-11-06 02:19:00")
    paths = write_hosts(tmp_path, logs)
    paths.append(str(tmp_path / "node09.log"))  # missing
    report = diagnose(paths)
    assert report.fleet is not None and len(report.fleet.members) == 64
    text = text_of(report, OutputFormat.SLACK, max_chars=3500)
    assert len(text) <= 3500
    assert "node03.log failed first" in text
    assert "61 hosts: cascade of node03.log" in text
    assert "1 host: unreadable" in text and "no such file" in text
    assert "1 host: no failure" in text


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("2025-11-06 02:10:01", 1762394401.0),
        ("2025-11-06 02:10:01.250", 1762394401.25),
        ("2025-11-06 02:10:01,250", 1762394401.25),
        ("2025-11-06T02:10:01Z", 1762394401.0),
        ("2025-11-06T03:10:01.5+01:00", 1762394401.5),
        ("2025-11-06T03:10:01.000000000+0100", 1762394401.0),
    ],
)
def test_dated_timestamps(text: str, seconds: float) -> None:
    time = event_time(text)
    assert time is not None and time.dated and time.seconds == pytest.approx(seconds)


def test_year_less_and_bad_timestamps() -> None:
    vllm, syslog = event_time("11-06 02:10:01"), event_time("Nov  6 02:10:03")
    assert vllm is not None and syslog is not None and not vllm.dated
    assert syslog.seconds - vllm.seconds == pytest.approx(2.0)
    assert event_time("2025-02-30 02:10:01") is None
    assert event_time("yesterday") is None and event_time(None) is None
