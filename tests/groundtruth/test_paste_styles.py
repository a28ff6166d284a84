"""CPython ground truth in the paste styles of the wild corpus.

Every shape's real output is pasted in every style that can carry it (paste_styles.py), parsed,
and compared with what the interpreter knew: type, message, relation and every frame of every
exception, the number of failures, and whether the paste lost part of the traceback.  Select with
`-k`, e.g. `pytest tests/groundtruth/test_paste_styles.py -k "hard-wrap and cause"`.
"""

from __future__ import annotations

import random
from typing import Any

import pytest
from paste_styles import STYLES, Expected, Style, hard_wrap_at, is_traceback, lines_of, whole
from runner import SEED, raw_shapes
from test_groundtruth import as_data, scan_bytes

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from logsleuth.models import Failure

SHAPES = raw_shapes()
CASES = [(style, name) for style in STYLES for name in sorted(SHAPES) if style.fits(SHAPES[name])]
NO_PATTERNS = PatternSet(patterns=[], errors=[])


def _seed(style: Style, shape: str) -> int:
    return SEED + sum(map(ord, style.name + shape))


def _check(failures: list[Failure], expected: Expected, paste: str) -> None:
    assert len(failures) == expected.count, f"{[as_data(f.final) for f in failures]}\npaste was:\n{paste}"
    for failure in failures:
        assert [as_data(block) for block in failure.exceptions] == expected.exceptions, f"paste was:\n{paste}"
        assert failure.kind == expected.kind
        assert failure.truncated == expected.truncated
        if expected.header is not None:
            assert failure.header == expected.header


@pytest.mark.parametrize(("style", "shape"), CASES, ids=[f"{style.name}-{shape}" for style, shape in CASES])
def test_paste_style(style: Style, shape: str) -> None:
    raw = SHAPES[shape]
    paste = style.paste(raw, random.Random(_seed(style, shape)))
    assert paste != raw["text"], "the style changed nothing"
    expected = style.expect(raw)
    data = paste.encode("utf-8")
    _check(scan_bytes(data, chunk=4096 if len(data) % 2 else 61), expected, paste)


def _first_frame_cuts(raw: dict[str, Any]) -> list[int]:
    """The terminal widths that cut a traceback's first frame line inside its function name (the line may
    be the first one that long), leaving out widths that some line has by itself (a paste cannot tell an
    uncut line of exactly that width from a cut one) and widths that leave a piece of blanks on a line of its
    own (a trailing space cut off: nothing tells it from a blank line)."""
    lines = lines_of(raw)
    first = next((line for line in lines if line.lstrip(" |").startswith('File "')), None)
    if first is None or ", in " not in first:
        return []
    name_starts = first.rindex(", in ") + len(", in ")
    lengths = {len(line) for line in lines}

    def cuts_off_blanks(width: int) -> bool:
        return any(not line[i : i + width].strip() for line in lines for i in range(width, len(line), width))

    widths = range(max(name_starts + 1, 60), len(first))
    return [width for width in widths if width not in lengths and not cuts_off_blanks(width)]


HARD_WRAP_CUTS = [(name, width) for name in sorted(SHAPES) if is_traceback(SHAPES[name]) for width in _first_frame_cuts(SHAPES[name])]


@pytest.mark.parametrize(("shape", "width"), HARD_WRAP_CUTS, ids=[f"{name}-{width}" for name, width in HARD_WRAP_CUTS])
def test_a_hard_wrap_inside_the_first_frames_function_name_is_rejoined(shape: str, width: int) -> None:
    """The cut falls where the checkout's path puts it; every width that cuts the first frame's function
    name is tried, so the result does not depend on where the tests run."""
    raw = SHAPES[shape]
    paste = hard_wrap_at(raw, width)
    _check(scan_bytes(paste.encode("utf-8"), chunk=4096), whole(raw), paste)


@pytest.mark.parametrize("style", STYLES, ids=[style.name for style in STYLES])
def test_every_style_is_exercised(style: Style) -> None:
    assert any(case_style is style for case_style, _ in CASES), f"{style.name} fits no shape"


@pytest.mark.parametrize(
    "style",
    [style for style in STYLES if style.name in ("docker-compose", "hard-wrap", "double-space", "inline-in-sentence", "quote")],
    ids=lambda style: style.name,
)
def test_paste_style_end_to_end(style: Style) -> None:
    """The whole pipeline (reader, grouping) on one shape per style: the report's failure is CPython's."""
    name = next(shape for candidate, shape in CASES if candidate is style)
    raw: dict[str, Any] = SHAPES[name]
    paste = style.paste(raw, random.Random(_seed(style, name)))
    expected = style.expect(raw)
    report = diagnose_text(paste, DiagnoseOptions(all_failures=True), patterns=NO_PATTERNS)
    assert [group.count for group in report.failures] == [expected.count]
    assert [as_data(block) for block in report.failures[0].failure.exceptions] == expected.exceptions
