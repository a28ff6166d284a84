"""Terminal report drawn with rich: the TTY default.

The same lines as the text report (render/text.py lays them out, answer first), drawn in the colours of
render/theme.py.  Log text only ever reaches rich inside `Text` objects, which rich never parses for markup
or emoji, so `[bold]` or `:boom:` in a log is shown literally.
"""

from __future__ import annotations

import io
from collections.abc import Iterable
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from logsleuth.models import Report
from logsleuth.render.options import MIN_WIDTH, RenderOptions
from logsleuth.render.safety import strip_controls
from logsleuth.render.text import Line, report_lines, wrap
from logsleuth.render.theme import THEME
from logsleuth.render.view import recap


def make_console(options: RenderOptions) -> Console:
    return Console(
        file=io.StringIO(),
        width=max(MIN_WIDTH, options.width),
        height=options.height,  # the terminal's rows (None: not a terminal, rich's default)
        force_terminal=options.color,
        color_system="standard" if options.color else None,
        theme=THEME,
        highlight=False,
        emoji=False,
        markup=False,
        legacy_windows=False,
    )


def render_rich(report: Report, options: RenderOptions) -> str:
    """The report only: source errors and warnings are the CLI's stderr lines, printed there once.  On a terminal
    (`options.height`), a report taller than it ends with one recap line, so the answer has not scrolled away."""
    text = print_lines(report_lines(report, options.width), options)
    if options.height is None or _rows(text, max(MIN_WIDTH, options.width)) <= make_console(options).height:
        return text
    line = recap(report, max(MIN_WIDTH, options.width))
    if line is None:
        return text
    width = max(MIN_WIDTH, options.width)
    recap_lines = [Line(""), *(Line(part, "logsleuth.heading") for part in wrap(line, width, "  ", ""))]
    return text + print_lines(recap_lines, options)


def _rows(text: str, width: int) -> int:
    """The terminal rows the printed text takes: a line longer than the width (a corrected command) wraps."""
    return sum(max(1, -(-cell_len(strip_controls(line)) // width)) for line in text.splitlines())


def print_lines(lines: Iterable[Any], options: RenderOptions) -> str:
    """Styled lines (each with `text` and `style`), wrapped already, as rich prints them: the crash, health and
    diff reports share it."""
    console = make_console(options)
    for line in lines:
        # The lines are wrapped already; soft_wrap keeps rich from wrapping them again, so a corrected command
        # longer than the terminal is wrapped by the terminal alone and copies as one line.
        console.print(Text(line.text, style=line.style), soft_wrap=True)
    file = console.file
    assert isinstance(file, io.StringIO)
    text = file.getvalue()
    if not options.color:
        text = "\n".join(line.rstrip() for line in text.splitlines())
    return text.rstrip() + "\n"
