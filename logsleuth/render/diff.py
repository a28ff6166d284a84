"""`logsleuth diff` in text, markdown, Slack and JSON (rich: render/diff_rich.py, over the text lines).

Every format shows the same changes, one line each, in the same order (model.SECTIONS): the verdict first, then
the two launches, then each section's changes.  The strings of a `DiffReport` are redacted and cleaned already
(diff/compare.py); each format only escapes them for itself.
"""

from __future__ import annotations

import dataclasses
import json
import textwrap
from typing import Any, NamedTuple

from logsleuth.diff.model import DIFF_SCHEMA, SECTION_TITLES, SECTIONS, Change, DiffReport, LaunchSummary
from logsleuth.render.safety import (
    break_fences,
    defang_mentions,
    escape_markdown_prose,
    escape_slack_api,
    markdown_code_span,
    markdown_fence,
)

SLACK_MAX_CHARS = 3500  # FIELD-NOTES §6: the budget of one pasteable Slack message
NO_DIFFERENCE = "no differences that matter"
_MARKS = {"added": "+", "removed": "-", "changed": "~", "renamed": "~", "slower": "~", "faster": "~", "diverged": "!"}


class Line(NamedTuple):
    text: str
    style: str = ""  # a name of render/theme.py, for rich


def verdict(report: DiffReport) -> str:
    count = len(report.changes)
    if not count:
        return f"logsleuth diff: {NO_DIFFERENCE} between GOOD and BAD"
    return f"logsleuth diff: {count} difference{'s' if count != 1 else ''} between GOOD and BAD"


def side_text(label: str, side: LaunchSummary) -> str:
    parts = [f"{side.source} (launch {side.launch} of {side.launches})",
             f"{side.engine or 'engine unknown'} {side.version or '(version not in the log)'}"]
    if side.started:
        parts.append(f"started {side.started}")
    if side.failure is not None:
        parts.append(f"failed: {side.failure.title}")
    elif side.reached:
        parts.append(f"reached {side.reached}")
    else:
        parts.append("logged no stage")
    return f"{label:<4} " + " · ".join(parts)


def change_text(change: Change) -> str:
    """One change as one line, the same words in every format."""
    mark = _MARKS[change.kind]
    if change.section == "failure":
        sides = f"GOOD {change.good or 'did not fail'}; BAD {change.bad or 'did not fail'}"
        return f"{mark} failure: {sides}"
    if change.kind == "diverged":
        return f"{mark} first diverging stage: {change.name} (GOOD {change.good}; BAD {change.bad})"
    if change.kind == "renamed":
        value = change.good if change.good == change.bad else f"{change.good} → {change.bad}"
        return f"{mark} {change.name} → {change.new_name} (renamed; {value})"
    joiner = "=" if change.section == "env" else " " if change.section == "flags" else ": "
    if change.kind == "added":
        return f"{mark} {change.name}{joiner}{change.bad} (BAD only)"
    if change.kind == "removed":
        return f"{mark} {change.name}{joiner}{change.good} (GOOD only)"
    suffix = f" ({change.kind})" if change.kind in ("slower", "faster") else ""
    return f"{mark} {change.name}: {change.good} → {change.bad}{suffix}"


def _sections(report: DiffReport) -> list[tuple[str, list[Change]]]:
    return [(SECTION_TITLES[section], list(found)) for section in SECTIONS if (found := report.in_section(section))]


def report_lines(report: DiffReport) -> list[Line]:
    """The report as lines (not wrapped): what text, rich and Slack lay out."""
    lines = [Line(verdict(report), "logsleuth.verdict" if report.differs else "logsleuth.heading"),
             Line("  " + side_text("GOOD", report.good), "logsleuth.where"),
             Line("  " + side_text("BAD", report.bad), "logsleuth.where")]
    for title, changes in _sections(report):
        lines.append(Line(""))
        lines.append(Line(title, "logsleuth.heading"))
        for change in changes:
            lines.append(Line("  " + change_text(change), "logsleuth.change" if change.kind == "added" else ""))
            if change.note:
                lines.append(Line("      " + change.note, "logsleuth.note"))
    if report.notes:
        lines.append(Line(""))
        lines.extend(Line("Note: " + note, "logsleuth.note") for note in report.notes)
    return lines


