"""What each SGLang and vLLM release pins (Requires-Dist read from its real wheel): filled in by its own work."""

from __future__ import annotations


def pinned_requirement(engine: str, version: str | None, distribution: str) -> str | None:
    """The requirement `engine` `version` declares on `distribution` (e.g. "transformers==4.51.1"), or None when
    the release is unknown or declares none."""
    return None
