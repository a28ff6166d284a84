"""Terminal report drawn with rich: the TTY default.

Log text only ever reaches rich inside `Text` objects, which rich never parses for
markup or emoji, so `[bold]` or `:boom:` in a log is shown literally.
"""

from __future__ import annotations

import io
import textwrap

from rich.console import Console
from rich.rule import Rule
from rich.text import Text

from logsleuth.models import FailureGroup, LaunchInfo, Report
from logsleuth.render.options import RenderOptions
from logsleuth.render.table import summary_table
from logsleuth.render.theme import THEME
from logsleuth.render.view import (
    FixView,
    FrameView,
    abstention,
    build_view,
    folded_text,
    headline,
    is_multi,
    no_failure_lines,
    omitted_line,
    summary_rows,
)


def make_console(options: RenderOptions) -> Console:
    return Console(
        file=io.StringIO(),
        width=max(40, options.width),
        force_terminal=options.color,
        color_system="standard" if options.color else None,
        theme=THEME,
        highlight=False,
        emoji=False,
        markup=False,
        legacy_windows=False,
    )


def _indented(console: Console, text: str, style: str, indent: int = 2) -> None:
    """Wrapped by us, so wrapped lines keep the indent and carry no trailing padding."""
    width = max(20, console.width - indent)
    for line in textwrap.wrap(text, width=width, break_on_hyphens=False) or [""]:
        console.print(Text(" " * indent + line, style=style), no_wrap=True, overflow="fold")


def _frames(console: Console, frames: list[FrameView]) -> None:
    for frame in frames:
        if frame.folded:
            console.print(Text(f"    {folded_text(frame.folded)}", style="logsleuth.frame.folded"))
            continue
        if frame.in_app:
            console.print(
                Text.assemble("  ", ("›", "logsleuth.marker"), " ", (frame.location, "logsleuth.frame.app"))
            )
        else:
            console.print(Text(f"    {frame.location}", style="logsleuth.frame.library"))
        if frame.source:
            console.print(Text(f"        {frame.source}", style="logsleuth.frame.source"))


def _fix(console: Console, fix: FixView, label: str = "Fix") -> None:
    console.print(Text(label, style="logsleuth.heading"))
    _indented(console, fix.summary, "logsleuth.fix")
    for change in fix.changes:
        console.print(Text.assemble("    ", (change, "logsleuth.change")))
    for step in fix.steps:
        console.print(Text(f"    - {step}"))
    if fix.command:
        console.print(Text("  Corrected command:", style="logsleuth.heading"))
        # soft_wrap: the terminal wraps it, rich inserts no newline, so copy and paste keeps one line.
        console.print(Text(f"    {fix.command}", style="logsleuth.fixes.command"), soft_wrap=True)
    for alternative in fix.alternatives:
        _fix(console, alternative, "Or")


def _group(console: Console, group: FailureGroup, index: int | None, show_source: bool, launch: LaunchInfo) -> None:
    view = build_view(group, show_source, launch)
    if index is not None:
        console.print(Rule(Text(f"[{index}] {view.verdict}", style="logsleuth.verdict"), align="left"))
    else:
        console.print(Text(view.verdict, style="logsleuth.verdict"))
    if view.where:
        _indented(console, view.where, "logsleuth.where")
    console.print()
    for block in view.chain:
        if block.relation_text:
            console.print(Text(f"  ({block.relation_text})", style="logsleuth.relation"))
        _frames(console, block.frames)
        for line in [block.exception_line, *block.message_tail]:
            _indented(console, line, "logsleuth.exception")
    if view.truncated:
        console.print(Text("  (traceback incomplete in the log)", style="logsleuth.note"))
    console.print()
    if view.root_cause is not None:
        console.print(
            Text.assemble(
                ("Root cause", "logsleuth.heading"),
                "  ",
                (f"{view.category} · pattern {view.pattern}", "logsleuth.category"),
            )
        )
        _indented(console, view.root_cause, "logsleuth.root_cause")
        if view.fix:
            console.print()
            _fix(console, view.fix)
    else:
        console.print(
            Text("No known pattern matches this failure: logsleuth gives no advice for it. What helps next:", style="logsleuth.heading")
        )
        for label, text in abstention(view):
            console.print(Text.assemble(f"  {label}: ", (text, "logsleuth.frame.app")))
        if view.context:
            console.print(Text("  Log lines just before it:"))
            for line in view.context:
                console.print(Text(f"    {line}", style="logsleuth.context"))
    if view.cascade:
        console.print()
        console.print(Text("Then:", style="logsleuth.heading"))
        for line in view.cascade:
            console.print(Text(f"  {line}", style="logsleuth.note"))


def _summary(console: Console, report: Report) -> None:
    count = len(report.failures)
    console.print(
        Text(
            f"{count} failure{'s' if count > 1 else ''}; the first is the root failure.",
            style="logsleuth.heading",
        )
    )
    console.print()
    # The plain-text table: fixed columns that never wrap, the same in every format.
    header, *rows = summary_table(summary_rows(report), console.width)
    console.print(Text(header, style="logsleuth.table.header"), no_wrap=True, overflow="ellipsis")
    for row in rows:
        console.print(Text(row), no_wrap=True, overflow="ellipsis")
    console.print()


def render_rich(report: Report, options: RenderOptions) -> str:
    """The report only: source errors and warnings are the CLI's stderr lines, printed there once."""
    console = make_console(options)
    if not report.failures:
        for line in no_failure_lines(report):
            console.print(Text(line))
    elif is_multi(report):
        console.print(Text(f"✖ {headline(report)}", style="logsleuth.verdict"))
        _summary(console, report)
    multi = is_multi(report)
    for index, group in enumerate(report.failures, start=1):
        _group(console, group, index if multi else None, len(report.sources) > 1, report.launch)
        console.print()
    omitted = omitted_line(report)
    if omitted:
        console.print(Text(omitted, style="logsleuth.note"))
    file = console.file
    assert isinstance(file, io.StringIO)
    text = file.getvalue()
    if not options.color:
        # Without styles, rich's padding is only trailing blanks.
        text = "\n".join(line.rstrip() for line in text.splitlines())
    return text.rstrip() + "\n"
