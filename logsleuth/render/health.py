"""Renderers of a `HealthReport` (`logsleuth health`): adapters that lay it out, like render/__init__.py does
for a crash report.  Each is imported only when used: rich is slow to import."""

from __future__ import annotations

from logsleuth.health.model import HealthReport
from logsleuth.render.options import OutputFormat, RenderOptions


def render_health(report: HealthReport, options: RenderOptions) -> str:
    """The health report in `options.format`."""
    fmt = options.format
    if fmt is OutputFormat.JSON:
        from logsleuth.render.health_json import render_health_json

        return render_health_json(report)
    if fmt is OutputFormat.MARKDOWN:
        from logsleuth.render.health_markdown import render_health_markdown

        return render_health_markdown(report, options)
    if fmt is OutputFormat.SLACK:
        from logsleuth.render.health_slack import render_health_slack

        return render_health_slack(report, options)
    if fmt is OutputFormat.RICH:
        from logsleuth.render.health_rich import render_health_rich

        return render_health_rich(report, options)
    from logsleuth.render.health_text import render_health_text

    return render_health_text(report, options)
