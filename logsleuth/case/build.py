"""Build the case file of a report's primary failure, redacted, and fit it to a size limit.

Redaction runs first, on the report and on the lines the case adds from the log (the lines just before the
failure, the GPU facts): they ride through `redact_report` with the report, so `--anonymize` gives the same
host the same placeholder everywhere.  Then the case is fitted: the least useful parts go first, and the case
says what went.
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Callable
from typing import Any

from logsleuth.case.flags import MAX_CHOICES_CHARS, choose_catalogs, flag_rows
from logsleuth.case.model import (
    CASE_LIMIT,
    Case,
    CaseException,
    CaseFrame,
    FlagRow,
    LogWindow,
    PrimaryFailure,
)
from logsleuth.case.window import local_window
from logsleuth.fixes.catalog import Catalog
from logsleuth.models import ExceptionBlock, FailureGroup, LaunchInfo, Report
from logsleuth.redact import redact_report
from logsleuth.render.safety import clean, clean_lines
from logsleuth.render.view import VERSION_ORIGIN, fleet_summary, group_title, place_text

MAX_MESSAGE_LINES = 40
MAX_OTHER_GROUPS = 8
MAX_CASCADE_LINES = 10
COMMAND_ORIGIN = {"user": "--cmd", "log": "the log", "server_args": "rebuilt from the log's server_args"}
NO_WINDOW = "the warning lines logsleuth kept before the failure (the log itself could not be read again)"

Measure = Callable[[Case], int]


# -- redaction of the report and of what the case adds ----------------------------------------------------


def _redacted(report: Report, window: LogWindow, anonymize: bool) -> tuple[Report, LogWindow]:
    """The report and the window, redacted in one pass (see the module docstring).  The window's lines ride in
    `warnings`, a tuple of strings that the redaction treats as consecutive log lines."""
    carried = dataclasses.replace(report, warnings=(*window.before, *window.failure, *window.facts))
    redacted = redact_report(carried, secrets=True, anonymize=anonymize)
    lines = redacted.warnings
    before, failure = len(window.before), len(window.before) + len(window.failure)
    window = dataclasses.replace(window, before=lines[:before], failure=lines[before:failure], facts=lines[failure:])
    return dataclasses.replace(redacted, warnings=report.warnings), window


# -- the parts of a case ------------------------------------------------------------------------------------


def _exception(block: ExceptionBlock) -> CaseException:
    message = tuple(clean_lines(block.message)) if block.message else ()
    return CaseException(
        type=clean(block.type),
        message=message[:MAX_MESSAGE_LINES],
        frames=tuple(
            CaseFrame(clean(frame.module_path), frame.line, clean(frame.function) if frame.function else None,
                      clean(frame.source) if frame.source else None, frame.in_app)
            for frame in block.frames
        ),
        relation=block.relation,
        message_left_out=max(0, len(message) - MAX_MESSAGE_LINES),
    )


def primary_failure(group: FailureGroup) -> PrimaryFailure:
    failure = group.failure
    final = failure.final
    first = final.message.split("\n", 1)[0] if final.message else ""
    headline = f"{final.type}: {first}" if first else final.type
    if not first and final.frames:  # a bare `assert`: where it fired says more than its empty message
        frame = final.frames[-1]
        headline += f" in {frame.function or '?'} ({frame.module_path}:{frame.line})"
    return PrimaryFailure(
        kind=failure.kind,
        headline=clean(headline),
        chain=tuple(_exception(block) for block in failure.exceptions),
        header=clean(failure.header) if failure.header else None,
        timestamp=clean(failure.meta.timestamp) if failure.meta.timestamp else None,
        count=group.count,
        ranks=tuple(clean(rank) for rank in group.ranks),
        hosts=tuple(clean(host) for host in group.hosts),
        truncated=failure.truncated,
    )


def _cascade(report: Report, primary: FailureGroup) -> tuple[str, ...]:
    """What followed: the other failure groups in a line each (the hosts of a fleet first), then the log lines
    that followed the primary failure (`Received sigquit…`, `Killed`)."""
    lines = list(fleet_summary(report))
    others = [group for group in report.failures if group is not primary]
    for group in others[:MAX_OTHER_GROUPS]:
        where = place_text(group)
        pattern = f" [pattern {group.diagnosis.pattern}]" if group.diagnosis else ""
        lines.append(clean(f"{group.count} × {group_title(group)}" + (f" · {where}" if where else "") + pattern, 300))
    if len(others) > MAX_OTHER_GROUPS:
        lines.append(f"… and {len(others) - MAX_OTHER_GROUPS} more failure groups")
    lines.extend(clean(line) for line in primary.cascade[:MAX_CASCADE_LINES])
    if len(primary.cascade) > MAX_CASCADE_LINES:
        lines.append(f"… and {len(primary.cascade) - MAX_CASCADE_LINES} more lines that followed it")
    return tuple(lines)


def _version_origin(launch: LaunchInfo) -> str:
    if launch.engine_version is None:
        return "the log does not name the version"
    if launch.engine_version_source == "inferred":
        return "inferred from the code layout in the frames (the log does not name it): may be wrong"
    return VERSION_ORIGIN.get(launch.engine_version_source or "", "named in the log")


def _non_default_args(launch: LaunchInfo, known: tuple[Catalog, ...]) -> tuple[tuple[str, str], ...]:
    """server_args fields whose value differs from every consulted catalog's default (all fields when no
    catalog applies): the rest says nothing about this launch."""

    def is_default(name: str, value: str) -> bool:
        try:
            parsed = ast.literal_eval(value)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            return False
        infos = [info for catalog in known if (info := catalog.by_field(name)) is not None]
        return bool(infos) and all(info.default == parsed for info in infos)

    return tuple((clean(name), clean(value)) for name, value in launch.server_args if not is_default(name, value))


def _packages(group: FailureGroup) -> str | None:
    """The directory the engine's frames were installed under (`…/site-packages/`), said once."""
    for block in group.failure.exceptions:
        for frame in block.frames:
            for marker in ("site-packages/", "dist-packages/"):
                if marker in frame.file:
                    return clean(frame.file.rsplit(marker, 1)[0] + marker)
    return None


