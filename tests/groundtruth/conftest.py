"""Session fixture: the real interpreter's output for every shape (see runner.py)."""

from __future__ import annotations

from typing import Any

import pytest
from runner import raw_shapes


@pytest.fixture(scope="session")
def shapes_output() -> dict[str, dict[str, Any]]:
    return raw_shapes()
