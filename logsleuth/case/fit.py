"""Fitting a case file to its limit: the least useful parts go first, and the case says what went.

The order (issue 28, item 6): logsleuth's own reading goes first (the weaker flag rows, what followed, the
facts its diagnosis used, the failure as it parsed it when the log's own lines of it are there, the flag table,
the diagnosis), the log's own lines last (the middle of the error-looking lines, the earliest of the last lines,
the lines before the failure, the middle of the failure region, the end of the launch command).  When the log
could not be read again, the parsed failure is the only failure there is, and it is cut as late as the log's.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from logsleuth.case.flags import MAX_CHOICES_CHARS
from logsleuth.case.model import FLAG_REASONS, Case, CaseException, FlagRow
from logsleuth.render.safety import clean

Measure = Callable[[Case], int]
Step = Callable[[Case], tuple[Case, str] | None]


# -- logsleuth's own reading ------------------------------------------------------------------------------


def _keep_cascade(count: int) -> Step:
    def step(case: Case) -> tuple[Case, str] | None:
        dropped = len(case.cascade) - count
        if dropped <= 0:
            return None
        return dataclasses.replace(case, cascade=case.cascade[:count]), f"{dropped} line{'s' if dropped > 1 else ''} of what followed the failure (logsleuth's summary)"

    return step


def _keep_flag_reasons(count: int) -> Step:
    """Keep rows whose reason is among the `count` strongest."""

    def step(case: Case) -> tuple[Case, str] | None:
        kept = tuple(row for row in case.flags if row.reason in FLAG_REASONS[:count])
        if len(kept) == len(case.flags):
            return None
        return dataclasses.replace(case, flags=kept), f"{len(case.flags) - len(kept)} flag rows related less closely"

    return step


def _keep_flags(count: int, choices_chars: int) -> Step:
    def step(case: Case) -> tuple[Case, str] | None:
        rows = tuple(_clip_choices(row, choices_chars) for row in case.flags[:count])
        if rows == case.flags:
            return None
        what = "the flag table" if not count else "flag rows beyond the first few, and long lists of choices"
        return dataclasses.replace(case, flags=rows), what

    return step


def _clip_choices(row: FlagRow, chars: int) -> FlagRow:
    facts = []
    for fact in row.facts:
        choices: list[str] = []
        total = 0
        for choice in fact.choices:
            total += len(choice) + 2
            if total > chars:
                choices.append(f"… +{len(fact.choices) - len(choices)} more")
                break
            choices.append(choice)
        facts.append(dataclasses.replace(fact, choices=tuple(choices)))
    return dataclasses.replace(row, facts=tuple(facts))


def _drop_rule_evidence(case: Case) -> tuple[Case, str] | None:
    diagnosis = case.diagnosis
    if diagnosis is None or not diagnosis.evidence:
        return None
    return dataclasses.replace(case, diagnosis=dataclasses.replace(diagnosis, evidence=())), "the facts logsleuth's diagnosis used"


def _drop_diagnosis(case: Case) -> tuple[Case, str] | None:
    if case.diagnosis is None and case.known_pattern is None:
        return None
    return dataclasses.replace(case, diagnosis=None, known_pattern=None), "logsleuth's diagnosis"


def _hide_parsed(case: Case) -> tuple[Case, str] | None:
    """The failure as logsleuth parsed it, when the log's own lines of it are in the case."""
    if not case.parsed_shown or case.failure is None or not (case.failure_lines or case.paste):
        return None
    parsed = dataclasses.replace(case.failure, chain=())  # its headline and where it happened stay
    return dataclasses.replace(case, failure=parsed, parsed_shown=False), "the failure as logsleuth parsed it (the log's own lines of it are kept)"


def _drop_index(case: Case) -> tuple[Case, str] | None:
    """With the whole log in the case: the error-looking lines and GPU facts, which are all in it."""
    if not case.paste or not (case.error_lines or case.gpu_facts):
        return None
    return dataclasses.replace(case, error_lines=(), error_lines_left_out=0, gpu_facts=()), "the index of error-looking and GPU lines (all are in the log shown whole)"


