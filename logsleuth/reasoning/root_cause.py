"""The root cause of a crash or a kill (issue 28): a symptom is filed under the cause the log names before it.

A native crash (`Fatal Python error: Segmentation fault`, a signal handler's backtrace, a C++ abort) and a killed
process say what happened to a process, not why.  When the crash's own message, or an error line just before
it (`Failure.context`, the lines the scanner kept), names a cause the engines are known to die of (an NCCL or
distributed error, a GPU that lacks the architecture, CUDA out of memory, a CUDA error), that cause is the
failure's category and the crash its cascade.  The words that name a cause are facts/categories.toml's
`cause_words`, stricter than the words read in the failure's own message; `causes` orders them, the more
specific first.  Whatever named the symptom (a pattern, the honest category) is replaced by the cause's
general checks (basis "general"), with the line that named the cause as the evidence."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from logsleuth.diagnosis.grouping import names_no_cause
from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.facts.categories import CategoryRow, table
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Diagnosis, Failure, Fix
from logsleuth.reasoning.evidence import exception_lines
from logsleuth.reasoning.general import best_row, engine_code_of, failure_texts, render_words, row_checks
from logsleuth.tracebacks.rendezvous_warnings import rendezvous_warning

QUOTED = 240  # characters of the line that named the cause, quoted in the root cause
# How far before a crash another failure of the same log may be and still name its cause: the lines a native
# abort, its frames and faulthandler's dump of every thread take, not an error survived long before.
EARLIER_REACH = 300
# torch's warning at the exit of a process that did not tear down its process group (ProcessGroupNCCL.cpp: "WARNING:
# destroy_process_group() was not called before program exit, which can leak resources"; older releases "process group
# has NOT been destroyed before we destruct ProcessGroupNCCL"): printed after a clean exit as after any crash, so it
# names no cause, however NCCL-like its file name looks (the blind split: a crash filed as a collective failure).
SHUTDOWN_WARNING = compile_lazily(r"destroy_process_group\(\) was not called|process group has NOT been destroyed")
# What a wrapper's own category already stands for: a capture fails on a CUDA call it does not allow ("operation not
# permitted when stream is capturing"), so a bare CUDA error inside it names no other cause.
WRAPPER_OWN = frozenset({"cuda-error"})
_BACKEND_WRAPPER = compile_lazily(r"(?:^|\.)BackendCompilerFailed$")
_BACKEND_RAISED = compile_lazily(r"\braised:\n(?P<type>[A-Za-z_][\w.]*): (?P<message>[^\n]*)")


def cause_of(failure: Failure, after: Sequence[str] = ()) -> tuple[CategoryRow, str] | None:
    """The cause the crash's own message or an error line around it names, with that line; None when none does.

    The categories are tried in the table's order; within one, its specific rows before its general row (for every
    category: NCCL's, gpu-arch-unsupported's, illegal-memory-access's), and for each row the crash's own words before
    the lines before it.  So a specific row's words on a context line win over the general row's on the crash's own
    message: the specific row is the narrower reading of the same category."""
    categories = table()
    # (torch's c10d store-socket warnings are the rendezvous reading's alone, network.py, above a traceback cut
    # before its exception line: a failure that shows its own is not theirs, a Ctrl-C under one no NCCL cascade)
    context = [text for text in failure.context if names_no_cause(failure) or not rendezvous_warning(text)]
    texts = [text for text in (*exception_lines(failure), failure.header or "", *context, *after)
             if text and not ("destroy" in text and SHUTDOWN_WARNING.search(text))]
    for category in categories.causes:
        # a category's specific rows (NCCL's duplicate-GPU check, the custom all-reduce) before its general row, whose
        # cause words would also take their lines
        general = categories.row(category)
        rows = [row for row in categories.rows if row.category == category and row.cause_words]
        for row in sorted(rows, key=lambda row: row is general):
            for text in texts:
                if text and any(word.search(text) for word in row.cause_words):
                    return _own_checks(row), text.strip()
    return None


# The failures that are a process's death with no Python exception of their own to tell why (faulthandler's dump, a
# C++ abort or signal handler's report, a kill notice): only these take their cause from a failure printed before.
PROCESS_DEATHS = frozenset({"fatal", "abort", "killed"})


def earlier_failures(failure: Failure, before: Sequence[Failure]) -> list[str]:
    """The `Type: message` lines of the failures of the same log printed just before `failure` (nearest first),
    for `cause_of`, when `failure` is a process's death: each within EARLIER_REACH lines of it (any distance when a
    line number is unknown), and of the same rank when both show theirs (another rank's error is no cause of this
    one's crash: the ranks' NCCL errors follow the one rank that failed)."""
    if failure.kind not in PROCESS_DEATHS:
        return []
    texts: list[str] = []
    for other in reversed(before):
        if failure.line and other.line and not 0 <= failure.line - other.line <= EARLIER_REACH:
            continue
        if failure.meta.ranks and other.meta.ranks and failure.meta.ranks != other.meta.ranks:
            continue
        texts.extend(exception_lines(other))
    return texts


def _own_checks(row: CategoryRow) -> CategoryRow:
    """The row whose checks are given: a cause row without checks of its own gives its category's."""
    return row if row.checks else (table().row(row.category) or row)


