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


# The smallest Slack budget that always holds the verdict line (clipped to 100 characters) and the "cut" note.
MIN_MAX_CHARS = 200


@dataclass(frozen=True)
class RenderOptions:
    format: OutputFormat = OutputFormat.TEXT
    width: int = 100
    color: bool = False
    max_chars: int = 3500  # slack
    log_location: str | None = None  # "where the full log is", for shared reports
