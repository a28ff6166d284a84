"""What a reasoning rule may read about one failure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from logsleuth.models import ExceptionBlock, Failure, LaunchInfo
from logsleuth.pydantic_display import without_pydantic_display


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a rule may read: the failure, the launch (engine, version, command, server_args) and the log's lines
    around it (the cascade and the lines the reader kept)."""

    failure: Failure
    launch: LaunchInfo
    lines: Sequence[str] = ()
    # The failures the same log printed before this one, each as `Type: message` (exception_lines): what an earlier
    # step reported of the environment (pip's conflicts), read only where a rule says so.
    earlier: Sequence[str] = ()

    @property
    def message_text(self) -> str:
        """The failure's exceptions, one `Type: message` a line, then the header it was printed under."""
        return "\n".join([*exception_lines(self.failure), self.failure.header or ""])

    def first_match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The first match of `pattern` in the failure's exceptions (exception_lines), in the chain's order."""
        return next((m for line in exception_lines(self.failure) if (m := pattern.search(line))), None)


def exception_lines(failure: Failure) -> list[str]:
    """Each exception of the failure's chain as `Type: message`, in the chain's order: the text rules search.  A
    pydantic ValidationError whose validator raised a ValueError is followed by that ValueError as the engine raised
    it (`validator_error`), so a rule or a category row that reads the engine's ValueError reads it there too."""
    lines = []
    for block in failure.exceptions:
        lines.append(f"{block.type}: {block.message}")
        if (raised := validator_error(block)) is not None:
            lines.append(f"ValueError: {raised}")
    return lines


# pydantic formats a validator's ValueError inside a ValidationError's message as "Value error, {error}"
# (pydantic-core's `value_error` message template) and ends the error with its display's `[type=value_error,
# input_value=…, input_type=…]`; the URL line follows.  vLLM's config classes are pydantic dataclasses, so their
# checks reach users so: `ValidationError: 1 validation error for ModelConfig` / `  Value error, <vLLM's message>`.
VALUE_ERROR = "Value error, "
_URL_LINE = "For further information visit"


def validator_error(block: ExceptionBlock) -> str | None:
    """The message of the ValueError a validator raised, which a pydantic ValidationError's message carries after
    `Value error, ` (the first such error of several), without pydantic's display; None for any other exception.
    String search, not a regex: the message may be long, and pydantic's display starts with a space run."""
    if not block.type.endswith("ValidationError"):
        return None
    message = block.message
    start = message.find(VALUE_ERROR)
    if start < 0 or message[:start].rstrip(" \t")[-1:] not in ("", "\n"):
        return None  # only an error line of pydantic's, never the words quoted inside another message
    body = message[start + len(VALUE_ERROR):]
    if (url_line := body.find(_URL_LINE)) >= 0:
        body = body[:url_line]
    return without_pydantic_display(body) or None
