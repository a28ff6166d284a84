"""Plain text report: the non-TTY default.  No escape sequences, ever."""

from __future__ import annotations

import textwrap

from logsleuth.models import FailureGroup, LaunchInfo, Report
from logsleuth.render.options import RenderOptions
from logsleuth.render.table import summary_table
from logsleuth.render.view import (
    FixView,
    FrameView,
    abstention,
    build_view,
    folded_text,
    is_multi,
    no_failure_lines,
    omitted_line,
    summary_rows,
)


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines.extend(
            textwrap.wrap(
                paragraph, width=width, initial_indent=indent, subsequent_indent=indent, break_on_hyphens=False
            ) or [indent]
        )
    return lines


def _frames(frames: list[FrameView]) -> list[str]:
    out: list[str] = []
    for frame in frames:
        if frame.folded:
            out.append(f"    {folded_text(frame.folded)}")
            continue
        marker = "›" if frame.in_app else " "
        out.append(f"  {marker} {frame.location}")
        if frame.source:
            out.append(f"        {frame.source}")
    return out


def _fix_lines(fix: FixView, width: int, label: str = "Fix") -> list[str]:
    out = [f"{label}:"]
    out.extend(_wrap(fix.summary, width - 2))
    out.extend(f"    {change}" for change in fix.changes)
    for step in fix.steps:
        out.extend(_wrap(f"- {step}", width - 4, "    "))
    if fix.command:
        out.append("  Corrected command:")
        # Never wrapped: it must survive copy and paste.
        out.append(f"    {fix.command}")
    for alternative in fix.alternatives:
        out.extend(_fix_lines(alternative, width, "Or"))
    return out


def render_group(
    group: FailureGroup, width: int, index: int | None = None, show_source: bool = False, launch: LaunchInfo | None = None
) -> list[str]:
    view = build_view(group, show_source, launch)
    out: list[str] = []
    title = f"[{index}] " if index is not None else ""
    out.append(f"{title}{view.verdict}")
    if view.where:
        out.append(f"  {view.where}")
    out.append("")
    for block in view.chain:
        if block.relation_text:
            out.append(f"  ({block.relation_text})")
        out.extend(_frames(block.frames))
        out.append(f"  {block.exception_line}")
        out.extend(f"  {extra}" for extra in block.message_tail)
    if view.truncated:
        out.append("  (traceback incomplete in the log)")
    if view.root_cause is not None:
        out.append("")
        out.append(f"Root cause ({view.category}, pattern {view.pattern}):")
        out.extend(_wrap(view.root_cause, width - 2))
        if view.fix:
            out.append("")
            out.extend(_fix_lines(view.fix, width))
    else:
        out.append("")
        out.append("No known pattern matches this failure: logsleuth gives no advice for it. What helps next:")
        out.extend(f"  {label}: {text}" for label, text in abstention(view))
        if view.context:
            out.append("  Log lines just before it:")
            out.extend(f"    {line}" for line in view.context)
    if view.cascade:
        out.append("")
        out.append("Then:")
        out.extend(f"  {line}" for line in view.cascade)
    return out


def render_text(report: Report, options: RenderOptions) -> str:
    """The report only: source errors and warnings are the CLI's stderr lines, printed there once."""
    width = max(40, options.width)
    out: list[str] = []
    if not report.failures:
        out.extend(no_failure_lines(report))
    elif is_multi(report):
        count = len(report.failures)
        out.append(f"{count} failure{'s' if count > 1 else ''}; the first is the root failure.")
        out.append("")
        out.extend(summary_table(summary_rows(report), width))
        out.append("")
    multi = is_multi(report)
    for index, group in enumerate(report.failures, start=1):
        out.extend(render_group(group, width, index if multi else None, len(report.sources) > 1, report.launch))
        out.append("")
    omitted = omitted_line(report)
    if omitted:
        out.append(omitted)
    return "\n".join(out).rstrip() + "\n"
