"""Row 8 of `make bench`: `logsleuth health` on a 2 GiB steady-state log against `grep -c 'Decode batch'` on
the same file, with the peak RSS of logsleuth's process tree; once with seven problems planted (each must be
named), once healthy (no finding).  The logs come from scripts/health_fixtures (SGLang 0.5.9's wording)."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout: scripts.health_fixtures
from measure import Check, Command, command, exit_status_in, measure_rounds  # noqa: E402
from table import Goal, Row, pairs_of  # noqa: E402

from scripts.health_fixtures.steady import PLANTS, write_steady_state  # noqa: E402

SIZE = 2 << 30
PLANTED = {
    "retraction-storm": "sglang-health-kv-pool-full-retract",
    "accept-drop": "sglang-health-accept-length-near-one",
    "queue-growth": "sglang-health-queue-growth",
    "throughput-collapse": "sglang-health-throughput-collapse",
    "cuda-graph-disabled": "sglang-health-cuda-graph-disabled",
    "weights-not-initialized": "sglang-health-weights-not-initialized",
    "precision-fallback": "sglang-health-precision-fallback",
}
assert set(PLANTED) == set(PLANTS), "a problem the generator plants has no expected pattern here"


def names_exactly(expected: set[str], status_wanted: int) -> Check:
    """logsleuth's check: the exit status, and exactly these patterns among the JSON report's findings."""

    def check(status: int, stdout: bytes) -> str | None:
        if status != status_wanted:
            return f"exit status {status}, expected {status_wanted}"
        found = {finding["pattern"] for finding in json.loads(stdout)["findings"]}
        return None if found == expected else f"found {sorted(found)}, expected {sorted(expected)}"

    return check


def health_and_grep(logsleuth: Sequence[str], log: Path, label: str, check: Check) -> dict[str, Command]:
    return {
        f"health {label}": command([*logsleuth, "health", "--format", "json", "--no-user-patterns", str(log)], check),
        f"grep -c {label}": command(["grep", "-c", "Decode batch", str(log)], exit_status_in(0)),
    }


def health_rows(logsleuth: Sequence[str], directory: Path, rounds: int) -> list[Row]:
    """One log at a time (2 GiB each on disk), measured while it is the one in the page cache."""
    rows = []
    log = directory / "steady-2GiB.log"
    for label, plant, check in (
        ("planted", list(PLANTED), names_exactly(set(PLANTED.values()), 1)),
        ("healthy", [], names_exactly(set(), 0)),
    ):
        write_steady_state(log, SIZE, "0.5.9", plant)
        commands = health_and_grep(logsleuth, log, label, check)
        runs = measure_rounds(commands, rounds, sample=True, allowance=45)
        what = "7 problems planted, each named" if plant else "healthy, no finding"
        rows.append(Row(f"`health` 2 GiB steady state ({what}) vs `grep -c 'Decode batch' LOG`", "wall",
                        (Goal("ratio", 1.2), Goal("rss", 100)), pairs_of(runs, *commands), show_rss=True))
        log.unlink()
    return rows
