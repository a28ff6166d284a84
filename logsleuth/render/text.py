"""Plain text report: the non-TTY default.  No escape sequences, ever.

Answer first: the headline (what died, where), the root cause, the fix and its corrected command, then the
evidence.  Prose wraps at the width and log lines wrap with a hanging indent; a corrected command never
wraps, so it copies as one line.

The lines carry the name of their style (render/theme.py): the rich renderer draws these same lines in
colour, so the two terminal formats never drift apart.
"""

from __future__ import annotations

import textwrap
from typing import NamedTuple

from logsleuth.models import Explanation, Report
from logsleuth.render.explanation import CHECKED_BAD, CHECKED_OK, NOT_CHECKED, NOT_VERIFIED, explanation_view
from logsleuth.render.options import MIN_WIDTH, RenderOptions
from logsleuth.render.table import host_table, summary_table
from logsleuth.render.view import (
    FACTS_LABEL,
    NO_ERROR_ABOVE_NOTE,
    NO_PROVEN_FIX,
    RAISED_AT_LABEL,
    SEARCH_LABEL,
    STDIN_NOTE,
    Ending,
    FixView,
    GroupView,
    abstention,
    build_view,
    cascade_note,
    ending,
    fleet_heading,
    fleet_notes,
    fleet_rows,
    is_multi,
    more_lines_text,
    multi_heading,
    no_failure_lines,
    omitted_line,
    source_notes,
    summary_rows,
)

NO_PATTERN = "No known pattern matches this failure: logsleuth gives no advice for it. What helps next:"


class Line(NamedTuple):
    text: str
    style: str = ""  # a name from render/theme.py


def wrap(text: str, width: int, indent: str = "  ", first: str | None = None) -> list[str]:
    """`text` wrapped at `width` columns, every line after the first indented by `indent` (the first by
    `first`, default `indent`); words longer than a line (paths, flags) are never broken."""
    lead = indent if first is None else first
    return textwrap.wrap(
        text, width=width, initial_indent=lead, subsequent_indent=indent, break_on_hyphens=False, break_long_words=False
    ) or [lead]


def hang(line: str, width: int) -> list[str]:
    """A log-derived line wrapped at `width`, its continuation lines indented four more than it."""
    indent = line[: len(line) - len(line.lstrip(" "))]
    return wrap(line.lstrip(" "), width, indent + "    ", indent) if len(line) > width else [line]


def _styled(lines: list[str], style: str) -> list[Line]:
    return [Line(line, style) for line in lines]


def _fix_lines(fix: FixView, width: int, label: str = "Fix") -> list[Line]:
    out = [Line(f"{label}:", "logsleuth.heading"), *_styled(wrap(fix.summary, width), "logsleuth.fix")]
    out.extend(Line(f"    {change}", "logsleuth.change") for change in fix.changes)
    for step in fix.steps:
        out.extend(_styled(wrap(step, width, "      ", "    - "), "logsleuth.fix"))
    if fix.command:
        out.append(Line(f"  {fix.command_label}:", "logsleuth.heading"))
        out.append(Line(f"    {fix.command}", "logsleuth.command"))
    elif fix.command_hint:
        out.extend(_styled(wrap(fix.command_hint, width), "logsleuth.note"))
    for alternative in fix.alternatives:
        out.extend(_fix_lines(alternative, width, "Or"))
    return out


def answer_lines(view: GroupView, width: int, title: str = "") -> list[Line]:
    """Headline, details, then the root cause and fix (or, without a pattern, what helps next)."""
    out = _styled(wrap(f"{title}{view.headline}", width, "  ", ""), "logsleuth.verdict")
    if view.details:
        out.extend(_styled(wrap(view.details, width), "logsleuth.where"))
    out.append(Line(""))
    if view.root_cause is None:
        out.extend(_styled(wrap(NO_PATTERN, width, "  ", ""), "logsleuth.heading"))
        for label, text in abstention(view):
            if label == SEARCH_LABEL:  # the exact text, on a line of its own so that it copies whole
                out.extend([Line(f"  {label}:"), Line(f"    {text}", "logsleuth.frame.app")])
            else:
                out.extend(_styled(hang(f"  {label}: {text}", width), "logsleuth.frame.app"))
        return out
    heading = f"{view.cause_heading} ({view.category}, {view.cause_source}):"
    out.extend(_styled(wrap(heading, width, "  ", ""), "logsleuth.heading"))
    out.extend(_styled(wrap(view.root_cause, width), "logsleuth.root_cause"))
    out.extend(trust_lines(view, width))
    if view.fix:
        out.append(Line(""))
        out.extend(_fix_lines(view.fix, width, view.fix_label))
    if view.general and view.search:  # the exact text, on a line of its own so that it copies whole
        out.extend([Line(f"  {SEARCH_LABEL}:"), Line(f"    {view.search}", "logsleuth.frame.app")])
    return out


