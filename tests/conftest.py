from __future__ import annotations

import os
from collections.abc import Iterator

import pytest


@pytest.fixture(scope="session", autouse=True)
def isolated_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """The parsed-pattern cache (paths.cache_dir) of this run only, not the user's ~/.cache/logsleuth: two runs at
    once must not share it (nor a test run the developer's).  One per run (per xdist worker), not per test,
    so that it still saves the parsing.  The oracle venvs are found through HOME, not XDG_CACHE_HOME."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("xdg-cache")))
        yield


@pytest.fixture(autouse=True)
def isolated_config(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """Never read the developer's ~/.config/logsleuth patterns or known_hosts in tests."""
    config = tmp_path_factory.mktemp("xdg-config")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    monkeypatch.delenv("NO_COLOR", raising=False)
    os.environ.setdefault("COLUMNS", "100")
