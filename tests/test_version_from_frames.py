"""Issue 29, Done-when: on the corpora, the release a report infers is consistent with the frames.  Where the
log names no release and logsleuth infers one, the raising frame's line numbers, when the raise site index places
them (RaiseSite.framed), must match that release: the header's version and the raise site's agree."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.reasoning.raise_site import site_of
from tests.helpers import corpus_logs

SHARDS = 2


def _inconsistent(logs: list[Path]) -> tuple[list[str], int]:
    """The logs whose inferred release is not one the root failure's raise site stands at, and how many were
    checked (an inferred release and a frame the index places)."""
    wrong, checked = [], 0
    for log in logs:
        report = diagnose_text(log.read_text(encoding="utf-8", errors="surrogateescape"),
                               DiagnoseOptions(include_user_patterns=False, all_failures=True))
        launch = report.launch
        if not report.failures or launch.engine_version_source != "inferred":
            continue
        site = site_of(report.failures[0].failure, launch)
        if site is None or not site.framed:
            continue
        checked += 1
        if launch.engine_version not in site.framed:
            wrong.append(f"{log}: inferred {launch.engine_version}, the frames match {', '.join(site.framed)}")
    return wrong, checked


@pytest.mark.parametrize("shard", range(SHARDS))
def test_an_inferred_release_is_one_the_raising_frame_matches(shard: int) -> None:
    wrong, checked = _inconsistent(corpus_logs()[shard::SHARDS])
    assert wrong == [], "\n".join(wrong)
    assert checked > 3  # not vacuous: each shard has logs whose release is inferred and whose frames are placed

