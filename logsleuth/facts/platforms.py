"""The accelerators other than NVIDIA's CUDA GPUs, how a log shows each and each one's own tools (platforms.toml)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import table_rows


@dataclass(frozen=True)
class Platform:
    """One accelerator platform: the names only its stack prints (`shows`, one regex), and its counterparts of
    NVIDIA's checks (empty where it has none), its memory check, the stack whose versions must match, its sources;
    `fallback`: the engine also picks it when it finds no GPU."""

    key: str
    name: str
    shows: re.Pattern[str]
    smi: str
    visible: str
    blocking: str
    memory: str
    versions: str
    sources: tuple[str, ...]
    fallback: bool = False  # also picked when no GPU is found: NVIDIA's checks may be the right ones
    honours: tuple[str, ...] = ()  # NVIDIA's names its own stack reads too (HIP reads CUDA_VISIBLE_DEVICES)
    package: str = ""  # the check that its device package imports, where the engine finds no device without it


@cache
def platforms() -> tuple[Platform, ...]:
    return tuple(
        Platform(row["key"], row["name"], re.compile("|".join(f"(?:{word})" for word in row["shows"])), row["smi"],
                 row["visible"], row["blocking"], row["memory"], row["versions"], tuple(row["sources"]),
                 row.get("fallback", False), tuple(row.get("honours", ())), row.get("package", ""))
        for row in table_rows("platforms.toml", "platform")
    )