def trust_lines(view: GroupView, width: int) -> list[Line]:
    """The facts a rule used, and the engine's own words with what logsleuth checked of them."""
    out: list[Line] = []
    if view.evidence:
        out.append(Line(f"  {FACTS_LABEL}:", "logsleuth.heading"))
        for fact in view.evidence:
            out.extend(_styled(wrap(fact, width, "      ", "    - "), "logsleuth.where"))
    for words in view.engine_says:
        out.extend(_styled(wrap(f"{words.label}: {words.text}", width, "    ", "  "), "logsleuth.heading"))
        for check in words.checks:
            out.extend(_styled(wrap(check, width, "      ", "    - "), "logsleuth.where"))
    return out


def evidence_lines(view: GroupView, width: int) -> list[Line]:
    """The traceback as the log shows it (library frames folded), the lines before it and what followed;
    each line wrapped with a hanging indent."""
    return [Line(wrapped, line.style) for line in _evidence(view) for wrapped in hang(line.text, width)]


def _evidence(view: GroupView) -> list[Line]:
    out = [Line("Evidence:", "logsleuth.heading")]
    for block in view.chain:
        if block.relation_text:
            out.append(Line(f"  ({block.relation_text})", "logsleuth.relation"))
        for frame in block.frames:
            if frame.folded:
                out.append(Line(f"    {frame.folded_text}", "logsleuth.frame.folded"))
                continue
            if frame.in_app:
                out.append(Line(f"  › {frame.location}", "logsleuth.frame.app"))
            else:
                out.append(Line(f"    {frame.location}", "logsleuth.frame.library"))
            if frame.source:
                out.append(Line(f"        {frame.source}", "logsleuth.frame.source"))
        out.extend(Line(f"  {text}", "logsleuth.exception") for text in [block.exception_line, *block.message_tail])
        if block.message_left_out:
            out.append(Line(f"  {more_lines_text(block.message_left_out)}", "logsleuth.note"))
    if view.truncated:
        out.append(Line(f"  {view.truncated_note}", "logsleuth.note"))
    if view.raised_at:
        out.append(Line(f"  {RAISED_AT_LABEL}:"))
        out.extend(Line(f"    - {fact}", "logsleuth.where") for fact in view.raised_at)
    if view.context:
        out.append(Line("  Log lines just before it:"))
        if view.context_left_out:
            out.append(Line(f"    {more_lines_text(view.context_left_out, 'earlier')}", "logsleuth.note"))
        out.extend(Line(f"    {line}", "logsleuth.context") for line in view.context)
    elif view.context_dropped:
        out.append(Line(f"  {NO_ERROR_ABOVE_NOTE}", "logsleuth.note"))
    if view.cascade:
        out.append(Line("  Then:"))
        out.extend(Line(f"    {line}", "logsleuth.note") for line in view.cascade)
        if view.cascade_left_out:
            out.append(Line(f"    {more_lines_text(view.cascade_left_out)}", "logsleuth.note"))
    return out


def fleet_lines(report: Report, width: int) -> list[Line]:
    """A fleet's hosts, one line each (the root first), and what makes its root uncertain."""
    if report.fleet is None:
        return []
    out = _styled(wrap(fleet_heading(report), width, "  ", ""), "logsleuth.verdict")
    for note in fleet_notes(report):
        out.extend(_styled(wrap(note, width, "  ", ""), "logsleuth.note"))
    header, *rows = host_table(fleet_rows(report), width)
    return [*out, Line(""), Line(header, "logsleuth.table.header"), *(Line(row) for row in rows), Line("")]


