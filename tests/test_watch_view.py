"""The launch view (render/launch_view.py): what a terminal shows while a launch is watched, and what stays."""

from __future__ import annotations

import io
from pathlib import Path

from rich.console import Console

from logsleuth.api import DiagnoseOptions
from logsleuth.cli.watch_output import Streams, run_watch
from logsleuth.ingest.stages import STAGES
from logsleuth.models import ProgressReading
from logsleuth.render.launch_view import LaunchView
from logsleuth.render.options import OutputFormat
from logsleuth.watch.follow import WatchEvent
from tests.helpers import append_later
from tests.test_watch_launch import launch_pieces

STAGE = {stage.key: stage for stage in STAGES}


def _draw(view: LaunchView) -> str:
    console = Console(file=io.StringIO(), width=100, color_system=None)
    console.print(view)
    return console.file.getvalue()  # type: ignore[attr-defined]


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_done_stages_have_durations_and_the_current_one_its_elapsed_time() -> None:
    clock = Clock()
    view = LaunchView("gpu7:/log", clock=clock)
    memory = (("weights", "15.22 GB"), ("KV cache tokens", "400000"), ("KV cache", "40.00 GB"), ("avail mem", "21.70 GB"))
    view.apply(WatchEvent("stage", stage=STAGE["args"], at=1000.0))
    view.apply(WatchEvent("stage", stage=STAGE["weights"], at=1004.0))
    view.apply(WatchEvent("stage", stage=STAGE["cuda-graph"], at=1016.5, memory=memory))
    view.apply(WatchEvent("progress", progress=ProgressReading("CUDA graph batches", 45, 10, 23, "bs=160 avail_mem=10.50 GB")))
    view.apply(WatchEvent("line", text="Capturing batches (bs=160 avail_mem=10.50 GB):  45%|\x1b[31mred"))
    clock.now += 3.2
    lines = [line.rstrip() for line in _draw(view).splitlines()]
    assert lines[0].split() == ["✓", "arguments", "parsed", "4.0", "s"]
    assert lines[1].split() == ["✓", "loading", "weights", "12.5", "s"]
    assert lines[2].split()[1:] == ["capturing", "CUDA", "graphs", "3.2", "s"]  # [0] is the spinner
    assert "CUDA graph batches" in lines[3] and " 45%  10/23" in lines[3] and "bs=160 avail_mem=10.50 GB" in lines[3]
    assert lines[4].strip() == "weights 15.22 GB · KV cache 40.00 GB (400000 tokens) · avail mem 21.70 GB"
    assert lines[5].strip() == "Capturing batches (bs=160 avail_mem=10.50 GB):  45%|red"  # escape sequence removed


def test_on_ready_the_view_stays_with_the_total_and_the_url(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    writer = append_later(log, launch_pieces(), 0.01)
    err = io.StringIO()
    code = run_watch([str(log)], DiagnoseOptions(), fmt=OutputFormat.TEXT, timeout=30, live=True,
                     streams=Streams(io.StringIO(), err))
    writer.join()
    assert code == 0
    final = err.getvalue()
    assert "✓ HTTP server starting" in final
    assert "ready in 20.0 s · http://127.0.0.1:30000" in final  # 10:00:00 to 10:00:20 on the log's clock
    assert "logsleuth:" not in final  # no event lines under the view


def test_on_a_crash_the_view_marks_the_stage_and_the_diagnosis_follows(tmp_path: Path) -> None:
    from tests.logs import crash_record, scheduler_traceback

    log = tmp_path / "server.log"
    log.write_text("")
    crash = crash_record("2026-11-29 10:00:05", "", scheduler_traceback())
    writer = append_later(log, [*launch_pieces(until="weights"), crash], 0.01)
    out, err = io.StringIO(), io.StringIO()
    code = run_watch([str(log)], DiagnoseOptions(), fmt=OutputFormat.TEXT, timeout=30, live=True,
                     streams=Streams(out, err))
    writer.join()
    assert code == 1
    assert "✗ loading weights" in err.getvalue()
    assert "AssertionError: tp must divide dp" in out.getvalue()
