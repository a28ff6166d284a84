"""Which distribution installs a module (imports.toml): `cv2` -> opencv-python-headless, `sgl_kernel` -> sgl-kernel.

The table is written by scripts/facts/import_names.py from the files each distribution installs (its RECORD);
`source` on every row names what was read."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

DATA = Path(__file__).with_name("imports.toml")  # package data beside this module


@lru_cache(maxsize=1)
def _modules() -> dict[str, tuple[str, ...]]:
    from logsleuth.facts.table import parsed_toml

    table = parsed_toml(DATA.name)["modules"]
    return {module: tuple(row["distributions"]) for module, row in table.items()}


def distributions_of(module: str) -> tuple[str, ...]:
    """The distributions that install `module` or the package it is in (`google.protobuf.internal` ->
    protobuf), longest known prefix first; () when the table does not know it."""
    parts = module.split(".")
    for length in range(len(parts), 0, -1):
        found = _modules().get(".".join(parts[:length]))
        if found:
            return found
    return ()


def module_names() -> tuple[str, ...]:
    """Every module the table names (`torch`, `sgl_kernel`, `google.protobuf`)."""
    return tuple(_modules())
