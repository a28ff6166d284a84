"""Plain text health report: the non-TTY default.  No escape sequences, ever.

Answer first: the verdict, then each finding (numbers, root cause, likely causes with their fixes, evidence),
then the series as sparklines.  Prose wraps at the width, log lines wrap with a hanging indent.  The lines
carry the name of their style (render/theme.py), so the rich report draws these same lines in colour.
"""

from __future__ import annotations

from logsleuth.health.model import HealthReport
from logsleuth.render.health_view import (
    FindingView,
    SeriesView,
    finding_view,
    health_status,
    no_lines_text,
    notes,
    series_heading,
    series_views,
    verdict,
)
from logsleuth.render.options import MIN_WIDTH, RenderOptions
from logsleuth.render.sparkline import sparkline
from logsleuth.render.text import Line, hang, wrap
from logsleuth.render.view import more_lines_text

SERIES_INDENT = 2
LABEL_ROOM = 32  # for "  min 2,904  max 12,345 token/s" after the bars
MIN_BARS, MAX_BARS = 8, 40


def bars_width(width: int, label_width: int) -> int:
    """As many columns as the line leaves after the label and the min/max labels, within reason."""
    return max(MIN_BARS, min(MAX_BARS, width - SERIES_INDENT - label_width - 2 - LABEL_ROOM))


def row_labels(views: list[SeriesView]) -> list[str]:
    """Each row's label, padded to one width: the series' name, and with several sources the source's label
    after it (the name only on the first row of its series: `throughput  gpu7`, `            gpu9`)."""
    name_width = max(len(view.label) for view in views)
    if not any(view.source for view in views):
        return [view.label.ljust(name_width) for view in views]
    source_width = max(len(view.source) for view in views)
    names = [view.label if index == 0 or views[index - 1].label != view.label else "" for index, view in enumerate(views)]
    return [f"{name.ljust(name_width)}  {view.source.ljust(source_width)}" for name, view in zip(names, views, strict=True)]


def series_rows(views: list[SeriesView], width: int) -> list[str]:
    """`  throughput       ▁▂▅█▇▃  min 212  max 2,904 token/s`, the bars of every series in one column (with
    several sources, one row per source, labelled: row_labels); on a narrow screen the min/max labels go on the
    next line, indented."""
    labels = row_labels(views)
    label_width = len(labels[0])
    columns = bars_width(width, label_width)
    lead = " " * (SERIES_INDENT + label_width + 2)
    rows = []
    for view, label in zip(views, labels, strict=True):
        row = f"{' ' * SERIES_INDENT}{label}  {sparkline(view.values, columns, view.unit, view.floor, view.span)}"
        if len(row) <= width:
            rows.append(row)
        else:  # the sparkline is the bars, two spaces, then the labels
            rows.extend(
                [row[: len(lead) + columns], " " * (SERIES_INDENT + 4) + row[len(lead) + columns + 2 :]]
            )
    return rows


def _styled(lines: list[str], style: str) -> list[Line]:
    return [Line(line, style) for line in lines]


def finding_lines(view: FindingView, width: int, title: str = "") -> list[Line]:
    out = _styled(wrap(f"{title}{view.title}", width, "  ", ""), "logsleuth.verdict")
    out.extend(_styled(wrap(view.summary, width), "logsleuth.root_cause"))
    if view.details:
        out.extend(_styled(wrap(view.details, width), "logsleuth.where"))
    if view.where:
        out.extend(_styled(hang(f"  {view.where}", width), "logsleuth.where"))
    out.append(Line(""))
    out.extend(
        _styled(
            wrap(f"Root cause ({view.category}, pattern {view.pattern}):", width, "  ", ""),
            "logsleuth.heading",
        )
    )
    out.extend(_styled(wrap(view.root_cause, width), "logsleuth.root_cause"))
    out.extend([Line(""), Line("Likely causes, most likely first:", "logsleuth.heading")])
    for number, cause in enumerate(view.causes, start=1):
        out.extend(_styled(wrap(cause.text, width, "     ", f"  {number}. "), "logsleuth.root_cause"))
        out.extend(_styled(wrap(f"Fix: {cause.fix}", width, "          ", "     "), "logsleuth.fix"))
        if cause.evidence:
            out.extend(_styled(hang(f"     Evidence: {cause.evidence}", width), "logsleuth.context"))
    out.extend([Line(""), Line("Evidence:", "logsleuth.heading")])
    out.extend(
        Line(wrapped, "logsleuth.context") for line in view.evidence for wrapped in hang(f"  {line}", width)
    )
    if view.evidence_left_out:
        out.append(Line(f"  {more_lines_text(view.evidence_left_out)}", "logsleuth.note"))
    if view.references:
        out.append(Line("References:", "logsleuth.heading"))
        out.extend(Line(f"  {reference}", "logsleuth.note") for reference in view.references)
    return out


def health_lines(report: HealthReport, width: int) -> list[Line]:
    """The whole report, answer first."""
    width = max(MIN_WIDTH, width)
    healthy = health_status(report) == "healthy"
    out = _styled(
        wrap(verdict(report), width, "  ", ""), "logsleuth.change" if healthy else "logsleuth.verdict"
    )
    out.extend(
        _styled([line for note in notes(report) for line in wrap(note, width, "  ", "")], "logsleuth.note")
    )
    out.append(Line(""))
    multi = len(report.findings) > 1
    for index, finding in enumerate(report.findings, start=1):
        out.extend(finding_lines(finding_view(finding, len(report.sources)), width, f"[{index}] " if multi else ""))
        out.append(Line(""))
    views = series_views(report)
    if not views:
        return [*out, *_styled(wrap(f"Series: {no_lines_text(report)}.", width, "  ", ""), "logsleuth.note")]
    out.extend(_styled(wrap(series_heading(report), width, "  ", ""), "logsleuth.heading"))
    return [*out, *_styled(series_rows(views, width), "logsleuth.marker")]


def render_health_text(report: HealthReport, options: RenderOptions) -> str:
    return "\n".join(line.text for line in health_lines(report, options.width)).rstrip() + "\n"