def with_root_cause(diagnosis: Diagnosis | None, failure: Failure, after: Sequence[str] = ()) -> Diagnosis | None:
    """`diagnosis` when it names a cause; a symptom's (native crash, kill) with an error line naming its cause
    becomes that cause's diagnosis."""
    if diagnosis is None:
        return None
    if (inner := _compile_backend_inner(failure)) is not None:
        found = cause_of(replace(inner, context=(), header=None))
        if found is not None and found[0].category != diagnosis.category:
            return _caused_by(diagnosis, *found, inner)
    if diagnosis.category in table().wrappers:
        return _inner_engine_bug(diagnosis, failure) or _inner_cause(diagnosis, failure) or diagnosis
    if diagnosis.category not in table().symptoms:
        return diagnosis
    found = cause_of(failure, after)
    if found is None or found[0].category == diagnosis.category:
        return diagnosis  # (a native crash's own dump names no other cause than the crash its diagnosis reads)
    return _caused_by(diagnosis, *found, failure)


def _compile_backend_inner(failure: Failure) -> Failure | None:
    """torch's BackendCompilerFailed (torch/_dynamo/exc.py: `backend={name!r} raised:\n{Type}: {inner}`, the inner line
    joined by tracebacks/repair.py join_inner_errors) as its inner error: the backend's own error (Triton's, CUDA out of
    memory) is what names a cause, the wrapper only where it was raised; None for another failure."""
    final = failure.final
    if not _BACKEND_WRAPPER.search(final.type) or (found := _BACKEND_RAISED.search(final.message)) is None:
        return None
    return replace(failure, exceptions=(*failure.exceptions[:-1],
                                        replace(final, type=found["type"], message=found["message"])))


def _inner_cause(diagnosis: Diagnosis, failure: Failure) -> Diagnosis | None:
    """A wrapper's diagnosis whose wrapped error names a cause other than a bare CUDA error (the wrapper's own
    category covers those: a call a capture does not allow): that cause."""
    found = cause_of(replace(failure, context=(), header=None))
    if found is None or found[0].category in WRAPPER_OWN:
        return None
    return _caused_by(diagnosis, *found, failure)


def _caused_by(diagnosis: Diagnosis, row: CategoryRow, line: str, failure: Failure) -> Diagnosis:
    """The symptom's diagnosis as its cause's: the cause's general checks, the line that named it."""
    engine, version = diagnosis.engine, diagnosis.engine_version
    title = render_words(row.title, engine, version)
    symptom = CATEGORIES.get(diagnosis.category, diagnosis.category)
    quoted = line if len(line) <= QUOTED else line[: QUOTED - 1] + "…"
    own = line in (text.strip() for text in exception_lines(failure))
    where = "its own message names its cause" if own else "the log names its cause"
    return Diagnosis(
        pattern=f"general-{row.category}",
        title=title,
        category=row.category,
        root_cause=(
            f"{title}. The failure itself is {diagnosis.category} ({symptom}), but {where}: "
            f"\"{quoted}\". That is the root ({row.category}: {CATEGORIES.get(row.category, row.category)}); "
            f"the {diagnosis.category} is its cascade."
        ),
        fix=Fix(summary=f"General checks for {row.category}:", steps=row_checks(row, engine, version, texts=(line, *failure_texts(failure)))),
        references=diagnosis.references,
        engine=engine,
        engine_version=version,
        basis="general",
        evidence=(line,),
    )


def _inner_engine_bug(diagnosis: Diagnosis, failure: Failure) -> Diagnosis | None:
    """A wrapper's diagnosis (a CUDA graph capture that failed) whose inner error reads as a bug of the engine's
    own code: that bug, with the wrapper's own fix kept as the way to get the server up meanwhile."""
    for inner in failure.exceptions[:-1]:
        alone = replace(failure, exceptions=(inner,))
        found, code_of = best_row(alone), engine_code_of(alone)
        if found is None or not found[0].in_engine_code or (diagnosis.engine and code_of != diagnosis.engine):
            continue  # not a bug of this engine's code (another package's, or the other engine's run under it)
        row, why = found
        engine, version = diagnosis.engine or code_of, diagnosis.engine_version
        title = render_words(row.title, engine, version)
        workaround = (replace(diagnosis.fix, summary=f"Meanwhile: {diagnosis.fix.summary}"),) if diagnosis.fix else ()
        return Diagnosis(
            pattern=f"general-{row.category}",
            title=title,
            category=row.category,
            root_cause=(
                f"{title}. The failure is reported as {diagnosis.category} ({diagnosis.title}), but the error "
                f"inside it, \"{inner.type}: {inner.message.splitlines()[0] if inner.message else ''}\", is raised by "
                f"the engine's own code (read from {', '.join(why)}): no setting explains it."
            ),
            fix=Fix(summary=f"General checks for {row.category}:", steps=row_checks(row, engine, version, texts=failure_texts(alone)),
                    alternatives=workaround),
            references=diagnosis.references,
            engine=engine,
            engine_version=version,
            basis="general",
            evidence=(f"{inner.type}: {inner.message.splitlines()[0] if inner.message else ''}",),
        )
    return None
