"""The wheel ships the pattern library and reads it with importlib.resources."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

from tests.helpers import REPO


def test_wheel_contains_patterns_and_works_installed(tmp_path: Path) -> None:
    # Build from a clean copy: setuptools reuses build/ in the checkout, which may hold
    # pattern files that were since renamed or removed.
    source = tmp_path / "src"
    shutil.copytree(
        REPO, source,
        ignore=shutil.ignore_patterns(".venv", "build", "dist", ".git", "*.egg-info", "__pycache__", "data", ".*_cache"),
    )
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(tmp_path), str(source)],
        check=True,
        timeout=300,
        capture_output=True,
    )
    (wheel,) = tmp_path.glob("logsleuth-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    bundled = sorted(p.name for p in (REPO / "patterns" / "sglang").glob("*.toml"))
    assert bundled and all(f"logsleuth/patterns/sglang/{name}" in names for name in bundled)
    assert "logsleuth/report.schema.json" in names
    unpacked = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(unpacked)
    probe = (
        "import logsleuth, sys; from logsleuth.diagnosis.library import load_patterns;"
        "assert logsleuth.__file__.startswith(sys.argv[1]), logsleuth.__file__;"
        "print(len(load_patterns(include_user=False).patterns))"
    )
    out = subprocess.run(
        [sys.executable, "-c", probe, str(unpacked)],
        env={"PYTHONPATH": str(unpacked), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
        cwd=tmp_path,  # not the checkout, whose logsleuth/ would shadow the wheel's
    )
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == len(bundled)
