"""A fleet `watch` on a terminal is one row per host, updated in place (issue 30, finding 7): four hosts and nine
stages were 36 prefixed lines.  Without a terminal it stays one line per host per change (what a log file or a
CI job wants)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console

from logsleuth.api import DiagnoseOptions
from logsleuth.cli.watch_output import Streams, run_watch
from logsleuth.render.options import OutputFormat
from tests.test_watch_launch import launch_pieces

STAGE_LABELS = ("arguments parsed", "initialising torch distributed", "loading weights", "weights loaded",
                "KV cache allocated", "capturing CUDA graphs", "CUDA graphs captured", "HTTP server starting", "ready")


def _fleet(tmp_path: Path, count: int = 4) -> list[str]:
    logs = []
    for number in range(1, count + 1):
        log = tmp_path / f"node{number:02d}.log"
        log.write_text("".join(launch_pieces()))
        logs.append(str(log))
    return logs


def _watch(logs: list[str], live: bool) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = run_watch(logs, DiagnoseOptions(), fmt=OutputFormat.TEXT, timeout=30, live=live, streams=Streams(out, err))
    return code, out.getvalue(), err.getvalue()


def test_a_fleet_on_a_terminal_is_one_row_per_host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")  # the view's width (rich): each temporary path whole on its row
    logs = _fleet(tmp_path)
    code, out, err = _watch(logs, live=True)
    assert code == 0, err
    rows = [line for line in err.splitlines() if any(log in line for log in logs)]
    assert len(rows) == len(logs), err  # each host once, in place: not a line per stage
    assert all(sum(log in row for log in logs) == 1 and "ready" in row for row in rows), err
    assert out.strip().endswith("all 4 servers are ready")


def test_without_a_terminal_a_fleet_is_one_line_per_host_per_change(tmp_path: Path) -> None:
    logs = _fleet(tmp_path)
    code, _, err = _watch(logs, live=False)
    assert code == 0, err
    for log in logs:
        assert [line for line in err.splitlines() if f"logsleuth: {log}: " in line] == [
            f"logsleuth: {log}: {label}" for label in STAGE_LABELS
        ]


def test_the_view_keeps_each_hosts_latest_stage_and_error() -> None:
    from logsleuth.render.fleet_view import FleetView

    view = FleetView(["node01:/x.log", "node02:/x.log"])
    view.apply("node01:/x.log", "stage", "loading weights")
    view.apply("node02:/x.log", "stage", "arguments parsed")
    view.apply("node01:/x.log", "stage", "KV cache allocated")
    view.apply("node02:/x.log", "error", "node02:/x.log: connection refused by 10.0.0.2 port 22\x1b[2J")
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(view)
    lines = console.file.getvalue().splitlines()  # type: ignore[attr-defined]
    (first,) = [line for line in lines if "node01" in line]
    (second,) = [line for line in lines if "node02" in line]
    assert "KV cache allocated" in first and "loading weights" not in first
    assert "connection refused" in second and "\x1b" not in second
