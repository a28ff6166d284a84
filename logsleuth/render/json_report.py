"""JSON report, schema `logsleuth.report/1` (docs/json-report.md, logsleuth/report.schema.json)."""

from __future__ import annotations

import json
from typing import Any, Literal

from logsleuth import __version__
from logsleuth.lazyre import compile_lazily
from logsleuth.models import (
    ExceptionBlock,
    Explanation,
    FailureGroup,
    Fix,
    FlagCheck,
    Fleet,
    LaunchInfo,
    Occurrence,
    Report,
    Reporter,
    SourceInfo,
)
from logsleuth.render.explanation import LABEL, proposed_change
from logsleuth.render.safety import escape_surrogates
from logsleuth.render.view import ending, startup_notice

SCHEMA = "logsleuth.report/1"
# The version of this JSON's layout, the number after the slash of `schema`: `logsleuth merge` reads the versions it
# knows (logsleuth/merge/read.py) and refuses a newer one.  Fields added to the layout keep the number.
SCHEMA_VERSION = 1


def _exception(block: ExceptionBlock) -> dict[str, Any]:
    data: dict[str, Any] = {
        "type": block.type,
        "message": block.message,
        "relation": block.relation,
        "frames": [
            {
                "file": frame.file,
                "line": frame.line,
                "function": frame.function,
                "source": frame.source,
                "in_app": frame.in_app,
                "repeated": frame.repeated,
            }
            for frame in block.frames
        ],
        "truncated": block.truncated,
    }
    if block.is_group:
        data["members"] = [[_exception(member) for member in chain] for chain in block.members]
        data["more_members"] = block.more_members
    return data


def _fix(fix: Fix) -> dict[str, Any]:
    return {
        "summary": fix.summary,
        "flags": [{"op": op.op, "flag": op.flag, "value": op.value, "to": op.to} for op in fix.flags],
        "env": {name: value for name, value in fix.env},
        "steps": list(fix.steps),
        "command": fix.command,
        "command_origin": fix.command_origin,
        "needs_input": list(fix.needs_input),
        "alternatives": [_fix(alt) for alt in fix.alternatives],
    }


def _diagnosis(group: FailureGroup) -> dict[str, Any] | None:
    diagnosis = group.diagnosis
    if diagnosis is None:
        return None
    return {
        "pattern": diagnosis.pattern,
        "title": diagnosis.title,
        "category": diagnosis.category,
        "root_cause": diagnosis.root_cause,
        "fix": _fix(diagnosis.fix) if diagnosis.fix else None,
        "references": list(diagnosis.references),
        # How far to trust it: "pattern" (proven on fixtures), "rule" (reasoned from the facts in `evidence`) or
        # "general" (the likeliest category's general checks: general guidance, not a proven fix).
        "basis": diagnosis.basis,
        "evidence": list(diagnosis.evidence),
        "raised_at": list(diagnosis.raised_at),
        "engine_says": [{"text": words.text, "checks": list(words.checks), "speaker": words.speaker}
                        for words in diagnosis.engine_says],
        # The engine and release the diagnosis was made for (a fleet's hosts may run different ones).
        "engine": diagnosis.engine,
        "engine_version": diagnosis.engine_version,
    }


def _failure(group: FailureGroup) -> dict[str, Any]:
    """Answer first, as in every format: where it died and the diagnosis, then the evidence."""
    failure = group.failure
    return {
        "fingerprint": group.fingerprint,
        "count": group.count,
        "ranks": list(group.ranks),
        "hosts": list(group.hosts),
        "sources": list(group.sources),
        "host_counts": dict(group.host_counts),
        "rank_counts": dict(group.rank_counts),
        "cascade_of": group.cascade_of,
        "kind": failure.kind,
        "signature": group.signature,
        "diagnosis": _diagnosis(group),
        "first_line": failure.line or None,
        "offset": failure.offset,
        "timestamp": failure.meta.timestamp,
        "header": failure.header,
        "truncated": failure.truncated,
        "exceptions": [_exception(block) for block in failure.exceptions],
        "context": list(failure.context),
        "cascade": list(group.cascade),
        "firsts": [_occurrence(first) for first in group.firsts],
    }


def _occurrence(first: Occurrence) -> dict[str, Any]:
    """Where and when the failure first showed in one source (a merge orders hosts by it)."""
    return {
        "source": first.source,
        "host": first.host,
        "timestamp": first.timestamp,
        "line": first.line or None,
        "offset": first.offset,
    }


def reporter_json(reporter: Reporter | None) -> dict[str, Any] | None:
    """The machine that wrote the report: its host name (or --host's) and time zone."""
    if reporter is None:
        return None
    return {"host": reporter.host, "time_zone": reporter.time_zone, "utc_offset_seconds": reporter.utc_offset}


def _fleet(fleet: Fleet | None) -> dict[str, Any] | None:
    """A fleet's hosts (the root first) and how sure its root is."""
    if fleet is None:
        return None
    return {
        "root": fleet.root,
        "root_fingerprint": fleet.root_fingerprint,
        "order_known": fleet.order_known,
        "clock_spread_seconds": fleet.clock_spread,
        "first_gap_seconds": fleet.first_gap,
        "root_uncertain": fleet.root_uncertain,
        "hosts": [
            {
                "name": member.name,
                "source": member.source,
                "outcome": member.outcome,
                "error": member.error,
                "fingerprint": member.fingerprint,
                "signature": member.signature or None,
                "timestamp": member.timestamp,
            }
            for member in fleet.members
        ],
    }


