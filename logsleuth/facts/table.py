"""Reading a facts table: the TOML file beside this module, its rows under one key."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent


def table_rows(filename: str, key: str) -> list[dict[str, Any]]:
    """The rows (`[[key]]` tables) of facts/`filename`, in the file's order (parsed TOML, cached as JSON)."""
    return list(parsed_toml(filename).get(key, ()))


@cache  # one read a run: model_files.toml is read for two keys
def parsed_toml(filename: str) -> dict[str, Any]:
    """facts/`filename` parsed; from the JSON cache when the file is unchanged (toml_cache.py: tomllib is pure
    Python, ~5 ms a table; JSON is C)."""
    from logsleuth.toml_cache import parsed_files

    path = _HERE / filename
    (data,) = parsed_files([(str(path), path.read_text(encoding="utf-8"))], name="facts")
    return data
