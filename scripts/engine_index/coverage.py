"""How many failures that come from engine code find their raise site in the index (issue 29's coverage figure).

    python scripts/engine_index/coverage.py [DIR ...]   (default: tests/fixtures/wild, tests/fixtures/sglang,
                                                          tests/fixtures/vllm, tests/fixtures/patterns,
                                                          ../shared/corpus)

A failure "comes from engine code" when the innermost frame of its last exception lies in an engine's package as
the index reads it (SGLang's server code, vLLM's package without its vendored and benchmark code; a failure
raised in a third-party package under an engine frame is not counted).  It is covered when its diagnosis carries
`raised_at`.  Prints the totals per engine and in all (and among them, those whose innermost frame's source line
is a `raise` or `assert`, or whose exception is an AssertionError, a multi-line assert CPython shows by its test's line:
the engine's own check, not a call that failed inside torch or the standard library), the
failures offered an upgrade past a check a later release relaxed (logsleuth/facts/relaxed_checks.toml, issue 29's
"at least 10" figure), and the uncovered failures' innermost frames (file, function), never log text.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.facts.message_templates import short_type
from logsleuth.facts.raise_sites import ENGINE_PACKAGES, engine_file
from logsleuth.models import Frame

REPO = Path(__file__).resolve().parents[2]
DEFAULT = [REPO / "tests/fixtures/wild", REPO / "tests/fixtures/sglang", REPO / "tests/fixtures/vllm",
           REPO / "tests/fixtures/patterns", REPO.parent / "shared" / "corpus"]
# What the index leaves out of each package (scripts/engine_index/build.py): not counted.
NOT_INDEXED = {"sglang": ("sglang/lang/", "sglang/test/"), "vllm": ("vllm/third_party/", "vllm/benchmarks/")}


def innermost_engine_file(frames: tuple[Frame, ...]) -> tuple[str, str] | None:
    """(engine, `vllm/v1/engine/core.py`) when the innermost frame is an indexed engine file, else None.  The same
    reading of a path as the lookup's (`engine_file`): a virtualenv named `sglang` is not SGLang's code."""
    if not frames:
        return None
    for engine in ENGINE_PACKAGES:
        file = engine_file(frames[-1].file, engine)
        if file is not None:
            return None if file.startswith(NOT_INDEXED[engine]) else (engine, file)
    return None


def main() -> int:
    roots = [Path(arg) for arg in sys.argv[1:]] or [root for root in DEFAULT if root.exists()]
    counted: Counter[str] = Counter()
    covered: Counter[str] = Counter()
    missed: Counter[str] = Counter()
    # Those whose innermost frame shows a `raise` or `assert` statement: raised by the engine's own check (the rest
    # failed inside a call the engine made: torch running out of memory, a dict lookup, a socket's bind).
    by_statement: Counter[str] = Counter()
    by_statement_covered: Counter[str] = Counter()
    upgraded: Counter[str] = Counter()  # offered `pip install --upgrade "<engine>>=X"` past a relaxed check
    for root in roots:
        for log in sorted(root.rglob("*.log")):
            report = diagnose([str(log)], DiagnoseOptions(all_failures=True))
            for group in report.failures:
                found = innermost_engine_file(group.failure.final.frames)
                if found is None:
                    continue
                engine, file = found
                counted[engine] += 1
                statement = (group.failure.final.frames[-1].source or "").lstrip().startswith(("raise ", "raise(", "assert "))
                # A multi-line assert: CPython 3.11 prints the line of its test that was false (`self.dp_size > 1`).
                statement = statement or short_type(group.failure.final.type) == "AssertionError"
                by_statement[engine] += statement
                fix = group.diagnosis.fix if group.diagnosis is not None else None
                upgraded[engine] += any(step.startswith(f'pip install --upgrade "{engine}>=')
                                        for alt in (fix.alternatives if fix else ()) for step in alt.steps)
                if group.diagnosis is not None and group.diagnosis.raised_at:
                    covered[engine] += 1
                    by_statement_covered[engine] += statement
                else:
                    missed[f"{file} in {group.failure.final.frames[-1].function}"] += 1
    for engine in ("sglang", "vllm", "total"):
        count = sum(counted.values()) if engine == "total" else counted[engine]
        hits = sum(covered.values()) if engine == "total" else covered[engine]
        share = f"{100 * hits / count:.0f}%" if count else "-"
        print(f"failures raised in {engine} code: {count}; raise site found: {hits} ({share})")
        count = sum(by_statement.values()) if engine == "total" else by_statement[engine]
        hits = sum(by_statement_covered.values()) if engine == "total" else by_statement_covered[engine]
        share = f"{100 * hits / count:.0f}%" if count else "-"
        print(f"  of which at a raise or assert statement: {count}; raise site found: {hits} ({share})")
    print(f"offered an upgrade past a relaxed check: {sum(upgraded.values())} "
          f"({', '.join(f'{engine} {upgraded[engine]}' for engine in ('sglang', 'vllm'))})")
    for where, count in missed.most_common(40):
        print(f"  not found ({count}): {where}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
