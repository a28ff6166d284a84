"""GitHub-flavoured Markdown report, for issues and postmortems: the answer first, then the evidence.

Log text goes into fences longer than any backtick run it contains (so no log line can
close them) or into code spans; prose is escaped so a log cannot inject HTML, links,
table cells or @mentions.
"""

from __future__ import annotations

from logsleuth.models import Explanation, Report
from logsleuth.render.explanation import explanation_view
from logsleuth.render.options import RenderOptions
from logsleuth.render.safety import clean, escape_markdown_prose, markdown_code_span, markdown_fence
from logsleuth.render.view import (
    FACTS_LABEL,
    GENERAL_LABEL,
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
    describe_source_errors,
    ending,
    fleet_heading,
    fleet_notes,
    fleet_rows,
    headline,
    is_multi,
    more_lines_text,
    multi_heading,
    no_failure_lines,
    omitted_line,
    source_notes,
    summary_rows,
)


def fenced(lines: list[str], info: str = "") -> list[str]:
    fence = markdown_fence(lines)
    return [f"{fence}{info}", *lines, fence]


def _fix(fix: FixView, label: str = "Fix") -> list[str]:
    out = [f"**{label}:** {escape_markdown_prose(fix.summary)}", ""]
    items = [markdown_code_span(change) for change in fix.changes] + [
        escape_markdown_prose(s) for s in fix.steps
    ]
    if items:
        out.extend(f"- {item}" for item in items)
        out.append("")
    if fix.command_hint and not fix.command:
        out.extend([f"_{escape_markdown_prose(fix.command_hint)}_", ""])
    if fix.command:
        out.append(f"{escape_markdown_prose(fix.command_label)}:")
        out.append("")
        out.extend(fenced([fix.command], "sh"))
        out.append("")
    for alternative in fix.alternatives:
        out.extend(_fix(alternative, "Or"))
    return out


def _answer(view: GroupView, heading: str | None) -> list[str]:
    out = [f"{heading} {escape_markdown_prose(view.headline)}", ""] if heading else []
    if view.details:
        out.extend([escape_markdown_prose(view.details), ""])
    if view.root_cause is None:
        out.extend(["**No known pattern matches this failure:** logsleuth gives no advice for it. What helps next:", ""])
        out.extend([*(f"- {label}: {markdown_code_span(text)}" for label, text in abstention(view)), ""])
        return out
    if view.general:
        label = f"{markdown_code_span(view.category or '')}, _{GENERAL_LABEL}_"
    else:
        kind = "rule" if view.basis == "rule" else "pattern"
        label = f"{markdown_code_span(view.category or '')}, {kind} {markdown_code_span(view.pattern or '')}"
    out.extend([f"**{view.cause_heading}** ({label}): {escape_markdown_prose(view.root_cause)}", ""])
    out.extend(_trust(view))
    if view.fix:
        out.extend(_fix(view.fix, view.fix_label))
    if view.general and view.search:
        out.extend([f"{SEARCH_LABEL}: {markdown_code_span(view.search)}", ""])
    return out


def _trust(view: GroupView) -> list[str]:
    """The facts a rule used, and the engine's own words with what logsleuth checked of them."""
    out: list[str] = []
    if view.evidence:
        out.extend([f"**{FACTS_LABEL}:**", "", *(f"- {escape_markdown_prose(fact)}" for fact in view.evidence), ""])
    for words in view.engine_says:
        out.extend([f"**{escape_markdown_prose(words.label)}:** {markdown_code_span(words.text)}", ""])
        if words.checks:
            out.extend([*(f"- {escape_markdown_prose(check)}" for check in words.checks), ""])
    return out


def _evidence(view: GroupView) -> list[str]:
    traceback: list[str] = []
    for block in view.chain:
        if block.relation_text:
            traceback.append(f"({block.relation_text})")
        for frame in block.frames:
            if frame.folded:
                traceback.append(f"    {frame.folded_text}")
                continue
            traceback.append(f"  {'›' if frame.in_app else ' '} {frame.location}")
            if frame.source:
                traceback.append(f"        {frame.source}")
        traceback.append(block.exception_line)
        traceback.extend(block.message_tail)
        if block.message_left_out:
            traceback.append(more_lines_text(block.message_left_out))
    if view.truncated:
        traceback.append(view.truncated_note)
    out = ["**Evidence**", "", *fenced(traceback, "text"), ""]
    if view.raised_at:
        out.extend([f"**{RAISED_AT_LABEL}:**", "", *(f"- {escape_markdown_prose(fact)}" for fact in view.raised_at), ""])
    if view.context:
        earlier = [more_lines_text(view.context_left_out, "earlier")] if view.context_left_out else []
        out.extend(["Log lines just before it:", "", *fenced([*earlier, *view.context], "text"), ""])
    elif view.context_dropped:
        out.extend([escape_markdown_prose(NO_ERROR_ABOVE_NOTE), ""])
    if view.cascade:
        later = [more_lines_text(view.cascade_left_out)] if view.cascade_left_out else []
        out.extend(["Then:", "", *fenced([*view.cascade, *later], "text"), ""])
    return out


