"""What a reasoning rule may read about one failure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from logsleuth.models import Failure, LaunchInfo


@dataclass(frozen=True, slots=True)
class Evidence:
    """What a rule may read: the failure, the launch (engine, version, command, server_args) and the log's lines
    around it (the cascade and the lines the reader kept)."""

    failure: Failure
    launch: LaunchInfo
    lines: Sequence[str] = ()

    @property
    def message_text(self) -> str:
        """The failure's exceptions, one `Type: message` a line, then the header it was printed under."""
        return "\n".join([*exception_lines(self.failure), self.failure.header or ""])

    def first_match(self, pattern: re.Pattern[str]) -> re.Match[str] | None:
        """The first match of `pattern` in the failure's exceptions (exception_lines), in the chain's order."""
        return next((m for line in exception_lines(self.failure) if (m := pattern.search(line))), None)


def exception_lines(failure: Failure) -> list[str]:
    """Each exception of the failure's chain as `Type: message`, in the chain's order: the text rules search."""
    return [f"{block.type}: {block.message}" for block in failure.exceptions]
