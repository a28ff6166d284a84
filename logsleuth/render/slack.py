"""Slack mrkdwn report: short enough to paste, safe to post (FIELD-NOTES §6).

The message is a list of blocks (a prose line or a whole fence).  It is first drawn
with everything, then with less and less detail, least useful first, until it fits
`max_chars`; the last resort drops whole trailing blocks.  A fence is never cut, so
every fence is closed.  Log text is defanged (`@here`, `<!channel>`) and cannot contain
a fence of its own.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from logsleuth.models import FailureGroup, LaunchInfo, Report
from logsleuth.render.options import RenderOptions
from logsleuth.render.safety import break_fences, clip, defang_mentions, escape_slack_api
from logsleuth.render.table import summary_table
from logsleuth.render.view import (
    FrameView,
    GroupView,
    abstention,
    build_view,
    describe_source_errors,
    first_sentences,
    folded_text,
    headline,
    is_multi,
    log_location,
    no_failure_lines,
    omitted_line,
    summary_rows,
)

FENCE = "```"
TABLE_WIDTH = 72  # Slack's message pane is narrow


@dataclass(frozen=True)
class Detail:
    """How much of the report to show.  Each field is one thing the budget can give up."""

    library_frames: bool = True
    context_lines: int = 5
    alternatives: bool = True
    earlier_exceptions: bool = True
    detailed_groups: int = 5
    app_frames: int = 5
    message_lines: int = 4
    frame_sources: bool = True
    line_chars: int = 300
    root_cause_sentences: int = 2
    summary_rows: int = 10


# Applied one after another, least useful detail first (the issue: library frames, then context lines).
REDUCTIONS: tuple[dict[str, Any], ...] = (
    {"library_frames": False},
    {"context_lines": 2},
    {"context_lines": 0},
    {"alternatives": False},
    {"earlier_exceptions": False},
    {"detailed_groups": 2},
    {"app_frames": 3},
    {"message_lines": 1},
    {"detailed_groups": 1},
    {"frame_sources": False},
    {"app_frames": 1},
    {"line_chars": 160},
    {"summary_rows": 5},
    {"root_cause_sentences": 1},
    {"line_chars": 100},
    {"summary_rows": 3},
)


def safe(text: str) -> str:
    """Log-derived text for Slack: no mentions, no fences."""
    return break_fences(defang_mentions(text))


def fence(lines: list[str]) -> str:
    return "\n".join([FENCE, *lines, FENCE])


def _frames(frames: list[FrameView], detail: Detail) -> list[str]:
    real = [f for f in frames if not f.folded]
    innermost = real[-1] if real else None
    shown = [f for f in real if f.in_app or detail.library_frames or f is innermost]
    shown = shown[-detail.app_frames :]  # the innermost frames are the useful ones
    kept = {id(f) for f in shown}
    start = next((i for i, f in enumerate(frames) if id(f) in kept), len(frames))
    out = []
    for frame in frames[start:]:
        if frame.folded:
            if detail.library_frames:
                out.append(f"    {folded_text(frame.folded)}")
            continue
        if id(frame) not in kept:
            continue
        out.append(f"{'›' if frame.in_app else ' '} {frame.location}")
        if frame.source and detail.frame_sources:
            out.append(f"      {frame.source}")
    return out


def _traceback(view: GroupView, detail: Detail) -> list[str]:
    chain = view.chain if detail.earlier_exceptions else view.chain[-1:]
    lines: list[str] = []
    for block in chain:
        if block.relation_text and detail.earlier_exceptions:
            lines.append(f"({block.relation_text})")
        lines.extend(_frames(block.frames, detail))
        lines.append(block.exception_line)
        lines.extend(block.message_tail[: max(0, detail.message_lines - 1)])
    return [safe(clip(line, detail.line_chars)) for line in lines]


def _group_blocks(
    group: FailureGroup, detail: Detail, title: str | None, show_source: bool, launch: LaunchInfo
) -> list[str]:
    view = build_view(group, show_source, launch)
    blocks = []
    if title:
        blocks.append(f"*{title} {safe(clip(view.verdict, detail.line_chars))}*")
    if view.where:
        blocks.append(safe(clip(view.where, detail.line_chars)))
    blocks.append(fence(_traceback(view, detail)))
    if view.root_cause is not None:
        root_cause = first_sentences(view.root_cause, detail.root_cause_sentences)
        blocks.append(f"*Root cause:* {safe(clip(root_cause, 2 * detail.line_chars))}")
        fixes = [view.fix] if view.fix else []
        if view.fix and detail.alternatives:
            fixes.extend(view.fix.alternatives)
        for number, fix in enumerate(fixes):
            blocks.append(
                f"*{'Fix' if number == 0 else 'Or'}:* {safe(clip(fix.summary, 2 * detail.line_chars))}"
            )
            # The corrected command, or the flag changes when the command is unknown.
            command = [fix.command] if fix.command else fix.changes
            if command:
                blocks.append(fence([safe(line) for line in command]))
    else:
        blocks.append("*No known pattern matches this failure:* logsleuth gives no advice for it.")
        blocks.extend(f"{label}: `{safe(clip(text, detail.line_chars))}`" for label, text in abstention(view))
        context = view.context[-detail.context_lines :] if detail.context_lines else []
        if context:
            blocks.append("Log lines just before it:")
            blocks.append(fence([safe(clip(line, detail.line_chars)) for line in context]))
    return blocks


def _blocks(report: Report, options: RenderOptions, detail: Detail) -> list[str]:
    blocks = [f"*logsleuth:* {safe(clip(headline(report), detail.line_chars))}"]
    blocks.extend(safe(error) for error in describe_source_errors(report))
    if not report.failures:
        blocks.extend(safe(line) for line in no_failure_lines(report))
    multi = is_multi(report)
    if multi:
        rows = summary_rows(report)
        table = summary_table(rows[: detail.summary_rows], TABLE_WIDTH, drop_empty=True)
        if len(rows) > detail.summary_rows:
            table.append(f"  … and {len(rows) - detail.summary_rows} more")
        blocks.append(fence([safe(line) for line in table]))
    for index, group in enumerate(report.failures[: detail.detailed_groups], start=1):
        title = f"[{index}]" if multi else None
        blocks.extend(_group_blocks(group, detail, title, len(report.sources) > 1, report.launch))
    omitted = omitted_line(report)
    if omitted:
        blocks.append(f"_{safe(omitted)}_")
    location = log_location(report, options.log_location)
    if location:
        blocks.append(f"_Full log: {safe(clip(location, 300))}_")
    return blocks


def _fit(blocks: list[str], limit: int) -> str:
    """Last resort: whole blocks from the top while they fit, then a note.  Never cuts a fence."""
    note = "_(report cut to fit; run logsleuth for the full report)_"
    kept: list[str] = []
    used = len(note)
    for block in blocks:
        if used + len(block) + 1 > limit:
            break
        kept.append(block)
        used += len(block) + 1
    return "\n".join([*kept, note]) if len(note) <= limit else ""


def render_slack(report: Report, options: RenderOptions) -> str:
    detail = Detail()
    steps = iter(REDUCTIONS)
    while True:
        blocks = _blocks(report, options, detail)
        text = "\n".join(blocks)
        if len(text) + 1 <= options.max_chars:  # + the final newline
            return text + "\n"
        step = next(steps, None)
        if step is None:
            return _fit(blocks, options.max_chars - 1) + "\n"
        detail = replace(detail, **step)


def render_slack_for_api(report: Report, options: RenderOptions) -> str:
    """The Slack report sized so that it still fits `max_chars` once `&<>` are escaped."""
    limit = options.max_chars
    while True:
        text = render_slack(report, replace(options, max_chars=limit))
        overflow = len(escape_slack_api(text)) - options.max_chars
        if overflow <= 0 or limit <= 200:
            return text
        limit -= overflow
