"""A paste that ends on an indented paragraph no collector took (issue 28, stop 49): the engine's message alone, the
paste indented as a whole or set off by a blank line, sometimes hard-wrapped over a few lines: `  Chunked MM input
disabled but max_tokens_per_mm_item (2496) is larger` / `  than max_num_batched_tokens (512).` (vLLM's check of the
encoder budget, decoderesearch/interp-engine#2), ` EngineArgs.__init__() got an unexpected keyword argument 'task'`
after a blank line (a wrapper calling vLLM with a keyword it removed, xorbitsai/inference#4548).

The grammar reads an indented line as a frame's source line, and logged_errors.plain_candidates as the continuation of
the line above: so such a paragraph is only read when it opens the stream or follows a blank line or the paste's
Markdown (it continues nothing), and only at the paste's end, as the last line of a paste that shows no failure is
(scanner._read_last_lines: the raise site index must hold the text, a message is never guessed from its words)."""

from __future__ import annotations

from dataclasses import dataclass, field

from logsleuth.models import LogLine

MAX_PARAGRAPH_LINES = 4  # an engine's message a terminal or an editor wrapped; a longer block is code or a dump


@dataclass
class _Paragraph:
    """One run of lines at the same indent that no collector took: where it starts, and its texts so far."""

    indent: str
    first: LogLine
    first_seq: int
    last_seq: int
    texts: list[str] = field(default_factory=list)


class IndentedTail:
    """Per stream, the last run of indented lines no collector took, and whether it continues nothing above it."""

    def __init__(self) -> None:
        self._runs: dict[str, _Paragraph | None] = {}

    def feed(self, line: LogLine, seq: int, opens_paragraph: bool) -> None:
        """An indented line no collector took.  `opens_paragraph`: the stream's line above was blank, the paste's
        Markdown, or there was none."""
        text = line.text
        indent = text[: len(text) - len(text.lstrip())]
        run = self._runs.get(line.stream)
        if run is not None and run.indent == indent and run.last_seq == seq - 1:
            if len(run.texts) >= MAX_PARAGRAPH_LINES:
                self._runs[line.stream] = None
                return
            run.texts.append(text.strip())
            run.last_seq = seq
            return
        self._runs[line.stream] = _Paragraph(indent, line, seq, seq, [text.strip()]) if opens_paragraph else None

    def paragraphs(self, last_content: dict[str, int]) -> list[tuple[LogLine, int, str]]:
        """(first line, its seq, the paragraph's lines joined) of each stream that ends on such a paragraph."""
        return [
            (run.first, run.first_seq, " ".join(run.texts))
            for stream, run in self._runs.items()
            if run is not None and last_content.get(stream) == run.last_seq
        ]
