"""The bundled pattern library of the checkout the code runs from (paths.bundled_patterns_dir).

A second checkout (a git worktree) run with PYTHONPATH imports its own `logsleuth`, but `logsleuth.patterns` would
come from the editable install's checkout: its patterns and its fixes' builders would then not match the code."""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import logsleuth.paths


def test_a_checkouts_own_patterns_come_first(tmp_path: Path) -> None:
    checkout = tmp_path / "other-checkout"
    (checkout / "logsleuth").mkdir(parents=True)
    (checkout / "patterns").mkdir()
    (checkout / "patterns" / "__init__.py").write_text("")
    (checkout / "pyproject.toml").write_text('[project]\nname = "logsleuth"\n')
    shutil.copy(Path(logsleuth.paths.__file__), checkout / "logsleuth" / "paths.py")
    spec = importlib.util.spec_from_file_location("other_checkout_paths", checkout / "logsleuth" / "paths.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.bundled_patterns_dir() == (checkout / "patterns").resolve()


def test_without_a_checkout_around_it_the_installed_package_is_read(tmp_path: Path) -> None:
    installed = tmp_path / "site-packages" / "logsleuth"
    installed.mkdir(parents=True)
    shutil.copy(Path(logsleuth.paths.__file__), installed / "paths.py")
    spec = importlib.util.spec_from_file_location("installed_paths", installed / "paths.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.bundled_patterns_dir() == Path(next(iter(__import__("logsleuth.patterns").patterns.__path__)))
