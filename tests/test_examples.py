"""The shipped examples are what examples/make_examples.py makes (the two tp8 logs) and what it says they are."""

from __future__ import annotations

import subprocess
import sys

from tests.helpers import REPO


def test_generated_examples_are_current() -> None:
    done = subprocess.run(
        [sys.executable, str(REPO / "examples" / "make_examples.py"), "--check"],
        capture_output=True, text=True, timeout=300,
    )
    assert done.returncode == 0, done.stderr


def test_the_examples_readme_names_each_example() -> None:
    readme = (REPO / "examples" / "README.md").read_text(encoding="utf-8")
    logs = sorted(path.name for path in (REPO / "examples").glob("*.log"))
    assert len(logs) == 3
    assert all(f"[`{name}`]({name})" in readme for name in logs)
