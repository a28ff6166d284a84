"""How many failures that come from engine code find their raise site in the index (issue 29's coverage figure).

    python scripts/engine_index/coverage.py [DIR ...]   (default: tests/fixtures/wild, tests/fixtures/sglang,
                                                          tests/fixtures/patterns, ../shared/corpus)

A failure "comes from engine code" when the innermost frame of its last exception lies in SGLang's package (the
index holds SGLang's server code; vLLM is not indexed yet, and a failure raised in a third-party package under
an engine frame is not counted).  It is covered when its diagnosis carries `raised_at`.  Prints the totals and
the uncovered failures' innermost frames (file, function), never log text.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose

REPO = Path(__file__).resolve().parents[2]
DEFAULT = [REPO / "tests/fixtures/wild", REPO / "tests/fixtures/sglang", REPO / "tests/fixtures/patterns",
           REPO.parent / "shared" / "corpus"]


def innermost_engine_file(frames: tuple[object, ...]) -> str | None:
    if not frames:
        return None
    last = frames[-1]
    path = f"/{getattr(last, 'file', '')}".replace("\\", "/")
    return path.rsplit("/sglang/", 1)[1] if "/sglang/" in path else None


def main() -> int:
    roots = [Path(arg) for arg in sys.argv[1:]] or [root for root in DEFAULT if root.exists()]
    counted = covered = 0
    missed: Counter[str] = Counter()
    for root in roots:
        for log in sorted(root.rglob("*.log")):
            report = diagnose([str(log)], DiagnoseOptions(all_failures=True))
            for group in report.failures:
                file = innermost_engine_file(group.failure.final.frames)
                if file is None or file.startswith(("lang/", "test/")):
                    continue
                counted += 1
                if group.diagnosis is not None and group.diagnosis.raised_at:
                    covered += 1
                else:
                    missed[f"sglang/{file} in {group.failure.final.frames[-1].function}"] += 1
    share = f"{100 * covered / counted:.0f}%" if counted else "-"
    print(f"failures raised in SGLang's code: {counted}; raise site found: {covered} ({share})")
    for where, count in missed.most_common(25):
        print(f"  not found ({count}): {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
