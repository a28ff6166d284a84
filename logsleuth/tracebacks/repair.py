"""Repairs over the failures of a whole scan: what one failure says about its neighbours."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure
from logsleuth.tracebacks.grammar import MESSAGE_SECOND_PARAGRAPH
from logsleuth.tracebacks.raising_statement import lost_its_exception_line

KERNEL_PRINT_REACH = 16 << 10  # bytes between a kernel's error print and the exception it causes


def fold_kernel_prints(failures: list[Failure]) -> list[Failure]:
    """A kernel's `CUDA Error: … (700)` print just before the Python exception it caused (flashinfer prints,
    then raises) is that exception's context, not a failure of its own; alone, it is the failure.  So is a
    signal handler's banner (abseil's `*** SIGSEGV received …`, printed again through glog by Ray) just before
    faulthandler's dump of the same crash: the dump, with its Python frames, is the failure."""
    kept: list[Failure] = []
    for index, failure in enumerate(failures):
        following = failures[index + 1] if index + 1 < len(failures) else None
        if following is not None and _explains(failure, following):
            printed = f"{failure.final.type}: {failure.final.message}"
            own = tuple(line for line in failure.context if line not in following.context)  # a dump's frames
            failures[index + 1] = replace(following, context=(*following.context, *own, printed),
                                          error_context=(*following.error_context, *own, printed))
            continue
        kept.append(failure)
    return kept


def _explains(failure: Failure, following: Failure) -> bool:
    """Whether `failure` is only a print about the crash that `following` reports."""
    if not 0 <= following.offset - failure.end_offset <= KERNEL_PRINT_REACH:
        return False
    if failure.kind == "line" and failure.final.type.lower() == "cuda error":
        return following.kind in ("traceback", "bare")
    return failure.kind == "abort" and failure.final.type.startswith("SIG") and following.kind in ("fatal", "abort")


# Bytes between an exception line and the frames it was moved above (room for one `...` line).
MOVED_EXCEPTION_REACH = 8
# A fatal line's type that is an exception class (`OutOfResources`, `GatedRepoError`): its frames may follow.  Not
# a record that only announces one (`Engine process failed`: "WorkerProc hit an exception.") or a kernel's print.
_EXCEPTION_CLASS = compile_lazily(r"^[A-Za-z_][\w.]*$")
# Lines and bytes between them when a paste put a heading or a fence there: two short lines at most.
MOVED_DECORATED_REACH = 120


def _moved_just_above(previous: Failure, failure: Failure) -> bool:
    """The exception line sits right above the frames: at most a `...` line between, or, in a paste, at most two
    short lines (a blank line and a markdown heading or fence such as `### Traceback`)."""
    gap = failure.offset - previous.end_offset
    if 0 <= gap <= MOVED_EXCEPTION_REACH:
        return True
    return previous.line > 0 and 0 < failure.line - previous.line <= 3 and 0 <= gap <= MOVED_DECORATED_REACH


def attach_moved_exceptions(failures: list[Failure]) -> list[Failure]:
    """A paste that shows the exception line first and then its frames (maybe after a `...`): a bare line, or a
    fatal line whose type the paste lost (grammar.FATAL_LINES), right before frames that end without an exception
    line is theirs."""
    merged: list[Failure] = []
    for failure in failures:
        previous = merged[-1] if merged else None
        if (
            previous is not None
            and (previous.kind == "bare" or (previous.kind == "line" and _EXCEPTION_CLASS.match(previous.final.type)))
            and failure.kind == "traceback"
            and len(failure.exceptions) == 1
            and lost_its_exception_line(failure.final)
            and failure.final.frames
            and _moved_just_above(previous, failure)
        ):
            block = replace(failure.final, type=previous.final.type, message=previous.final.message, truncated=True)
            merged[-1] = replace(failure, exceptions=(block,), line=previous.line, offset=previous.offset,
                                 meta=previous.meta, context=previous.context, error_context=previous.error_context,
                                 truncated=True)
            continue
        merged.append(failure)
    return merged


