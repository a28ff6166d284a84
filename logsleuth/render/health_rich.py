"""Terminal health report drawn with rich: the TTY default.

The same lines as the text report (render/health_text.py lays them out), drawn in the colours of
render/theme.py.  Log text reaches rich only inside `Text` objects, never parsed for markup or emoji.
"""

from __future__ import annotations

import io

from rich.text import Text

from logsleuth.health.model import HealthReport
from logsleuth.render.health_text import health_lines
from logsleuth.render.options import RenderOptions
from logsleuth.render.rich_view import make_console


def render_health_rich(report: HealthReport, options: RenderOptions) -> str:
    console = make_console(options)
    for line in health_lines(report, options.width):
        console.print(Text(line.text, style=line.style), soft_wrap=True)  # wrapped already
    file = console.file
    assert isinstance(file, io.StringIO)
    text = file.getvalue()
    if not options.color:
        text = "\n".join(line.rstrip() for line in text.splitlines())
    return text.rstrip() + "\n"
