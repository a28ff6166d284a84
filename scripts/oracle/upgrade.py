"""An upgrade alternative as the oracle verifiers prove it (reasoning/relaxed_check.py writes it): the same command
is to pass a later release, so it is run there, on the oldest oracle release at or after the one the upgrade names.
Shared by scripts/oracle/verify_fixes.py (SGLang) and scripts/oracle_vllm/verify_fixes.py (vLLM)."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

_UPGRADE = re.compile(r'pip install --upgrade "(?P<engine>sglang|vllm)>=(?P<release>[0-9][\w.]*)"')


def upgrade_target(entry: dict[str, Any]) -> tuple[str, str] | None:
    """(engine, release) of an upgrade alternative (`pip install --upgrade "vllm>=0.15.0"`, no flag or env change),
    else None."""
    if entry.get("flags") or entry.get("env"):
        return None
    found = (_UPGRADE.search(step) for step in entry.get("steps") or [])
    return next(((m["engine"], m["release"]) for m in found if m), None)


def release_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def oldest_at_or_after(release: str, versions: Iterable[str]) -> str | None:
    """The oracle release to run an upgrade's command on: the oldest at or after `release` (None when none is)."""
    later = [v for v in versions if release_key(v) >= release_key(release)]
    return min(later, key=release_key) if later else None
