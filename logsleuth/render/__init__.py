"""Renderers: adapters that draw a `Report`.  They never parse or decide anything, and they see only the
model (logsleuth.models), never how it was built."""

from __future__ import annotations

from typing import TYPE_CHECKING

from logsleuth.render.options import OutputFormat, RenderOptions

if TYPE_CHECKING:  # the type only: importing the model costs a start that renders nothing (--help)
    from logsleuth.models import Report


def render(report: Report, options: RenderOptions) -> str:
    """The report in `options.format` (each renderer is imported only when used: rich is slow to import)."""
    fmt = options.format
    if fmt is OutputFormat.JSON:
        from logsleuth.render.json_report import render_json

        return render_json(report)
    if fmt is OutputFormat.MARKDOWN:
        from logsleuth.render.markdown import render_markdown

        return render_markdown(report, options)
    if fmt is OutputFormat.SLACK:
        from logsleuth.render.slack import render_slack

        return render_slack(report, options)
    if fmt is OutputFormat.RICH:
        from logsleuth.render.rich_view import render_rich

        return render_rich(report, options)
    from logsleuth.render.text import render_text

    return render_text(report, options)