def _drop_launch_in_paste(case: Case) -> tuple[Case, str] | None:
    """With the whole log in the case: the launch command or server_args the log printed, which are in it."""
    if not case.paste or case.launch_origin == "--cmd" or not (case.launch_command or case.server_args):
        return None
    return dataclasses.replace(case, launch_command=None, server_args=()), "the launch command apart (it is in the log shown whole)"


# -- the log's own lines ----------------------------------------------------------------------------------


def _keep_last(field: str, count: int, what: str) -> Step:
    """Keep the last `count` lines of a tuple field of the case (the latest lines say the most)."""

    def step(case: Case) -> tuple[Case, str] | None:
        lines: tuple[str, ...] = getattr(case, field)
        dropped = len(lines) - count
        if dropped <= 0:
            return None
        kept = lines[len(lines) - count :] if count else ()
        changes: dict[str, Any] = {field: kept}
        return dataclasses.replace(case, **changes), f"the earliest {what}"

    return step


def _keep_before(count: int) -> Step:
    return _keep_last("lines_before", count, "of the log lines before the failure")


def _keep_facts(count: int) -> Step:
    return _keep_last("gpu_facts", count, "GPU and memory lines")


def _keep_tail(count: int) -> Step:
    return _keep_last("tail", count, "of the log's last lines")


def _keep_errors(count: int) -> Step:
    """Keep the first and the last of the distinct error-looking lines (the first error often started it, the
    last ones are the failure's); the middle ones are said as left out where they were."""

    def step(case: Case) -> tuple[Case, str] | None:
        lines = case.error_lines
        if len(lines) <= count:
            return None
        head = count // 2
        kept = lines[:head] + (lines[len(lines) - (count - head) :] if count - head else ())
        return dataclasses.replace(
            case, error_lines=kept, error_lines_cut_at=head, error_lines_left_out=case.error_lines_left_out + len(lines) - count
        ), "error-looking lines in the middle of the list"

    return step


