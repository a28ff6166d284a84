"""`logsleuth watch`: follows a real file while a writer appends to it."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from pathlib import Path

from logsleuth.api import DiagnoseOptions
from logsleuth.sources.local import LocalFileSource
from logsleuth.watch import follow_local, watch
from tests.helpers import append_later
from tests.logs import crash_record, launch_line, scheduler_traceback

STAGE_LINES = [
    "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', tp_size=1)",
    "[2026-11-29 10:00:01] Init torch distributed begin.",
    "[2026-11-29 10:00:02] Load weight begin. avail mem=78.84 GB",
    "[2026-11-29 10:00:09] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.1 GB",
    "[2026-11-29 10:00:10] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB",
    "[2026-11-29 10:00:11] Capture cuda graph begin. This can take up to several minutes. avail mem=10.1 GB",
    "[2026-11-29 10:00:20] Capture cuda graph end. Time elapsed: 9.00 s.",
    "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-11-29 10:00:22] The server is fired up and ready to roll!",
]


def test_stages_then_ready(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    writer = append_later(log, [line + "\n" for line in STAGE_LINES], 0.02)
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=20))
    writer.join()
    assert [e.stage.key for e in events if e.stage] == [
        "args", "distributed", "weights", "weights-loaded", "kv-cache", "cuda-graph", "cuda-graph-done", "http", "ready",
    ]
    assert events[-1].kind == "ready"


def test_crash_is_diagnosed_within_a_moment(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(launch_line())
    pieces = [line + "\n" for line in STAGE_LINES[:3]] + [crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback())]
    writer = append_later(log, pieces, 0.02)
    started = time.monotonic()
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=20))
    writer.join()
    elapsed = time.monotonic() - started
    assert events[-1].kind == "failure"
    report = events[-1].report
    assert report is not None and report.failures[0].failure.final.type == "AssertionError"
    assert [e.stage.key for e in events if e.stage] == ["args", "distributed", "weights"]
    assert elapsed < 5


def test_rotation_is_followed(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("[2026-11-29 09:00:00] old launch\n" * 10)

    def rotate() -> None:
        time.sleep(0.2)
        log.rename(tmp_path / "server.log.1")
        log.write_text("\n".join(STAGE_LINES) + "\n")

    thread = threading.Thread(target=rotate, daemon=True)
    thread.start()
    events = list(watch(LocalFileSource(str(log)), follow_local(str(log), poll=0.01), DiagnoseOptions(), timeout=20))
    thread.join()
    assert events[0].kind == "restarted"
    assert events[-1].kind == "ready"


def test_cli_watch_exit_codes(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text("")
    writer = append_later(log, [line + "\n" for line in STAGE_LINES], 0.05)
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", str(log), "--timeout", "60"], capture_output=True, text=True, timeout=90
    )
    writer.join()
    assert proc.returncode == 0, proc.stderr
    assert "loading weights" in proc.stderr
    assert proc.stdout.strip().endswith("the server is ready")

    crashed = tmp_path / "crashed.log"
    crashed.write_text(launch_line())
    writer = append_later(crashed, [crash_record("2026-11-29 10:00:03", "TP0", scheduler_traceback())], 0.3)
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", str(crashed), "--format", "json", "--timeout", "60"],
        capture_output=True, text=True, timeout=90,
    )
    writer.join()
    assert proc.returncode == 1, proc.stderr
    assert '"AssertionError"' in proc.stdout


def test_cli_watch_timeout_exit_3(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    log.write_text(STAGE_LINES[0] + "\n")
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "watch", str(log), "--timeout", "1"], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 3
    assert proc.stderr.strip().splitlines()[-1].startswith(f"logsleuth: {log}: not ready after 1 s")