def case_launch(launch: LaunchInfo) -> LaunchInfo:
    """The launch as the case reads it: a version without an engine is an SGLang one (--engine-version names
    SGLang's, and every hint the log gives, an argparse prefix or the code layout, is SGLang's)."""
    if launch.engine is None and launch.engine_version is not None:
        return dataclasses.replace(launch, engine="sglang")
    return launch


def redacted_inputs(report: Report, window: LogWindow | None, anonymize: bool = False) -> tuple[Report, LogWindow]:
    """The report and the log window of its primary failure (read again from a local log when not given;
    else the warning lines the report kept), both redacted."""
    primary = report.primary
    if window is None:
        window = (local_window(report, primary) if primary else None) or LogWindow(
            before=primary.failure.context if primary else (), origin=NO_WINDOW
        )
    return _redacted(report, window, anonymize)


def _full_case(report: Report, window: LogWindow | None, anonymize: bool, limit: int) -> Case:
    report, window = redacted_inputs(report, window, anonymize)
    launch = case_launch(report.launch)
    known, catalog_note = choose_catalogs(launch)
    primary = report.primary
    command = clean(launch.command, 8000) if launch.command else None
    return Case(
        engine=launch.engine,
        engine_version=launch.engine_version,
        version_origin=_version_origin(launch),
        catalogs=tuple(catalog.version for catalog in known),
        catalog_note=catalog_note,
        failure=primary_failure(primary) if primary else None,
        known_pattern=clean(f"{primary.diagnosis.pattern}: {primary.diagnosis.title}")
        if primary and primary.diagnosis and primary.diagnosis.basis == "pattern"  # general guidance is no pattern
        else None,
        cascade=_cascade(report, primary) if primary else (),
        launch_command=command,
        launch_origin=COMMAND_ORIGIN.get(launch.command_source or "") if command else None,
        server_args=() if command else _non_default_args(launch, known),
        gpu_facts=window.facts,
        lines_before=window.before,
        lines_before_origin=window.origin or NO_WINDOW,
        flags=flag_rows(primary, launch, window.before, known) if primary else (),
        packages=_packages(primary) if primary else None,
        sources=tuple(clean(source.name) for source in report.sources),
        limit=limit,
    )