def wrapped(lines: list[Line], width: int) -> list[Line]:
    out: list[Line] = []
    for line in lines:
        indent = " " * (len(line.text) - len(line.text.lstrip()))
        pieces = textwrap.wrap(line.text, width, subsequent_indent=indent + "    ", break_long_words=False,
                               break_on_hyphens=False) or [""]
        out.extend(Line(piece, line.style) for piece in pieces)
    return out


def render_text(report: DiffReport, width: int = 80) -> str:
    return "\n".join(line.text for line in wrapped(report_lines(report), width)).rstrip() + "\n"


# -- markdown ---------------------------------------------------------------------------------------------


def render_markdown(report: DiffReport) -> str:
    out = [f"## {escape_markdown_prose(verdict(report))}", ""]
    for label, side in (("GOOD", report.good), ("BAD", report.bad)):
        out.append(f"- **{label}**: {escape_markdown_prose(side_text('', side).strip())}")
    if report.good.command or report.bad.command:
        commands = [f"{label}: {side.command}" for label, side in (("GOOD", report.good), ("BAD", report.bad))
                    if side.command]
        fence = markdown_fence(commands)
        out.extend(["", "<details><summary>Launch commands</summary>", "", fence + "text", *commands, fence, "",
                    "</details>"])
    for title, changes in _sections(report):
        out.extend(["", f"### {escape_markdown_prose(title)}", ""])
        for change in changes:
            out.append(f"- {markdown_code_span(change_text(change))}")
            if change.note:
                out.append(f"  {escape_markdown_prose(change.note)}")
    if report.notes:
        out.append("")
        out.extend(f"> {escape_markdown_prose(note)}" for note in report.notes)
    return "\n".join(out).rstrip() + "\n"


# -- Slack ------------------------------------------------------------------------------------------------

FENCE = "```"


def render_slack(report: DiffReport, max_chars: int = SLACK_MAX_CHARS) -> str:
    """One Slack message of at most `max_chars` characters: the verdict and the sides as prose, the changes in one
    fence.  When they do not fit, the last changes (the measured facts come last) give way to a count of them,
    inside the fence, which is always closed."""
    head = [f"*{_slack(verdict(report))}*",
            *(f"{_slack(side_text(label, side))}" for label, side in (("GOOD", report.good), ("BAD", report.bad)))]
    body = [line.text for line in report_lines(report)[3:] if line.text]
    if not body:
        return _fit("\n".join(head), max_chars) + "\n"
    kept = list(body)
    while kept:
        left = len(body) - len(kept)
        more = [f"… {left} more line{'s' if left != 1 else ''}: logsleuth diff --format text"] if left else []
        text = "\n".join([*head, FENCE, *(_fenced(line) for line in [*kept, *more]), FENCE])
        if len(text) + 1 <= max_chars:
            return text + "\n"
        kept.pop()
    return _fit("\n".join(head), max_chars) + "\n"


def _slack(text: str) -> str:
    return escape_slack_api(defang_mentions(text))


def _fenced(text: str) -> str:
    return escape_slack_api(break_fences(text))


def _fit(text: str, max_chars: int) -> str:
    return text if len(text) < max_chars else text[: max_chars - 2] + "…"


# -- JSON -------------------------------------------------------------------------------------------------


def diff_json(report: DiffReport) -> dict[str, Any]:
    from logsleuth import __version__

    return {"schema": DIFF_SCHEMA, "tool": f"logsleuth {__version__}", "differs": report.differs,
            **dataclasses.asdict(report)}


def render_json(report: DiffReport) -> str:
    return json.dumps(diff_json(report), ensure_ascii=False, indent=1) + "\n"
