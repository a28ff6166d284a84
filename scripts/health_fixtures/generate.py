#!/usr/bin/env python3
"""Generate the `logsleuth health` fixtures: tests/fixtures/health/<version>/<scenario>.log (SGLang),
tests/fixtures/health/vllm/<release>/<scenario>.log (vLLM) and manifest.toml.

The lines are the engines' wordings, transcribed per version from their source (wordings.py and
vllm_wordings.py cite each one); the numbers come from a seeded simulation (run.py, vllm_run.py); the stories
are tables (scenarios.py, vllm_scenarios.py).  No text is copied from real logs.

    python scripts/health_fixtures/generate.py            # (re)write the fixtures
    python scripts/health_fixtures/generate.py --check    # exit 1 if they are stale
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # run as a script: `scripts.` from the repo root

from scripts.health_fixtures.fixtures import OUT, stale, write  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="verify the committed fixtures are up to date")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    if not args.check:
        print(f"wrote {write(args.out)} health fixture files to {args.out}")
        return 0
    problems = stale(args.out)
    if not problems:
        print("health fixtures up to date")
        return 0
    print("stale health fixtures (run: python scripts/health_fixtures/generate.py):", file=sys.stderr)
    for problem in problems:
        print(f"  {problem}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())
