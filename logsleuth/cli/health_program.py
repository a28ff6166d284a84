"""`logsleuth health` with its arguments parsed, up to the exit status: what cli/health.py (typer) and
cli/quick.py (a plain command line, without typer) both call."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from logsleuth.errors import ExitStatus
from logsleuth.render.options import OutputFormat
from logsleuth.sources.fanout import DEFAULT_PARALLEL

if TYPE_CHECKING:
    from logsleuth.health.model import HealthReport
    from logsleuth.health.run import HealthOptions


def run_health(
    sources: list[str] | None,
    output_format: OutputFormat | None,
    output: Path | None,
    *,
    width: int | None = None,
    command: str | None = None,
    engine_version: str | None = None,
    patterns: list[Path] | None = None,
    no_user_patterns: bool = False,
    max_chars: int = 3500,
    no_redact: bool = False,
    ssh_config: Path | None = None,
    accept_new_host_key: bool = False,
    ssh_backend: str = "auto",
    hosts_file: str | None = None,
    parallel: int = DEFAULT_PARALLEL,
    host: str | None = None,
) -> ExitStatus:
    """Print the health report and return the exit status (errors raise LogsleuthError)."""
    from logsleuth.cli.program_io import (
        default_format,
        deliver,
        output_width,
        sources_or_stdin,
        ssh_options,
    )
    from logsleuth.health.run import HealthOptions, check_health
    from logsleuth.redact import redact_report
    from logsleuth.render.health import render_health
    from logsleuth.render.health_view import health_status
    from logsleuth.render.options import RenderOptions

    options = HealthOptions(
        pattern_dirs=tuple(str(p) for p in patterns or ()),
        include_user_patterns=not no_user_patterns,
        command=command,
        engine_version=engine_version,
        ssh=ssh_options(ssh_config, accept_new_host_key, ssh_backend),  # type: ignore[arg-type]
        parallel=parallel,
        host=host,
    )
    specs = sources_or_stdin(sources, hosts_file)
    fmt = output_format or default_format(output)
    to_terminal = output is None and sys.stdout.isatty()
    color = fmt is OutputFormat.RICH and output is None and not os.environ.get("NO_COLOR")
    render_options = RenderOptions(format=fmt, width=output_width(width, to_terminal), color=color, max_chars=max_chars)
    if sys.stderr.isatty() and fmt is not OutputFormat.JSON:  # a status line, as diagnose shows (issue 30, #4)
        report = _with_progress(specs, options)
    else:
        report = check_health(specs, options)
    if not no_redact:
        report = redact_report(report)
    text = render_health(report, render_options)
    deliver(text, fmt, output, [source.error for source in report.sources if source.error], report.warnings)
    return {
        "findings": ExitStatus.FAILURE_FOUND,
        "healthy": ExitStatus.NO_FAILURE,
    }.get(health_status(report), ExitStatus.SOURCE_ERROR)


def _with_progress(specs: Sequence[str], options: HealthOptions) -> HealthReport:
    """check_health with a status line on the terminal: connecting, searching, the windows read (stderr only)."""
    from dataclasses import replace

    from logsleuth.cli.program import _progress_status
    from logsleuth.health.run import check_health, progress_text

    with _progress_status(enabled=True) as show:
        assert show is not None
        options = replace(options, ssh=replace(options.ssh, progress=show))
        return check_health(specs, options, on_source=lambda name, state, detail: show(progress_text(name, state, detail)))
