"""How a report is drawn: the format and its options."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class OutputFormat(StrEnum):
    RICH = "rich"
    TEXT = "text"
    MARKDOWN = "markdown"
    SLACK = "slack"
    JSON = "json"


# The narrowest rich or text report: below it, an indented frame line no longer fits.
MIN_WIDTH = 40
# The smallest Slack budget that always holds the verdict line (clipped to 100 characters) and the "cut" note.
MIN_MAX_CHARS = 200


@dataclass(frozen=True)
class RenderOptions:
    """How a report is laid out: format, width, colour, the Slack length limit."""

    format: OutputFormat = OutputFormat.TEXT
    width: int = 80  # rich and text wrap here (the CLI passes the terminal's width)
    color: bool = False
    max_chars: int = 3500  # slack
    log_location: str | None = None  # "where the full log is", for shared reports
    # rich on a terminal: its rows (None: not a terminal).  A report taller than that ends with a recap line.
    height: int | None = None
