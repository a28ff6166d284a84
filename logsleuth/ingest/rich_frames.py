"""rich's traceback panel as CPython writes a traceback (issue 28, stop 49: lighteval's `lighteval vllm` runs under
rich's traceback handler, and a paste of its panel cut before the exception line was no failure at all:
huggingface/lighteval#504, huggingface/open-r1#468).

rich (rich/traceback.py) draws the traceback in a box titled `Traceback (most recent call last)`: each frame as
`│ /path/to/file.py:146 in vllm │`, over a numbered listing of the lines around the one that ran, marked `❱`, with
indent guides (`│   │   raise …`) in the code; the exception line follows the box, as CPython's does.  Rewritten
before the scanner reads them, the header, the frames and the lines that ran are read as a CPython traceback's; the
rest of the box (the listing, blank rows, `locals` boxes) is left out.  A prefix before the box (torchrun's
`[rank0]: `) is kept on every line, so the normalizer takes it off as before.  A frame whose path rich wrapped over two
or more rows (a path wider than the panel) is joined back: the rows holding only the path's pieces, then the frame's
row.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from logsleuth.lazyre import compile_lazily

BOX_SIDE = "\u2502"  # │
RICH_HEADER = compile_lazily(
    r"^(?P<prefix>.{0,80}?)\u256d\u2500+ Traceback \(most recent call last\) \u2500+\u256e\s*$"
)
RICH_FRAME = compile_lazily(
    r"^\u2502 (?P<file>\S+?\.py):(?P<line>\d+) in (?P<func>[\w.<>]+)\s*\u2502\s*$"
)
# the line that ran: `│ ❱ 146 │   pipeline.evaluate()   │` (the guide after the number, the code's own after it); the
# regex reads only up to the number, the row's end is cut off with string methods (a lazy `.*?` before `\s*│\s*$`
# would backtrack quadratically over a long run of spaces)
RICH_RAN = compile_lazily(r"^\u2502 \u2771\s*\d+ ")
RICH_CLOSE = compile_lazily(r"^\u2570\u2500+\u256f\s*$")
# a frame's path wider than the panel: rich ends the row with the path's start (`│ /home/u/…/site-packages/lightev │`)
# and goes on at the next row's start (`│ al/models/vllm/vllm_model.py:407 in _loglikelihood_tokens │`)
# (the first class holds no `/`: the first slash is found once, not retried at every slash, review 3 H1 of stop 49)
RICH_PATH_START = compile_lazily(r"^\u2502 (?P<start>[^\s\u2502/]*/[^\s\u2502]*)\s*\u2502\s*$")

Line = tuple[str, int, int]  # text, line number, byte offset


def rich_frames_as_cpython(lines: Iterable[Line]) -> Iterator[Line]:
    """`lines` with each rich traceback panel written as CPython writes a traceback: the title as `Traceback (most
    recent call last):`, each frame as `  File "…", line N, in f`, the line that ran under it as its source line; the
    panel's other rows left out.  Lines outside a panel are yielded as they are (a line that does not continue the box
    ends it)."""
    prefix: str | None = None  # the text before the open panel's box, None outside a panel
    path_start = ""  # the start of a frame's path rich wrapped onto the next row
    for text, number, offset in lines:
        if prefix is None:
            if "Traceback (most recent call last)" in text and (header := RICH_HEADER.match(text)) is not None:
                prefix = header["prefix"]
                yield f"{prefix}Traceback (most recent call last):", number, offset
                continue
            yield text, number, offset
            continue
        row = text[len(prefix):] if text.startswith(prefix) else None
        if row is not None and row.startswith(BOX_SIDE):
            start, path_start = path_start, ""
            if (frame := RICH_FRAME.match(row)) is not None:
                path = start + frame["file"]
                yield f'{prefix}  File "{path}", line {frame["line"]}, in {frame["func"]}', number, offset
            elif (ran := RICH_RAN.match(row)) is not None and (source := _code_of(row[ran.end():])):
                yield f"{prefix}    {source}", number, offset
            elif (wrapped := RICH_PATH_START.match(row)) is not None:
                path_start = start + wrapped["start"]  # a path wider than two rows goes on over several
            continue
        if row is not None and RICH_CLOSE.match(row) is not None:
            prefix = None
            continue
        prefix = None
        yield text, number, offset


def _code_of(cell: str) -> str:
    """The code of a listing row after its line number: the box's right side and the indent guides taken off."""
    cell = cell.rstrip()
    if cell.endswith(BOX_SIDE):
        cell = cell[:-1].rstrip()
    return cell.lstrip(BOX_SIDE + " ")
