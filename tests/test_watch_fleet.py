"""`logsleuth watch` over several logs at once (watch/fleet.py): real files, written while they are watched."""

from __future__ import annotations

import time
from pathlib import Path

from logsleuth.api import DiagnoseOptions
from logsleuth.watch.fleet import FleetEvent, watch_fleet
from tests.helpers import append_later
from tests.logs import crash_record, launch_line, nccl_traceback, scheduler_traceback
from tests.test_watch import STAGE_LINES


def _fleet(tmp_path: Path, count: int) -> list[Path]:
    logs = [tmp_path / f"node{number:02d}.log" for number in range(1, count + 1)]
    for log in logs:
        log.write_text(launch_line())
    return logs


def _watch(logs: list[Path], **kwargs: float) -> list[FleetEvent]:
    return list(watch_fleet([str(log) for log in logs], DiagnoseOptions(), timeout=30, **kwargs))


def test_the_fleet_is_ready_when_every_log_is(tmp_path: Path) -> None:
    logs = _fleet(tmp_path, 3)
    writers = [append_later(log, [line + "\n" for line in STAGE_LINES], 0.01 * (n + 1)) for n, log in enumerate(logs)]
    events = _watch(logs)
    for writer in writers:
        writer.join()
    assert events[-1].kind == "ready"
    ready_logs = {e.source for e in events if e.kind == "stage" and e.text and "ready" in e.text.lower()}
    assert ready_logs == {str(log) for log in logs}


def test_one_log_not_ready_keeps_the_fleet_waiting_until_the_timeout(tmp_path: Path) -> None:
    logs = _fleet(tmp_path, 2)
    logs[0].write_text("\n".join(STAGE_LINES) + "\n")
    started = time.monotonic()
    events = list(watch_fleet([str(log) for log in logs], DiagnoseOptions(), timeout=1))
    assert time.monotonic() - started < 60  # ends at its 1 s timeout: a bound only a hang fails
    assert [e.kind for e in events if e.source is None] == ["timeout"]
    errors = [e for e in events if e.kind == "error"]
    assert [e.source for e in errors] == [str(logs[1])] and "not ready after 1 s" in (errors[0].text or "")


def test_first_failure_and_its_cascade_make_one_report(tmp_path: Path) -> None:
    logs = _fleet(tmp_path, 3)
    append_later(logs[0], [crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback())], 0.05).join()
    cascades = [append_later(log, [crash_record("2026-11-29 10:00:09", "TP1", nccl_traceback())], 0.3) for log in logs[1:]]
    events = _watch(logs, settle=1.5)
    for writer in cascades:
        writer.join()
    outcome = events[-1]
    assert outcome.kind == "failure" and outcome.report is not None
    report = outcome.report
    assert {source.name for source in report.sources} == {str(log) for log in logs}
    assert report.failures[0].failure.final.type == "AssertionError"  # the earliest failure is the primary
    nccl = [group for group in report.failures if group.failure.final.type != "AssertionError"]
    assert nccl and set(nccl[0].sources) == {str(log) for log in logs[1:]}


def test_an_unreadable_log_is_shown_and_never_ready(tmp_path: Path) -> None:
    logs = _fleet(tmp_path, 1)
    logs[0].write_text("\n".join(STAGE_LINES) + "\n")
    directory = tmp_path / "a-directory"  # a missing log is waited for; a directory is no log at all
    directory.mkdir()
    events = list(watch_fleet([str(logs[0]), str(directory)], DiagnoseOptions(), timeout=5))
    assert any(e.kind == "error" and e.source == str(directory) for e in events)
    assert events[-1].kind == "unreadable"
