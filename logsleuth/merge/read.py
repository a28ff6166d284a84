"""A JSON report read back into the model it was written from (render/json_report.py and render/health_json.py
write it; docs/json-report.md).  What the JSON does not carry is left at its default: a failure's end offset
(its start), its lines' process and pid, the launch's `server_args=` pairs, and `--explain`'s answer (a merge
never repeats one node's unverified explanation as the fleet's)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args

from logsleuth.errors import UsageError
from logsleuth.health.model import Cause, Evidence, Finding, HealthReport, Series, SeriesPoint
from logsleuth.merge.fields import Fields, MalformedReport
from logsleuth.models import (
    ClockOffset,
    Diagnosis,
    EngineWords,
    ExceptionBlock,
    Failure,
    FailureGroup,
    FailureKind,
    Fix,
    FlagOp,
    Frame,
    LaunchInfo,
    LineMeta,
    Occurrence,
    Report,
    Reporter,
    SourceInfo,
)

CRASH_SCHEMA = "logsleuth.report"
HEALTH_SCHEMA = "logsleuth.health"
# The layout versions this logsleuth reads, per kind: schema "logsleuth.report/1" (schema_version 1).
KNOWN_VERSIONS = {CRASH_SCHEMA: (1,), HEALTH_SCHEMA: (1,)}
# A report file larger than this is not one node's report (a node's is kilobytes; 100 failure groups at most).
MAX_REPORT_BYTES = 64 << 20


class FutureSchema(UsageError):
    """A report written by a newer logsleuth, in a layout this one does not know: the merge stops (exit 2), since
    merging what it can read would drop that node silently."""


@dataclass(frozen=True, slots=True)
class ReadReport:
    """One report file, read: a crash report or a health report."""

    path: str
    report: Report | HealthReport


def read_report_file(path: str) -> ReadReport:
    """The report in the file at `path`.  Raises MalformedReport (the merge names the file and goes on) or
    FutureSchema (the merge stops)."""
    try:
        size = Path(path).stat().st_size
        if size > MAX_REPORT_BYTES:
            raise MalformedReport(f"{size:,} bytes: too large for a logsleuth report")
        raw = Path(path).read_bytes()
    except OSError as error:
        raise MalformedReport(error.strerror or str(error)) from None
    try:
        data = json.loads(raw.decode("utf-8"))
    except UnicodeDecodeError:
        raise MalformedReport("not UTF-8: not a logsleuth JSON report") from None
    except json.JSONDecodeError as error:
        raise MalformedReport(f"not JSON (line {error.lineno}, column {error.colno}: {error.msg})") from None
    except RecursionError:
        raise MalformedReport("nested too deeply for a logsleuth report") from None
    return ReadReport(path, report_from_json(data, path))


def report_from_json(data: Any, path: str = "") -> Report | HealthReport:
    """A crash or health report from its JSON data (`path` names it in the errors)."""
    if not isinstance(data, dict) or not isinstance(data.get("schema"), str):
        raise MalformedReport("not a logsleuth report (no \"schema\")")
    kind, _, number = data["schema"].partition("/")
    if kind not in KNOWN_VERSIONS:
        if kind.startswith("logsleuth."):  # a diff's or a check's JSON: logsleuth's, but not a node's report
            raise MalformedReport(f"a {kind[:40]} report: merge reads diagnose and health reports")
        raise MalformedReport(f"not a logsleuth report (schema {data['schema'][:60]!r})")
    version = data.get("schema_version", int(number) if number.isdigit() else None)
    if not isinstance(version, int) or isinstance(version, bool) or (number.isdigit() and int(number) != version):
        raise MalformedReport(f"schema {data['schema'][:60]!r} and schema_version {version!r} do not agree")
    if version not in KNOWN_VERSIONS[kind]:
        known = ", ".join(map(str, KNOWN_VERSIONS[kind]))
        raise FutureSchema(
            f"{path}: schema_version {version} of {kind} is not one this logsleuth reads ({known}): "
            "merge with the logsleuth that wrote it, or a newer one"
        )
    fields = Fields(data)
    try:
        return crash_report(fields) if kind == CRASH_SCHEMA else health_report(fields)
    except RecursionError:
        raise MalformedReport("nested too deeply for a logsleuth report") from None


# ---- shared parts --------------------------------------------------------------------------------------------


def reporter(fields: Fields) -> Reporter | None:
    data = fields.object("reporter")
    if data is None:
        return None  # a report of a logsleuth before issue 31: the merge names its host after the file
    return Reporter(data.text("host"), data.optional_text("time_zone"), data.optional_integer("utc_offset_seconds"))


def source(fields: Fields) -> SourceInfo:
    clock = fields.object("clock")
    return SourceInfo(
        name=fields.text("name"),
        bytes_read=fields.integer("bytes_read", 0),
        size=fields.optional_integer("size"),
        error=fields.optional_text("error"),
        capped=fields.flag("capped"),
        host=fields.optional_text("host"),
        clock=ClockOffset(clock.optional_number("offset_seconds") or 0.0, clock.optional_number("uncertainty_seconds") or 0.0)
        if clock is not None
        else None,
        note=fields.optional_text("note"),
        utc_offset=fields.optional_integer("utc_offset_seconds"),
    )


def launch(fields: Fields | None) -> LaunchInfo:
    if fields is None:
        return LaunchInfo()
    return LaunchInfo(
        engine=fields.optional_text("engine"),
        engine_version=fields.optional_text("engine_version"),
        engine_version_source=fields.choice("engine_version_source", ("log", "inferred", "user", None)),
        command=fields.optional_text("command"),
        command_source=fields.choice("command_source", ("user", "log", "server_args", None)),
        wrapper=fields.optional_text("wrapper"),
    )


# ---- crash reports -------------------------------------------------------------------------------------------


def crash_report(fields: Fields) -> Report:
    return Report(
        sources=tuple(source(item) for item in fields.objects("sources")),
        failures=tuple(failure_group(item) for item in fields.objects("failures")),
        launch=launch(fields.object("launch")),
        warnings=fields.texts("warnings"),
        omitted_failures=fields.integer("omitted_failures", 0),
        omitted_groups=fields.integer("omitted_groups", 0),
        omitted_groups_estimated=fields.flag("omitted_groups_estimated"),
        reporter=reporter(fields),
    )


_KINDS: tuple[str | None, ...] = get_args(FailureKind)


def failure_group(fields: Fields) -> FailureGroup:
    timestamp = fields.optional_text("timestamp")
    offset = fields.integer("offset", 0)
    exceptions = tuple(exception(item) for item in fields.objects("exceptions"))
    if not exceptions:
        raise MalformedReport(f"{fields.where}.exceptions: a failure has at least one exception")
    failure = Failure(
        kind=fields.choice("kind", _KINDS),
        exceptions=exceptions,
        line=fields.optional_integer("first_line") or 0,
        offset=offset,
        end_offset=offset,
        meta=LineMeta(timestamp=timestamp),
        header=fields.optional_text("header"),
        truncated=fields.flag("truncated"),
        context=fields.texts("context"),
        error_context=fields.texts("context"),  # a report keeps no record levels: every line of it is shown
    )
    return FailureGroup(
        fingerprint=fields.text("fingerprint"),
        failure=failure,
        count=fields.integer("count"),
        ranks=fields.texts("ranks"),
        hosts=fields.texts("hosts"),
        sources=fields.texts("sources"),
        cascade=fields.texts("cascade"),
        diagnosis=diagnosis(fields.object("diagnosis")),
        signature=fields.text("signature", ""),
        host_counts=fields.counts("host_counts"),
        rank_counts=fields.counts("rank_counts"),
        firsts=tuple(occurrence(item) for item in fields.objects("firsts")),
        cascade_of=fields.optional_text("cascade_of"),
    )


def occurrence(fields: Fields) -> Occurrence:
    return Occurrence(
        source=fields.text("source"),
        host=fields.optional_text("host"),
        timestamp=fields.optional_text("timestamp"),
        line=fields.optional_integer("line") or 0,
        offset=fields.integer("offset", 0),
    )


def exception(fields: Fields) -> ExceptionBlock:
    return ExceptionBlock(
        type=fields.text("type"),
        message=fields.text("message", ""),
        frames=tuple(frame(item) for item in fields.objects("frames")),
        relation=fields.choice("relation", ("cause", "context", None)),
        members=tuple(
            tuple(exception(Fields(member, f"{fields.where}.members[{index}]")) for member in _list(chain, fields))
            for index, chain in enumerate(fields.data.get("members") or [])
        ),
        more_members=fields.integer("more_members", 0),
        truncated=fields.flag("truncated"),
    )


def _list(value: Any, fields: Fields) -> list[Any]:
    if not isinstance(value, list):
        raise MalformedReport(f"{fields.where}.members: expected lists of exceptions")
    return value


def frame(fields: Fields) -> Frame:
    where = (fields.text("file"), fields.optional_integer("line"), fields.optional_text("function"))
    return Frame(*where, source=fields.optional_text("source"), repeated=fields.integer("repeated", 0), in_app=fields.flag("in_app"))


def diagnosis(fields: Fields | None) -> Diagnosis | None:
    if fields is None:
        return None
    fix_fields = fields.object("fix")
    return Diagnosis(
        pattern=fields.text("pattern"),
        title=fields.text("title"),
        category=fields.text("category"),
        root_cause=fields.text("root_cause"),
        fix=fix(fix_fields) if fix_fields is not None else None,
        references=fields.texts("references"),
        basis=fields.choice("basis", ("pattern", "rule", "general")),
        evidence=fields.texts("evidence"),
        raised_at=fields.texts("raised_at"),
        engine_says=tuple(EngineWords(item.text("text"), item.texts("checks"), item.optional_text("speaker")) for item in fields.objects("engine_says")),
        engine=fields.optional_text("engine"),
        engine_version=fields.optional_text("engine_version"),
    )


def fix(fields: Fields) -> Fix:
    return Fix(
        summary=fields.text("summary"),
        flags=tuple(
            FlagOp(
                op=item.choice("op", ("add", "remove", "set", "rename")),
                flag=item.text("flag"),
                value=item.optional_text("value"),
                to=item.optional_text("to"),
            )
            for item in fields.objects("flags")
        ),
        env=fields.pairs("env"),
        steps=fields.texts("steps"),
        command=fields.optional_text("command"),
        command_origin=fields.choice("command_origin", (None, "user", "log", "server_args")),  # absent: None
        needs_input=fields.texts("needs_input"),
        alternatives=tuple(fix(item) for item in fields.objects("alternatives")),
    )


# ---- health reports ------------------------------------------------------------------------------------------


def health_report(fields: Fields) -> HealthReport:
    return HealthReport(
        sources=tuple(source(item) for item in fields.objects("sources")),
        findings=tuple(finding(item) for item in fields.objects("findings")),
        series=tuple(series(item) for item in fields.objects("series")),
        launch=launch(fields.object("launch")),
        batches=fields.integer("batches", 0),
        sampled=fields.flag("sampled"),
        speculative=fields.flag("speculative"),
        warnings=fields.texts("warnings"),
        reporter=reporter(fields),
    )


def finding(fields: Fields) -> Finding:
    return Finding(
        pattern_id=fields.text("pattern"),
        title=fields.text("title"),
        category=fields.text("category"),
        summary=fields.text("summary"),
        root_cause=fields.text("root_cause"),
        causes=tuple(
            Cause(text=item.text("text"), fix=item.text("fix"), id=item.text("id", ""), evidence=item.text("evidence", ""))
            for item in fields.objects("causes")
        ),
        evidence=tuple(
            Evidence(
                text=item.text("text"),
                offset=item.integer("offset", 0),
                timestamp=item.optional_text("timestamp"),
                line_number=item.optional_integer("line_number"),
            )
            for item in fields.objects("evidence")
        ),
        occurrences=fields.integer("occurrences", 0),
        first_seconds=fields.optional_number("first_seconds"),
        last_seconds=fields.optional_number("last_seconds"),
        references=fields.texts("references"),
        sources=fields.texts("sources"),
        hosts=fields.texts("hosts"),
    )


def series(fields: Fields) -> Series:
    return Series(
        name=fields.text("name"),
        unit=fields.text("unit", ""),
        points=tuple(
            SeriesPoint(seconds=item.optional_number("seconds"), value=_value(item.optional_number("value")))
            for item in fields.objects("points")
        ),
        samples=fields.integer("samples", 0),
        source=fields.optional_text("source") or "",
        host=fields.optional_text("host"),
    )


def _value(number: float | None) -> float:
    return float("nan") if number is None else number  # the JSON writes a missing value (NaN) as null
