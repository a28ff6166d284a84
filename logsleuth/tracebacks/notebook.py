"""IPython's and Jupyter's traceback header (issue 28, stop 41's dev sweep: QwenLM/Qwen2.5-Omni#132).

IPython prints an exception as `ValueError                                Traceback (most recent call last)` under a rule
of dashes, then `Cell In[1], line 15` and frames as `File ~/…/vllm/utils.py:1037, in f(*args)` with numbered source
lines, and the exception line `ValueError: …` last (IPython/core/ultratb.py, VerboseTB: the type, padded, then
"Traceback (most recent call last)").  A paste of a notebook cut inside the frames keeps the header, which names the
type: the failure of a paste that shows no other (the exception line, when pasted, is read as a bare exception and
outranks it).

`ingest/notebook_frames.py` rewrites its frames, when no such header is above them, as CPython writes them.
"""

from __future__ import annotations

from logsleuth.ingest.notebook_frames import NOTEBOOK_HEADER


def notebook_exception_type(text: str) -> str | None:
    """The exception type an IPython traceback header names, else None."""
    if "Traceback (most recent call last)" not in text or text.rstrip().endswith(":"):
        return None
    m = NOTEBOOK_HEADER.match(text)
    return m["type"] if m else None

