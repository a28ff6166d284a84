"""The system libraries compiled packages load, and what installs each (shared_libraries.toml, with its sources)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows


@dataclass(frozen=True)
class SharedLibrary:
    """One library (or family): what it is and the packages that install it."""

    library: re.Pattern[str]
    component: str
    debian: str
    rhel: str
    pip: str
    note: str
    sources: tuple[str, ...]
    nvidia: bool = False  # NVIDIA's own (driver, CUDA, cuDNN, NCCL, NVSHMEM): the CUDA answer stays theirs
    platform: str = ""  # the accelerator whose runtime it is ("Ascend NPU"), empty for a system library
    platform_check: str = ""  # that vendor's command listing the devices its driver sees
    host_driver: bool = False  # the host's driver's: a container gets it from the host, never from its image


@cache
def shared_libraries() -> tuple[SharedLibrary, ...]:
    return tuple(
        SharedLibrary(re.compile(row["library"]), row["component"], row.get("debian", ""), row.get("rhel", ""),
                      row.get("pip", ""), row.get("note", ""), tuple(row.get("sources", ())),
                      bool(row.get("nvidia", False)), row.get("platform", ""), row.get("platform_check", ""),
                      bool(row.get("host_driver", False)))
        for row in table_rows("shared_libraries.toml", "library")
    )


def library_named(file_name: str) -> SharedLibrary | None:
    """The row for the library file the loader named (libnuma.so.1), or None when the table does not know it."""
    return next((row for row in shared_libraries() if row.library.fullmatch(file_name)), None)
