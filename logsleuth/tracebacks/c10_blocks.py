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
_WARNING_LEVELS = frozenset({"WARNING", "WARN"})
MESSAGE_REACH = 8  # the lines above a backtrace read for its message and the record it is printed in


def opens_backtrace(text: str) -> bool:
    """Whether the line is c10's `Exception raised from … (most recent call first):`."""
    return BACKTRACE_WORDS in text and BACKTRACE_OPENING.match(text) is not None


def error_above_backtrace(block: list[LogLine]) -> str | None:
    """The message of the c10::Error whose backtrace opens under `block` (the lines right above it, no blank line
    between, from the nearest record header down, at most MESSAGE_REACH), when it reads as that error, else None.

    compute_what prints the message, a line break, then the backtrace: a message of several lines (`NCCL error in: …`,
    `ncclUnhandledCudaError: …`, `Last error:`, `Cuda failure …`) is its first line, where the block opens.  A block
    under a WARNING record (or a `[W…]` c10 record) is that record's continuation: an error caught and logged, the run
    went on (a custom all-reduce probe falling back to NCCL).  Under an INFO or DEBUG record a block is native output
    printed after it (stderr pasted beside the engine's records): only a header right above the backtrace is read as
    the record the what() was logged in."""
    if not block:
        return None
    header = block[0] if block[0].starts_record else None
    if header is not None and (header.meta.level in _WARNING_LEVELS or _QUIET_RECORD.search(header.text) is not None
                               or (len(block) == 1 and header.meta.level in QUIET_LEVELS)):
        return None
    lines = block if header is None or len(block) == 1 else block[1:]
    said = lines[0].text.strip()
    if (not said or len(said) > 2000 or said.startswith("frame #")
            or any(_C10D in line.text or _QUIET_RECORD.search(line.text) is not None
                   or SAYS_IT_WENT_ON.search(line.text) is not None for line in block)):
        return None
    return said
