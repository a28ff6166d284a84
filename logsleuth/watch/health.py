"""What a running server's steady-state lines say about its health, live (`watch --then-follow`).

The same health patterns and detectors as `logsleuth health` (health/scan.py): each line after "ready" is
fed to them, and a pattern whose signal starts to hold is one warning, once.  Its thresholds are the
pattern's (patterns/sglang/health-*.toml), not this module's.
"""

from __future__ import annotations

from functools import cache

from logsleuth.health.library import HealthPattern, load_health_patterns
from logsleuth.health.scan import HealthScan
from logsleuth.models import LogLine


@cache
def _patterns() -> tuple[HealthPattern, ...]:
    """The bundled and the user's health patterns (a broken user file is skipped; `health` reports it)."""
    return load_health_patterns().patterns


class ServerHealth:
    """The health lines of a running server: each pattern warns once, when its signal first holds."""

    def __init__(self, patterns: tuple[HealthPattern, ...] | None = None) -> None:
        self._scan = HealthScan(patterns if patterns is not None else _patterns())
        self._warned: set[str] = set()

    def feed(self, line: LogLine) -> str | None:
        self._scan.feed(line)
        for pattern in self._scan.patterns:
            if pattern.id in self._warned:
                continue
            hits = [hit for detector in self._scan.detectors[pattern.id] if (hit := detector.hit()) is not None]
            if hits:
                self._warned.add(pattern.id)
                return f"{pattern.title}: {hits[0].summary}"
        return None
