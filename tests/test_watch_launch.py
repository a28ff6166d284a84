"""`logsleuth watch` on realistic launches replayed into a real file with timing: stages then ready, a TP4 crash,
a stall, a crash after ready; what is printed in each format (JSON lines checked against the schema) and the exit
status.  The lines are written from SGLang's own format strings (0.5.9: model_runner.py, memory_pool.py,
cuda_graph_runner.py, weight_utils.py BAR_FORMAT, http_server.py, scheduler_metrics_mixin.py)."""

from __future__ import annotations

import io
import json
from importlib import resources
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from referencing import Registry, Resource

from logsleuth.api import DiagnoseOptions
from logsleuth.cli.watch_output import EXIT_TIMEOUT, Streams, run_watch
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.helpers import append_as_read, append_later, spawn
from tests.logs import crash_record, nccl_traceback, scheduler_traceback

SCHEMA = json.loads(resources.files("logsleuth").joinpath("watch_events.schema.json").read_text())
REPORT_SCHEMA = json.loads(resources.files("logsleuth").joinpath("report.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(
    SCHEMA, registry=Registry().with_resource("logsleuth.report/1", Resource.from_contents(REPORT_SCHEMA))
)


def _at(second: int) -> str:
    return f"2026-11-29 10:{second // 60:02d}:{second % 60:02d}"


def _record(second: int, rank: int | None, text: str) -> str:
    tag = f" TP{rank}" if rank is not None else ""
    return f"[{_at(second)}{tag}] {text}\n"


def launch_pieces(tp: int = 1, *, until: str = "ready") -> list[str]:
    """One SGLang launch, piece by piece as it is written: the stages of every rank (rank tags only when tp > 1,
    as SGLang prints them), the checkpoint shard bar (one line per reading: BAR_FORMAT ends in a newline), the
    CUDA graph bar (tqdm redraws with \\r, one newline at the end), uvicorn, ready.  `until`: the last stage key
    written."""
    ranks: list[int | None] = list(range(tp)) if tp > 1 else [None]
    stages: list[tuple[str, list[str]]] = [
        ("args", [_record(0, None, "server_args=ServerArgs(model_path='/models/llama-3-8b', host='127.0.0.1', "
                                   f"port=30000, tp_size={tp}, dp_size=1, pp_size=1, nnodes=1)")]),
        ("distributed", [_record(2, rank, "Init torch distributed begin.") for rank in ranks]),
        ("weights", [_record(4, rank, "Load weight begin. avail mem=78.84 GB") for rank in ranks]
         + [f"Loading safetensors checkpoint shards: {percent:3d}% Completed | {done}/4 [00:0{done}<00:0{4 - done}, "
            " 1.10it/s]\n" for done, percent in ((0, 0), (1, 25), (2, 50), (3, 75), (4, 100))]),
        ("weights-loaded", [_record(11, rank, "Load weight end. elapsed=7.12 s, type=LlamaForCausalLM, "
                                              "dtype=torch.bfloat16, avail mem=63.62 GB, mem usage=15.22 GB.")
                            for rank in ranks]),
        ("kv-cache", [_record(12, rank, "KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB")
                      for rank in ranks] + [_record(12, rank, "Memory pool end. avail mem=22.10 GB") for rank in ranks]),
        ("cuda-graph", [_record(13, ranks[0], "Capture cuda graph bs [1, 2, 4, 8]"),
                        *(f"\rCapturing batches (bs={bs} avail_mem={21.9 - n / 10:.2f} GB): {n * 25:3d}%|"
                          f"{'#' * n * 2:<10}| {n}/4 [00:0{n}<00:0{4 - n},  1.30it/s]" for n, bs in enumerate((8, 4, 2, 1))),
                        "\rCapturing batches (bs=1 avail_mem=21.50 GB): 100%|##########| 4/4 [00:03<00:00,  1.30it/s]\n"]),
        ("cuda-graph-done", [_record(17, ranks[0], "Capture cuda graph end. Time elapsed: 3.20 s. mem usage=0.40 GB. "
                                                   "avail mem=21.70 GB.")]),
        ("http", ["INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)\n"]),
        ("ready", [_record(20, None, "The server is fired up and ready to roll!")]),
    ]
    pieces: list[str] = []
    for key, lines in stages:
        pieces.extend(lines)
        if key == until:
            break
    return pieces


def decode_batch(second: int, queue: int, accept: float | None = None) -> str:
    spec = f"accept len: {accept:.2f}, accept rate: {accept / 4:.2f}, " if accept is not None else ""
    return _record(second, None, f"Decode batch, #running-req: 32, #token: 9000, token usage: 0.10, {spec}"
                                 f"cuda graph: True, gen throughput (token/s): 1500.00, #queue-req: {queue}")


def watch_cli(spec: str, fmt: OutputFormat = OutputFormat.TEXT, **settings: Any) -> tuple[int, str, str]:
    """run_watch as the CLI calls it, with captured streams: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    settings.setdefault("timeout", 30)
    code = run_watch([spec], DiagnoseOptions(), fmt=fmt, live=False, streams=Streams(out, err), **settings)
    return code, out.getvalue(), err.getvalue()


def json_events(stdout: str) -> list[dict[str, Any]]:
    events = [json.loads(line) for line in stdout.splitlines() if line.strip()]
    for event in events:
        VALIDATOR.validate(event)
    return events


def _empty_log(tmp_path: Path) -> Path:
    log = tmp_path / "server.log"
    log.write_text("")
    return log


# -- the four replays ---------------------------------------------------------------------------------------


def test_stages_then_ready_in_json(tmp_path: Path) -> None:
    log = _empty_log(tmp_path)
    writer = append_as_read(log, launch_pieces())  # each bar reading read on its own: each one is told
    code, stdout, stderr = watch_cli(str(log), OutputFormat.JSON)
    writer.join()
    assert code == 0, stderr
    events = json_events(stdout)
    assert [e["stage"] for e in events if e["event"] == "stage"] == [
        "args", "distributed", "weights", "weights-loaded", "kv-cache", "cuda-graph", "cuda-graph-done", "http"]
    bars = [(e["bar"], e["percent"]) for e in events if e["event"] == "progress"]
    assert ("checkpoint shards", 50) in bars and ("checkpoint shards", 100) in bars
    assert ("CUDA graph batches", 75) in bars
    ready = events[-1]
    assert ready["event"] == "ready" and ready["url"] == "http://127.0.0.1:30000"
    assert ready["memory"] == {"weights": "15.22 GB", "KV cache tokens": "400000", "KV cache": "40.00 GB",
                               "avail mem": "21.70 GB"}
    # Stage times are the log's: loading weights began at 10:00:04, the weights were loaded at 10:00:11.
    starts = {e["stage"]: e["at"] for e in events if e["event"] == "stage"}
    assert starts["weights-loaded"] - starts["weights"] == 7


def test_stages_then_ready_in_text(tmp_path: Path) -> None:
    log = _empty_log(tmp_path)
    writer = append_as_read(log, launch_pieces())  # each bar reading read on its own: each one is told
    code, stdout, stderr = watch_cli(str(log))
    writer.join()
    assert code == 0
    assert stdout == f"{log}: the server is ready\n"
    lines = stderr.splitlines()
    assert f"logsleuth: {log}: loading weights" in lines
    assert f"logsleuth: {log}: checkpoint shards: 50% (2/4)" in lines
    assert f"logsleuth: {log}: checkpoint shards: 75% (3/4)" in lines
    assert f"logsleuth: {log}: listening on http://127.0.0.1:30000" in lines


def test_stages_then_a_tp4_crash(tmp_path: Path) -> None:
    """All four ranks fail: the report comes once the fourth traceback is complete, and names the scheduler's
    assertion (the first failure), not the NCCL errors that followed it."""
    log = _empty_log(tmp_path)
    crash = [crash_record(_at(5), "TP0", scheduler_traceback())] + [
        crash_record(_at(6), f"TP{rank}", nccl_traceback()) for rank in (1, 2, 3)]
    writer = append_later(log, [*launch_pieces(4, until="weights"), *crash], 0.02)
    # A settle far beyond the watch's timeout: a failure reported at all (not a timeout) was reported without
    # settling, because every declared rank had failed.
    code, stdout, stderr = watch_cli(str(log), OutputFormat.JSON, settle=3600, timeout=120)
    writer.join()
    assert code == 1, stderr
    failure = json_events(stdout)[-1]
    assert failure["event"] == "failure"
    report = failure["report"]
    assert report["failures"][0]["exceptions"][-1]["type"] == "AssertionError"


def test_a_stall_prints_the_stage_its_last_lines_and_advice(tmp_path: Path) -> None:
    log = _empty_log(tmp_path)
    append_later(log, launch_pieces(until="weights")[:3], 0.01).join()  # args, distributed, load weight begin
    code, stdout, stderr = watch_cli(str(log), stall=0.5)
    assert code == EXIT_TIMEOUT, stderr
    assert stdout.startswith(f"{log}: stalled: no new stage or progress for 0.5 s while loading weights.")
    assert "downloads the model" in stdout  # the weights stage's advice, from the stage table
    assert "    Load weight begin. avail mem=78.84 GB" in stdout.splitlines()

    code, stdout, _ = watch_cli(str(log), OutputFormat.JSON, stall=0.5)
    stall = json_events(stdout)[-1]
    assert code == EXIT_TIMEOUT and stall["event"] == "stall" and stall["stage"] == "weights"
    assert stall["lines"][-1] == "Load weight begin. avail mem=78.84 GB"


def test_a_progress_bar_that_moves_is_not_a_stall(tmp_path: Path) -> None:
    log = _empty_log(tmp_path)
    log.write_text("".join(launch_pieces(until="kv-cache")) + _record(13, None, "Capture cuda graph bs [1, 2]"))
    bar = [f"\rCapturing batches (bs=1 avail_mem=21.50 GB): {n:3d}%|#| {n}/100 [00:01<00:01,  1.30it/s]"
           for n in range(1, 8)]
    writer = append_later(log, bar, 0.25)
    code, stdout, _ = watch_cli(str(log), OutputFormat.JSON, stall=0.8, timeout=1.6)
    writer.join()
    events = json_events(stdout)
    assert code == EXIT_TIMEOUT and events[-1]["event"] == "timeout"  # the stall never fired: the bar moved


def test_a_crash_after_ready_with_then_follow(tmp_path: Path) -> None:
    log = _empty_log(tmp_path)
    after = [decode_batch(30 + n, 0) for n in range(3)] + [crash_record(_at(40), "", scheduler_traceback())]
    writer = append_later(log, [*launch_pieces(), *after], 0.01)
    code, stdout, stderr = watch_cli(str(log), OutputFormat.JSON, then_follow=True)
    writer.join()
    assert code == 1, stderr
    kinds = [e["event"] for e in json_events(stdout)]
    assert kinds[-2:] == ["ready", "failure"]


def test_then_follow_warns_once_for_each_health_signal(tmp_path: Path) -> None:
    # The thresholds are the bundled health patterns' (patterns/sglang/health-*.toml): 5 retractions within
    # 2 minutes, accept len <= 1.2 over 20 decode batches, #queue-req climbing by 100 over 60 batches.
    log = _empty_log(tmp_path)
    full = [_record(30 + n, None, "KV cache pool is full. Retract requests. #retracted_reqs: 2, "
                                  "#new_tokens_gained: 512") for n in range(6)]
    low_accept = [decode_batch(40 + n, 0, accept=1.03) for n in range(25)]
    queue = [decode_batch(70 + n, 10 * n) for n in range(40)]
    crash = [crash_record(_at(99), "", scheduler_traceback())]
    writer = append_later(log, [*launch_pieces(), "".join(full), "".join(low_accept), "".join(queue), *crash], 0.01)
    code, _, stderr = watch_cli(str(log), then_follow=True)
    writer.join()
    warnings = [line for line in stderr.splitlines() if ": warning: " in line]
    assert code == 1
    assert len(warnings) == 3, warnings
    assert "requests are retracted: 5 such lines, 5 within 120 s" in warnings[0]
    assert "accept len ≤ 1.2 in 20 decode batches in a row" in warnings[1]
    # The climb counts from the 25 batches at 0 before it: 60 batches in all, the 35th of the climb at 340.
    assert "#queue-req grew from 0 to 340 over 60 batches without draining" in warnings[2]


# -- exit statuses and outputs ------------------------------------------------------------------------------


@pytest.mark.parametrize("fmt", list(OutputFormat))  # every report format
def test_timeout_exits_124(tmp_path: Path, fmt: OutputFormat) -> None:
    log = _empty_log(tmp_path)
    log.write_text(launch_pieces(until="args")[0])
    code, stdout, stderr = watch_cli(str(log), fmt, timeout=0.5)
    assert code == EXIT_TIMEOUT
    assert stderr.splitlines()[-1] == f"logsleuth: {log}: not ready after 0.5 s (last stage: arguments parsed)"
    if fmt is OutputFormat.JSON:
        assert [e["event"] for e in json_events(stdout)] == ["stage", "timeout"]
    else:
        assert stdout == ""


@pytest.mark.parametrize("fmt", list(OutputFormat))  # every report format
def test_an_unreadable_source_exits_3(tmp_path: Path, fmt: OutputFormat) -> None:
    code, stdout, stderr = watch_cli(str(tmp_path), fmt)  # a directory
    assert code == 3
    assert stderr == f"logsleuth: {tmp_path}: is a directory\n"
    if fmt is OutputFormat.JSON:
        assert json_events(stdout) == [
            {"schema": "logsleuth.watch/1", "event": "error", "source": str(tmp_path), "elapsed": pytest.approx(0, abs=5),
             "message": f"{tmp_path}: is a directory"}]


@pytest.mark.parametrize("fmt", list(OutputFormat))  # every report format
def test_a_crash_exits_1_with_the_diagnosis(tmp_path: Path, fmt: OutputFormat) -> None:
    log = _empty_log(tmp_path)
    writer = append_later(log, [*launch_pieces(until="weights"), crash_record(_at(5), "", scheduler_traceback())], 0.01)
    code, stdout, _ = watch_cli(str(log), fmt)
    writer.join()
    assert code == 1
    if fmt is OutputFormat.JSON:
        assert json_events(stdout)[-1]["report"]["status"] == "failure"
    else:
        assert "AssertionError: tp must divide dp" in stdout


def test_json_on_ready_is_json(tmp_path: Path) -> None:
    """Before: `--format json` printed "the server is ready" as plain text."""
    log = _empty_log(tmp_path)
    log.write_text("".join(launch_pieces()))
    code, stdout, _ = watch_cli(str(log), OutputFormat.JSON)
    assert code == 0
    assert all(line.startswith("{") for line in stdout.splitlines())
    assert json_events(stdout)[-1]["event"] == "ready"


def test_reconnect_notices_become_events(tmp_path: Path) -> None:
    """The SSH follower reports a dropped connection through SSHOptions.notice; run_watch hands every source
    its own notice.  Here a local follower calls it, as the SSH one does (the real drops are in tests/ssh)."""
    from logsleuth.cli.watch_output import _Printer

    out = io.StringIO()
    printer = _Printer(Streams(out, io.StringIO()), RenderOptions(format=OutputFormat.JSON), redact=True)
    printer.notice("gpu7:/x.log", "gpu7: connection lost; reconnecting (attempt 2)…")
    printer.notice("gpu7:/x.log", "Permanently added 'gpu7' (ED25519) to the list of known hosts")
    events = json_events(out.getvalue())
    assert [(e["event"], e.get("attempt")) for e in events] == [("reconnect", 2), ("notice", None)]


def test_usage_errors() -> None:
    from logsleuth.errors import UsageError

    with pytest.raises(UsageError, match="--stall: must be more than 0 seconds"):
        watch_cli("x.log", stall=0)
    with pytest.raises(UsageError, match="watch one log, not 2"):
        run_watch(["a.log", "b.log"], DiagnoseOptions(), fmt=OutputFormat.TEXT, then_follow=True)


def test_ctrl_c_ends_the_json_events_with_interrupted(tmp_path: Path) -> None:
    """A real SIGINT to a process watching a launch that never finishes: the JSON reader is told, and the
    exception reaches the entry point (which exits 130)."""
    import signal
    import subprocess
    import sys

    log = _empty_log(tmp_path)
    log.write_text(launch_pieces(until="args")[0])
    script = (
        "import sys\n"
        "from logsleuth.api import DiagnoseOptions\n"
        "from logsleuth.render.options import OutputFormat\n"
        "from logsleuth.cli.watch_output import run_watch\n"
        "try:\n"
        f"    run_watch([{str(log)!r}], DiagnoseOptions(), fmt=OutputFormat.JSON, timeout=60)\n"
        "except KeyboardInterrupt:\n"
        "    sys.exit(130)\n"
    )
    proc = spawn([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = json.loads(proc.stdout.readline())  # the backlog's stage: the watch is running
    proc.send_signal(signal.SIGINT)
    rest, stderr = proc.communicate(timeout=30)
    assert proc.returncode == 130, stderr
    assert first["event"] == "stage"
    assert [event["event"] for event in json_events(rest)] == ["interrupted"]


def test_several_logs_are_watched_as_a_fleet(tmp_path: Path) -> None:
    logs = [tmp_path / "node1.log", tmp_path / "node2.log"]
    for log in logs:
        log.write_text("".join(launch_pieces()))
    out = io.StringIO()
    code = run_watch([str(log) for log in logs], DiagnoseOptions(), fmt=OutputFormat.JSON, timeout=30, live=False,
                     streams=Streams(out, io.StringIO()))
    events = json_events(out.getvalue())
    assert code == 0
    assert {e["source"] for e in events if e["event"] == "stage"} == {str(log) for log in logs}
    assert events[-1]["event"] == "ready" and events[-1]["source"] == ""
