#!/usr/bin/env python3
"""Generate the wild corpus: tests/fixtures/wild/<kind>/<slug>.{log,toml} and its README.md.

Facts mined from public issue threads become logs through the pattern-fixture engine (real
CPython raising the engine's exceptions from a mirrored tree, real faulthandler dumps), pasted
the way the thread showed (wild_fixtures/paste.py); the .toml holds the expected diagnosis.
The cases are tables, one module per failure family: wild_fixtures/cases/<family>.py.

    python scripts/make_wild_fixtures.py            # (re)write the corpus
    python scripts/make_wild_fixtures.py --check    # exit 1 if it is stale
    python scripts/make_wild_fixtures.py -k nccl    # only cases whose kind or slug contains this

Tracebacks depend on the CPython minor version, so run it with the project's interpreter
(.venv/bin/python, 3.11).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from wild_fixtures import corpus, readme
from wild_fixtures.cases import all_cases

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "wild"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the committed corpus is up to date")
    parser.add_argument("-k", dest="select", help="only cases whose kind or slug contains this")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    os.environ["PYTHONHASHSEED"] = "0"  # inherited by every process the engine starts
    cases = all_cases()
    chosen = [case for case in cases if not args.select or args.select in case.stem]
    complete = not args.select  # only the full set may delete, or report, the files no case generates
    files = corpus.outputs(chosen)
    if complete:
        files["README.md"] = readme.render(cases)
    if not args.check:
        corpus.write(files, args.out, complete=complete)
        print(f"wrote {len(chosen)} wild cases to {args.out}")
        return 0
    stale = corpus.differences(files, args.out, complete=complete)
    if not stale:
        print(f"{len(chosen)} wild cases up to date")
        return 0
    for difference in stale:
        if difference.generated:
            print("\n".join(difference.diff), file=sys.stderr)
    print("stale wild corpus (run: python scripts/make_wild_fixtures.py):", file=sys.stderr)
    for difference in stale:
        where = difference.path.relative_to(ROOT) if difference.path.is_relative_to(ROOT) else difference.path
        print(f"  {where}{'' if difference.generated else ' (no longer generated)'}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
