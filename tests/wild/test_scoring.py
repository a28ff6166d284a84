"""The wild corpus scorer against hand-made reports: the rules of /work/shared/eval/score.py."""

from __future__ import annotations

from typing import Any

from tests.wild.scoring import alternative_pairs, score

WANT = {
    "exception_type": "RuntimeError",
    "exception_message": "Decode out of memory.\nTry to allocate 148 tokens.\n",
    "category": "serving-memory",
    "fix_alternatives": [["set --max-running-requests 8"], []],
    "innermost_frame": {"file": "sglang/srt/managers/schedule_batch.py", "line": 874, "function": "alloc_paged_token_slots_decode"},
    "n_unique_tracebacks": 1,
}


def report(**changes: Any) -> dict[str, Any]:
    failure = {
        "exceptions": [{"type": "RuntimeError", "message": "Decode out of memory.  Try to allocate 148 tokens.",
                        "frames": [{"file": "/x/scheduler.py", "line": 1, "function": "run"},
                                   {"file": "/opt/schedule_batch.py", "line": 874, "function": "alloc_paged_token_slots_decode"}]}],
        "diagnosis": {"category": "serving-memory", "fix": {"flags": [{"op": "set", "flag": "--max-running-requests", "value": "4"}]}},
    }
    failure.update(changes)
    return {"failures": [failure]}


def test_a_matching_report_scores_every_field() -> None:
    assert score(report(), WANT) == {"exception": True, "frame": True, "category": True, "fix": True, "groups": True}


def test_message_whitespace_is_folded_and_the_type_prefix_accepted() -> None:
    prefixed = report(exceptions=[{"type": "RuntimeError", "message": "RuntimeError: Decode out of memory. Try to allocate 148 tokens.", "frames": []}])
    assert score(prefixed, WANT)["exception"] is True
    other = report(exceptions=[{"type": "RuntimeError", "message": "Prefill out of memory.", "frames": []}])
    assert score(other, WANT)["exception"] is False


def test_the_frame_is_compared_by_basename_function_and_line() -> None:
    moved = report(exceptions=[{"type": "RuntimeError", "message": "", "frames": [{"file": "schedule_batch.py", "line": 875, "function": "alloc_paged_token_slots_decode"}]}])
    assert score(moved, WANT)["frame"] is False


def test_an_empty_alternative_matches_a_fix_without_flags() -> None:
    assert score(report(diagnosis={"category": "serving-memory", "fix": {"flags": []}}), WANT)["fix"] is True
    assert score(report(diagnosis={"category": "serving-memory", "fix": None}), WANT)["fix"] is True
    extra = {"category": "serving-memory", "fix": {"flags": [{"op": "set", "flag": "--max-running-requests"}, {"op": "add", "flag": "--x"}]}}
    assert score(report(diagnosis=extra), WANT)["fix"] is False


def test_category_none_means_no_diagnosis_and_groups_count_failures() -> None:
    want = {"category": "none", "n_unique_tracebacks": 0}
    assert score({"failures": []}, want) == {"category": True, "groups": True}
    assert score(report(), want) == {"category": False, "groups": False}


def test_a_report_without_failures_fails_the_exception_and_frame() -> None:
    assert score({"failures": []}, WANT) == {"exception": False, "frame": False, "category": False, "fix": True, "groups": False}


def test_alternatives_keep_op_and_flag_only() -> None:
    assert alternative_pairs(["set --mem-fraction-static 0.8", "add --disable-cuda-graph"]) == {("set", "--mem-fraction-static"), ("add", "--disable-cuda-graph")}
