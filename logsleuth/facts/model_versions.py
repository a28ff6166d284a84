"""Which versions of a model family each indexed SGLang and vLLM release implements (model_versions.json, written by
scripts/engine_index/model_versions.py from the released wheels the raise-site index reads).

Some model classes serve several versions of one family and refuse a checkpoint of any other version in their own
words (vLLM's and SGLang's MiniCPMV, "Currently, MiniCPMV only supports versions …"; vLLM's MiniCPMO; the table also
holds vLLM's Grok, whose refusal no indexed release can raise): the versions are the keys of the dict the class looks the checkpoint's version up
in.  This table says which indexed releases hold each version, so the advice names releases from facts.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

from logsleuth.facts.engine_modules import Presence, release_indices

ENGINES = ("sglang", "vllm")


@lru_cache(maxsize=1)
def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads((Path(__file__).parent / "model_versions.json").read_text())
    return table


def families(engine: str) -> tuple[str, ...]:
    """The families whose versions the engine's indexed releases check."""
    return tuple(_table()["engines"].get(engine, {}).get("families", {}))


def versions_of(engine: str, family: str) -> dict[str, Presence]:
    """Per version of `family`, the indexed releases of `engine` that implement it (empty: no such family)."""
    table = _table()["engines"].get(engine)
    if table is None or family not in table["families"]:
        return {}
    releases = tuple(table["releases"])
    return {version: _presence(engine, f"{family} {version}", release_indices(runs), releases)
            for version, runs in table["families"][family].items()}


def _presence(engine: str, what: str, held: set[int], releases: tuple[str, ...]) -> Presence:
    """The releases whose index is in `held` (parsed once per version, not once per release)."""
    return Presence(engine, what, tuple(v for i, v in enumerate(releases) if i in held), releases)
