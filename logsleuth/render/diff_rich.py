"""`logsleuth diff` in a terminal: the text report's lines (render/diff.py) in the colours of render/theme.py.
Log text reaches rich only inside `Text` objects, which rich never parses for markup."""

from __future__ import annotations

import io

from rich.text import Text

from logsleuth.diff.model import DiffReport
from logsleuth.render.diff import report_lines, wrapped
from logsleuth.render.options import RenderOptions
from logsleuth.render.rich_view import make_console


def render_diff_rich(report: DiffReport, options: RenderOptions) -> str:
    console = make_console(options)
    for line in wrapped(report_lines(report), options.width):
        console.print(Text(line.text, style=line.style), soft_wrap=True)
    file = console.file
    assert isinstance(file, io.StringIO)
    text = file.getvalue()
    if not options.color:
        text = "\n".join(line.rstrip() for line in text.splitlines())
    return text.rstrip() + "\n"
