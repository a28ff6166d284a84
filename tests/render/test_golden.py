"""Golden files: every format for every hand-built report without colour; rich and text, which wrap, at 60,
80 and 200 columns.

Any change to the output fails here.  After an intended change, refresh and review:

    LOGSLEUTH_UPDATE_GOLDEN=1 .venv/bin/python -m pytest tests/render   # or: ... make test
    git diff tests/render/golden/ docs/report-formats.md
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from logsleuth.render.options import OutputFormat
from tests.hostile.checks import assert_safe_shell_command, printed_commands
from tests.render.cases import CASES
from tests.render.helpers import EXTENSIONS, golden_name, golden_variants, render

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("LOGSLEUTH_UPDATE_GOLDEN") == "1"
VARIANTS = golden_variants()
IDS = [f"{fmt.value}-{width}" if width else fmt.value for fmt, width in VARIANTS]


@pytest.mark.parametrize(("fmt", "width"), VARIANTS, ids=IDS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str, fmt: OutputFormat, width: int | None) -> None:
    output = render(CASES[case](), fmt, **({"width": width} if width else {}))
    path = GOLDEN / golden_name(case, fmt, width)
    if UPDATE:
        path.write_text(output, encoding="utf-8")
        return
    assert path.exists(), f"no golden file {path.name}; run with LOGSLEUTH_UPDATE_GOLDEN=1 to create it"
    expected = path.read_text(encoding="utf-8")
    assert output == expected, f"{path.name} changed; if intended, refresh with LOGSLEUTH_UPDATE_GOLDEN=1"


def test_no_stale_golden_files() -> None:
    """Every file in golden/ is one test_golden writes: a renamed case or format leaves none behind."""
    expected = {golden_name(case, fmt, width) for case in CASES for fmt, width in VARIANTS}
    assert {path.name for path in GOLDEN.iterdir()} - expected == set()


FORMAT_OF = {extension: fmt for fmt, extension in EXTENSIONS.items()}
GOLDENS = sorted(GOLDEN.iterdir())


def format_of(name: str) -> OutputFormat:
    """`single_failure.60.rich.txt` -> rich: the name is case[.width].extension."""
    rest = name.split(".", 1)[1]
    width, _, after = rest.partition(".")
    return FORMAT_OF[after if width.isdigit() else rest]


@pytest.mark.parametrize("path", GOLDENS, ids=[path.name for path in GOLDENS])
def test_every_corrected_command_in_a_golden_is_one_shell_line(path: Path, tmp_path: Path) -> None:
    """What a reader pastes: each corrected command splits into shell words, bash accepts its syntax, and run
    behind `echo` it creates no file.  Printed on one line, never wrapped (the golden at 60 columns too)."""
    fmt = format_of(path.name)
    text = path.read_text(encoding="utf-8")
    commands = printed_commands(fmt.value, text)
    for command in commands:
        assert command.startswith("python -m sglang.launch_server"), f"a wrapped or partial command: {command!r}"
        assert_safe_shell_command(command, tmp_path / "run")
    if "single_failure" in path.name:
        assert len(commands) >= 2, "the fix and its alternative each print a command"
