"""One failure reported once: the failure groups of a log that only restate another fold into it.

A log prints one error several times over: a process pool or the engine's front end re-raises the exception of the
process that died (vLLM's API server raising the engine core's `AttributeError: …` again under its own frames), a
paste ends on a traceback's header with nothing under it, a traceback is cut before its exception line under the
error the client printed, and a native library logs the error in its own words (Mooncake's glog `E… Failed to
register memory …`) right beside the Python exception that carries it.  Each reads as a failure of its own, and a
report listing them reads as several problems (the retired blind split 14: 7 of 44 reports).

A group folds into the failure it restates, and becomes one line of what followed it (`FailureGroup.cascade`), so
it stays visible:
- the same exception again (type and first message line alike, `FailureGroup.signature`; or a traceback cut inside
  its raising statement, its message unknown, raised by the same frame as the host or one of its chain's exceptions:
  the type alone says nothing), one more occurrence counted: the one with frames is kept where the other had none (a
  bare line and then its traceback); else the first, the innermost re-raise;
- a traceback that names no cause (cut before its exception line, or a header alone: `names_no_cause`) beside a
  failure of its log that names an exception: its frames say where a process was, not what failed (its line names
  that process where it is another: it died too);
- an error record that names no exception (`names_no_exception`: a glog or c10 `E` record) within a few lines of a
  failure that names one: the native library's own report of it.
A group of another source is never folded (each host's failures are its own: diagnosis/fleet.py reads them), and
two failures that name different exceptions both stay.
"""

from __future__ import annotations

from dataclasses import replace

from logsleuth.diagnosis.grouping import names_no_cause, names_no_exception
from logsleuth.models import ExceptionBlock, Failure, FailureGroup

# Lines between a native library's error record and the exception beside it (its own print, the interpreter's
# traceback starting) for the record to be that exception's context.
RECORD_REACH_LINES = 8


def fold_restatements(groups: list[FailureGroup]) -> list[FailureGroup]:
    """`groups` in report order (the primary first), those that restate an earlier kept one folded into it."""
    kept: list[FailureGroup] = []
    for group in groups:
        index = _restated_index(group, kept)
        if index is None:
            kept.append(group)
            continue
        host = kept[index]
        if not _same_exception(group, host):
            kept[index] = replace(host, cascade=(*host.cascade, _described(group, host)))
        elif group.signature == host.signature and not host.failure.final.frames and group.failure.final.frames:
            # the bare line first, its traceback later: the traceback is the failure a person points at
            kept[index] = replace(_with_ranks_of(group, host),
                                  cascade=(*group.cascade, _described_printed_first(host), *host.cascade))
        elif not set(group.ranks) <= set(host.ranks):
            kept[index] = _with_ranks_of(host, group)  # another rank's occurrence of it: counted, as the grouper does
        else:
            # printed again by the same process (a re-raise, a second print): one more occurrence, and where it was
            kept[index] = replace(_with_ranks_of(host, group), cascade=(*host.cascade, _described(group, host)))
    return kept


def _with_ranks_of(host: FailureGroup, group: FailureGroup) -> FailureGroup:
    """`host` counting `group`'s occurrences, on ranks of their own (two ranks' tracebacks of one error, their frames
    read differently where their lines interleave)."""
    counts = dict(host.rank_counts)
    for rank, count in group.rank_counts:
        counts[rank] = counts.get(rank, 0) + count
    return replace(host, count=host.count + group.count, ranks=tuple(dict.fromkeys((*host.ranks, *group.ranks))),
                   rank_counts=tuple(counts.items()))


def without_cut_outer_traceback(failure: Failure) -> Failure:
    """A chain whose last traceback the paste cut before its exception line (`The above exception was the direct
    cause of the following exception:`, then the outer frames and nothing more: vLLM's engine core re-raising a
    model's error as it fails to start, the retired blind split 14's D-01): the outer exception names nothing, so the
    report's chain ends at the exception that does, marked truncated.  The outer frames say only where it was
    re-raised.  (The scan keeps the chain as printed; api.py asks this after the raise site index had its chance to
    type the outer block from its last frame's line.)"""
    blocks = failure.exceptions
    if len(blocks) < 2 or blocks[-1].type or blocks[-1].message.strip() or not blocks[-2].type:
        return failure
    kept = (*blocks[:-2], replace(blocks[-2], relation=None))
    return replace(failure, exceptions=kept, truncated=True)


