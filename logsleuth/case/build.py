"""Build the case file of a report's primary failure, redacted, and fit it to a size limit.

Redaction runs first, on the report and on the lines the case adds from the log (case/window.py: the whole
small log, the failure region, the error-looking lines, the tail, the GPU facts): they ride through
`redact_report` with the report, so a secret the launch command gave is replaced wherever the log repeats it,
and `--anonymize` gives the same host the same placeholder everywhere.

Then the case is fitted (issue 28, item 6: never worse than the paste).  A log small enough is shown whole;
else its failure region, error-looking lines and last lines.  logsleuth's own reading (the parsed failure, what
followed, its diagnosis, the flag rows) is added to that evidence and is the first to go when the limit bites;
the log's own lines go last.  The case says what went.
"""

from __future__ import annotations

import ast
import dataclasses
from typing import Any

from logsleuth.case.fit import FIT_STEPS, PASTE_STEPS, Measure, fit
from logsleuth.case.flags import choose_catalogs, flag_rows
from logsleuth.case.model import (
    CASE_LIMIT,
    Case,
    CaseDiagnosis,
    CaseException,
    CaseFrame,
    ErrorLine,
    LogWindow,
    PrimaryFailure,
)
from logsleuth.case.window import MAX_ERROR_LINES, local_window
from logsleuth.fixes.catalog import Catalog
from logsleuth.models import Diagnosis, ExceptionBlock, FailureGroup, LaunchInfo, Report
from logsleuth.redact import redact_report
from logsleuth.render.safety import clean, clean_lines
from logsleuth.render.view import (
    VERSION_ORIGIN,
    fleet_summary,
    group_title,
    place_text,
    says_label,
    version_origin,
)

MAX_MESSAGE_LINES = 40
MAX_OTHER_GROUPS = 8
MAX_CASCADE_LINES = 10
COMMAND_ORIGIN = {"user": "--cmd", "log": "the log", "server_args": "rebuilt from the log's server_args"}
NO_WINDOW = "the warning lines logsleuth kept before the failure (the log itself could not be read again)"



# -- redaction of the report and of what the case adds ----------------------------------------------------


# The window's fields that hold log lines, each a tuple of strings.
_WINDOW_LINES = ("whole", "before", "failure", "tail", "facts")


def _redacted(report: Report, window: LogWindow, anonymize: bool) -> tuple[Report, LogWindow]:
    """The report and the window, redacted in one pass (see the module docstring).  The window's lines ride in
    `warnings`, a tuple of strings that the redaction treats as consecutive log lines (pieces that are not
    consecutive in the log may then be redacted a little more, never less)."""
    pieces = [getattr(window, name) for name in _WINDOW_LINES]
    pieces += [(window.opening,), tuple(text for text, _ in window.errors)]
    carried = dataclasses.replace(report, warnings=tuple(line for piece in pieces for line in piece))
    redacted = redact_report(carried, secrets=True, anonymize=anonymize)
    lines = iter(redacted.warnings)
    out = [tuple(next(lines) for _ in piece) for piece in pieces]
    runs: dict[str, Any] = dict(zip(_WINDOW_LINES, out, strict=False))
    window = dataclasses.replace(
        window,
        **runs,
        opening=out[-2][0],
        errors=tuple((text, count) for text, (_, count) in zip(out[-1], window.errors, strict=True)),
    )
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
    origin = version_origin(launch)
    if origin is None:
        return "named in the log"
    # a release guessed from the code may be wrong; an image tag's origin already says the image that ran may be another
    return origin + ": may be wrong" if origin == VERSION_ORIGIN["inferred"] else origin


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
    """The launch as the case reads it: a version the user gave without an engine is an SGLang one (--engine-version
    names SGLang's).  A version the log names without an engine stays engine-less: the log's version lines, labels
    and image tags name either engine, and calling one "sglang" named the wrong engine (split 13's assistant run: a
    vLLM 0.7.3 paste's case file said `sglang 0.7.3`)."""
    if launch.engine is None and launch.engine_version is not None and launch.engine_version_source == "user":
        return dataclasses.replace(launch, engine="sglang")
    return launch


def redacted_inputs(report: Report, window: LogWindow | None, anonymize: bool = False) -> tuple[Report, LogWindow]:
    """The report and the log window of its primary failure (of the log's end when it holds none), read again
    from a local log when not given (else the warning lines the report kept), both redacted."""
    primary = report.primary
    if window is None:
        window = local_window(report, primary) or LogWindow(
            before=primary.failure.context if primary else (), origin=NO_WINDOW
        )
    return _redacted(report, window, anonymize)


def _diagnosis(diagnosis: Diagnosis | None) -> CaseDiagnosis | None:
    if diagnosis is None:
        return None
    says = tuple(
        (says_label(words.speaker), clean(words.text + (f" (logsleuth checked: {'; '.join(words.checks)})" if words.checks else ""), 800))
        for words in diagnosis.engine_says
    )
    return CaseDiagnosis(
        basis=diagnosis.basis,
        category=clean(diagnosis.category),
        title=clean(diagnosis.title),
        root_cause=clean(diagnosis.root_cause, 1500),
        evidence=tuple(clean(fact) for fact in diagnosis.evidence),
        engine_says=says,
    )


def _full_case(report: Report, window: LogWindow | None, anonymize: bool, limit: int) -> Case:
    """Every part of the case, in its sections (the log's failure region, error lines and tail; no whole log)."""
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
        paste=window.whole,
        failure_lines=window.failure if primary else (),
        error_lines=tuple(ErrorLine(text, count) for text, count in window.errors),
        error_lines_left_out=window.errors_left_out,
        error_lines_cut_at=MAX_ERROR_LINES // 2 if window.errors_left_out else 0,
        error_scope=window.scope,
        tail=window.tail,
        diagnosis=_diagnosis(primary.diagnosis) if primary else None,
    )


def as_paste(case: Case) -> Case | None:
    """The case with the whole log instead of its sections (which are all in it), or None when the log was not
    read whole.  The error-looking lines stay, as an index of the log."""
    if not case.paste:
        return None
    return dataclasses.replace(case, failure_lines=(), lines_before=(), tail=())


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

    full = _full_case(report, window, anonymize, limit)
    whole = as_paste(full)
    if whole is not None:
        fitted = fit(whole, measure, limit, PASTE_STEPS)
        if measure(fitted) <= limit:
            return fitted
    return fit(dataclasses.replace(full, paste=()), measure, limit, FIT_STEPS)
