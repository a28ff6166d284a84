"""What a reasoning rule may read about one failure."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from logsleuth.models import Failure, LaunchInfo
from logsleuth.pydantic_display import checked_as


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
    # The failure the same log printed next after this one, as `Type: message` lines: where a wrapper's line (Ray's
    # ActorDiedError) is followed by the error it reports.
    following: Sequence[str] = ()

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
    it (pydantic_display.checked_as), so a rule or a category row that reads the engine's ValueError reads it there
    too."""
    lines = []
    for block in failure.exceptions:
        lines.append(f"{block.type}: {block.message}")
        type_name, message = checked_as(block)
        if type_name != block.type:  # the check's own exception, which pydantic's carries
            lines.append(f"{type_name}: {message}")
    return lines


