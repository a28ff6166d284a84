"""Shared helpers for the render tests: render a report in every format the same way."""

from __future__ import annotations

import re

from logsleuth.models import Report
from logsleuth.render.options import OutputFormat, RenderOptions

FORMATS = tuple(OutputFormat)
EXTENSIONS = {
    OutputFormat.RICH: "rich.txt",
    OutputFormat.TEXT: "txt",
    OutputFormat.MARKDOWN: "md",
    OutputFormat.SLACK: "slack.txt",
    OutputFormat.JSON: "json",
}
# The formats that wrap at the width, and the widths their goldens are drawn at: a narrow tmux pane, the
# classic terminal, a wide screen.
WRAPPING = (OutputFormat.RICH, OutputFormat.TEXT)
WIDTHS = (60, 80, 200)


def golden_name(case: str, fmt: OutputFormat, width: int | None = None) -> str:
    return f"{case}.{width}.{EXTENSIONS[fmt]}" if width else f"{case}.{EXTENSIONS[fmt]}"


def golden_variants() -> list[tuple[OutputFormat, int | None]]:
    """Every (format, width) a golden exists for: each wrapping format at every width, the others once."""
    return [(fmt, width) for fmt in FORMATS for width in (WIDTHS if fmt in WRAPPING else (None,))]


def render(report: Report, fmt: OutputFormat, **options: object) -> str:
    """What the CLI prints for `--format fmt` (through the CLI's own dispatcher)."""
    from logsleuth.render import render as cli_render

    settings: dict[str, object] = {"width": 100, "color": False, **options}
    return cli_render(report, RenderOptions(format=fmt, **settings))  # type: ignore[arg-type]


def slack_fences_balanced(text: str) -> bool:
    return text.count("```") % 2 == 0


def markdown_fences(text: str) -> list[tuple[int, int]]:
    """CommonMark fences as (open line, close line); raises if one is left open.  A fence
    closes only on a line of at least as many backticks as opened it."""
    spans = []
    opened: tuple[int, int] | None = None  # (line, fence length)
    for number, line in enumerate(text.splitlines()):
        run = re.match(r"^ {0,3}(`{3,})(.*)$", line)
        if opened is None:
            if run:
                opened = (number, len(run.group(1)))
        elif run and len(run.group(1)) >= opened[1] and not run.group(2).strip():
            spans.append((opened[0], number))
            opened = None
    assert opened is None, f"fence opened on line {opened[0] + 1} is never closed"
    return spans


def slack_split(text: str) -> tuple[list[str], list[str]]:
    """A Slack message's lines as (inside code blocks, outside them).  Slack turns no mention inside a code
    block into a ping, so only the prose must be defanged; the code must carry no zero-width character."""
    code: list[str] = []
    prose: list[str] = []
    inside = False
    for line in text.splitlines():
        if line == "```":
            inside = not inside
            continue
        (code if inside else prose).append(line)
    return code, prose
