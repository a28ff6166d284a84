"""The sparkline of a health series: fixed width, lowest and highest value labelled, gaps for missing values."""

from __future__ import annotations

import math

import pytest

from logsleuth.render.sparkline import BARS, bars, format_value, sparkline


def test_lowest_and_highest_values_get_the_lowest_and_highest_bars() -> None:
    line = bars((1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0), 8)
    assert line == BARS
    assert bars((8.0, 1.0), 2) == "█▁"


def test_width_is_fixed_whatever_the_number_of_values() -> None:
    assert len(bars((1.0, 9.0), 20)) == 20
    assert bars((1.0, 9.0), 4) == "▁▁██"  # stretched: each value keeps its share of the time axis
    many = tuple(float(i) for i in range(100))
    assert len(bars(many, 10)) == 10
    assert bars(many, 10)[0] == "▁" and bars(many, 10)[-1] == "█"


def test_many_values_are_averaged_per_column() -> None:
    # Two columns: the mean of (0, 0, 0, 10) and of (10, 10, 10, 10).
    assert bars((0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 10.0, 10.0), 2) == "▃█"


def test_labels_name_the_lowest_and_highest_value_with_the_unit() -> None:
    line = sparkline((212.0, 2904.4, 1500.0), 6, "token/s")
    assert line == "▁▁██▄▄  min 212  max 2,904 token/s"


def test_flat_series_is_a_level_line_labelled_once() -> None:
    assert sparkline((1.0, 1.0, 1.0), 6, "tokens") == "▄▄▄▄▄▄  flat 1 tokens"
    assert sparkline((0.0,), 3) == "▄▄▄  flat 0"


def test_empty_series_says_so_in_the_same_width() -> None:
    line = sparkline((), 6, "requests")
    assert line == "······  no data"
    assert bars((), 6) == "······"


def test_missing_values_are_gaps_and_do_not_move_the_scale() -> None:
    line = sparkline((1.0, math.nan, 3.0, math.inf), 4)
    assert line == "▁ █   min 1  max 3"
    assert sparkline((math.nan, math.nan), 3) == "···  no data"


@pytest.mark.parametrize(
    ("value", "text"),
    [
        (0.0, "0"),
        (148.0, "148"),
        (2904.4, "2,904"),
        (12.34, "12.3"),
        (1.0, "1"),
        (0.523, "0.52"),
        (-3.0, "-3"),
    ],
)
def test_values_are_short(value: float, text: str) -> None:
    assert format_value(value) == text


def test_one_series_labels_its_values_with_one_precision() -> None:
    """An accept length that starts at exactly 1 still reads as a mean: 1.00, like the 2.93 beside it."""
    assert sparkline((1.0, 2.93), 2) == "▁█  min 1.00  max 2.93"
    assert sparkline((3.0, 148.0), 2) == "▁█  min 3  max 148"


def test_a_floor_draws_quantities_from_it_so_noise_stays_flat() -> None:
    assert bars((1.0, 1.01), 2) == "▁█", "without a floor, the scale is the values' own range"
    assert bars((1.0, 1.01), 2, floor=0.0) == "██"
    assert bars((2.9, 1.0), 2, floor=0.0) == "█▃", "a drop from 2.9 to 1.0 is a drop"
    assert bars((0.0, 0.0), 2, floor=0.0) == "▁▁", "always zero is the floor, not a level line"
    assert bars((-1.0, 1.0), 2, floor=0.0) == "▁█", "a value below the floor moves the scale"
    assert sparkline((1.0, 1.01), 2, "tokens", floor=0.0) == "██  min 1.00  max 1.01 tokens"


def test_width_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="width"):
        bars((1.0,), 0)


def test_a_span_keeps_noise_near_the_floor_low() -> None:
    """Accept length is drawn from 1 token over at least 1 token: 1.00 to 1.02 stays at the bottom."""
    assert bars((1.0, 1.0), 2, floor=1.0, span=1.0) == "▁▁"
    assert bars((1.0, 1.02), 2, floor=1.0, span=1.0) == "▁▁"
    assert bars((1.0, 3.5), 2, floor=1.0, span=1.0) == "▁█", "a real range keeps its own scale"
    assert bars((1.0, 1.5), 2, floor=1.0, span=1.0) == "▁▅"
