"""A c10::Error printed as native output with no Python exception (issue 28, split 18's F-04, split 20's H-04): the
error's message on a line of its own, then the backtrace c10 appends to it.

c10::Error's what() is its message, a line break, then `Exception raised from <function> at <file>:<line> (most recent
call first):` and `frame #N: …` rows (c10/util/Exception.cpp Error::compute_what and its SourceLocation;
c10/util/Backtrace.cpp).  A program that prints the what() of one it caught (a plugin's op set-up that fails and logs,
torch_npu's and its op plugins' `TORCH_CHECK` under an error record; vllm-project/vllm-ascend#2720 `RopeOperation setup
failed!`) leaves that message right above the `Exception raised from` line: it is what a reader points at.

Only a line that reads as an error: never a warning (a `[W…]` c10 record, a WARNING record, a line that says it went
on: TCPStore's `… - retrying (…)` prints a caught c10::Error's what() on every retry) nor any line of torch's c10d
store warnings, which rendezvous_stall.py and rendezvous_warnings.py read.  The failure only of a paste that shows no
other (a fallback): torch raises the same error as a RuntimeError when it reaches Python, and that traceback, when
pasted, is the failure."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily
from logsleuth.models import LogLine
from logsleuth.tracebacks.device_errors import QUIET_LEVELS, SAYS_IT_WENT_ON

C10_ERROR = "c10::Error"  # the failure's type: the C++ exception whose what() the lines print
BACKTRACE_WORDS = "Exception raised from "
BACKTRACE_OPENING = compile_lazily(r"^\s*Exception raised from \S.{0,300} at \S{1,500}:\d{1,6} \(most recent call first\):\s*$")
# A c10 (glog-shaped) record of a quiet level (`[W106 01:32:36.79 socket.cpp:942]`, `[rank0]:[W…]`, `[I…]`, torch
# before 2.4 `[W socket.cpp:…]`), or any warning's words.
_QUIET_RECORD = compile_lazily(r"^(?:\[rank\d+\]:)?\[[WIV](?:\d{3,4} | [\w.\-]+:\d+\])|(?i:\bwarn(?:ing)?\b)")
_C10D = "[c10d]"


def opens_backtrace(text: str) -> bool:
    """Whether the line is c10's `Exception raised from … (most recent call first):`."""
    return BACKTRACE_WORDS in text and BACKTRACE_OPENING.match(text) is not None


def error_above_backtrace(above: LogLine) -> str | None:
    """The message of the c10::Error whose backtrace opens on the line after `above`, when `above` reads as that error
    (no warning, no retry, no store warning), else None.  A quiet level counts only when the line's own header gave it:
    native code prints the what() to stderr, under whatever record a paste shows above it."""
    text = above.text.strip()
    if (not text or len(text) > 2000 or (above.starts_record and above.meta.level in QUIET_LEVELS) or _C10D in text
            or _QUIET_RECORD.search(text) is not None or SAYS_IT_WENT_ON.search(text) is not None
            or text.startswith("frame #")):
        return None
    return text
