"""The Ray snippet of docs/at-scale.md (examples/at-scale/ray_diagnose.py) run on a local Ray cluster of three
nodes: one task pinned to each node diagnoses that node's log, the reports come back as the tasks' results, and
`logsleuth merge` names the node that failed first.  Ray is no dependency of logsleuth: the test runs with the
Python that LOGSLEUTH_RAY_PYTHON names (a venv with `pip install ray`), and is skipped without one."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.merge.nodes import write_logs
from tests.test_fleet_report import nccl_timeout, oom

HELPER = Path(__file__).with_name("ray_cluster.py")


@pytest.mark.slow
def test_the_ray_snippet_diagnoses_each_node_and_merges(tmp_path: Path) -> None:
    python = os.environ.get("LOGSLEUTH_RAY_PYTHON")
    if not python:
        pytest.skip("set LOGSLEUTH_RAY_PYTHON to a Python with ray installed (python -m venv /tmp/ray && "
                    "/tmp/ray/bin/pip install ray): Ray is not a logsleuth dependency")
    logs = write_logs(tmp_path / "templates", {"root": oom(), "cascade": nccl_timeout("02:20:03", "TP1")})
    bin_dir = str(Path(sys.executable).parent)  # the snippet runs `logsleuth` on every node
    proc = subprocess.run(
        [python, str(HELPER), "3", str(logs["root"]), str(logs["cascade"]), str(tmp_path / "work")],
        capture_output=True, text=True, timeout=600, env={**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"},
    )
    assert proc.returncode == 1, proc.stderr[-3000:]  # the merge found the failure
    names = json.loads(proc.stdout.splitlines()[-1])
    assert len(names) == 3
    assert proc.stdout.startswith(f"{names[0]} failed first: GPU out of memory"), proc.stdout[:400]
    assert sorted(p.stem for p in (tmp_path / "work" / "reports").glob("*.json")) == sorted(names)
    assert proc.stdout.count(f"cascade of {names[0]}") >= 2
