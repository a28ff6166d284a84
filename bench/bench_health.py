"""Row 8 of `make bench`: `logsleuth health` on a 2 GiB steady-state log against `grep -c 'Decode batch'` on
the same file, with the peak RSS of logsleuth's process tree; once with seven problems planted (each must be
named), once healthy (no finding).  The logs come from scripts/health_fixtures (SGLang 0.5.9's wording).

Row 9: `logsleuth health HOST:LOG` on an 80 MB log over the private sshd against `ssh HOST grep -c 'Decode batch'
LOG` (issue 30, finding 4: the windows are read in one round trip), with the default backend and with OpenSSH's
ssh."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout: scripts.health_fixtures
from measure import Check, Command, command, exit_status_in, measure_rounds  # noqa: E402
from table import Goal, Row, Sample, pairs_of  # noqa: E402

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
RoundsOf = Callable[[dict[str, Command], float], list[dict[str, Sample]]]  # commands, allowance -> runs


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


REMOTE_SIZE = 80 << 20
REMOTE_PLANTED = ("retraction-storm", "accept-drop")


def remote_health_rows(
    logsleuth: Sequence[str], ssh: Sequence[str], config: Path, directory: Path, measure: RoundsOf
) -> list[Row]:
    """`health 127.0.0.1:LOG` (80 MB, two problems planted, both must be named) against `ssh 127.0.0.1 grep -c`
    on the same log; `measure` runs the rounds (bench_ssh.Bench.rounds_of: the sshd's environment)."""
    log = directory / "health-80MB.log"
    write_steady_state(log, REMOTE_SIZE, "0.5.9", list(REMOTE_PLANTED))
    log.chmod(0o644)
    check = names_exactly({PLANTED[name] for name in REMOTE_PLANTED}, 1)
    health = [*logsleuth, "health", "--format", "json", "--no-user-patterns", "--ssh-config", str(config)]
    commands = {
        "remote health": command([*health, f"127.0.0.1:{log}"], check),
        "remote health openssh": command([*health, "--ssh-backend", "openssh", f"127.0.0.1:{log}"], check),
        "ssh grep -c": command([*ssh, "127.0.0.1", f"grep -c 'Decode batch' {log}"], exit_status_in(0)),
    }
    runs = measure(commands, 45)
    log.unlink()
    return [
        Row("remote health 80 MB vs `ssh host grep -c PATTERN LOG`", "wall", (Goal("ratio", 2),),
            pairs_of(runs, "remote health", "ssh grep -c")),
        Row("remote health 80 MB (`--ssh-backend openssh`) vs `ssh host grep -c PATTERN LOG`", "wall", (),
            pairs_of(runs, "remote health openssh", "ssh grep -c")),
    ]


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
