"""GitHub-flavoured Markdown report, for issues and postmortems.

Log text goes into fences longer than any backtick run it contains (so no log line can
close them) or into code spans; prose is escaped so a log cannot inject HTML, links,
table cells or @mentions.
"""

from __future__ import annotations

from logsleuth.models import FailureGroup, LaunchInfo, Report
from logsleuth.render.options import RenderOptions
from logsleuth.render.safety import clean, escape_markdown_prose, markdown_code_span, markdown_fence
from logsleuth.render.view import (
    FixView,
    FrameView,
    abstention,
    build_view,
    describe_source_errors,
    folded_text,
    headline,
    is_multi,
    no_failure_lines,
    omitted_line,
    summary_rows,
)


def fenced(lines: list[str], info: str = "") -> list[str]:
    fence = markdown_fence(lines)
    return [f"{fence}{info}", *lines, fence]


def _frame_lines(frames: list[FrameView]) -> list[str]:
    out = []
    for frame in frames:
        if frame.folded:
            out.append(f"    {folded_text(frame.folded)}")
            continue
        out.append(f"  {'›' if frame.in_app else ' '} {frame.location}")
        if frame.source:
            out.append(f"        {frame.source}")
    return out


def _fix(fix: FixView, label: str = "Fix") -> list[str]:
    out = [f"**{label}:** {escape_markdown_prose(fix.summary)}", ""]
    items = [markdown_code_span(change) for change in fix.changes] + [
        escape_markdown_prose(s) for s in fix.steps
    ]
    if items:
        out.extend(f"- {item}" for item in items)
        out.append("")
    if fix.command:
        out.append("Corrected command:")
        out.append("")
        out.extend(fenced([fix.command], "sh"))
        out.append("")
    for alternative in fix.alternatives:
        out.extend(_fix(alternative, "Or"))
    return out


def _group(group: FailureGroup, heading: str | None, show_source: bool, launch: LaunchInfo) -> list[str]:
    view = build_view(group, show_source, launch)
    out = [f"{heading} {escape_markdown_prose(view.verdict)}", ""] if heading else []
    if view.where:
        out.extend([escape_markdown_prose(view.where), ""])
    traceback: list[str] = []
    for block in view.chain:
        if block.relation_text:
            traceback.append(f"({block.relation_text})")
        traceback.extend(_frame_lines(block.frames))
        traceback.append(block.exception_line)
        traceback.extend(block.message_tail)
    if view.truncated:
        traceback.append("(traceback incomplete in the log)")
    out.extend([*fenced(traceback, "text"), ""])
    if view.root_cause is not None:
        label = f"{markdown_code_span(view.category or '')}, pattern {markdown_code_span(view.pattern or '')}"
        out.extend([f"**Root cause** ({label}): {escape_markdown_prose(view.root_cause)}", ""])
        if view.fix:
            out.extend(_fix(view.fix))
    else:
        out.extend(["**No known pattern matches this failure:** logsleuth gives no advice for it. What helps next:", ""])
        out.extend([*(f"- {label}: {markdown_code_span(text)}" for label, text in abstention(view)), ""])
        if view.context:
            out.extend(["Log lines just before it:", "", *fenced(view.context, "text"), ""])
    if view.cascade:
        out.extend(["Then:", "", *fenced(view.cascade, "text"), ""])
    return out


def _summary_table(report: Report) -> list[str]:
    def cell(text: str) -> str:
        return escape_markdown_prose(text)

    out = ["| # | Failure | Count | Ranks | Hosts | Category |", "|--:|---|--:|---|---|---|"]
    for row in summary_rows(report):
        cells = (str(row.index), row.failure, str(row.count), row.ranks, row.hosts, row.category)
        out.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return out


def render_markdown(report: Report, options: RenderOptions) -> str:
    out: list[str] = [f"### logsleuth: {escape_markdown_prose(headline(report))}", ""]
    for error in describe_source_errors(report):
        out.extend([f"> {escape_markdown_prose(error)}", ""])
    if not report.failures:
        out.extend([escape_markdown_prose(line) for line in no_failure_lines(report)])
        out.append("")
    multi = is_multi(report)
    if multi:
        count = len(report.failures)
        out.extend([f"{count} failure{'s' if count > 1 else ''}; the first is the root failure.", ""])
        out.extend([*_summary_table(report), ""])
    for index, group in enumerate(report.failures, start=1):
        # A single failure is already named by the report's title.
        heading = f"#### {index}." if multi else None
        out.extend(_group(group, heading, len(report.sources) > 1, report.launch))
    omitted = omitted_line(report)
    if omitted:
        out.extend([escape_markdown_prose(omitted), ""])
    for warning in report.warnings:
        out.extend([f"> warning: {escape_markdown_prose(clean(warning))}", ""])
    return "\n".join(out).rstrip() + "\n"
