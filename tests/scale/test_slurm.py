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


@pytest.mark.slow
def test_sruns_own_report_of_a_failed_task_is_read_as_a_trailer(tmp_path: Path) -> None:
    """srun's line for a task that exited non-zero, as this machine's real Slurm prints it (the recipe run with a
    stand-in for logsleuth that fails on every node), is a kill line (tracebacks/grammar.py KILL_LINE): with an
    engine's traceback above it, the traceback alone is the failure; alone, a process that ended, never argparse's
    refusal of the engine's arguments (tests/test_slurm_lines.py holds the shapes)."""
    if shutil.which("slurmctld") is None or shutil.which("munged") is None:
        pytest.skip("slurm-wlm and munge are not installed (.ci/run installs them)")
    stand_in = tmp_path / "bin" / "logsleuth"
    stand_in.parent.mkdir()
    stand_in.write_text('#!/bin/bash\n[ "$1" = diagnose ] && exit 1\nexit 0\n')
    stand_in.chmod(0o755)
    logs = tmp_path / "logs"
    logs.mkdir()
    for node in ("n1", "n2"):
        (logs / f"{node}.log").write_text("starting\n")
    proc = subprocess.run(["bash", str(SCRIPT), str(tmp_path / "cluster"), str(logs), "2", str(stand_in)],
                          capture_output=True, text=True, timeout=600)
    if proc.returncode == CANNOT_RUN:
        pytest.skip(f"Slurm cannot run here: {proc.stderr.strip().splitlines()[-1]}")
    trailers = [line for line in proc.stderr.splitlines() if line.startswith("srun: error: ") and "exit code" in line]
    assert trailers, proc.stderr

    from logsleuth.api import DiagnoseOptions, diagnose_text

    options = DiagnoseOptions(include_user_patterns=False)
    (alone,) = diagnose_text(trailers[0] + "\n", options).failures
    assert alone.failure.kind == "killed" and alone.diagnosis is not None
    assert alone.diagnosis.category == "process-killed"
    script = tmp_path / "run.py"
    script.write_text("raise ValueError('bad')\n")
    crash = subprocess.run([sys.executable, str(script)], capture_output=True, text=True).stderr
    after = diagnose_text(crash + "\n".join(trailers) + "\n", options).failures
    assert [group.failure.final.type for group in after] == ["ValueError"]
