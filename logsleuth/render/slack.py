"""Slack mrkdwn report: short enough to paste, safe to post (FIELD-NOTES §6).

Answer first: the headline (what died, where), the root cause and the fix with its corrected command come
before any log text, so they are what the channel sees above the fold; a short frame excerpt follows.

The message is a list of blocks (a prose line or a whole fence).  It is first drawn with everything, then
with less and less evidence, least useful first, until it fits `max_chars`; the last resort drops whole
trailing blocks.  Pattern prose (root cause, fix) is never cut, and a fence is never cut, so every fence is
closed.

Prose that quotes log text is defanged (`@here`, `<!channel>` get a zero-width space).  Code blocks get no
zero-width character, so what is copied from them is what the log or the command says: Slack never turns a
mention inside a code block into a ping, and a run of backticks that would close the block is spaced out
visibly (`` ` ` ` ``).  Local file paths are left out: they name files on the machine that ran logsleuth.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Explanation, Report
from logsleuth.render.explanation import explanation_view
from logsleuth.render.options import RenderOptions
from logsleuth.render.safety import break_fences, clip, defang_mentions, escape_slack_api
from logsleuth.render.table import summary_table
from logsleuth.render.view import (
    FACTS_LABEL,
    GENERAL_LABEL,
    NO_PROVEN_FIX,
    RAISED_AT_LABEL,
    SEARCH_LABEL,
    STDIN_NOTE,
    Ending,
    FixView,
    FrameView,
    GroupView,
    abstention,
    build_view,
    cascade_note,
    describe_source_errors,
    ending,
    fleet_notes,
    fleet_summary,
    folded_text,
    headline,
    is_multi,
    is_remote_name,
    log_location,
    more_lines_text,
    multi_heading,
    no_failure_lines,
    omitted_line,
    source_notes,
    summary_rows,
)

FENCE = "```"
TABLE_WIDTH = 72  # Slack's message pane is narrow


@dataclass(frozen=True)
class Detail:
    """How much evidence to show.  Each field is one thing the budget can give up; the answer (headline, root
    cause, fix, corrected command) is never among them."""

    context_lines: int = 3
    earlier_exceptions: bool = True
    app_frames: int = 3
    message_lines: int = 4
    frame_sources: bool = True
    alternatives: bool = True
    detailed_groups: int = 3
    line_chars: int = 300
    summary_rows: int = 10
    evidence: bool = True
    fleet_kinds: int = 8  # lines of a fleet's summary (hosts by outcome and failure)
    explanation: bool = True  # the unverified explanation (--explain): it goes before the evidence does


# Applied one after another, least useful first.
REDUCTIONS: tuple[dict[str, Any], ...] = (
    {"context_lines": 0},
    {"earlier_exceptions": False},
    {"message_lines": 1},
    {"detailed_groups": 2},
    {"app_frames": 2},
    {"frame_sources": False},
    {"app_frames": 1},
    {"line_chars": 160},
    {"detailed_groups": 1},
    {"summary_rows": 5},
    {"fleet_kinds": 4},
    {"line_chars": 100},
    {"summary_rows": 3},
    {"fleet_kinds": 2},
    {"explanation": False},
    {"evidence": False},
    {"alternatives": False},  # the last of the answer that may go: the first fix always stays
)


def safe(text: str) -> str:
    """Prose that may quote log text: no mentions, no fences."""
    return break_fences(defang_mentions(text))


_BACKTICK_RUN = compile_lazily(r"`{3,}")


def code_line(text: str) -> str:
    """A line inside a code block: only a run of backticks that would close it changes, visibly."""
    return _BACKTICK_RUN.sub(lambda m: " ".join(m.group(0)), text)


def fence(lines: list[str]) -> str:
    return "\n".join([FENCE, *(code_line(line) for line in lines), FENCE])


def inline_code(text: str) -> str:
    """`text` as inline code, mentions defanged (a span sits in a line of prose); text that holds a backtick
    (which would end the span) as defanged prose."""
    return f"`{defang_mentions(text)}`" if "`" not in text else safe(text)


def _frames(frames: list[FrameView], detail: Detail) -> list[str]:
    """A short excerpt: the innermost `app_frames` frames, after a note of how many come before them."""
    real = [index for index, frame in enumerate(frames) if not frame.folded]
    start = real[-detail.app_frames] if len(real) >= detail.app_frames else (real[0] if real else len(frames))
    earlier = sum(frame.folded or 1 for frame in frames[:start])
    out = [f"    {folded_text(earlier, 'earlier')}"] if earlier else []
    for frame in frames[start:]:
        if frame.folded:
            out.append(f"    {frame.folded_text}")
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
        tail = block.message_tail[: max(0, detail.message_lines - 1)]
        lines.extend(tail)
        left_out = block.message_left_out + len(block.message_tail) - len(tail)
        if left_out:
            lines.append(more_lines_text(left_out))
    return [clip(line, detail.line_chars) for line in lines]


def _fix_blocks(fix: FixView, label: str) -> list[str]:
    """The summary, its steps, then the corrected command in a code block of its own (the one thing to copy);
    without a command, the flag changes as a list."""
    blocks = [f"*{label}:* {safe(fix.summary)}"]
    blocks.extend(f"• {safe(step)}" for step in fix.steps)
    if fix.command:
        if fix.command_label != "Corrected command":
            blocks.append(f"_{safe(fix.command_label)}:_")
        blocks.append(fence([fix.command]))
    else:
        blocks.extend(f"• {inline_code(change)}" for change in fix.changes)
        if fix.command_hint:
            blocks.append(f"_{safe(fix.command_hint)}_")
    return blocks


def _answer(view: GroupView, detail: Detail) -> list[str]:
    if view.root_cause is None:
        blocks = ["*No known pattern matches this failure:* logsleuth gives no advice for it."]
        for label, text in abstention(view):
            if label == SEARCH_LABEL:  # the exact text, in a code block so that it copies as the log has it
                blocks.extend([f"{label}:", fence([text])])
            else:
                blocks.append(f"{label}: {inline_code(clip(text, detail.line_chars))}")
        return blocks
    label = f" ({inline_code(view.category or '')}, _{GENERAL_LABEL}_)" if view.general else ""
    blocks = [f"*{view.cause_heading}:*{label} {safe(view.root_cause)}"]
    if view.evidence:
        blocks.append(f"*{FACTS_LABEL}:*")
        blocks.extend(f"• {safe(fact)}" for fact in view.evidence)
    for words in view.engine_says:
        blocks.append(f"*{safe(words.label)}:* {inline_code(words.text)}")
        blocks.extend(f"• {safe(check)}" for check in words.checks)
    if view.fix:
        blocks.extend(_fix_blocks(view.fix, view.fix_label))
        if detail.alternatives:
            for alternative in view.fix.alternatives:
                blocks.extend(_fix_blocks(alternative, "Or"))
    if view.general and view.search:
        blocks.extend([f"{SEARCH_LABEL}:", fence([view.search])])
    return blocks


def _evidence(view: GroupView, detail: Detail) -> list[str]:
    if not detail.evidence:
        return []
    blocks = [fence(_traceback(view, detail))]
    if view.raised_at:
        blocks.append("\n".join([f"{RAISED_AT_LABEL}:", *(f"• {safe(clip(fact, detail.line_chars))}" for fact in view.raised_at)]))
    context = view.context[-detail.context_lines :] if detail.context_lines else []
    if context:
        earlier = view.context_left_out + len(view.context) - len(context)
        note = [more_lines_text(earlier, "earlier")] if earlier else []
        blocks.append("Log lines just before it:")
        blocks.append(fence([*note, *(clip(line, detail.line_chars) for line in context)]))
    return blocks


def _group_blocks(view: GroupView, detail: Detail, title: str | None) -> list[str]:
    blocks = [f"*{title} {safe(view.headline)}*"] if title else []
    if view.details:
        blocks.append(safe(clip(view.details, detail.line_chars)))
    return [*blocks, *_answer(view, detail), *_evidence(view, detail)]


def _blocks(report: Report, options: RenderOptions, detail: Detail) -> list[str]:
    blocks = [f"*logsleuth:* {safe(headline(report))}"]
    if report.fleet is not None:  # the hosts, summarised: the errors are among them
        blocks.extend(_fleet_blocks(report, detail))
    else:
        blocks.extend(safe(error) for error in describe_source_errors(report))
    blocks.extend(safe(note) for note in source_notes(report))
    if not report.failures:
        blocks.extend(safe(line) for line in no_failure_lines(report, local_names=False))
    multi = is_multi(report)
    hosts = {host for group in report.failures for host in group.hosts}
    for index, group in enumerate(report.failures[: detail.detailed_groups], start=1):
        # Only remote sources (`host:path`) are named: a local path means nothing in a channel.
        sources = [name for name in group.sources if is_remote_name(name, hosts)]
        view = build_view(group, len(report.sources) > 1, report.launch, sources, cascade_note(report, group))
        blocks.extend(_group_blocks(view, detail, f"[{index}]" if multi and index > 1 else None))
        if multi and index == 1:
            rows = summary_rows(report)
            table = summary_table(rows[: detail.summary_rows], TABLE_WIDTH, drop_empty=True)
            if len(rows) > detail.summary_rows:
                table.append(f"  … and {len(rows) - detail.summary_rows} more")
            blocks.extend([f"*{multi_heading(report)}*", fence(table)])
    omitted = omitted_line(report)
    if omitted:
        blocks.append(f"_{safe(omitted)}_")
    if report.explanation is not None and detail.explanation:  # after everything logsleuth found (--explain)
        blocks.extend(_explanation_blocks(report.explanation))
    location = log_location(report, options.log_location)
    if location:
        blocks.append(f"_Full log: {safe(clip(location, 300))}_")
    return [*blocks, *_ending_blocks(ending(report))]


def _ending_blocks(end: Ending) -> list[str]:
    """How to get more help when there is no proven fix, and the --cmd hint: short, last."""
    blocks: list[str] = []
    if end.case_command:
        blocks.append(f"*{safe(NO_PROVEN_FIX)}*")
        blocks.extend(f"• {inline_code(command)}: {safe(note)}" for command, note in end.offers())
        if end.stdin:
            blocks.append(f"• {safe(STDIN_NOTE)}")
    if end.cmd_hint and not end.cmd_hint_in_fix:
        blocks.append(f"_{safe(end.cmd_hint)}_")
    return blocks


def _explanation_blocks(explanation: Explanation) -> list[str]:
    """The unverified explanation (--explain): label, root cause, flags with their marks (its quotes are left to
    the full report: the channel has the evidence)."""
    view = explanation_view(explanation)
    blocks = [f"*{safe(view.heading)}* _({view.short_note})_"]
    blocks.append(f"*Root cause, as the model says* ({inline_code(view.category)}): {safe(view.root_cause)}")
    blocks.extend(f"• {c.mark} {inline_code(c.change)}: {safe(c.why)}" for c in view.changes)
    if view.upgrade:
        blocks.append(f"*Upgrade:* {safe(view.upgrade)}")
    return blocks


def _fleet_blocks(report: Report, detail: Detail) -> list[str]:
    """The hosts in a few lines: the root, then how many hosts ended each way (`61 hosts: cascade of node03 …`)."""
    lines = [f"• {safe(clip(line, detail.line_chars))}" for line in fleet_summary(report, kinds=detail.fleet_kinds)]
    # The root's line first, each its own block: the last resort (_fit) keeps what fits from the top.
    return [*lines[:1], *(f"_{safe(note)}_" for note in fleet_notes(report)), *lines[1:]]


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
    return shrink_to_fit(lambda detail: _blocks(report, options, detail), Detail(), REDUCTIONS, options.max_chars)


D = TypeVar("D")


def shrink_to_fit(
    blocks_for: Callable[[D], list[str]], detail: D, reductions: Iterable[dict[str, Any]], max_chars: int
) -> str:
    """The blocks a detail level gives, with less and less detail (each reduction, in turn, replaces fields of
    the dataclass `detail`) until they fit `max_chars`; whole blocks from the top as the last resort.  The
    crash and health reports share it."""
    steps = iter(reductions)
    while True:
        blocks = blocks_for(detail)
        text = "\n".join(blocks)
        if len(text) + 1 <= max_chars:  # + the final newline
            return text + "\n"
        step = next(steps, None)
        if step is None:
            return _fit(blocks, max_chars - 1) + "\n"
        detail = replace(detail, **step)  # type: ignore[type-var]


def render_slack_for_api(report: Report, options: RenderOptions) -> str:
    """The Slack report sized so that it still fits `max_chars` once `&<>` are escaped."""
    limit = options.max_chars
    while True:
        text = render_slack(report, replace(options, max_chars=limit))
        overflow = len(escape_slack_api(text)) - options.max_chars
        if overflow <= 0 or limit <= 200:
            return text
        limit -= overflow
