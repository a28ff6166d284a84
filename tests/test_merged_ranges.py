"""sources.base.merged_ranges: the byte ranges a reader reads or has examined, joined where they overlap or touch
(reading/scan.py's regions and Examined, health/scan.py's read plan)."""

from logsleuth.reading.scan import Examined, regions
from logsleuth.sources.base import merged_ranges


def test_overlapping_touching_and_contained_ranges_join_in_order() -> None:
    assert merged_ranges([(50, 60), (0, 10), (10, 20), (5, 8), (30, 40), (35, 45)]) == [(0, 20), (30, 45), (50, 60)]
    assert merged_ranges([]) == []


def test_examined_bytes_are_counted_once() -> None:
    examined = Examined()
    for start, end in ((100, 200), (150, 250), (0, 10), (10, 10)):
        examined.add(start, end)
    assert examined.total == 160


def test_regions_around_near_positions_join() -> None:
    joined = regions([1000, 1001], 10**9)
    assert len(joined) == 1 and joined[0][0] < 1000 < 1001 < joined[0][1]
