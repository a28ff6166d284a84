"""A native library's own fatal report, printed with no Python traceback (issue 28, stop 47): the process aborts
right after it, and the shell's `Aborted (core dumped)` (when the paste kept it) is all that follows.

- The C library's failed `assert()`: glibc prints `<program>: <file>:<line>: <function>: Assertion `<condition>'
  failed.` (assert/assert.c __assert_fail_base, format "%s%s%s:%u: %s%sAssertion `%s' failed.\\n"; the program's
  name and the function are left out when unknown).  LLVM, MLIR and Triton's compiler are built with assertions and
  report through it (`python3: /project/lib/Analysis/Allocation.cpp:47: … mlir::triton::getCvtOrder(…): Assertion
  `…' failed.`); libstdc++'s checked containers print the same shape with plain quotes (`…/stl_vector.h:1130: …
  operator[](size_type) [with …]: Assertion '__n < this->size()' failed.`, GCC's __glibcxx_assert_fail).  A CUDA
  kernel's device assert closes its condition with a backtick and names a block and thread: typeless_errors.py reads
  that one (the kernel's print, torch's RuntimeError follows it).
- LLVM's fatal error: report_fatal_error writes `LLVM ERROR: <reason>` to stderr and exits (llvm/lib/Support/
  ErrorHandling.cpp); Triton's and MLIR's passes end a compile with it (`LLVM ERROR: Failed to compute parent layout
  for slice layout.`).

Both start native fatal output (grammar.native_header): the abort notice and a stack dump after them belong to them.
"""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily

NATIVE_ASSERT_TYPE = "Assertion failed"  # a C/C++ assert(): no exception was raised, the process aborted
LLVM_ERROR_TYPE = "LLVM ERROR"  # LLVM's report_fatal_error: the compiler exited

ASSERT_WORDS = "Assertion "
ASSERT_TAIL = compile_lazily(r"Assertion (?P<quote>[`'])(?P<condition>.{1,2000})' failed\.?\s*$")
# What precedes `Assertion`: the program's name (optional), the source file with a C/C++/CUDA extension, the line, the
# function (absent when the compiler gave none).  The file's extension keeps prose (`line 3: the Assertion '…'`) out.
ASSERT_PLACE = compile_lazily(
    r"(?:^|(?<=\s))(?:[^\s:]{1,200}: )?(?P<place>[^\s:]{1,400}\.(?:c|cc|cpp|cxx|h|hh|hpp|hxx|cu|cuh|inc|def):\d{1,7}: "
    r"(?:.{0,2000}?: )?)$"
)
MAX_ASSERT_HEAD = 4096  # characters before `Assertion` read: an assert's place and function are far shorter
# (after white space or the quote a sentence opens: "the error is `LLVM ERROR: Cannot select: …`", state-spaces/mamba#173)
# The message runs to the line's end (possessive: linear on a long line); its closing quote and dot are cut in code.
LLVM_ERROR = compile_lazily(r"^(?:.{0,300}[\s`'\"(])?LLVM ERROR: (?P<msg>\S.*+)$")


# The assert's tail alone, its place lost (an issue title that quotes it: `[Bug] Assertion `idx < size()' failed.`,
# triton-lang/triton#4502): the failure only of a paste that shows no other (typeless_errors.py).
ASSERT_TAIL_ALONE = compile_lazily(
    r"^\W{0,4}(?:\[[\w ]{1,30}\]:?\s*)?(?P<msg>Assertion [`'](?P<condition>[^\n]{1,300})' failed\.?)\s*$"
)


def assertion_tail_alone(text: str) -> str | None:
    """`Assertion `<condition>' failed.` alone on a line (its source place not pasted), else None."""
    m = ASSERT_TAIL_ALONE.match(text) if ASSERT_WORDS in text and len(text) <= 400 else None
    return m["msg"] if m is not None and not m["condition"].endswith("`") else None


def native_assertion(text: str) -> tuple[str, str] | None:
    """(type, message) of a failed C/C++ assert's line, the message from its source place on, else None."""
    at = text.rfind(ASSERT_WORDS)
    if at == -1 or at > MAX_ASSERT_HEAD:
        return None
    tail = ASSERT_TAIL.match(text, at)
    if tail is None or tail["condition"].endswith("`"):
        return None  # a CUDA kernel's device assert (`…` failed.)
    place = ASSERT_PLACE.search(text[:at])
    if place is None:
        return None
    return NATIVE_ASSERT_TYPE, text[place.start("place"):].rstrip()


def llvm_error(text: str) -> tuple[str, str] | None:
    """(type, message) of LLVM's `LLVM ERROR: <reason>`, else None."""
    m = LLVM_ERROR.match(text) if "LLVM ERROR: " in text else None
    return (LLVM_ERROR_TYPE, m["msg"].rstrip().rstrip(".").rstrip("`'\"").rstrip()) if m is not None else None


def native_report(text: str) -> tuple[str, str] | None:
    """(type, message) of a native library's fatal report (a failed assert, LLVM's fatal error), else None."""
    if ASSERT_WORDS in text and (found := native_assertion(text)) is not None:
        return found
    return llvm_error(text)
