"""The wheel: built without a warning from our own metadata, it ships the pattern library (read with
importlib.resources), the license and one version, and it works installed."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from email.message import Message
from email.parser import HeaderParser
from pathlib import Path

import pytest

import logsleuth
from tests.helpers import REPO

PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))


class Built:
    def __init__(self, wheel: Path, log: str) -> None:
        self.wheel = wheel
        self.log = log
        self.names = zipfile.ZipFile(wheel).namelist()

    def read(self, name: str) -> str:
        return zipfile.ZipFile(self.wheel).read(name).decode("utf-8")

    @property
    def metadata(self) -> Message:
        (name,) = [n for n in self.names if n.endswith(".dist-info/METADATA")]
        return HeaderParser().parsestr(self.read(name))


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Built:
    """The wheel, built by the build backend as `python -m build` and `pip wheel .` call it, from a clean copy
    (setuptools reuses build/ in the checkout, which may hold files since renamed), with every Python warning
    shown.  No build isolation: the venv's setuptools (the dev extra pins the version pyproject requires), so
    the test needs no network."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    shutil.copytree(
        REPO, source,
        ignore=shutil.ignore_patterns(".venv", "build", "dist", ".git", "*.egg-info", "__pycache__", "data", ".*_cache"),
    )
    out = tmp / "dist"
    build = f"import setuptools.build_meta as backend; backend.build_wheel({str(out)!r})"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # its notice is not ours
    done = subprocess.run(
        [sys.executable, "-W", "always", "-c", build], cwd=source, env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("logsleuth-*.whl")
    return Built(wheel, done.stdout + done.stderr)


def test_the_build_prints_no_warning(built: Built) -> None:
    # A warning as setuptools and its plugins print one (`warning: no files found`, `SetuptoolsDeprecationWarning:`),
    # not a module whose name holds the word (tracebacks/warned_failures.py is copied like any other).
    warnings = [line for line in built.log.splitlines() if re.search(r"warning\b|\bwarn\b", line, re.IGNORECASE)]
    assert not warnings, "\n".join(warnings)


def test_wheel_contains_patterns_and_works_installed(built: Built, tmp_path: Path) -> None:
    bundled = sorted(p.relative_to(REPO / "patterns").as_posix() for p in (REPO / "patterns").glob("*/*.toml"))
    assert bundled and all(f"logsleuth/patterns/{name}" in built.names for name in bundled)
    assert any(name.startswith("vllm/") for name in bundled)
    for schema in ("report", "health_report", "diff", "watch_events"):
        assert f"logsleuth/{schema}.schema.json" in built.names
    catalogs = sorted(p.name for p in (REPO / "logsleuth" / "fixes" / "catalogs").glob("*.json*"))
    assert "static.json.gz" in catalogs
    assert catalogs and all(f"logsleuth/fixes/catalogs/{name}" in built.names for name in catalogs)
    unpacked = tmp_path / "site"
    zipfile.ZipFile(built.wheel).extractall(unpacked)
    probe = (
        "import logsleuth, sys; from logsleuth.diagnosis.library import load_patterns;"
        "assert logsleuth.__file__.startswith(sys.argv[1]), logsleuth.__file__;"
        "from logsleuth.health.library import load_health_patterns;"
        "print(len(load_patterns(include_user=False).patterns) + len(load_health_patterns(include_user=False).patterns))"
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


def test_the_license_ships_as_an_spdx_expression(built: Built) -> None:
    assert PYPROJECT["project"]["license"] == "Apache-2.0"
    assert built.metadata["License-Expression"] == "Apache-2.0"
    license_file = next(n for n in built.names if n.endswith(".dist-info/licenses/LICENSE"))
    text = built.read(license_file)
    assert "Apache License" in text and "Version 2.0, January 2004" in text and "END OF TERMS AND CONDITIONS" in text
    assert text == (REPO / "LICENSE").read_text(encoding="utf-8")


def test_the_version_is_written_once(built: Built) -> None:
    project = PYPROJECT["project"]
    assert "version" not in project and project["dynamic"] == ["version"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "logsleuth.__version__"}
    assert built.metadata["Version"] == logsleuth.__version__


def test_metadata_has_classifiers_and_keywords(built: Built) -> None:
    classifiers = built.metadata.get_all("Classifier") or []
    assert "Programming Language :: Python :: 3.11" in classifiers
    assert "Environment :: Console" in classifiers
    assert not [c for c in classifiers if c.startswith("License ::")], "the SPDX expression replaces license classifiers"
    assert built.metadata["Requires-Python"] == ">=3.11"


def test_every_package_is_listed() -> None:
    """Every directory that ships (Python modules or data) is a listed package: setuptools warns about, and
    a future version drops, data in a directory it was not told about."""
    listed = set(PYPROJECT["tool"]["setuptools"]["packages"])
    tree = {
        "logsleuth." + ".".join(path.relative_to(REPO / "logsleuth").parts)
        for path in (REPO / "logsleuth").rglob("*")
        if path.is_dir() and path.name != "__pycache__" and any(f.is_file() for f in path.iterdir())
    } | {"logsleuth"}
    tree |= {
        "logsleuth.patterns." + path.name
        for path in (REPO / "patterns").iterdir()
        if path.is_dir() and path.name != "__pycache__"
    }
    tree.add("logsleuth.patterns")
    tree = {name.rstrip(".") for name in tree}
    assert tree - listed == set() and listed - tree == set()


def test_readme_says_how_to_install_for_use() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert "pipx install ." in readme
    assert re.search(r"typer.*0\.29", readme), "and why not into an SGLang virtualenv"
