"""Terminal health report drawn with rich: the TTY default.

The same lines as the text report (render/health_text.py lays them out), drawn in the colours of
render/theme.py.  Log text reaches rich only inside `Text` objects, never parsed for markup or emoji.
"""

from __future__ import annotations

from logsleuth.health.model import HealthReport
from logsleuth.render.health_text import health_lines
from logsleuth.render.options import RenderOptions
from logsleuth.render.rich_view import print_lines


def render_health_rich(report: HealthReport, options: RenderOptions) -> str:
    return print_lines(health_lines(report, options.width), options)
