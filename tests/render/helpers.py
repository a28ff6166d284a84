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