def source_json(source: SourceInfo) -> dict[str, Any]:
    clock = source.clock
    return {
        "name": source.name,
        "bytes_read": source.bytes_read,
        "size": source.size,
        "error": source.error,
        "capped": source.capped,
        "host": source.host,
        "note": source.note,
        "utc_offset_seconds": source.utc_offset,
        "clock": {"offset_seconds": clock.offset, "uncertainty_seconds": clock.uncertainty} if clock else None,
    }


def _explanation(explanation: Explanation | None) -> dict[str, Any] | None:
    """What the user's own model answered (--explain); each flag with its catalog check, null when not checked."""
    if explanation is None:
        return None
    checked = len(explanation.checks) == len(explanation.flags)
    checks: list[FlagCheck | None] = list(explanation.checks) if checked else [None] * len(explanation.flags)
    return {
        "label": LABEL + explanation.model,
        "verified": False,
        "model": explanation.model,
        "endpoint": explanation.endpoint,
        "root_cause": explanation.root_cause,
        "category": explanation.category,
        "flags": [
            {
                "op": op.op,
                "flag": op.flag,
                "value": op.value,
                "to": op.to,
                "change": proposed_change(op),  # as the other formats show it: the value shell-quoted
                "check": {"ok": check.ok, "verified": check.verified, "reason": check.reason} if check else None,
            }
            for op, check in zip(explanation.flags, checks, strict=True)
        ],
        "upgrade": explanation.upgrade,
        "evidence": [{"text": text, "in_case_file": found} for text, found in explanation.evidence],
    }


ReportStatus = Literal["failure", "no-failure", "unreadable"]


def report_status(report: Report) -> ReportStatus:
    """`failure`: a failure was found (exit 1); `unreadable`: none was, and a source could not be read (exit 3);
    `no-failure`: every source was read and none holds a failure (exit 0)."""
    if report.failures:
        return "failure"
    if any(source.error for source in report.sources):
        return "unreadable"
    return "no-failure"


def report_to_dict(report: Report) -> dict[str, Any]:
    """The report as JSON data: what it is and the verdict first, then the failures (the root failure first),
    then what was read."""
    launch = report.launch
    return {
        "schema": SCHEMA,
        "tool": {"name": "logsleuth", "version": __version__},
        "status": report_status(report),
        "failures": [_failure(group) for group in report.failures],
        "fleet": _fleet(report.fleet),
        "launch": launch_json(launch),
        "ended_in_startup": _ended_in_startup(report),
        "sources": [source_json(source) for source in report.sources],
        # Who read them, and the layout's version: what `logsleuth merge` needs of the reports of many nodes.
        "reporter": reporter_json(report.reporter),
        "schema_version": SCHEMA_VERSION,
        "warnings": list(report.warnings),
        # The report keeps the first groups only (grouping.MAX_GROUPS); these count what it left out.
        "omitted_failures": report.omitted_failures,
        "omitted_groups": report.omitted_groups,
        "omitted_groups_estimated": report.omitted_groups_estimated,
        "explanation": _explanation(report.explanation),  # --explain: unverified, never the verdict
        "next_steps": _next_steps(report),
    }


def _ended_in_startup(report: Report) -> dict[str, Any] | None:
    """A clean log that stops during the start-up: the notice every format prints under "No failure found"."""
    launch = report.launch
    if not launch.ended_in_startup or report_status(report) != "no-failure":
        return None
    return {"stage": launch.startup_stage or None, "stalled": launch.startup_stalled, "notice": startup_notice(launch)}


def _next_steps(report: Report) -> dict[str, Any] | None:
    """The report's ending, as the other formats end: the commands that give more help when the first failure
    has no proven fix, and the --cmd hint; null when there is nothing to say."""
    end = ending(report)
    if end.empty:
        return None
    return {
        "no_proven_fix": end.case_command is not None,
        "case_command": end.case_command,
        "explain_command": end.explain_command,
        "stdin": end.stdin,
        "cmd_hint": end.cmd_hint,
    }


# json.dumps escapes C0 controls but passes C1 controls and bidi overrides through raw;
# escape them so a log cannot steer a terminal that shows the JSON.
_UNSAFE = compile_lazily("[\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def render_json(report: Report) -> str:
    return json_text(report_to_dict(report))


def json_text(data: dict[str, Any], *, allow_nan: bool = True) -> str:
    """A report's JSON, always valid UTF-8 (a byte that was not UTF-8, in a file name, is written as the text
    `\\xNN`), with the controls json.dumps lets through escaped.  Every JSON report (crash, health) shares it."""
    text = json.dumps(data, indent=2, ensure_ascii=False, allow_nan=allow_nan)
    text = _UNSAFE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", text)
    return escape_surrogates(text, backslash="\\\\") + "\n"


def launch_json(launch: LaunchInfo) -> dict[str, Any]:
    return {
        "engine": launch.engine,
        "engine_version": launch.engine_version,
        "engine_version_source": launch.engine_version_source,
        "command": launch.command,
        "command_source": launch.command_source,
        "wrapper": launch.wrapper,
    }
