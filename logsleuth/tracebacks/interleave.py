"""Several ranks printing into one stream: which open collector takes a line, and repairs after the fact.

Each open collector takes the lines that fit its grammar, and among equals the one that is behind, so
identical tracebacks printed at once by several ranks come out whole (`choose`).  When the same text
stands at two places of a traceback, or ranks mixed at any line rather than by CPython's writes (two
processes on one terminal), the cohort is rebuilt once it is closed (`redeal`).
"""

from __future__ import annotations

import copy
from collections import Counter

from logsleuth.models import LogLine
from logsleuth.tracebacks.chain import parse_chain
from logsleuth.tracebacks.collector import Collector
from logsleuth.tracebacks.grammar import STRICT_EXCEPTION_LINE, USAGE_ERROR, LineKind

# Identical tracebacks of up to this many ranks interleaving in one stream are matched line by
# line against each other; beyond it (or garbage that opens thousands) plain grammar decides,
# so the cost per line stays bounded.
MAX_INTERLEAVED = 16


def _same_start(a: Collector, b: Collector) -> bool:
    """One collector's text is a prefix of the other's (or both are equal)."""
    size = min(len(a.texts), len(b.texts))
    return size > 0 and a.hashes[size - 1] == b.hashes[size - 1]


def in_step(collector: Collector, collectors: list[Collector]) -> bool:
    """Another open collector prints the same text and needs this one to stay open: one of
    them is behind the other, or both are level and this one is not finished yet.  (A
    finished collector level with another is done: the same traceback printed again.)"""
    size = len(collector.texts)
    for other in collectors:
        if other is collector or not _same_start(collector, other):
            continue
        if len(other.texts) != size or not collector.complete:
            return True
    return False


# Line kinds CPython writes in one string with the kind before them.
_SAME_WRITE = {
    LineKind.SOURCE: (LineKind.FRAME,),
    LineKind.CARET: (LineKind.SOURCE, LineKind.CARET),
    LineKind.SEPARATOR: (LineKind.BLANK,),
    LineKind.BLANK: (LineKind.SEPARATOR,),
}


def _same_write(collector: Collector, kind: LineKind) -> bool:
    return collector.last in _SAME_WRITE.get(kind, ())


def _expected_line(collector: Collector, collectors: list[Collector]) -> str | None:
    """The next line of a longer open collector this one is a prefix of, if any."""
    for other in collectors:
        if other is not collector:
            expected = collector.expects(other)
            if expected is not None:
                return expected
    return None


def _following(collector: Collector, collectors: list[Collector]) -> bool:
    return any(collector.expects(other) is not None for other in collectors if other is not collector)


def choose(collectors: list[Collector], kind: LineKind, line: LogLine, seq: int) -> Collector | None:
    """Which open collector of a stream takes the line (None: the line starts a new one).

    With several ranks printing the same traceback into one stream (up to MAX_INTERLEAVED):
    1. the rest of one CPython write (a frame's source and caret lines, a chain separator's
       blank line) goes to the collector that took the write's first line;
    2. a collector that is behind another one printing the same text takes the line if it
       is exactly the line it needs next;
    Then, and always with a single collector:
    3. the grammar decides; structural acceptance beats a message continuation, and among
       equals the collector with the fewest lines takes it.  Collectors behind a longer
       identical one come last: their next line is already known.
    A message continuation never takes a line that starts a failure of its own.
    """
    interleaved = 1 < len(collectors) <= MAX_INTERLEAVED
    if interleaved:
        # CPython writes a frame (File line, source, carets) as one string, and a chain
        # separator with its blank lines as one: the rest of such a write belongs to the
        # collector that took its first line, even when another rank behind expects the same
        # text (a lambda's source line repeats its caller's; recursion repeats whole frames),
        # and a collector in the middle of a write takes nothing from another writer.
        for collector in collectors:
            if collector.last_seq == seq - 1 and _same_write(collector, kind):
                expected = _expected_line(collector, collectors)
                if expected == line.text or (expected is None and collector.accepts(kind, line) == 1):
                    return collector
        waiting = [c for c in collectors if _expected_line(c, collectors) == line.text]
        in_step = [c for c in waiting if not (_same_write(c, kind) and c.last_seq != seq - 1)]
        if in_step:
            return min(in_step, key=lambda c: len(c.texts))
        if waiting and not any(c.accepts(kind, line) == 1 for c in collectors if c not in waiting):
            # Interleaved inside CPython's writes (two processes on one terminal, or a copy that mixed
            # them): the exact next line of a rank that is behind, which no one else takes as structure.
            return min(waiting, key=lambda c: len(c.texts))
        if kind is LineKind.EXCEPTION and any(c.texts[0] == line.text for c in collectors):
            return None  # another rank starting the same bare-line-first failure
    best: Collector | None = None
    best_score: tuple[int, int, int, int] | None = None
    for index, collector in enumerate(collectors):
        strength = collector.accepts(kind, line)
        if not strength:
            continue
        behind = interleaved and _following(collector, collectors)
        score = (int(behind), strength, len(collector.texts), index)
        if best_score is None or score < best_score:
            best, best_score = collector, score
    if best is not None and best_score is not None and best_score[1] == 2 and _starts_failure(kind, line):
        return None
    return best