def _explanation(explanation: Explanation) -> list[str]:
    """The unverified explanation (--explain) under a heading of its own."""
    view = explanation_view(explanation)
    out = [f"#### {escape_markdown_prose(view.heading)}", "", f"> {escape_markdown_prose(view.note)}", ""]
    category = markdown_code_span(view.category)
    out.extend([f"**Root cause, as the model says** ({category}): {escape_markdown_prose(view.root_cause)}", ""])
    if view.changes:
        out.extend(["**Fix it proposes:**", ""])
        out.extend(f"- {c.mark} {markdown_code_span(c.change)}: {escape_markdown_prose(c.why)}" for c in view.changes)
        out.append("")
    if view.upgrade:
        out.extend([f"**Upgrade:** {escape_markdown_prose(view.upgrade)}", ""])
    if view.quotes:
        out.extend(["**Quoted from the case file:**", ""])
        out.extend(f"- {mark} {markdown_code_span(quote)}" for mark, quote in view.quotes)
        out.append("")
    return out


def _ending(end: Ending) -> list[str]:
    """How to get more help when there is no proven fix (each command in a code span of a paragraph of its own:
    a source name is log-controlled text, kept out of any block structure), and the --cmd hint."""
    out: list[str] = []
    if end.case_command:
        out.extend([f"**{escape_markdown_prose(NO_PROVEN_FIX)}**", ""])
        for command, note in end.offers():
            out.extend([f"{markdown_code_span(command)}: {escape_markdown_prose(note)}", ""])
        if end.stdin:
            out.extend([escape_markdown_prose(STDIN_NOTE), ""])
    if end.cmd_hint and not end.cmd_hint_in_fix:
        out.extend([escape_markdown_prose(end.cmd_hint), ""])
    return out


def _summary_table(report: Report) -> list[str]:
    def cell(text: str) -> str:
        return escape_markdown_prose(text)

    out = ["| # | Failure | Count | Ranks | Hosts | Category |", "|--:|---|--:|---|---|---|"]
    for row in summary_rows(report):
        cells = (str(row.index), row.failure, str(row.count), row.ranks, row.hosts, row.category)
        out.append("| " + " | ".join(cell(c) for c in cells) + " |")
    return out


def _fleet(report: Report) -> list[str]:
    """A fleet's hosts as a table, one row each (the root first), after what makes its root uncertain."""
    if report.fleet is None:
        return []
    out = [f"**{escape_markdown_prose(fleet_heading(report))}**", ""]
    out.extend(line for note in fleet_notes(report) for line in (f"> {escape_markdown_prose(note)}", ""))
    out.extend(["| Host | Outcome | First failure | Time |", "|---|---|---|---|"])
    for row in fleet_rows(report):
        cells = (row.host, row.outcome, row.failure, row.time)
        out.append("| " + " | ".join(escape_markdown_prose(cell) for cell in cells) + " |")
    return [*out, ""]


def render_markdown(report: Report, options: RenderOptions) -> str:
    """The report's title is the root failure's headline; its answer follows, then its evidence, then (with
    several failures) the table of all of them and each other failure under a heading of its own."""
    out: list[str] = [f"### logsleuth: {escape_markdown_prose(headline(report))}", ""]
    if report.fleet is None:  # a fleet's table lists its unreadable hosts with their errors
        for error in describe_source_errors(report):
            out.extend([f"> {escape_markdown_prose(error)}", ""])
    out.extend(line for note in source_notes(report) for line in (f"> {escape_markdown_prose(note)}", ""))
    out.extend(_fleet(report))
    if not report.failures:
        out.extend([escape_markdown_prose(line) for line in no_failure_lines(report)])
        out.append("")
    multi = is_multi(report)
    show_source = len(report.sources) > 1
    for index, group in enumerate(report.failures, start=1):
        view = build_view(group, show_source, report.launch, note=cascade_note(report, group))
        # The first failure is named by the report's title.
        out.extend(_answer(view, f"#### {index}." if index > 1 else None))
        out.extend(_evidence(view))
        if multi and index == 1:
            out.extend([multi_heading(report), "", *_summary_table(report), ""])
    omitted = omitted_line(report)
    if omitted:
        out.extend([escape_markdown_prose(omitted), ""])
    if report.explanation is not None:  # after everything logsleuth found (--explain)
        out.extend(_explanation(report.explanation))
    out.extend(_ending(ending(report)))
    for warning in report.warnings:
        out.extend([f"> warning: {escape_markdown_prose(clean(warning))}", ""])
    return "\n".join(out).rstrip() + "\n"
