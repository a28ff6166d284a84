"""Scoring a logsleuth JSON report against a wild case's expectation (.toml).

The same fields and rules as the evaluation's score.py, so CI measures what the evaluation does:

- exception: the primary failure's (failures[0]) final exception has the expected type and, when
  given, the message, whitespace folded; "Type: message" is accepted too;
- frame: the final exception's last frame has the expected function and, when given, the file
  (compared by basename) and line;
- category: the primary failure's diagnosis category; "none" means no diagnosis;
- fix: the diagnosis' flag operations, as a set of (op, flag), equal one alternative;
- groups: the number of failure groups.
A field the expectation does not state is not scored.
"""

from __future__ import annotations

import os
from typing import Any

FIELDS = ("exception", "frame", "category", "fix", "groups")


def fold(text: str | None) -> str:
    return " ".join((text or "").split())


def _final(primary: dict[str, Any]) -> dict[str, Any]:
    exceptions = primary.get("exceptions") or [{}]
    return exceptions[-1]


def _exception_ok(primary: dict[str, Any] | None, want: dict[str, Any]) -> bool:
    if primary is None:
        return False
    final = _final(primary)
    if final.get("type") != want["exception_type"]:
        return False
    if "exception_message" not in want:
        return True
    got, expected = fold(final.get("message")), fold(want["exception_message"])
    return got in (expected, fold(f"{want['exception_type']}: {expected}"))


def _frame_ok(primary: dict[str, Any] | None, frame: dict[str, Any]) -> bool:
    if primary is None:
        return False
    frames = _final(primary).get("frames") or [{}]
    got = frames[-1]
    if got.get("function") != frame["function"]:
        return False
    if "file" in frame and os.path.basename(got.get("file") or "") != os.path.basename(frame["file"]):
        return False
    return "line" not in frame or got.get("line") == frame["line"]


def _category_ok(primary: dict[str, Any] | None, category: str) -> bool:
    diagnosis = (primary or {}).get("diagnosis")
    if category == "none":
        return diagnosis is None
    return bool(diagnosis) and diagnosis.get("category") == category


def flag_pairs(fix: dict[str, Any] | None) -> set[tuple[str, str]]:
    """A fix's flag operations as (op, flag) pairs; values do not count."""
    return {(flag.get("op", ""), flag.get("flag", "")) for flag in (fix or {}).get("flags") or []}


def alternative_pairs(alternative: list[str]) -> set[tuple[str, str]]:
    """["set --x 1", "add --y"] -> {("set", "--x"), ("add", "--y")}."""
    pairs = set()
    for item in alternative:
        op, _, rest = item.partition(" ")
        words = rest.split()
        pairs.add((op, words[0] if words else ""))
    return pairs


def _fix_ok(primary: dict[str, Any] | None, alternatives: list[list[str]]) -> bool:
    diagnosis = (primary or {}).get("diagnosis") or {}
    got = flag_pairs(diagnosis.get("fix"))
    return any(got == alternative_pairs(alternative) for alternative in alternatives)


def score(report: dict[str, Any], want: dict[str, Any]) -> dict[str, bool]:
    """Each scored field of the case: did the report get it right?"""
    failures = report.get("failures") or []
    primary = failures[0] if failures else None
    result: dict[str, bool] = {}
    if "exception_type" in want:
        result["exception"] = _exception_ok(primary, want)
    frame = want.get("innermost_frame") or {}
    if frame.get("function"):
        result["frame"] = _frame_ok(primary, frame)
    if want.get("category"):
        result["category"] = _category_ok(primary, want["category"])
    if want.get("fix_alternatives"):
        result["fix"] = _fix_ok(primary, want["fix_alternatives"])
    if "n_unique_tracebacks" in want:
        result["groups"] = len(failures) == want["n_unique_tracebacks"]
    return result
