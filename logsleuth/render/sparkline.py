"""A series of numbers as one line of block characters, `▁▂▄█▇▅  min 212  max 2,904 token/s`.

Pure functions of plain floats, shared by the text, rich, Markdown and Slack health reports.  Every sparkline
of a report has the same width, so the series line up on one time axis: fewer values than columns are
stretched, more are averaged per column.  A missing value (NaN, ±inf) is a gap and never moves the scale.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

BARS = "▁▂▃▄▅▆▇█"
FLAT_BAR = BARS[3]  # a constant series: a level line half-way up, not a floor that reads as zero
GAP = " "
NO_DATA = "·"
LARGEST_PLAIN = 1e15  # from here on a value is written in exponent form


def _columns(values: Sequence[float], width: int) -> list[float]:
    """`values` as exactly `width` numbers: each column the mean of the finite values that fall in it (NaN
    when none does); with fewer values than columns, each value spans several."""
    count = len(values)
    out = []
    for column in range(width):
        start = column * count // width
        end = max(start + 1, (column + 1) * count // width)
        numbers = finite(values[start:end])
        out.append(sum(numbers) / len(numbers) if numbers else math.nan)
    return out


def finite(values: Sequence[float]) -> list[float]:
    """The values that are numbers: NaN and ±inf are missing values."""
    return [value for value in values if math.isfinite(value)]


def value_range(values: Sequence[float]) -> tuple[float, float] | None:
    """The lowest and highest finite value, or None when there is none."""
    numbers = finite(values)
    return (min(numbers), max(numbers)) if numbers else None


def bars(values: Sequence[float], width: int, floor: float | None = None, span: float | None = None) -> str:
    """Exactly `width` block characters, scaled from the lowest finite value (▁) to the highest (█).

    With `floor` the scale starts there instead (when no value is below it): a quantity drawn from zero shows
    throughput wavering between 1,000 and 1,010 as the flat line it is, not as a jump from ▁ to █.  With `span`
    the scale is at least that tall: drawn from a floor of 1 over at least 1, an accept length of 1.00 to 1.02
    (speculation gaining nothing) stays at the bottom instead of filling every bar."""
    if width < 1:
        raise ValueError(f"sparkline width must be at least 1, not {width}")
    bounds = value_range(values)
    if bounds is None:
        return NO_DATA * width
    low, high = bounds
    if floor is not None and floor < low:
        low = floor
    if span is not None and high < low + span:
        high = low + span
    line = []
    for value in _columns(values, width):
        if math.isnan(value):
            line.append(GAP)
        elif high == low:  # all equal: a level line, or the floor itself
            line.append(BARS[0] if floor == low else FLAT_BAR)
        else:  # halves first: the difference of two large floats (1e308 and -1e308) would overflow
            share = (value / 2 - low / 2) / (high / 2 - low / 2)
            line.append(BARS[round(share * (len(BARS) - 1))])
    return "".join(line)


def decimals_for(values: Sequence[float]) -> int:
    """One precision for a whole series: none for counts, fewer as the numbers grow."""
    numbers = finite(values)
    if all(value == int(value) for value in numbers):
        return 0
    largest = max(abs(value) for value in numbers)
    return 0 if largest >= 100 else 1 if largest >= 10 else 2


def format_value(value: float, decimals: int | None = None) -> str:
    """`2,904`, `12.3`, `0.52`, `148`; `decimals` None: chosen for this value alone."""
    if abs(value) >= LARGEST_PLAIN:
        return f"{value:.3g}"  # `1e+308`, not 300 digits
    places = decimals_for((value,)) if decimals is None else decimals
    return f"{value:,.{places}f}"


def sparkline(
    values: Sequence[float], width: int, unit: str = "", floor: float | None = None, span: float | None = None
) -> str:
    """The bars (see `bars`), then the lowest and highest value and the unit (`flat 1.00` when they are equal,
    `no data` when there is no finite value)."""
    line = bars(values, width, floor, span)
    bounds = value_range(values)
    if bounds is None:
        return f"{line}  no data"
    places = decimals_for(values)
    low, high = (format_value(bound, places) for bound in bounds)
    labels = f"flat {low}" if bounds[0] == bounds[1] else f"min {low}  max {high}"
    return f"{line}  {labels}" + (f" {unit}" if unit else "")
