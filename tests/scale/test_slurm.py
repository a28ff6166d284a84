"""The Slurm recipe of docs/at-scale.md run for real (issue 31): a throwaway Slurm on 127.0.0.1
(scripts/at_scale/slurm_local.sh: munge, slurmctld and one slurmd per node), `srun` with one task per node, each
diagnosing its own log, then `logsleuth merge` of the reports.  Skipped, with the script's reason, only when a
Slurm daemon cannot start on this machine."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.merge.nodes import rack_logs, write_logs

SCRIPT = REPO / "scripts" / "at_scale" / "slurm_local.sh"
CANNOT_RUN = 77


@pytest.mark.slow
def test_the_slurm_recipe_runs_for_real_and_merges(tmp_path: Path) -> None:
    if shutil.which("slurmctld") is None or shutil.which("munged") is None:
        pytest.skip("slurm-wlm and munge are not installed (.ci/run installs them)")
    logs = {name.replace("node0", "n"): text for name, text in rack_logs().items()}  # n1..n5: the Slurm nodes
    write_logs(tmp_path / "logs", logs)
    logsleuth = str(Path(sys.executable).with_name("logsleuth"))
    proc = subprocess.run(
        ["bash", str(SCRIPT), str(tmp_path / "cluster"), str(tmp_path / "logs"), str(len(logs)), logsleuth],
        capture_output=True, text=True, timeout=600,
    )
    if proc.returncode == CANNOT_RUN:
        pytest.skip(f"Slurm cannot run here: {proc.stderr.strip().splitlines()[-1]}")
    assert proc.returncode == 1, proc.stderr  # the merge found the failure
    assert proc.stdout.startswith("n3 failed first: GPU out of memory"), proc.stdout[:500]
    reports = sorted(p.name for p in (tmp_path / "cluster" / "reports").glob("*.json"))
    assert reports == [f"n{i}.json" for i in range(1, 6)]
    # Each report was written on its Slurm node, named after it.
    assert json.loads((tmp_path / "cluster" / "reports" / "n4.json").read_text())["reporter"]["host"] == "n4"
    for cascade in ("n1", "n2", "n4"):
        assert f"{cascade}    cascade of n3" in proc.stdout
