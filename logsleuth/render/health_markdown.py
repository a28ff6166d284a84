"""GitHub-flavoured Markdown health report, for issues and postmortems: the verdict, each finding, then the
series as a table (a sparkline and its numbers per row).

Log text goes into fences longer than any backtick run it holds, or into code spans; prose is escaped so a
log cannot inject HTML, links, table cells or @mentions.
"""

from __future__ import annotations

from logsleuth.health.model import HealthReport
from logsleuth.render.health_view import (
    FindingView,
    SeriesView,
    finding_view,
    no_lines_text,
    notes,
    series_heading,
    series_views,
    verdict,
)
from logsleuth.render.markdown import fenced
from logsleuth.render.options import RenderOptions
from logsleuth.render.safety import clean, escape_markdown_prose, markdown_code_span
from logsleuth.render.sparkline import bars, decimals_for, finite, format_value, value_range
from logsleuth.render.view import more_lines_text

TREND_WIDTH = 24


def _finding(view: FindingView, number: int) -> list[str]:
    out = [f"#### {number}. {escape_markdown_prose(view.title)}", ""]
    label = f"{markdown_code_span(view.category)}, pattern {markdown_code_span(view.pattern)}"
    out.extend([f"{escape_markdown_prose(view.summary)} ({label})", ""])
    if view.details:
        out.extend([escape_markdown_prose(view.details), ""])
    if view.where:
        out.extend([escape_markdown_prose(view.where), ""])
    out.extend([f"**Root cause:** {escape_markdown_prose(view.root_cause)}", ""])
    out.extend(["**Likely causes, most likely first:**", ""])
    for index, cause in enumerate(view.causes, start=1):
        out.append(f"{index}. {escape_markdown_prose(cause.text)}")
        out.append(f"   - **Fix:** {escape_markdown_prose(cause.fix)}")
        if cause.evidence:
            out.append(f"   - Evidence: {markdown_code_span(cause.evidence)}")
    out.append("")
    left = [more_lines_text(view.evidence_left_out)] if view.evidence_left_out else []
    out.extend(["**Evidence**", "", *fenced([*view.evidence, *left], "text"), ""])
    if view.references:
        out.extend([*(f"- {escape_markdown_prose(reference)}" for reference in view.references), ""])
    return out


def _series_row(view: SeriesView, by_source: bool) -> str:
    values = view.values
    bounds = value_range(values)
    places = decimals_for(values) if bounds else 0
    low_high = [format_value(bound, places) for bound in bounds] if bounds else ["-", "-"]
    numbers = finite(values)
    last = format_value(numbers[-1], places) if numbers else "-"
    cells = [
        escape_markdown_prose(view.label),
        *([escape_markdown_prose(view.source)] if by_source else []),
        markdown_code_span(bars(values, TREND_WIDTH, view.floor, view.span)),
        *low_high,
        last,
        escape_markdown_prose(view.unit) or "-",
    ]
    return "| " + " | ".join(cells) + " |"


def _series(report: HealthReport) -> list[str]:
    views = series_views(report)
    if not views:
        return [f"**Series:** {no_lines_text(report)}.", ""]
    out = [f"**{escape_markdown_prose(series_heading(report))}**", ""]
    by_source = any(view.source for view in views)  # several sources: a column says whose each row is
    if by_source:
        out.extend(["| Series | Source | Trend | Min | Max | Last | Unit |", "|---|---|---|--:|--:|--:|---|"])
    else:
        out.extend(["| Series | Trend | Min | Max | Last | Unit |", "|---|---|--:|--:|--:|---|"])
    return [*out, *(_series_row(view, by_source) for view in views), ""]


def render_health_markdown(report: HealthReport, options: RenderOptions) -> str:
    out = [f"### logsleuth health: {escape_markdown_prose(verdict(report))}", ""]
    out.extend(line for note in notes(report) for line in (f"> {escape_markdown_prose(note)}", ""))
    for number, finding in enumerate(report.findings, start=1):
        out.extend(_finding(finding_view(finding, len(report.sources)), number))
    out.extend(_series(report))
    for warning in report.warnings:
        out.extend([f"> warning: {escape_markdown_prose(clean(warning))}", ""])
    return "\n".join(out).rstrip() + "\n"
