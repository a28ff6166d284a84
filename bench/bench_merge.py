"""A row of `make bench`: `logsleuth merge` of 1,000 nodes' JSON reports (issue 31) against reading the same files
with `json.load` in a bare Python, with the peak RSS of logsleuth's process tree.

The reports are made once by the real `logsleuth diagnose --format json` on three logs of a multi-node launch
(tests/merge/nodes.py: one node out of GPU memory, one timing out in NCCL after it, one healthy), then copied
with varied host names and times: one root, a cascade on every 50th node (each 0-29 s after the root's
failure, as NCCL watchdogs fire), every other node healthy.

`make bench` runs this row inside bench_ssh.py's one table.  Alone, it prints the row for each size given
(the figures for the 10,000-node estimate in docs/at-scale.md):

    python bench/bench_merge.py [--reports 1000 4000] [--rounds 7] [--logsleuth PATH]
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))  # the checkout: tests.merge.nodes
from measure import Check, command, exit_status_in, measure_rounds  # noqa: E402
from table import Goal, Row, pairs_of, render_table  # noqa: E402

from tests.merge.nodes import rack_logs  # noqa: E402

ROOT_NODE = 417  # the node that fails first, somewhere in the middle of the directory
CASCADE_EVERY = 50
STAMP = "%Y-%m-%d %H:%M:%S"
READ_ALL = "import json, pathlib, sys; [json.loads(p.read_bytes()) for p in pathlib.Path(sys.argv[1]).glob('*.json')]"


def node_name(number: int) -> str:
    return f"gpu{number:05d}"


def real_reports(logsleuth: Sequence[str], directory: Path) -> dict[str, dict]:
    """The real diagnose's JSON report of a root, a cascade and a healthy node's log."""
    logs = rack_logs()
    reports = {}
    for kind, node in (("root", "node03"), ("cascade", "node01"), ("healthy", "node05")):
        log = directory / f"{node}.log"
        log.write_text(logs[node])
        done = subprocess.run([*logsleuth, "diagnose", str(log), "--format", "json", "--host", node],
                              capture_output=True, check=False)
        assert done.returncode in (0, 1), done.stderr.decode()
        reports[kind] = json.loads(done.stdout)
    return reports


def _shifted(stamp: str | None, seconds: int) -> str | None:
    if stamp is None:
        return None
    return (datetime.datetime.strptime(stamp, STAMP) + datetime.timedelta(seconds=seconds)).strftime(STAMP)


def node_report(reports: dict[str, dict], number: int) -> dict:
    """Node `number`'s report: the root's, a cascade's (its times moved 0-29 s) or a healthy one's, as that node."""
    kind = "root" if number == ROOT_NODE else "cascade" if number % CASCADE_EVERY == 7 else "healthy"
    data = json.loads(json.dumps(reports[kind]))
    data["reporter"]["host"] = node_name(number)
    for failure in data["failures"]:
        delay = number % 30
        failure["timestamp"] = _shifted(failure["timestamp"], delay)
        for first in failure["firsts"]:
            first["timestamp"] = _shifted(first["timestamp"], delay)
    return data


def write_reports(reports: dict[str, dict], directory: Path, count: int) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        (directory / f"{node_name(number)}.json").write_text(json.dumps(node_report(reports, number), indent=2))
    return directory


def root_is(expected: str) -> Check:
    def check(status: int, stdout: bytes) -> str | None:
        if status != 1:
            return f"exit status {status}, expected 1"
        root = json.loads(stdout)["fleet"]["root"]
        return None if root == expected else f"root {root}, expected {expected}"

    return check


def merge_row(logsleuth: Sequence[str], python: str, reports: Path, count: int, rounds: int) -> Row:
    commands = {
        f"merge {count}": command([*logsleuth, "merge", str(reports), "--format", "json"], root_is(node_name(ROOT_NODE))),
        f"json.load {count}": command([python, "-c", READ_ALL, str(reports)], exit_status_in(0)),
    }
    runs = measure_rounds(commands, rounds, sample=True, allowance=30)
    goals = (Goal("a", 1.0), Goal("rss", 200)) if count <= 1000 else ()
    return Row(f"`merge` {count:,} nodes' JSON reports (1 root, {count // CASCADE_EVERY} cascades, the rest healthy) "
               f"vs `json.load` of each in python", "wall", goals, pairs_of(runs, *commands), show_rss=True)


def merge_rows(logsleuth: Sequence[str], python: str, directory: Path, rounds: int, counts: Sequence[int] = (1000,)) -> list[Row]:
    directory.mkdir(parents=True, exist_ok=True)
    reports = real_reports(logsleuth, directory)
    return [merge_row(logsleuth, python, write_reports(reports, directory / f"reports-{n}", n), n, rounds) for n in counts]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--reports", type=int, nargs="+", default=[1000, 4000])
    parser.add_argument("--rounds", type=int, default=7)
    beside_python = Path(sys.executable).parent / "logsleuth"  # this venv's console script
    parser.add_argument("--logsleuth", default=str(beside_python) if beside_python.exists() else "logsleuth")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="logsleuth-bench-merge-") as tmp:
        rows = merge_rows([args.logsleuth], sys.executable, Path(tmp), args.rounds, args.reports)
    print(render_table(rows))
    return 0 if not any(row.errors for row in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