def _clip_failure_lines(count: int, head: int = 8) -> Step:
    """Keep the first `head` lines of the failure region as the log printed it and the last ones (its exception),
    the middle said as left out where it was."""

    def step(case: Case) -> tuple[Case, str] | None:
        lines = case.failure_lines
        if len(lines) <= count:
            return None
        first = min(head, count // 2)
        kept = lines[:first] + lines[len(lines) - (count - first) :]
        return dataclasses.replace(
            case, failure_lines=kept, failure_lines_cut_at=first,
            failure_lines_left_out=case.failure_lines_left_out + len(lines) - count,
        ), "lines in the middle of the failure as the log printed it"

    return step


def _clip_failure_line_chars(chars: int) -> Step:
    def step(case: Case) -> tuple[Case, str] | None:
        lines = tuple(clean(line, chars) for line in case.failure_lines)
        if lines == case.failure_lines:
            return None
        return dataclasses.replace(case, failure_lines=lines), "the end of very long lines of the failure"

    return step


def _map_chain(case: Case, change: Callable[[int, CaseException], CaseException]) -> Case | None:
    assert case.failure is not None
    chain = tuple(change(index, block) for index, block in enumerate(case.failure.chain))
    if chain == case.failure.chain:
        return None
    return dataclasses.replace(case, failure=dataclasses.replace(case.failure, chain=chain))


def _keep_frames(first: int, last: int, earlier_blocks: int | None = None) -> Step:
    """Keep the outermost `first` and innermost `last` frames of each exception of the parsed failure (of the
    earlier exceptions of a chain: `earlier_blocks` frames), the ones in the middle said as left out."""

    def step(case: Case) -> tuple[Case, str] | None:
        if case.failure is None or not case.parsed_shown:
            return None
        final = len(case.failure.chain) - 1

        def change(index: int, block: CaseException) -> CaseException:
            keep_first, keep_last = (first, last) if index == final or earlier_blocks is None else (0, earlier_blocks)
            if len(block.frames) <= keep_first + keep_last:
                return block
            dropped = len(block.frames) - keep_first - keep_last
            frames = block.frames[:keep_first] + (block.frames[-keep_last:] if keep_last else ())
            return dataclasses.replace(
                block, frames=frames, frames_left_out=block.frames_left_out + dropped, frames_left_out_at=keep_first
            )

        changed = _map_chain(case, change)
        return (changed, "frames in the middle of the traceback") if changed else None

    return step


def _keep_message_lines(count: int) -> Step:
    def step(case: Case) -> tuple[Case, str] | None:
        if case.failure is None or not case.parsed_shown:
            return None

        def change(index: int, block: CaseException) -> CaseException:
            if len(block.message) <= count:
                return block
            return dataclasses.replace(
                block, message=block.message[:count], message_left_out=block.message_left_out + len(block.message) - count
            )

        changed = _map_chain(case, change)
        return (changed, f"exception message lines beyond the first {count}") if changed else None

    return step


def _clip_launch(chars: int) -> Step:
    def step(case: Case) -> tuple[Case, str] | None:
        command = clean(case.launch_command, chars) if case.launch_command else None
        args = case.server_args[: chars // 40]
        if command == case.launch_command and args == case.server_args:
            return None
        return dataclasses.replace(case, launch_command=command, server_args=args), "the end of the launch command"

    return step


# logsleuth's reading, least useful first: all of it goes before any of the log's own lines.
LOGSLEUTH_STEPS: tuple[Step, ...] = (
    _keep_flag_reasons(3),
    _keep_cascade(4),
    _keep_flag_reasons(2),
    _drop_rule_evidence,
    _keep_cascade(0),
    _hide_parsed,
    _keep_flags(8, MAX_CHOICES_CHARS // 2),
    _keep_flags(3, 0),
    _drop_diagnosis,
    _keep_flags(0, 0),
)

# The log's own lines (and the parsed failure when it is the only failure there is), least useful first.
EVIDENCE_STEPS: tuple[Step, ...] = (
    _keep_errors(60),
    _keep_tail(30),
    _keep_before(6),
    _keep_facts(4),
    _clip_failure_lines(120),
    _keep_frames(1, 6, earlier_blocks=2),
    _keep_message_lines(12),
    _keep_errors(24),
    _keep_tail(20),
    _clip_failure_line_chars(600),
    _clip_launch(1500),
    _keep_before(3),
    _keep_facts(1),
    _clip_failure_lines(60),
    _keep_frames(1, 3, earlier_blocks=0),
    _keep_message_lines(4),
    _keep_errors(10),
    _keep_tail(10),
    _clip_launch(400),
    _keep_before(0),
    _keep_facts(0),
    _clip_failure_lines(30),
    _keep_frames(0, 2, earlier_blocks=0),
    _keep_message_lines(1),
    _keep_errors(4),
    _keep_tail(5),
    _clip_failure_line_chars(200),
    _keep_frames(0, 1, earlier_blocks=0),
    _clip_launch(160),
    _clip_failure_lines(12),
    _keep_errors(0),
    _keep_tail(0),
)

FIT_STEPS: tuple[Step, ...] = LOGSLEUTH_STEPS + EVIDENCE_STEPS
# A log shown whole: logsleuth's reading goes, then the index of its lines; never a line of the log itself
# (a case that does not fit so is built from the log's sections instead).
PASTE_STEPS: tuple[Step, ...] = (*LOGSLEUTH_STEPS, _drop_index, _drop_launch_in_paste, _clip_launch(400))


def fit(case: Case, measure: Measure, limit: int, steps: tuple[Step, ...] = FIT_STEPS) -> Case:
    """The case with the least useful parts dropped until `measure` says it fits, each drop noted once."""
    notes: list[str] = list(case.left_out)
    for step in steps:
        if measure(case) <= limit:
            break
        changed = step(case)
        if changed is None:
            continue
        case, note = changed
        if note not in notes:
            notes.append(note)
        case = dataclasses.replace(case, left_out=tuple(notes))
    return case
