#!/usr/bin/env python3
"""Generate the runtime-failure pattern fixtures: tests/fixtures/patterns/<pattern-id>/.

Every traceback is produced by real CPython raising the engine's real exceptions from a mirror
of its paths (pattern_fixtures/engine.py explains the method); no text is copied from real logs.
The cases are tables, one module per family of patterns: pattern_fixtures/cases/<family>.py.

    python scripts/make_pattern_fixtures.py            # (re)write the fixtures
    python scripts/make_pattern_fixtures.py --check    # exit 1 if they are stale
    python scripts/make_pattern_fixtures.py -k oom     # only cases whose pattern matches

Tracebacks depend on the CPython minor version (3.11+ prints `^^^` markers), so run it
with the project's interpreter (.venv/bin/python, 3.11).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from pattern_fixtures import engine
from pattern_fixtures.cases import all_cases

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "patterns"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the committed fixtures are up to date")
    parser.add_argument("-k", dest="select", help="only cases whose pattern id contains this")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    cases = [c for c in all_cases() if not args.select or args.select in c.pattern]
    complete = not args.select  # only the full set may delete, or report, the logs no case generates
    if not args.check:
        written = engine.write(cases, args.out, complete=complete)
        print(f"wrote {written} pattern fixtures to {args.out}")
        return 0
    stale = engine.differences(cases, args.out, complete=complete)
    if not stale:
        print(f"{len(cases)} pattern fixtures up to date")
        return 0
    for difference in stale:
        if difference.generated:
            print("\n".join(difference.diff), file=sys.stderr)
    print("stale pattern fixtures (run: python scripts/make_pattern_fixtures.py):", file=sys.stderr)
    for difference in stale:
        print(f"  {_describe(difference)}", file=sys.stderr)
    return 1


def _describe(difference: engine.Difference) -> str:
    if not difference.generated:
        return f"{difference.path} (no longer generated)"
    return str(difference.path.relative_to(ROOT)) if difference.path.is_relative_to(ROOT) else str(difference.path)


if __name__ == "__main__":
    sys.exit(main())
