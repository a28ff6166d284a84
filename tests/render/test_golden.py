"""Golden files: every format for every hand-built report, at width 100 without colour.

Any change to the output fails here.  After an intended change, refresh and review:

    LOGSLEUTH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/render   # or: ... make test
    git diff tests/render/golden/ docs/report-formats.md
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logsleuth.render.options import OutputFormat
from tests.render.cases import CASES
from tests.render.helpers import EXTENSIONS, FORMATS, render

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("LOGSLEUTH_UPDATE_GOLDEN") == "1"


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, fmt: OutputFormat) -> None:
    output = render(CASES[case](), fmt)
    path = GOLDEN / f"{case}.{EXTENSIONS[fmt]}"
    if UPDATE:
        path.write_text(output, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path.name}; run with LOGSLEUTH_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert output == expected, f"{path.name} changed; if intended, refresh with LOGSLEUTH_UPDATE_GOLDEN=1"
