from __future__ import annotations

import os

import pytest


@pytest.fixture(autouse=True)
def isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read the developer's ~/.config/logsleuth patterns or known_hosts in tests."""
    config = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.delenv("NO_COLOR", raising=False)
    os.environ.setdefault("COLUMNS", "100")
