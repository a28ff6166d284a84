"""`logsleuth diff` in a terminal: the text report's lines (render/diff.py) in the colours of render/theme.py.
Log text reaches rich only inside `Text` objects, which rich never parses for markup."""

from __future__ import annotations

from logsleuth.diff.model import DiffReport
from logsleuth.render.diff import report_lines, wrapped
from logsleuth.render.options import RenderOptions
from logsleuth.render.rich_view import print_lines


def render_diff_rich(report: DiffReport, options: RenderOptions) -> str:
    return print_lines(wrapped(report_lines(report), options.width), options)
