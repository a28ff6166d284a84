"""Slack mrkdwn health report: one message, short enough to paste, safe to post (FIELD-NOTES §6).

Answer first: the verdict, then each finding's numbers, root cause and likely causes with their fixes, then a
few evidence lines and the sparklines, each in a code block.  The message is drawn with everything, then with
less and less, least useful first, until it fits `max_chars`; the last resort keeps whole blocks from the top,
so every fence is closed.  Prose is defanged (mentions, fences) as in the crash report's Slack format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from logsleuth.health.model import HealthReport
from logsleuth.render.health_text import series_rows
from logsleuth.render.health_view import (
    FindingView,
    finding_view,
    no_lines_text,
    notes,
    series_heading,
    series_views,
    verdict,
)
from logsleuth.render.options import RenderOptions
from logsleuth.render.safety import clip
from logsleuth.render.slack import TABLE_WIDTH, fence, inline_code, safe, shrink_to_fit
from logsleuth.render.view import more_lines_text


@dataclass(frozen=True)
class Detail:
    """How much to show.  The verdict and the first finding's root cause and first fix are never given up."""

    findings: int = 5  # drawn in full; the verdict names every one
    causes: int = 3
    cause_evidence: bool = True
    evidence_lines: int = 2
    series: bool = True
    line_chars: int = 300


# Applied one after another, least useful first.
REDUCTIONS: tuple[dict[str, Any], ...] = (
    {"evidence_lines": 1},
    {"cause_evidence": False},
    {"line_chars": 160},
    {"findings": 3},
    {"causes": 1},
    {"evidence_lines": 0},
    {"findings": 2},
    {"series": False},
    {"findings": 1},
    {"line_chars": 100},
)


def _finding_blocks(view: FindingView, detail: Detail, title: str) -> list[str]:
    blocks = [f"*{title}{safe(view.title)}*", safe(clip(view.summary, detail.line_chars))]
    if view.where:
        blocks.append(f"_{safe(clip(view.where, max(300, detail.line_chars)))}_")
    blocks.append(f"*Root cause:* {safe(view.root_cause)}")
    for number, cause in enumerate(view.causes[: detail.causes], start=1):
        line = f"{number}. {safe(cause.text)} *Fix:* {safe(cause.fix)}"
        if cause.evidence and detail.cause_evidence:
            line += f" _(evidence: {inline_code(clip(cause.evidence, detail.line_chars))})_"
        blocks.append(line)
    evidence = view.evidence[: detail.evidence_lines]
    if evidence:
        left = len(view.evidence) + view.evidence_left_out - len(evidence)
        note = [more_lines_text(left)] if left else []
        blocks.append(fence([*(clip(line, detail.line_chars) for line in evidence), *note]))
    return blocks


def _location(report: HealthReport, options: RenderOptions) -> str | None:
    """Where the full log is: the option, else the remote sources read (a local path means nothing to the channel)."""
    if options.log_location:
        return options.log_location
    remote = [source.name for source in report.sources if source.host and not source.error]
    return ", ".join(remote) or None


def _blocks(report: HealthReport, options: RenderOptions, detail: Detail) -> list[str]:
    blocks = [f"*logsleuth health:* {safe(clip(verdict(report), max(100, detail.line_chars)))}"]
    blocks.extend(f"_{safe(note)}_" for note in notes(report))
    multi = len(report.findings) > 1
    for number, finding in enumerate(report.findings[: detail.findings], start=1):
        blocks.extend(_finding_blocks(finding_view(finding, len(report.sources)), detail, f"[{number}] " if multi else ""))
    hidden = len(report.findings) - detail.findings
    if hidden > 0:
        blocks.append(f"_… and {hidden} more finding{'s' if hidden > 1 else ''}: the full report has them_")
    views = series_views(report)
    if not views:
        blocks.append(f"_Series: {no_lines_text(report)}._")
    elif detail.series:
        blocks.extend([f"*{safe(series_heading(report))}*", fence(series_rows(views, TABLE_WIDTH))])
    location = _location(report, options)
    if location:
        blocks.append(f"_Full log: {safe(clip(location, 300))}_")
    return blocks


def render_health_slack(report: HealthReport, options: RenderOptions) -> str:
    return shrink_to_fit(lambda detail: _blocks(report, options, detail), Detail(), REDUCTIONS, options.max_chars)
