"""One version ordering for the patterns and the flag catalogs."""

from __future__ import annotations

import pytest

from logsleuth import versions
from logsleuth.fixes import catalog


@pytest.mark.parametrize(
    ("older", "newer"),
    [
        ("0.5.22", "0.5.23rc0"),
        ("0.5.23rc0", "0.5.23"),
        ("0.5.23.dev1", "0.5.23rc0"),
        ("0.5.23a1", "0.5.23b1"),
        ("0.5.23", "0.5.23.post1"),
        ("0.4.10", "0.4.10.post2"),
        ("0.5.9", "0.5.23"),
        ("0.5.9", "0.5.10"),
    ],
)
def test_ordering(older: str, newer: str) -> None:
    older_key, newer_key = versions.version_key(older), versions.version_key(newer)
    assert older_key is not None and newer_key is not None and older_key < newer_key


def test_trailing_zeros_do_not_matter() -> None:
    assert versions.version_key("0.5") == versions.version_key("0.5.0")


def test_a_pre_release_is_older_than_its_release_for_patterns_and_catalogs_alike() -> None:
    """The bug: patterns took 0.5.23rc0 as older than 0.5.23 while the 0.5.23 flag catalog was loaded."""
    assert versions.matches(("<0.5.23",), "0.5.23rc0")
    assert not versions.matches((">=0.5.23",), "0.5.23rc0")
    # A pre-release has no catalog of its own: no guess (not 0.5.23's, not the nearest older one's).
    assert catalog.load("sglang", "0.5.23rc0") is None
    assert catalog.load("sglang", "0.5.23") is not None and catalog.load("sglang", "0.5.23").version == "0.5.23"  # type: ignore[union-attr]


def test_newest_at_or_below() -> None:
    available = ["0.4.10.post2", "0.5.23", "0.5.9"]
    assert versions.newest_at_or_below(available, "0.5.10") == "0.5.9"
    assert versions.newest_at_or_below(available, "0.3.0") == "0.4.10.post2"
    assert versions.newest_at_or_below(available, None) == "0.5.23"
    assert versions.newest_at_or_below(available, "not a version") == "0.5.23"


def test_unknown_versions_match_every_constraint() -> None:
    assert versions.matches(("<0.5",), None)
    assert versions.matches(("<0.5",), "garbage")
    assert not versions.is_valid_constraint("~0.5")