def report_lines(report: Report, width: int) -> list[Line]:
    """The whole report: a fleet's hosts, then each failure's answer and its evidence; with several failures,
    the table of all of them comes right after the root failure."""
    width = max(MIN_WIDTH, width)
    fleet = fleet_lines(report, width)
    notes = [wrapped for note in source_notes(report) for wrapped in wrap(note, width, "  ", "")]
    if notes:
        fleet = [*fleet, *_styled(notes, "logsleuth.note"), Line("")]
    if not report.failures:
        return [*fleet, *(Line(line) for line in no_failure_lines(report))]
    multi = is_multi(report)
    show_source = len(report.sources) > 1
    out: list[Line] = fleet
    for index, group in enumerate(report.failures, start=1):
        view = build_view(group, show_source, report.launch, note=cascade_note(report, group))
        out.extend(answer_lines(view, width, f"[{index}] " if multi else ""))
        out.append(Line(""))
        out.extend(evidence_lines(view, width))
        out.append(Line(""))
        if multi and index == 1:
            out.append(Line(multi_heading(report), "logsleuth.heading"))
            out.append(Line(""))
            header, *rows = summary_table(summary_rows(report), width)
            out.extend([Line(header, "logsleuth.table.header"), *(Line(row) for row in rows), Line("")])
    omitted = omitted_line(report)
    if omitted:
        out.extend(_styled(wrap(omitted, width, "  ", ""), "logsleuth.note"))
    if report.explanation is not None:  # after everything logsleuth found (--explain)
        out.extend([*([Line("")] if out and out[-1].text else []), *explanation_lines(report.explanation, width)])
    closing = ending_lines(ending(report), width)
    if closing:
        out.extend([*([Line("")] if out and out[-1].text else []), *closing])
    return out


def ending_lines(end: Ending, width: int) -> list[Line]:
    """The report's last lines: how to get more help when there is no proven fix (each command on a line of its
    own, so that it copies whole), and the --cmd hint."""
    out: list[Line] = []
    if end.case_command:
        out.extend(_styled(wrap(NO_PROVEN_FIX, width, "  ", ""), "logsleuth.heading"))
        for command, note in end.offers():
            out.append(Line(f"  {command}", "logsleuth.command"))
            out.extend(_styled(wrap(note, width, "      "), "logsleuth.note"))
        if end.stdin:
            out.append(Line(f"  {STDIN_NOTE}", "logsleuth.note"))
    if end.cmd_hint and not end.cmd_hint_in_fix:
        out.extend(_styled(wrap(end.cmd_hint, width, "  ", ""), "logsleuth.note"))
    return out


_MARK_STYLES = {CHECKED_OK: "logsleuth.fix", CHECKED_BAD: "logsleuth.exception", NOT_CHECKED: "", NOT_VERIFIED: ""}


def explanation_lines(explanation: Explanation, width: int) -> list[Line]:
    """The unverified explanation (--explain): its label, what it is, then the model's root cause, flags and quotes."""
    view = explanation_view(explanation)
    out = [Line(f"{view.heading}:", "logsleuth.heading"), *_styled(wrap(view.note, width), "logsleuth.note")]
    out.append(Line(f"  Root cause, as the model says ({view.category}):", "logsleuth.heading"))
    out.extend(Line(line) for line in wrap(view.root_cause, width, "    "))
    if view.changes:
        out.append(Line("  Fix it proposes:", "logsleuth.heading"))
    for change in view.changes:
        lines = wrap(f"{change.change}: {change.why}", width, "        ", f"    {change.mark} ")
        out.extend(_styled(lines, _MARK_STYLES[change.mark]))
    if view.upgrade:
        out.extend(Line(line) for line in wrap(f"Upgrade: {view.upgrade}", width, "    ", "  "))
    if view.quotes:
        out.append(Line("  Quoted from the case file:", "logsleuth.heading"))
    for mark, quote in view.quotes:
        out.extend(_styled(wrap(quote, width, "        ", f"    {mark} "), _MARK_STYLES[mark]))
    return out


def render_text(report: Report, options: RenderOptions) -> str:
    """The report only: source errors and warnings are the CLI's stderr lines, printed there once."""
    return "\n".join(line.text for line in report_lines(report, options.width)).rstrip() + "\n"
