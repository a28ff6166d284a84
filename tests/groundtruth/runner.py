"""Run every shape of `shapes.py` once per process in a real interpreter and cache its output.

Test generation needs the outputs at collection time (which variants a shape allows), so
the runs live in one cached function that the collection, the session fixture and the
fuzz test share: the subprocesses run once per test session.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
SEED = int(os.environ.get("LOGSLEUTH_GROUNDTRUTH_SEED", "20261129"))
PER_COMBINATION = int(os.environ.get("LOGSLEUTH_GROUNDTRUTH_REPEAT", "3"))


def _shape_names() -> list[str]:
    sys.path.insert(0, str(HERE))
    try:
        import shapes
    finally:
        sys.path.remove(str(HERE))
    return sorted(shapes.SHAPES)


def run_shape(name: str) -> dict[str, Any]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1", "PYTHONFAULTHANDLER": "", "PYTHONWARNINGS": "ignore"}
    env.pop("PYTHONTRACEBACKLIMIT", None)
    done = subprocess.run(
        [sys.executable, "-X", "utf8", str(HERE / "harness.py"), name],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    if done.returncode == 0 or not done.stdout.strip():
        raise RuntimeError(f"shape {name} did not fail as planned: rc={done.returncode}\n{done.stderr}")
    expected = json.loads(done.stdout.strip().splitlines()[-1])
    expected["text"] = done.stderr
    expected["returncode"] = done.returncode
    return expected


@cache
def raw_shapes() -> dict[str, dict[str, Any]]:
    names = _shape_names()
    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(names, pool.map(run_shape, names), strict=True))

