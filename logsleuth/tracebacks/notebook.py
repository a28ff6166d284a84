"""IPython's and Jupyter's traceback header (issue 28, stop 41's dev sweep: QwenLM/Qwen2.5-Omni#132).

IPython prints an exception as `ValueError                                Traceback (most recent call last)` under a rule
of dashes, then `Cell In[1], line 15` and frames as `File ~/…/vllm/utils.py:1037, in f(*args)` with numbered source
lines, and the exception line `ValueError: …` last (IPython/core/ultratb.py, VerboseTB: the type, padded, then
"Traceback (most recent call last)").  A paste of a notebook cut inside the frames keeps the header, which names the
type: the failure of a paste that shows no other (the exception line, when pasted, is read as a bare exception and
outranks it).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from logsleuth.lazyre import compile_lazily

# The type, at least two spaces of IPython's padding, and CPython's words without their colon.
NOTEBOOK_HEADER = compile_lazily(
    r"^\s*(?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*(?:Error|Exception|Exit|Interrupt|Failure|Timeout))\s{2,}"
    r"Traceback \(most recent call last\)\s*$"
)


def notebook_exception_type(text: str) -> str | None:
    """The exception type an IPython traceback header names, else None."""
    if "Traceback (most recent call last)" not in text or text.rstrip().endswith(":"):
        return None
    m = NOTEBOOK_HEADER.match(text)
    return m["type"] if m else None


# IPython's frame line (IPython/core/ultratb.py): `File ~/…/vllm/worker/model_runner.py:1051, in Runner.__init__(self,
# …)`, the path made a Markdown link when copied from a rendered notebook (`File [/…/worker_manager.py:195](https://…),
# in Manager.add_adapter(self, lora_request)`; vllm-project/vllm#3374, #12386).
IPYTHON_FRAME = compile_lazily(
    r"^\s*File \[?(?P<file>[^\s\[\]()]+?\.py):(?P<line>\d+)(?:\]\([^)\s]*\))?, in (?P<func>[\w.<>]+)\("
)
# A numbered source line under it: `    190     raise RuntimeError(`, `--> 195     self.add_adapter(lora)`, the number a
# Markdown link in VS Code's rendering (`-> [1051](https://…) needs_attn_backend = …`); the arrow marks the line that ran.
IPYTHON_SOURCE = compile_lazily(r"^\s*(?P<arrow>-*>)?\s*\[?(?P<line>\d+)\]?(?:\([^)\s]*\))?(?:\s(?P<source>.*))?$")

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
        if "Traceback (most recent call last)" in text and notebook_exception_type(text) is not None:
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
