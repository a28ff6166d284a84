"""A failure the paste shows only as a warning (issue 28 item 1): the last line of facts/incapacity_warnings.toml a
paste holds, kept while the scanner reads on, and reported by it only when the paste shows no other failure and the
warning is the paste's strongest evidence.

Why not every such warning: a warning is printed on the way; what ended the run (a traceback, an abort, a kill) is
its failure when the paste has one.  Without one, a warning that says the run cannot do what it was asked (torch has
no kernels for this GPU, CUDA did not initialize) is what a person scanning the paste points at, but only while
nothing after it says otherwise: the server came up (a readiness line), or the paste goes on for more than REACH
lines of content, so the run went on well past it.  A warning that healthy runs print too is no row (vLLM's 'No
platform detected' is logged by every process that imports vLLM on a host without a GPU, a benchmark client's too)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from logsleuth.facts.incapacity_warnings import IncapacityWarning, continuation, incapacity_warning
from logsleuth.models import ExceptionBlock, Failure, LogLine

# Lines of content (not blank) a paste may go on for after the warning while it is still the paste's strongest
# evidence: the warning's own lines after it (torch's list of supported capabilities, `warnings.warn(`), and a
# program's few closing lines (a metrics line, a config it printed before it stopped).
REACH = 20


@dataclass
class WarnedFailure:
    """The last incapacity warning seen, and what the paste said after it."""

    row: IncapacityWarning
    line: LogLine
    message: str
    context: tuple[str, ...]
    content_after: int = 0
    extra: list[str] = field(default_factory=list)
    expecting_then: bool = True  # the next line may be the warning's second line (the row's `then`)

    def failure(self) -> Failure:
        message = " ".join((self.message, *self.extra))
        return Failure(
            kind="line",
            exceptions=(ExceptionBlock(type=self.row.type, message=message),),
            line=self.line.number,
            offset=self.line.offset,
            end_offset=self.line.offset + len(self.line.text) + 1,
            meta=self.line.meta,
            context=self.context,
        )


class WarnedFailures:
    """Fed every line of a paste (after the scanner's own reading of it); holds the warning that may be its failure."""

    def __init__(self) -> None:
        self.last: WarnedFailure | None = None

    def feed(self, line: LogLine, context: Callable[[], tuple[str, ...]]) -> None:
        """`context`: the scanner's recent warning lines, asked for only when the line is such a warning."""
        text = line.text
        if not text or text.isspace():
            return  # blank lines are no content
        if (found := incapacity_warning(text)) is not None:
            row, message = found
            self.last = WarnedFailure(row, line, message, context())
            return
        last = self.last
        if last is None:
            return
        last.content_after += 1
        if last.expecting_then:
            last.expecting_then = False
            if line.stream == last.line.stream and (more := continuation(last.row, text)) is not None:
                last.extra.append(more)
                return

    def strongest(self, ready_offset: int) -> Failure | None:
        """The warning as the paste's failure, when it is still its strongest evidence at the paste's end."""
        last = self.last
        if last is None or last.content_after > REACH or ready_offset > last.line.offset:
            return None
        return last.failure()
