"""Plain text report: the non-TTY default.  No escape sequences, ever."""

from __future__ import annotations

import textwrap

from logsleuth.models import FailureGroup, Fix, Report
from logsleuth.render import RenderOptions
from logsleuth.render.view import FrameView, build_view, describe_source_errors

LIBRARY_FRAMES_SHOWN = 2


def _wrap(text: str, width: int, indent: str = "  ") -> list[str]:
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        lines.extend(textwrap.wrap(paragraph, width=width, initial_indent=indent, subsequent_indent=indent) or [indent])
    return lines


def _frames(frames: list[FrameView]) -> list[str]:
    out: list[str] = []
    for frame in frames:
        if frame.folded:
            out.append(f"    … {frame.folded} library frame{'s' if frame.folded > 1 else ''}")
            continue
        marker = "›" if frame.in_app else " "
        out.append(f"  {marker} {frame.location}")
        if frame.source:
            out.append(f"        {frame.source}")
    return out


def _fix_lines(fix: Fix, width: int, label: str = "Fix") -> list[str]:
    out = [f"{label}:"]
    out.extend(_wrap(fix.summary, width - 2))
    for op in fix.flags:
        out.append(f"    {op.op:<7}{op.flag}" + (f" {op.value}" if op.value else "") + (f" -> {op.to}" if op.to else ""))
    for name, value in fix.env:
        out.append(f"    env    {name}={value}")
    for step in fix.steps:
        out.extend(_wrap(f"- {step}", width - 4, "    "))
    if fix.command:
        out.append("  Corrected command:")
        out.append(f"    {fix.command}")
    for alternative in fix.alternatives:
        out.extend(_fix_lines(alternative, width, "Or"))
    return out


def render_group(group: FailureGroup, width: int, index: int | None = None) -> list[str]:
    view = build_view(group)
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
        for extra in block.message_tail:
            out.append(f"  {extra}")
    if view.truncated:
        out.append("  (traceback incomplete in the log)")
    if group.diagnosis:
        out.append("")
        out.append(f"Root cause ({group.diagnosis.category}, pattern {group.diagnosis.pattern}):")
        out.extend(_wrap(group.diagnosis.root_cause, width - 2))
        if group.diagnosis.fix:
            out.append("")
            out.extend(_fix_lines(group.diagnosis.fix, width))
    else:
        out.append("")
        out.append("No known pattern matches this failure.")
        if view.innermost:
            out.append(f"  Innermost app frame: {view.innermost}")
        if view.context:
            out.append("  Log lines just before it:")
            out.extend(f"    {line}" for line in view.context)
        out.append(f"  Search for: {group.signature}")
    if group.cascade:
        out.append("")
        out.append("Then:")
        out.extend(f"  {line}" for line in group.cascade[:3])
    return out


def render_text(report: Report, options: RenderOptions) -> str:
    width = max(40, options.width)
    out: list[str] = []
    out.extend(describe_source_errors(report))
    if not report.failures:
        read = ", ".join(f"{s.name} ({s.bytes_read} bytes read)" for s in report.sources if not s.error)
        out.append(f"No failure found in {read}." if read else "No log could be read.")
        capped = [s.name for s in report.sources if s.capped]
        if capped:
            out.append(f"Searched only the end of {', '.join(capped)} (byte cap reached); use --all to scan everything.")
    elif len(report.failures) > 1:
        out.append(f"{len(report.failures)} failures; the first is the root failure.")
        out.append("")
    for index, group in enumerate(report.failures, start=1):
        out.extend(render_group(group, width, index if len(report.failures) > 1 else None))
        out.append("")
    for warning in report.warnings:
        out.append(f"warning: {warning}")
    return "\n".join(out).rstrip() + "\n"
