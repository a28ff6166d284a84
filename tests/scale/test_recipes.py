"""The Kubernetes recipe of docs/at-scale.md (examples/at-scale/k8s-daemonset.yaml and k8s-collect.sh) as
written, against a kubectl stand-in (tests/scale/standins/kubectl): no Kubernetes cluster can run here.  The
stand-in runs the manifest's own container script once per node, as the kubelet would, on a node's
/var/log/pods laid out as a container runtime writes it (CRI lines); the real logsleuth diagnoses and merges."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.merge.nodes import rack_logs

RECIPE = REPO / "examples" / "at-scale"
STANDINS = Path(__file__).with_name("standins")


def cri(text: str, stamp: str = "2025-11-06T02:00:00.000000000Z") -> str:
    """A log as the container runtime keeps it under /var/log/pods: `TIME stdout F LINE`."""
    return "".join(f"{stamp} stdout F {line}\n" for line in text.splitlines())


@pytest.mark.slow  # four logsleuth processes: a few seconds
def test_the_kubernetes_recipe_collects_each_nodes_report_and_merges(tmp_path: Path) -> None:
    nodes = {"gpu-a": "node01", "gpu-b": "node03", "gpu-c": "node05"}  # gpu-b fails first; gpu-a follows it
    logs = rack_logs()
    for node, source in nodes.items():
        container = tmp_path / "pods" / node / f"serving_sglang-{node}-0_1234" / "server"
        container.mkdir(parents=True)
        (container / "0.log").write_text(cri(logs[source]))
    env = {
        **os.environ,
        "PATH": f"{STANDINS}:{Path(sys.executable).parent}:{os.environ['PATH']}",
        "KUBECTL_STANDIN_STATE": str(tmp_path / "kubectl"),
        "KUBECTL_STANDIN_NODES": " ".join(nodes),
        "KUBECTL_STANDIN_PODS": str(tmp_path / "pods"),
    }
    proc = subprocess.run(["bash", str(RECIPE / "k8s-collect.sh"), str(tmp_path / "reports")],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 1, proc.stderr
    assert "\ngpu-b failed first: GPU out of memory" in proc.stdout, proc.stdout[:400]  # after kubectl's rollout line
    assert "gpu-a  cascade of gpu-b" in proc.stdout
    report = json.loads((tmp_path / "reports" / "gpu-c.json").read_text())
    assert report["reporter"]["host"] == "gpu-c" and report["status"] == "no-failure"
