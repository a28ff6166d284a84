"""Reading a facts table: the TOML file beside this module, its rows under one key."""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent


def table_rows(filename: str, key: str) -> list[dict[str, Any]]:
    """The rows (`[[key]]` tables) of facts/`filename`, in the file's order."""
    return list(tomllib.loads((_HERE / filename).read_text(encoding="utf-8")).get(key, ()))
