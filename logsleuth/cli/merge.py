"""`logsleuth merge REPORT.json… | DIR`: the JSON reports of many nodes as one fleet report (docs/at-scale.md).

Registered in cli/app.py with one line; the merge itself is logsleuth/merge/ (through api.merge_reports).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from logsleuth.cli.options import FormatOption, MaxCharsOption, NoRedactOption, OutputFileOption, WidthOption
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.render.options import MIN_MAX_CHARS, OutputFormat, RenderOptions

MERGE_EXIT_HELP = (
    "Exit status: 0 no failure on any node, 1 a failure found, 2 usage error, or a report of a newer schema_version "
    "than this logsleuth reads (one line names it; nothing is merged), 3 no failure and a report could not be read "
    "(none could, or one is malformed: named in the report), 4 internal error. Health reports only: 0 healthy, "
    "1 findings, 3 nothing to judge."
)


def merge_command(
    reports: Annotated[
        list[str],
        typer.Argument(
            help="JSON reports of `diagnose --format json` (or of `health --format json`), or directories of "
            "them (their *.json files).",
            metavar="REPORT.json... | DIR",
            show_default=False,
        ),
    ],
    output_format: FormatOption = None,
    output: OutputFileOption = None,
    width: WidthOption = None,
    max_chars: MaxCharsOption = 3500,
    no_redact: NoRedactOption = False,
) -> None:
    """Merge the JSON reports that many nodes wrote of their own logs (a Slurm, Kubernetes, Ray or pdsh job:
    see the README's 'At scale') into one fleet report, the one `diagnose node[01-64]:PATH` would print: a line per host,
    the earliest failure across hosts as the root and the later ones as its cascade.  A file that is not a
    readable report is named as an unreadable host."""
    try:
        status = run_merge(reports, output_format, output, width=width, max_chars=max_chars, redact=not no_redact)
    except LogsleuthError as error:
        from logsleuth.cli.program_io import print_stderr

        print_stderr(str(error), "merge")
        raise typer.Exit(int(error.exit_status)) from None
    raise typer.Exit(int(status))


def run_merge(
    paths: list[str], fmt: OutputFormat | None, output: Path | None, *, width: int | None, max_chars: int, redact: bool
) -> ExitStatus:
    """Read, merge, render and deliver; the exit status."""
    from logsleuth.api import merge_reports
    from logsleuth.cli.program_io import default_format, deliver, output_width
    from logsleuth.health.model import HealthReport

    if max_chars < MIN_MAX_CHARS:
        raise UsageError(f"--max-chars: must be at least {MIN_MAX_CHARS}, not {max_chars}")
    chosen = fmt or default_format(output)
    to_terminal = output is None and sys.stdout.isatty()
    color = chosen is OutputFormat.RICH and output is None and not os.environ.get("NO_COLOR")
    options = RenderOptions(format=chosen, width=output_width(width, to_terminal), color=color, max_chars=max_chars)
    merged = merge_reports(paths)
    errors = [source.error for source in merged.sources if source.error]
    if isinstance(merged, HealthReport):
        from logsleuth.redact import redact_report
        from logsleuth.render.health import render_health
        from logsleuth.render.health_view import health_status

        health = redact_report(merged) if redact else merged
        deliver(render_health(health, options), chosen, output, errors, health.warnings)
        statuses = {"findings": ExitStatus.FAILURE_FOUND, "healthy": ExitStatus.NO_FAILURE}
        return statuses.get(health_status(health), ExitStatus.SOURCE_ERROR)
    from logsleuth.cli.program import exit_status_for, redacted
    from logsleuth.render import render

    report = redacted(merged, redact=redact, anonymize=False)
    deliver(render(report, options), chosen, output, errors, report.warnings)
    return exit_status_for(report)
