"""`logsleuth merge REPORT.json… | DIR`: the files named (a directory's `*.json`, in natural order: node2 before
node10), each read (read.py), then merged (combine.py).

A file that is not a readable logsleuth report is named in the result as an unreadable host, and the merge goes
on; a report of a newer layout stops it (read.FutureSchema, exit 2).  Crash and health reports are not mixed:
with any crash report among the files, the health reports are left out with one warning naming them (a health
finding is not a failure, and a fleet's root must be a failure); with health reports only, they merge as
`health` of several sources does.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from logsleuth.health.model import HealthReport
from logsleuth.merge.combine import IsCascade, OrderGroups, merge_crash_reports, merge_health_reports
from logsleuth.merge.fields import MalformedReport
from logsleuth.merge.read import ReadReport, read_report_file
from logsleuth.models import Report, SourceInfo


def report_files(paths: Sequence[str]) -> tuple[list[str], list[SourceInfo]]:
    """The report files `paths` name (a directory: its `*.json`), and the paths that name none, as unreadable."""
    files: list[str] = []
    missing: list[SourceInfo] = []
    for path in paths:
        target = Path(path)
        if target.is_dir():
            found = sorted((str(p) for p in target.glob("*.json") if p.is_file()), key=natural_key)
            if not found:
                missing.append(SourceInfo(path, 0, None, error=f"{path}: no *.json report in this directory"))
            files.extend(found)
        elif target.exists():
            files.append(path)
        else:
            missing.append(SourceInfo(path, 0, None, error=f"{path}: no such file"))
    return files, missing


def natural_key(text: str) -> list[object]:
    """`node2` before `node10`: digit runs compare as numbers."""
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text)]


def merge_files(paths: Sequence[str], *, order: OrderGroups, is_cascade: IsCascade) -> Report | HealthReport:
    """The merged report of the files `paths` name: a fleet crash report, or a health report when every report
    read is a health report."""
    files, unreadable = report_files(paths)
    reads: list[ReadReport] = []
    for path in files:
        try:
            reads.append(read_report_file(path))
        except MalformedReport as error:
            unreadable.append(SourceInfo(path, 0, None, error=f"{path}: {error}"))
    crash = [read for read in reads if isinstance(read.report, Report)]
    health = [read for read in reads if isinstance(read.report, HealthReport)]
    if health and not crash:
        return merge_health_reports(health, unreadable)
    warnings = []
    if health:
        names = ", ".join(read.path for read in health[:3]) + (f" and {len(health) - 3} more" if len(health) > 3 else "")
        warnings.append(
            f"{len(health)} health report{'s' if len(health) > 1 else ''} left out ({names}): "
            "merge health reports on their own"
        )
    return merge_crash_reports(crash, unreadable, order=order, is_cascade=is_cascade, warnings=warnings)