# -- fitting the limit --------------------------------------------------------------------------------------

Step = Callable[[Case], tuple[Case, str] | None]


def _keep_cascade(count: int) -> Step:
    def step(case: Case) -> tuple[Case, str] | None:
        dropped = len(case.cascade) - count
        if dropped <= 0:
            return None
        return dataclasses.replace(case, cascade=case.cascade[:count]), f"{dropped} lines of what followed the failure"

    return step


def _keep_last(field: str, count: int, what: str) -> Step:
    """Keep the last `count` lines of a tuple field of the case (the latest lines say the most)."""

    def step(case: Case) -> tuple[Case, str] | None:
        lines: tuple[str, ...] = getattr(case, field)
        dropped = len(lines) - count
        if dropped <= 0:
            return None
        kept = lines[len(lines) - count :] if count else ()
        changes: dict[str, Any] = {field: kept}
        return dataclasses.replace(case, **changes), f"the {dropped} earliest {what}"

    return step


def _keep_before(count: int) -> Step:
    return _keep_last("lines_before", count, "of the log lines before the failure")


def _keep_facts(count: int) -> Step:
    return _keep_last("gpu_facts", count, "GPU and memory lines")


def _keep_flag_reasons(count: int) -> Step:
    """Keep rows whose reason is among the `count` strongest."""
    from logsleuth.case.model import FLAG_REASONS

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
        return dataclasses.replace(case, flags=rows), "flag rows beyond the first few, and long lists of choices"

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


def _map_chain(case: Case, change: Callable[[int, CaseException], CaseException]) -> Case | None:
    assert case.failure is not None
    chain = tuple(change(index, block) for index, block in enumerate(case.failure.chain))
    if chain == case.failure.chain:
        return None
    return dataclasses.replace(case, failure=dataclasses.replace(case.failure, chain=chain))


def _keep_frames(first: int, last: int, earlier_blocks: int | None = None) -> Step:
    """Keep the outermost `first` and innermost `last` frames of each exception (of the earlier exceptions of
    a chain: `earlier_blocks` frames), the ones in the middle said as left out where they were."""

    def step(case: Case) -> tuple[Case, str] | None:
        if case.failure is None:
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
        if case.failure is None:
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


# Least useful first: what followed, then context, then frames in the middle, then the rest.
FIT_STEPS: tuple[Step, ...] = (
    _keep_cascade(4),
    _keep_before(5),
    _keep_facts(4),
    _keep_flag_reasons(3),
    _keep_cascade(1),
    _keep_frames(1, 6, earlier_blocks=2),
    _keep_message_lines(12),
    _keep_before(2),
    _keep_facts(1),
    _keep_flag_reasons(2),
    _keep_frames(1, 3, earlier_blocks=0),
    _keep_flags(8, MAX_CHOICES_CHARS // 2),
    _keep_message_lines(4),
    _clip_launch(1500),
    _keep_cascade(0),
    _keep_before(0),
    _keep_facts(0),
    _keep_frames(0, 2, earlier_blocks=0),
    _keep_message_lines(1),
    _keep_flags(5, 60),
    _clip_launch(400),
    _keep_flags(3, 0),
    _keep_frames(0, 1, earlier_blocks=0),
    _clip_launch(160),
)


def fit(case: Case, measure: Measure, limit: int) -> Case:
    """The case with the least useful parts dropped until `measure` says it fits, each drop noted once."""
    notes: list[str] = []
    for step in FIT_STEPS:
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


def build_case(
    report: Report,
    *,
    limit: int = CASE_LIMIT,
    window: LogWindow | None = None,
    anonymize: bool = False,
    measure: Measure | None = None,
) -> Case:
    """The case file of `report`'s primary failure, redacted, fitted to `limit` characters as `measure`
    counts them (default: its Markdown).  `window`: the log lines around the failure when the caller has read
    them (a remote log); without it they are read again from a local log, else the case says they are missing."""
    if measure is None:
        from logsleuth.case.markdown import render_uncut

        def measure(case: Case) -> int:
            return len(render_uncut(case))

    return fit(_full_case(report, window, anonymize, limit), measure, limit)
