"""Diagnose every Ray node's own log where it lives (one task pinned to each node), then merge the reports
(docs/at-scale.md).

    python examples/at-scale/ray_diagnose.py /var/log/sglang.log ./reports            # on the head node
    RAY_ADDRESS=ray://head:10001 python examples/at-scale/ray_diagnose.py LOG ./reports

`{node}` in LOG is the node's host name; `--node-name id` names each node by the first 8 characters of its Ray
node id instead (several Ray nodes on one machine).  logsleuth must be installed on every node.  The reports come
back to this machine as the tasks' results, so no shared file system is needed.  Exit status: the merge's.
"""

from __future__ import annotations

import argparse
import pathlib
import socket
import subprocess
import sys

import ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy


@ray.remote(num_cpus=0)
def diagnose_here(log: str, name: str | None) -> tuple[str, str]:
    """Run on one node: its log's JSON report, and the name it gives the node."""
    host = name or socket.gethostname()
    done = subprocess.run(
        ["logsleuth", "diagnose", log.replace("{node}", host), "--host", host, "--format", "json"],
        capture_output=True, text=True, check=False,
    )
    return host, done.stdout  # exit 1 is "a failure was found": the report is on stdout all the same


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("log")
    parser.add_argument("reports", type=pathlib.Path)
    parser.add_argument("--node-name", choices=("host", "id"), default="host")
    args = parser.parse_args()
    ray.init()  # RAY_ADDRESS, or the cluster this machine belongs to, or a local one
    nodes = [node for node in ray.nodes() if node["Alive"]]
    tasks = [
        diagnose_here.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node["NodeID"], soft=False)).remote(
            args.log, node["NodeID"][:8] if args.node_name == "id" else None
        )
        for node in nodes
    ]
    args.reports.mkdir(parents=True, exist_ok=True)
    for host, report in ray.get(tasks):
        (args.reports / f"{host}.json").write_text(report)
    ray.shutdown()
    return subprocess.run(["logsleuth", "merge", str(args.reports)], check=False).returncode


if __name__ == "__main__":
    sys.exit(main())