def _restated_index(group: FailureGroup, kept: list[FailureGroup]) -> int | None:
    for index, host in enumerate(kept):
        if not set(group.sources) <= set(host.sources) or names_no_cause(host.failure):
            continue
        if _same_exception(group, host):
            return index
    names_one = [index for index, host in enumerate(kept)
                 if set(group.sources) <= set(host.sources) and _names_an_exception(host.failure)]
    if not names_one:
        return None
    if names_no_cause(group.failure):
        return names_one[0]
    if names_no_exception(group.failure):
        near = [index for index in names_one if _near(group.failure, kept[index].failure)]
        return near[0] if near else None
    return None


def _same_exception(group: FailureGroup, host: FailureGroup) -> bool:
    final = group.failure.final
    if not final.type:
        return False
    if final.message.strip():
        return final.type == host.failure.final.type and group.signature == host.signature
    # cut inside its raising statement, its type read from the statement and its message unknown
    # (tracebacks/raising_statement.py, indexed_statement.py): the type alone says nothing (a hundred checks raise a
    # ValueError), so the same exception only where it was raised at the place one of the host's exceptions was
    return final.typed_from_statement and any(
        block.type == final.type and _raised_at(block) == _raised_at(final) is not None
        for block in host.failure.exceptions)


def _raised_at(block: ExceptionBlock) -> tuple[str, int, str | None] | None:
    """The frame that raised `block`: its module, line and function (the install's prefix left out)."""
    last = block.frames[-1] if block.frames else None
    if last is None or last.line is None:
        return None
    return last.module_path, last.line, last.function


def _names_an_exception(failure: Failure) -> bool:
    return bool(failure.final.type) and not names_no_cause(failure) and not names_no_exception(failure)


def _near(record: Failure, failure: Failure) -> bool:
    if record.line > 0 and failure.line > 0:
        return abs(record.line - failure.line) <= RECORD_REACH_LINES
    return False


def _described(group: FailureGroup, host: FailureGroup) -> str:
    """The folded failure as one line of what followed (the process that printed it where that is not the host's
    own, its place in the log, what it showed)."""
    failure = group.failure
    where = _other_process(group, host) + (f"line {failure.line}: " if failure.line > 0 else "")
    if names_no_cause(failure):
        frames = failure.final.frames
        if not frames:
            return f"{where}a traceback header with no frame or exception line read under it"
        last = frames[-1]
        file = "/".join(last.file.split("/")[-3:])  # the tail names the module; the install's prefix says nothing
        place = f"{file}, line {last.line}, in {last.function}" if last.line is not None else file
        return f"{where}a traceback cut before its exception line (its last frame: {place})"
    if names_no_exception(failure):
        return f"{where}an error record beside it: {failure.final.message.splitlines()[0] if failure.final.message else ''}"
    return f"{where}the same {failure.final.type} again (re-raised or printed once more)"


def _other_process(group: FailureGroup, host: FailureGroup) -> str:
    """`rank TP3, ` or `pid 4665, ` where another process printed the folded failure (a rank that died beside the
    host's: gpustack/gpustack#2680's second worker), so the fold does not hide that it failed too; else ``."""
    other_ranks = [rank for rank in group.ranks if rank not in host.ranks]
    if other_ranks:
        return f"rank {', '.join(other_ranks)}, "
    pid, host_pid = group.failure.meta.pid, host.failure.meta.pid
    if not group.ranks and pid is not None and host_pid is not None and pid != host_pid:
        return f"pid {pid}, "
    return ""


def _described_printed_first(bare: FailureGroup) -> str:
    """The exception's line printed before its traceback, without frames (a logger's one-line error, then the
    interpreter's traceback)."""
    where = f"line {bare.failure.line}: " if bare.failure.line > 0 else ""
    return f"{where}the same {bare.failure.final.type} printed first, without its traceback"
