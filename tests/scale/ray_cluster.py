"""Run examples/at-scale/ray_diagnose.py on a local Ray cluster of several nodes (run by a Python that has ray:
tests/scale/test_ray.py).  Every Ray node is a raylet on 127.0.0.1 (ray.cluster_utils.Cluster, Ray's own way to
test several nodes on one machine), named by its node id; the first node's log is ROOT_LOG, the others' CASCADE_LOG.

    python ray_cluster.py NODES ROOT_LOG CASCADE_LOG WORKDIR

Prints the node names, the first one first, as a JSON list on its last line; exits with the snippet's status.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

# Every Ray address on 127.0.0.1 (tests contact no other): Ray's switch for a cluster on one laptop makes each
# process take the loopback address as its node's, where it would otherwise take the machine's own.
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"

import ray  # noqa: E402 - after the switch: Ray reads it on import
from ray.cluster_utils import Cluster  # noqa: E402

SNIPPET = Path(__file__).resolve().parents[2] / "examples" / "at-scale" / "ray_diagnose.py"


def main() -> int:
    nodes, root_log, cascade_log, workdir = int(sys.argv[1]), sys.argv[2], sys.argv[3], Path(sys.argv[4])
    local = {"num_cpus": 1, "node_ip_address": "127.0.0.1"}
    cluster = Cluster(initialize_head=True, head_node_args={**local, "include_dashboard": False})
    try:
        for _ in range(nodes - 1):
            cluster.add_node(**local)
        cluster.wait_for_nodes()
        ray.init(address=cluster.address)
        names = [node["NodeID"][:8] for node in ray.nodes() if node["Alive"]]
        ray.shutdown()
        (workdir / "logs").mkdir(parents=True, exist_ok=True)
        for index, name in enumerate(names):
            shutil.copy(root_log if index == 0 else cascade_log, workdir / "logs" / f"{name}.log")
        done = subprocess.run(
            [sys.executable, str(SNIPPET), str(workdir / "logs" / "{node}.log"), str(workdir / "reports"),
             "--node-name", "id"],
            env={**os.environ, "RAY_ADDRESS": cluster.address}, capture_output=True, text=True, timeout=300,
        )
        sys.stderr.write(done.stderr[-3000:])
        sys.stdout.write(done.stdout)
        print(json.dumps(names))
        return done.returncode
    finally:
        cluster.shutdown()


if __name__ == "__main__":
    sys.exit(main())
