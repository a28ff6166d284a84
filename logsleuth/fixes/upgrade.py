""""Upgrade" as a fix of its own: a failure that matches a bug an engine release fixed (a pattern's `fixed_in`).

When the log's version is older than that release, or unknown, upgrading comes first and the pattern's
configuration workaround follows as an alternative.  When the version is that release or newer, the
workaround stands alone (the bug is back, or this is another one with the same face).
"""

from __future__ import annotations

from dataclasses import replace

from logsleuth import versions
from logsleuth.models import ENGINE_NAMES, Fix

_PACKAGES = {"sglang": "sglang", "vllm": "vllm"}


def with_upgrade(fix: Fix | None, fixed_in: str, engine: str | None, version: str | None) -> Fix | None:
    engine = engine or "sglang"
    name = ENGINE_NAMES.get(engine, engine)
    running = versions.version_key(version) if version else None
    fixed = versions.version_key(fixed_in)
    if running is not None and fixed is not None and running >= fixed:
        return fix
    install = f'pip install --upgrade "{_PACKAGES.get(engine, engine)}>={fixed_in}"'
    if running is None:
        summary = f"If your {name} is older than {fixed_in}, upgrade: this is a bug of earlier releases, fixed in {fixed_in}."
    else:
        summary = f"Upgrade {name} to {fixed_in} or later: {version} has this bug, fixed in {fixed_in}."
    workarounds: tuple[Fix, ...] = ()
    if fix is not None:
        workarounds = (replace(fix, summary=_as_alternative(fix.summary), alternatives=()), *fix.alternatives)
    return Fix(summary=summary, steps=(install,), alternatives=workarounds)


def _as_alternative(summary: str) -> str:
    return summary if summary.lower().startswith("or") else f"Or, without upgrading: {summary[:1].lower()}{summary[1:]}"