def _starts_failure(kind: LineKind, line: LogLine) -> bool:
    if kind in (LineKind.HEADER, LineKind.GROUP, LineKind.FATAL, LineKind.SEPARATOR, LineKind.FRAME):
        return True
    text = line.text
    if kind is LineKind.EXCEPTION and STRICT_EXCEPTION_LINE.match(text):
        return True
    return bool(USAGE_ERROR.match(text))


def redeal(members: list[Collector]) -> list[Collector]:
    """Repair a cohort of identical tracebacks interleaved line by line.

    The same text at two places of a traceback (a chain's second `Traceback` header, a
    recursion's repeated frames) can send a line to the wrong rank's collector, or make a
    rank's first line look like another rank's next one.  The lines as a whole are still
    right: if they are exactly k copies of one member's complete text, k ranks printed that
    text, and the cohort becomes k collectors holding it.
    """
    if len(members) < 2:
        return members
    total = Counter(text for member in members for text in member.texts)
    lines = sum(total.values())
    for candidate in sorted(members, key=lambda m: (not m.complete, -len(m.texts))):
        size = len(candidate.texts)
        if not candidate.complete or lines % size:
            continue
        copies = lines // size
        wanted = Counter(candidate.texts)
        if len(total) != len(wanted) or any(total[text] != count * copies for text, count in wanted.items()):
            continue
        ordered = sorted(members, key=lambda m: m.first.offset)[:copies]
        while len(ordered) < copies:  # a rank's start was taken for another rank's chain header
            ordered.append(copy.copy(candidate))
        for member in ordered:
            member.texts = list(candidate.texts)
            member.phase, member.kind, member.truncated = candidate.phase, candidate.kind, candidate.truncated
        return ordered
    return _reinterleave(members) or members


def _reinterleave(members: list[Collector]) -> list[Collector] | None:
    """Rebuild a cohort whose ranks' lines interleaved at any line, not by CPython's writes (two processes
    on one terminal, or a copy that mixed them), when no member holds the whole text.

    The members' lines in log order are k copies of one text T, each in order.  Walking them, a line
    is the next line of a rank that is behind (the one furthest behind first), or else extends T as
    the next line of a rank that is level with it.  This succeeds only if every rank ends with all of
    T and T is a traceback that reached its exception line; otherwise the cohort is left as it was."""
    if any(member.seqs is None for member in members):
        return None
    merged = sorted((seq, text) for member in members for seq, text in zip(member.seqs or (), member.texts, strict=True))
    whole: list[str] = []
    positions = [0] * len(members)
    for _, text in merged:
        behind = [i for i, at in enumerate(positions) if at < len(whole) and whole[at] == text]
        if behind:
            rank = min(behind, key=lambda i: positions[i])
        else:
            level = [i for i, at in enumerate(positions) if at == len(whole)]
            if not level:
                return None
            rank = level[0]
            whole.append(text)
        positions[rank] += 1
    if any(at != len(whole) for at in positions):
        return None
    chain = parse_chain(whole)
    if not chain or not chain[-1].type or chain[-1].truncated:
        return None
    done = next((member for member in members if member.complete), None)
    if done is None:
        return None
    for member in members:
        member.texts = list(whole)
        member.phase, member.kind, member.truncated = done.phase, done.kind, False
    return members
