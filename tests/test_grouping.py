"""Grouping identical failures and choosing the root failure over its cascade."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.grouping import is_in_app
from tests.logs import crash_record, launch_line, nccl_traceback, noise, scheduler_traceback


def test_same_traceback_on_eight_ranks_is_one_group() -> None:
    records = "".join(crash_record("2026-11-29 10:00:00", f"DP0 TP{rank}", scheduler_traceback()) for rank in range(8))
    report = diagnose_text(launch_line() + noise(5) + records)
    (group,) = report.failures
    assert group.count == 8
    assert group.ranks == tuple(f"DP0 TP{rank}" for rank in range(8))
    assert group.failure.final.type == "AssertionError"


def test_cause_beats_cascade_even_when_printed_later() -> None:
    cascade = "".join(crash_record("2026-11-29 10:00:00", f"TP{rank}", nccl_traceback()) for rank in range(1, 8))
    root = crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    report = diagnose_text(launch_line() + cascade + root)
    assert [g.failure.final.type for g in report.failures] == ["AssertionError", "DistBackendError"]
    assert report.failures[1].count == 7


def test_kill_notices_attach_to_the_failure_they_follow() -> None:
    root = crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    kill = "[2026-11-29 10:00:01] Received sigquit from a child process. It usually means the child failed.\nKilled\n"
    report = diagnose_text(launch_line() + root + kill)
    (group,) = report.failures
    assert group.failure.final.type == "AssertionError"
    assert group.cascade[0].startswith("Received sigquit from a child process")


def test_kill_notice_alone_is_process_killed() -> None:
    report = diagnose_text(launch_line() + noise(10) + "Killed\n")
    (group,) = report.failures
    assert group.failure.kind == "killed"
    assert group.diagnosis is not None and group.diagnosis.category == "process-killed"


def test_kill_process_tree_alone_is_not_a_failure() -> None:
    """SGLang 0.5.23 logs kill_process_tree on every exit, clean ones included."""
    text = launch_line() + "[2026-11-29 10:00:00] kill_process_tree called: parent_pid=1, include_parent=False\n"
    assert diagnose_text(text).failures == ()


def test_all_lists_every_group_of_the_file() -> None:
    text = (
        launch_line() + crash_record("2026-11-29 09:00:00", "TP0", nccl_traceback())
        + launch_line() + crash_record("2026-11-29 10:00:00", "TP0", scheduler_traceback())
    )
    assert len(diagnose_text(text).failures) == 1
    assert len(diagnose_text(text, DiagnoseOptions(all_failures=True)).failures) == 2


def test_in_app_frames() -> None:
    assert is_in_app("/usr/lib/python3/dist-packages/sglang/srt/server_args.py")
    assert is_in_app("/opt/venv/lib/python3.11/site-packages/flashinfer/jit.py")
    assert is_in_app("/home/me/train/my_model.py")
    assert not is_in_app("/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py")
    assert not is_in_app("/usr/lib/python3.11/threading.py")
    assert not is_in_app("<frozen runpy>")


def test_cpp_terminate_is_a_failure_with_its_type_and_what() -> None:
    """An NCCL watchdog abort reaches std::terminate: no Python traceback at all."""
    text = (
        launch_line()
        + "terminate called after throwing an instance of 'c10::DistBackendError'\n"
        + "  what():  [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5) ran for 600020 ms\n"
    )
    (group,) = diagnose_text(text).failures
    assert group.failure.final.type == "c10::DistBackendError"
    assert group.failure.final.message.startswith("[Rank 3] Watchdog caught collective operation timeout")
    assert group.diagnosis is not None and group.diagnosis.category == "nccl"
