"""IPython's frames as CPython writes them (issue 28, branch h-cut: a notebook's traceback cut before its exception line
and before its header, vllm-project/vllm#3374, #12386, was no failure at all).

IPython prints a frame as `File ~/…/vllm/worker/model_runner.py:1051, in Runner.__init__(self, …)` over a numbered
listing of the lines around the one that ran, marked by an arrow (IPython/core/ultratb.py); a rendered notebook copies
the path as a Markdown link, VS Code the line numbers.  Rewritten before the scanner reads them, they are read as any
cut traceback's frames (tracebacks/notebook.py reads IPython's header, which names the type).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from logsleuth.lazyre import compile_lazily

# The type, at least two spaces of IPython's padding, and CPython's words without their colon.
NOTEBOOK_HEADER = compile_lazily(
    r"^\s*(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Timeout))\s{2,}"
    r"Traceback \(most recent call last\)\s*$"
)

# IPython's frame line (IPython/core/ultratb.py): `File ~/…/vllm/worker/model_runner.py:1051, in Runner.__init__(self,
# …)`, the path made a Markdown link when copied from a rendered notebook (`File [/…/worker_manager.py:195](https://…),
# in Manager.add_adapter(self, lora_request)`; vllm-project/vllm#3374, #12386).
IPYTHON_FRAME = compile_lazily(
    r"^\s*File \[?(?P<file>[^\s\[\]()]+?\.py):(?P<line>\d+)(?:\]\([^)\s]*\))?, in (?P<func>[\w.<>]+)\("
)
# A numbered source line under it: `    190     raise RuntimeError(`, `--> 195     self.add_adapter(lora)`, the number a
# Markdown link in VS Code's rendering (`-> [1051](https://…) needs_attn_backend = …`); the arrow marks the line that ran.
IPYTHON_SOURCE = compile_lazily(r"^\s*(?:(?P<arrow>-*>)\s*)?\[?(?P<line>\d+)\]?(?:\([^)\s]*\))?(?:\s(?P<source>.*))?$")

Line = tuple[str, int, int]  # text, line number, byte offset


def ipython_frames_as_cpython(lines: Iterable[Line]) -> Iterator[Line]:
    """`lines` with IPython's frames written as CPython writes them: each `File …:N, in f(…)` as `  File "…", line N,
    in f` and, of the numbered source lines under it, only the one that ran (its arrow, or its line number) as the
    frame's source line; the others (the listing around it) left out.  A notebook's traceback cut before its exception
    line is then read as any cut traceback (its frames' subsystems, their raising statement).  After IPython's header
    (`ValueError    Traceback (most recent call last)`) the frames are left as they are: the header names the type,
    which a cut traceback of the frames would lose (the header is the failure then, notebook_exception_type)."""
    frame_line: str | None = None
    headed = False
    for text, number, offset in lines:
        if headed:
            yield text, number, offset
            continue
        if "Traceback (most recent call last)" in text and NOTEBOOK_HEADER.match(text) is not None:
            headed = True
        elif "File " in text and (frame := IPYTHON_FRAME.match(text)) is not None:
            frame_line = frame["line"]
            yield f'  File "{frame["file"]}", line {frame["line"]}, in {frame["func"]}', number, offset
            continue
        if frame_line is not None and (listed := IPYTHON_SOURCE.match(text)) is not None:
            if (listed["arrow"] or listed["line"] == frame_line) and (listed["source"] or "").strip():
                yield f"    {listed['source'].strip()}", number, offset
            continue
        frame_line = None
        yield text, number, offset
