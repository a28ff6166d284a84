"""The shapes of a CPython traceback's own lines: its header, chain separators, frame lines and caret marks.

Defined here, in the first stage, because the line splitter (lines.py) needs them to rejoin a frame line that
a terminal or a log shipper wrapped; the traceback grammar (tracebacks/grammar.py) builds on them and
re-exports them, so the rest of the code keeps reading them from the grammar.
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily

TRACEBACK_HEADER = "Traceback (most recent call last):"
CAUSE_SEPARATOR = "The above exception was the direct cause of the following exception:"
CONTEXT_SEPARATOR = "During handling of the above exception, another exception occurred:"

# `(?P<func>\S.*)` then strip in code: a lazy `.+?\s*$` is quadratic on a long run of spaces.
FRAME_LINE = compile_lazily(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+)(?:, in (?P<func>\S.*)|\s*)$')
# faulthandler: `  File "x.py", line 10 in func` (no comma) and `line ???` when unknown.
FAULT_FRAME_LINE = compile_lazily(r'^\s*File "(?P<file>[^"]*)", line (?P<line>\d+|\?\?\?) in (?P<func>\S.*)$')
# torchrun's per-rank prefix `[rank0]: ` (torch's own c10d lines start `[rank1]:[E210 …]`).
TORCHRUN_PREFIX = compile_lazily(r"^\[rank(?P<rank>\d{1,6})\]: ?")
CARET_LINE = compile_lazily(r"^\s*[\^~][\s\^~]*$")  # one mark, then any: no ambiguous split to backtrack over
