"""The case file is never worse than the paste (issue 28, item 6): it carries the log's own lines, redacted.

An assistant given the case file did worse (62 %) than given the raw paste (80 %): where logsleuth found no
failure the case held almost nothing, and where it cut the log the assistant lost its context.  These tests hold
the case to: a small paste whole; else the failure region, every error-looking line (once, with its count) and
the log's last lines, also without a failure; logsleuth's own reading added, and dropped first to fit.

Tracebacks are real CPython ones (tests.helpers.real_traceback) in SGLang's record format.  The error wordings
are the engines' and libraries' own, written here as our text: torch c10d's client socket timeout
(torch/csrc/distributed/c10d/socket.cpp), vLLM's `Error in inspecting model architecture` (vllm/model_executor/
models/registry.py), uvicorn's bind error (uvicorn/server.py).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.case import CASE_LIMIT, build_case, case_json_text, case_markdown
from logsleuth.case.errors import is_error_looking
from logsleuth.case.window import TAIL_LINES, WHOLE_BYTES
from logsleuth.models import Report
from tests.helpers import real_traceback
from tests.logs import crash_record, noise

REPO = Path(__file__).resolve().parents[2]
EAGLE_INCIDENT = REPO / "examples" / "eagle3-incident.log"

C10D_TIMEOUT = (
    "[E1016 03:31:38.919469923 socket.cpp:1011] [c10d] The client socket has timed out after 600000ms while "
    "trying to connect to (10.0.0.7, 29500)."
)
READY = "[2026-11-29 10:05:00] The server is fired up and ready to roll!"
ARCH_ERROR = "(EngineCore pid=88) ERROR 11-29 10:00:03 [registry.py:412] Error in inspecting model architecture 'X'"


def _diagnose(path: Path) -> Report:
    return diagnose([str(path)], DiagnoseOptions(include_user_patterns=False))


def _oom_traceback() -> str:
    return real_traceback(
        """
        def capture():
            raise RuntimeError("CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB")
        def init():
            capture()
        init()
        """,
        "site-packages/sglang/srt/model_executor/cuda_graph_runner.py",
    )


def _long_log(path: Path, after: int = 60) -> Path:
    """A log bigger than WHOLE_BYTES: a launch, an error the server survived early on (twice), hours of decode
    lines, the crash, then what followed it."""
    parts = [
        "+ python -m sglang.launch_server --model-path /models/llama --tp-size 2\n",
        C10D_TIMEOUT + "\n",
        C10D_TIMEOUT + "\n",
        noise(2500),
        "[2026-11-29 10:00:00 TP0] WARNING: early warning that is no error\n",
        noise(300, start=2500),
        crash_record("2026-11-29 10:00:01", "TP0", _oom_traceback()),
        crash_record("2026-11-29 10:00:01", "TP1", _oom_traceback()),
    ]
    parts += [f"[2026-11-29 10:00:02] follow-up line {index}\n" for index in range(after)]
    path.write_text("".join(parts), encoding="utf-8")
    assert path.stat().st_size > WHOLE_BYTES
    return path


def _non_blank(path: Path) -> list[str]:
    return [line.rstrip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


# -- what the case carries ------------------------------------------------------------------------------------


def test_a_small_paste_is_in_the_case_whole() -> None:
    report = _diagnose(EAGLE_INCIDENT)
    markdown = case_markdown(report)
    lines = [line.rstrip() for line in EAGLE_INCIDENT.read_text(encoding="utf-8").splitlines()]
    assert build_case(report).paste == tuple(lines)
    block = "\n".join(lines)
    assert block in markdown, "the paste, verbatim and in order"
    assert len(markdown) <= CASE_LIMIT


def test_a_no_failure_paste_carries_its_last_lines_and_error_looking_lines(tmp_path: Path) -> None:
    log = tmp_path / "healthy.log"
    log.write_text(C10D_TIMEOUT + "\n" + noise(3000) + READY + "\n" + noise(80, start=3000), encoding="utf-8")
    assert log.stat().st_size > WHOLE_BYTES  # not shown whole: its sections
    report = _diagnose(log)
    assert report.primary is None
    case = build_case(report)
    assert case.tail == tuple(_non_blank(log)[-TAIL_LINES:])
    assert [line.text for line in case.error_lines] == [C10D_TIMEOUT]
    markdown = case_markdown(report)
    assert "no failure found in the log" in markdown
    assert C10D_TIMEOUT in markdown and READY not in markdown.split("#### The last")[0]
    assert _non_blank(log)[-1] in markdown


def test_a_small_no_failure_paste_is_whole(tmp_path: Path) -> None:
    log = tmp_path / "healthy.log"
    log.write_text(C10D_TIMEOUT + "\n" + noise(20) + READY + "\n", encoding="utf-8")
    markdown = case_markdown(_diagnose(log))
    assert log.read_text(encoding="utf-8").rstrip("\n") in markdown


def test_a_long_log_carries_the_failure_region_every_error_line_and_its_tail(tmp_path: Path) -> None:
    log = _long_log(tmp_path / "server.log")
    report = _diagnose(log)
    assert report.primary is not None
    case = build_case(report)
    assert not case.paste
    # the failure region: the whole traceback as the log printed it, with the lines before it
    region = "\n".join(case.failure_lines)
    assert "Scheduler hit an exception: Traceback (most recent call last):" in region
    assert "RuntimeError: CUDA out of memory. Tried to allocate 2.00 GiB." in region
    assert 'cuda_graph_runner.py", line' in region
    assert len(case.lines_before) == 10
    # every error-looking line, once, with how often, in order (the early one the server survived included)
    texts = [line.text for line in case.error_lines]
    assert texts[0] == C10D_TIMEOUT and case.error_lines[0].count == 2
    oom = next(line for line in case.error_lines if line.text.startswith("RuntimeError: CUDA out of memory"))
    assert oom.count == 2
    assert all(is_error_looking(text) for text in texts)
    assert not any("raise RuntimeError" in text for text in texts), "a frame's source line is code, not an error"
    # the log's last lines
    assert case.tail == tuple(_non_blank(log)[-TAIL_LINES:])
    markdown = case_markdown(report)
    assert C10D_TIMEOUT + "  [×2]" in markdown
    assert "follow-up line 59" in markdown


def test_error_looking_lines_are_the_words_and_the_grammars_shapes() -> None:
    looking = [
        ARCH_ERROR,
        C10D_TIMEOUT,
        "F1006 09:50:58.620735 13380 common.cc:34] Check failed: status == cudaSuccess",
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG ID 0 PG GUID 0 Rank 1] Process group watchdog thread terminated with exception",
        "thread 'tokio-runtime-worker' panicked at src/router.rs:12:5:",
        "vllm: error: unrecognized arguments: --foo",
        "Killed",
        "Segmentation fault (core dumped)",
        "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): address already in use",
        "torch.OutOfMemoryError: CUDA out of memory.",
        "[2026-11-29 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):",
    ]
    quiet = [
        "[2026-11-29 10:00:00 TP0] Decode batch. #running-req: 3, #token: 7, token usage: 0.01",
        "INFO 11-29 10:00:00 [api_server.py:1] Starting vLLM API server on http://0.0.0.0:8000",
        "[2026-11-29 10:00:00] server_args=ServerArgs(model_path='/m', disable_custom_all_reduce=False)",
    ]
    assert [line for line in looking if not is_error_looking(line)] == []
    assert [line for line in quiet if is_error_looking(line)] == []


# -- the budget and what goes first -----------------------------------------------------------------------


def test_logsleuths_own_text_goes_before_any_line_of_the_log(tmp_path: Path) -> None:
    log = _long_log(tmp_path / "server.log", after=400)
    report = _diagnose(log)
    full = build_case(report, limit=10**9)
    assert full.diagnosis is not None and full.parsed_shown and full.flags  # logsleuth's reading is there
    # a limit that logsleuth's text alone can make room for: the log's lines all stay
    logs_own = len(case_markdown(report, limit=10**9)) - 1
    case = build_case(report, limit=logs_own)
    assert case.left_out
    assert (case.failure_lines, case.error_lines, case.tail, case.lines_before) == (
        full.failure_lines, full.error_lines, full.tail, full.lines_before)
    # a limit that cuts the log's lines too: by then logsleuth's reading is all gone, and the notes say so in order
    small = build_case(report, limit=CASE_LIMIT // 4)
    assert len(case_markdown(report, limit=CASE_LIMIT // 4)) <= CASE_LIMIT // 4
    assert small.diagnosis is None and not small.flags and not small.cascade and not small.parsed_shown
    notes = list(small.left_out)
    logsleuth_notes = [i for i, note in enumerate(notes) if "logsleuth" in note or "flag" in note]
    log_notes = [i for i, note in enumerate(notes) if "log's last lines" in note or "failure as the log printed" in note]
    assert log_notes and max(logsleuth_notes) < min(log_notes)
    # the exception itself is never cut: the region keeps its end
    assert small.failure_lines[-1] == full.failure_lines[-1]


@pytest.mark.parametrize("limit", [4000, 8000, CASE_LIMIT])
def test_the_budget_holds_with_many_distinct_error_lines_and_long_lines(limit: int, tmp_path: Path) -> None:
    log = tmp_path / "storm.log"
    errors = [f"[2026-11-29 10:00:00 TP{i % 8}] ERROR request {i} failed: " + "x" * (i % 700) + "\n" for i in range(600)]
    log.write_text(noise(100) + "".join(errors) + crash_record("2026-11-29 10:00:01", "TP0", _oom_traceback()),
                   encoding="utf-8")
    report = _diagnose(log)
    markdown = case_markdown(report, limit=limit)
    json_text = case_json_text(report, limit=limit)
    assert len(markdown) <= limit and len(json_text) <= limit
    assert "CUDA out of memory" in markdown
    assert re.search(r"\[\.\.\. \d+ distinct error-looking lines left out here to fit \.\.\.\]", markdown)
    assert json.loads(json_text)["error_lines_left_out"] > 0


def test_a_no_failure_paste_on_stdin_carries_its_lines(tmp_path: Path) -> None:
    """`cat log | logsleuth case`: stdin is spooled and read again, also when no failure was found."""
    from tests.helpers import run_cli

    text = C10D_TIMEOUT + "\n" + noise(3000) + READY + "\n" + noise(80, start=3000)
    result = run_cli("case", stdin=text.encode())
    assert result.exit_code == 0, result.stderr
    assert "no failure found in the log" in result.stdout
    assert C10D_TIMEOUT in result.stdout
    assert text.splitlines()[-1] in result.stdout


def test_a_paste_just_under_the_limit_is_whole(tmp_path: Path) -> None:
    """What logsleuth adds (its reading, the launch command apart) gives way to a paste that fills the limit but
    for the case's header (the headline, the engine, where: under 1,000 characters)."""
    log = tmp_path / "server.log"
    crash = crash_record("2026-11-29 10:00:01", "TP0", _oom_traceback())
    head = "+ python -m sglang.launch_server --model-path /models/llama --tp-size 2 --mem-fraction-static 0.9\n"
    room = CASE_LIMIT - 900 - len(head) - len(crash)
    log.write_text(head + noise(200)[:room].rsplit("\n", 1)[0] + "\n" + crash, encoding="utf-8")
    report = _diagnose(log)
    case = build_case(report)
    assert case.paste, case.left_out
    assert log.read_text(encoding="utf-8").rstrip("\n") in case_markdown(report)
    assert len(case_markdown(report)) <= CASE_LIMIT


def test_a_traceback_logged_as_error_records_lists_its_header_and_exception_only() -> None:
    """vLLM logs every line of a traceback as an ERROR record (vllm/v1/engine/core.py run_engine_core): its frames,
    source lines and carets belong to the failure region, not to the list of error lines."""
    from logsleuth.case.errors import error_lines

    header = "(EngineCore_DP0 pid=7) ERROR 11-29 10:00:03 [core.py:708] "
    traceback = real_traceback(
        """
        def build(config):
            return config["tensor_parallel_size"] // config["heads"]
        build({"tensor_parallel_size": 8})
        """,
        "site-packages/vllm/v1/engine/core.py",
    )
    lines = [header + "EngineCore failed to start.", *(header + line for line in traceback.splitlines())]
    listed = [lines[index][len(header):] for index, _ in error_lines(lines)]
    assert listed == ["EngineCore failed to start.", "Traceback (most recent call last):", "KeyError: 'heads'"]
