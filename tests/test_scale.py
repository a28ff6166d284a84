"""Logs with many tracebacks: the dense reading path, the bound on groups, bytes read.

The dense path is checked against the exact one (every line through the normalizer and the
scanner, then the grouper) on small logs built from real CPython tracebacks.  Speed is not
tested here: `make bench` measures it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.diagnosis.grouping import MAX_GROUPS, DistinctCounter, Grouper
from logsleuth.ingest.normalize import normalize_chunks
from logsleuth.reading import reader
from logsleuth.sources.local import LocalFileSource
from logsleuth.tracebacks.scanner import FailureScanner
from tests.logs import (
    crash_record,
    dense_log,
    distinct_tracebacks,
    launch_line,
    sglang_record,
)


def _exact_groups(text: str) -> dict[str, tuple[int, frozenset[str], int]]:
    """fingerprint -> (count, ranks, offset of the first failure), every line parsed."""
    scanner = FailureScanner()
    for line in normalize_chunks([text.encode()]):
        scanner.feed(line)
    grouper = Grouper(max_groups=None)
    for failure in scanner.finish():
        grouper.add(failure, "log")
    return {g.fingerprint: (g.count, frozenset(g.ranks), g.failure.offset) for g in grouper.groups()}


def _dense_groups(groups: Grouper) -> dict[str, tuple[int, frozenset[str], int]]:
    return {g.fingerprint: (g.count, frozenset(g.ranks), g.failure.offset) for g in groups.groups()}


def _write(tmp_path: Path, text: str) -> LocalFileSource:
    path = tmp_path / "dense.log"
    path.write_text(text)
    return LocalFileSource(str(path))


@pytest.mark.parametrize(
    ("distinct", "extra"),
    [
        (1, ""),
        (12, ""),
        (40, "Received sigquit from a child process. It usually means the child failed."),
        (25, "ValueError: a bare error line between the records"),
    ],
    ids=["one-failure", "twelve-failures", "kill-notices", "bare-errors"],
)
@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
def test_dense_path_finds_what_the_exact_path_finds(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, distinct: int, extra: str
) -> None:
    text = dense_log(5000, distinct, extra=extra)
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)  # take the dense path on this small log
    result = reader.read_all(_write(tmp_path, text))
    assert result.groups is not None, "the dense path was not taken"
    assert _dense_groups(result.groups) == _exact_groups(text)
    assert result.groups.omitted_failures == 0


def test_dense_path_keeps_the_cascade_of_kill_notices(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = dense_log(3000, 3, extra="Received sigquit from a child process. It usually means the child failed.")
    monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
    result = reader.read_all(_write(tmp_path, text))
    assert result.groups is not None
    cascades = [group.cascade for group in result.groups.groups()]
    assert any(c and c[0].startswith("Received sigquit") for c in cascades)


def test_at_most_max_groups_and_the_rest_counted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    distinct = MAX_GROUPS + 37
    records = [crash_record("2026-11-29 10:00:00", "TP0", tb) for tb in distinct_tracebacks(distinct)]
    text = launch_line() + "".join(records) + "".join(records[-10:])  # the last ten twice
    source = _write(tmp_path, text)
    exact = _exact_groups(text)
    assert len(exact) == distinct
    for dense in (False, True):
        if dense:
            monkeypatch.setattr(reader, "DENSE_ANCHORS", 100)
        report = diagnose([source.path], DiagnoseOptions(all_failures=True, include_user_patterns=False))
        assert len(report.failures) == MAX_GROUPS
        assert {g.fingerprint for g in report.failures} == set(list(exact)[:MAX_GROUPS])
        assert (report.omitted_failures, report.omitted_groups) == (37 + 10, 37)
        assert not report.omitted_groups_estimated


def test_default_mode_on_a_dense_log_stays_bounded(tmp_path: Path) -> None:
    """Tens of thousands of copies of one failure after the launch: the window grows the dense
    way, each step reading only what the last one did not."""
    text = dense_log(30_000, 1, seed=3)
    source = _write(tmp_path, text)
    result = reader.read_latest(source, max_bytes=8 << 20)
    assert result.groups is not None, "the dense path was not taken"
    (group,) = result.groups.groups()
    assert group.count > 5000
    assert len(group.ranks) == 8
    assert result.bytes_read <= result.size and result.bytes_read <= 8 << 20


def test_default_mode_stops_once_it_holds_max_groups(tmp_path: Path) -> None:
    records = [crash_record("2026-11-29 10:00:00", f"TP{i % 8}", tb) for i, tb in enumerate(distinct_tracebacks(3 * MAX_GROUPS))]
    source = _write(tmp_path, launch_line() + "".join(records))
    result = reader.read_latest(source)
    assert all(failure.final.frames for failure in result.failures)  # no piece of one cut by the window
    assert len({failure.final.frames[-1].function for failure in result.failures}) >= MAX_GROUPS
    assert result.bytes_read < result.size  # it did not go back to the launch line


def test_bytes_read_counts_each_byte_once(tmp_path: Path) -> None:
    text = launch_line() + "".join(
        crash_record("2026-11-29 10:00:00", "TP0", tb) + sglang_record("2026-11-29 10:00:00", "TP0", "x" * 4000)
        for tb in distinct_tracebacks(60)
    )
    source = _write(tmp_path, text)
    size = len(text.encode())
    assert reader.read_all(source).bytes_read == size  # the anchor search looked at every byte once
    latest = reader.read_latest(source, initial=16 << 10)  # windows of 16, 64 KiB... each re-read
    assert latest.bytes_read <= size


def test_distinct_counter_is_exact_then_close() -> None:
    counter = DistinctCounter()
    keys = [hash(f"failure {i}") for i in range(300_000)]
    for key in keys[:1000] * 3:
        counter.add(key)
    assert (counter.value, counter.estimated) == (1000, False)
    for key in keys:
        counter.add(key)
    assert counter.estimated
    assert abs(counter.value - 300_000) < 300_000 * 0.03
    halves = DistinctCounter(), DistinctCounter()
    for i, key in enumerate(keys):
        halves[i % 2].add(key)
        halves[(i + 1) % 2].add(key) if i % 3 == 0 else None
    halves[0].merge(halves[1])
    assert abs(halves[0].value - 300_000) < 300_000 * 0.03
