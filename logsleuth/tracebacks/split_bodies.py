"""A server's JSON error body that a paste spread over several lines (issue 28, stop 39 class 1).

SGLang and vLLM answer a failed request with `{"object": "error", "message": "…", "type": "BadRequestError", …}`
(grammar.http_error_body reads it on one line).  Pasted from a client, the body is often not on one line: a
terminal or the issue form hard-wrapped it, or the client printed it indented (`json.dumps(body, indent=2)`, curl
piped through `jq`).  Read line by line, only its `"type"` member then looks like a failure, and the message (what
names the category: "The input (N tokens) is longer than the model's context length") is lost.  Here the lines of
such a body are joined (JSON allows whitespace between tokens; a wrap cuts inside a string without adding any) until
its braces close, and the joined text is read as one body."""

from __future__ import annotations

from logsleuth.models import LogLine
from logsleuth.tracebacks.grammar import HTTP_ERROR_BODY, http_error_body

MAX_BODY_LINES = 24  # an error body is a handful of members; a longer run of lines is something else


class SplitErrorBodies:
    """Per stream, the lines of an error body not yet closed."""

    def __init__(self) -> None:
        self._open: dict[str, tuple[LogLine, list[str], int]] = {}  # stream -> first line, texts, open braces

    def holding(self, stream: str) -> bool:
        return stream in self._open

    def feed(self, line: LogLine) -> tuple[LogLine, str] | None:
        """(the body's first line, its joined text) when `line` closes a body that reads as a server's error body,
        else None.  A line that opens one is held: a body whose first line is `{` alone, or one that
        starts on the line and does not close there."""
        text, stream = line.text, line.stream
        held = self._open.pop(stream, None)
        if held is not None and not line.starts_record:
            first, texts, depth = held
            texts.append(text)
            depth += text.count("{") - text.count("}")
            if depth <= 0:
                joined = "".join(texts)
                return (first, joined) if http_error_body(joined) is not None else None
            if len(texts) < MAX_BODY_LINES:
                self._open[stream] = (first, texts, depth)
            return None
        if "{" not in text:
            return None
        stripped = text.strip()
        if stripped == "{" or stripped.endswith((" {", ":{", "={")):
            self._open[stream] = (line, [stripped[stripped.rfind("{"):]], 1)
        elif (m := HTTP_ERROR_BODY.search(text)) is not None and http_error_body(text) is None:
            body = text[m.start():]
            depth = body.count("{") - body.count("}")
            if depth > 0:
                self._open[stream] = (line, [body], depth)
        return None
