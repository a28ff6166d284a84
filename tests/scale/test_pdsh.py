"""The pdsh recipe of docs/at-scale.md (examples/at-scale/pdsh.sh) run by the real pdsh, with its `exec` remote
command module: each "host" n1..n5 is a local command, %h its name, so the recipe runs as written with no ssh."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.helpers import REPO
from tests.merge.nodes import rack_logs, write_logs

RECIPE = REPO / "examples" / "at-scale" / "pdsh.sh"


@pytest.mark.slow
def test_the_pdsh_recipe_runs_and_merges(tmp_path: Path) -> None:
    if shutil.which("pdsh") is None:
        pytest.skip("pdsh is not installed (.ci/run installs it)")
    write_logs(tmp_path / "logs", {name.replace("node0", "n"): text for name, text in rack_logs().items()})
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}",
        "PDSH_RCMD_TYPE": "exec",
        "REMOTE_REPORT": str(tmp_path / "remote.json"),
    }
    proc = subprocess.run(
        ["bash", str(RECIPE), "n[1-5]", str(tmp_path / "logs" / "{host}.log"), str(tmp_path / "reports")],
        capture_output=True, text=True, timeout=300, env=env,
    )
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("n3 failed first: GPU out of memory"), proc.stdout[:400]
    assert sorted(p.name for p in (tmp_path / "reports").iterdir()) == [f"logsleuth.json.n{i}" for i in range(1, 6)]
    assert "n5    no failure" in proc.stdout