def shown_in(mention: Failure, failures: list[Failure]) -> bool:
    """Whether one of `failures` is the failure a sentence quoted (the same exception; the quote may be
    cut short, or the log's message cut by a wrapped span)."""
    quoted = " ".join(mention.final.message.split())
    for failure in failures:
        if failure.final.type == mention.final.type:
            message = " ".join(failure.final.message.split())
            if message.startswith(quoted) or quoted.startswith(message):
                return True
    return False


# Bytes between a message's first paragraph and its second: the blank line between them (a paste's `\r\n` or a
# record's prefix on it).
SECOND_PARAGRAPH_REACH = 80


def join_second_paragraphs(failures: list[Failure]) -> list[Failure]:
    """A library's known second paragraph (MESSAGE_SECOND_PARAGRAPH: transformers' `You can update Transformers with
    the command …` after its unknown-model-type message) read as a failure of its own right under a frameless failure
    with a message whose collector could not take it (any such line: the paragraph's words are the library's own and
    it must stand within SECOND_PARAGRAPH_REACH bytes; the one seen is pydantic's typeless `Value error, <the first
    paragraph>` line, vLLM's config classes being pydantic dataclasses, so the ValueError of
    transformers/models/auto/configuration_auto.py reaches the log in that display).  The paragraph is the message's continuation: one failure, not two (the retired blind split 14's
    D-04, which listed the advice as a second failure)."""
    kept: list[Failure] = []
    for failure in failures:
        previous = kept[-1] if kept else None
        if (
            previous is not None
            and failure.kind in ("line", "bare")
            and not failure.final.frames
            and MESSAGE_SECOND_PARAGRAPH.match(failure.final.message)
            and 0 <= failure.offset - previous.end_offset <= SECOND_PARAGRAPH_REACH
            and previous.final.message
            and not previous.final.frames
        ):
            kept[-1] = _continued(previous, failure, f"{previous.final.message}\n\n{failure.final.message}")
            continue
        kept.append(failure)
    return kept


# torch's BackendCompilerFailed (torch/_dynamo/exc.py: `backend={name!r} raised:\n{type(inner).__name__}: {inner}`) puts
# the backend's own error on the line after its first: a line that reads as an exception line of its own, so the scan
# made it a second failure, and the wrapper's first line named no cause (the blind split 20's D-04: `raised:` above
# `RuntimeError: Triton Error [CUDA]: device kernel image is invalid`).  That inner error is the message's, and the
# one that decides the category.
_RAISED_INNER = compile_lazily(r"(?:^|\.)BackendCompilerFailed$")
INNER_ERROR_REACH = 240  # bytes between the wrapper's first line and its inner error's (a log record's prefix)


def join_inner_errors(failures: list[Failure]) -> list[Failure]:
    """A compile backend's wrapper whose message ends at `raised:` takes the frameless exception line right after it
    as the rest of its message: one failure, not two."""
    kept: list[Failure] = []
    for failure in failures:
        previous = kept[-1] if kept else None
        if (
            previous is not None
            and _RAISED_INNER.search(previous.final.type)
            and previous.final.message.rstrip().endswith("raised:")
            and failure.kind in ("line", "bare")
            and not failure.final.frames
            and len(failure.exceptions) == 1
            and 0 <= failure.offset - previous.end_offset <= INNER_ERROR_REACH
            and _same_writer(previous, failure)
        ):
            kept[-1] = _continued(previous, failure,
                                  f"{previous.final.message.rstrip()}\n{failure.final.type}: {failure.final.message}")
            continue
        kept.append(failure)
    return kept


def _same_writer(previous: Failure, following: Failure) -> bool:
    """Whether two failures may be one process's lines: not when both show their rank, pid or process and they differ
    (two ranks' records interleaved, as root_cause.earlier_failures reads them)."""
    ours, theirs = previous.meta, following.meta
    return all(not (a and b) or a == b for a, b in
               ((ours.ranks, theirs.ranks), (ours.pid, theirs.pid), (ours.process, theirs.process)))


def _continued(previous: Failure, following: Failure, message: str) -> Failure:
    """`previous` with `message` as its last exception's message, running to the end of `following`, which it absorbs."""
    return replace(previous, exceptions=(*previous.exceptions[:-1], replace(previous.final, message=message)),
                   end_offset=following.end_offset)
