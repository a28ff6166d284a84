"""`logsleuth diff GOOD [BAD]`: what changed between a launch that worked and one that did not (docs/diff.md).

Registered in cli/app.py, after the option types it shares with diagnose:

    from logsleuth.cli.diff import DIFF_EXIT_HELP, diff_command  # noqa: E402
    app.command("diff", short_help="Show what changed between a good launch and a bad one.",
                epilog=DIFF_EXIT_HELP)(diff_command)
"""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from logsleuth.cli.options import (
    FORMAT_HELP,
    AcceptNewHostKeyOption,
    MaxCharsOption,
    SSHBackendChoice,
    SSHBackendOption,
    SSHConfigOption,
    WidthOption,
)
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.render.options import OutputFormat

DIFF_EXIT_HELP = (
    "Exit status: 0 no difference that matters, 1 differences found, 2 usage error (a --launch out of range, a "
    "source with no launch in it), 3 a source could not be read, 4 internal error, 130 interrupted."
)


def diff_command(
    sources: Annotated[list[str], typer.Argument(
        help="GOOD then BAD: PATH, '-' for stdin, HOST:PATH (ssh). One log alone: two of its launches, picked "
        "with --launch (default: the previous and the latest).", metavar="GOOD [BAD]", show_default=False)],
    launch: Annotated[list[int] | None, typer.Option(
        "--launch", help="Which launch of a log: 1 is the first in the log, -1 the latest, -2 the one before. "
        "Give it twice: GOOD's, then BAD's (e.g. diff app.log --launch -2 --launch -1).", metavar="N")] = None,
    output_format: Annotated[OutputFormat | None, typer.Option("--format", "-f", help=f"Report format: {FORMAT_HELP}")] = None,
    width: WidthOption = None,
    max_chars: MaxCharsOption = 3500,
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
) -> None:
    """Show what changed between a launch that worked (GOOD) and one that did not (BAD): the engine version, the
    flags (SGLang's defaults folded away; a field a release renamed shown as a rename), the environment the log
    reveals, the model, GPUs and memory, stage durations, the first diverging stage, and the failure.  Secrets
    are redacted in every format."""
    status = run_diff(list(sources), list(launch or []), output_format, width, max_chars,
                      ssh_config=ssh_config, accept_new_host_key=accept_new_host_key, ssh_backend=ssh_backend.value)
    raise typer.Exit(int(status))


def choices(sources: list[str], launches: list[int]) -> tuple[tuple[str, int], tuple[str, int]]:
    """(spec, launch number) of GOOD and of BAD, from what the command line gave."""
    from logsleuth.diff import LATEST, PREVIOUS

    if len(sources) not in (1, 2):
        raise UsageError(f"give GOOD and BAD (two logs), or one log and two --launch; got {len(sources)} sources")
    if len(launches) not in (0, 2):
        raise UsageError("give --launch twice, GOOD's then BAD's (e.g. --launch -2 --launch -1), or not at all")
    if 0 in launches:
        raise UsageError("--launch 0: launches are numbered from 1 (the first) or from -1 (the latest)")
    if sources.count("-") > 1:
        raise UsageError("stdin (-) can be only one side")
    good, bad = (sources[0], sources[-1])
    numbers = launches or ([PREVIOUS, LATEST] if len(sources) == 1 else [LATEST, LATEST])
    return (good, numbers[0]), (bad, numbers[1])


def run_diff(sources: list[str], launches: list[int], fmt: OutputFormat | None, width: int | None, max_chars: int,
             *, ssh_config: object = None, accept_new_host_key: bool = False, ssh_backend: str = "auto") -> int:
    """Print the diff and return the exit status; an error is one line on stderr."""
    from pathlib import Path
    from typing import Any, cast

    from logsleuth.cli.program import default_format, output_width, ssh_options, write_report
    from logsleuth.cli.program_io import stdin_chunks
    from logsleuth.diff import LaunchChoice, diff_launches

    try:
        (good_spec, good_number), (bad_spec, bad_number) = choices(sources, launches)
        stdin = b"".join(stdin_chunks()) if "-" in sources else None
        ssh = ssh_options(cast("Path | None", ssh_config), accept_new_host_key, cast("Any", ssh_backend))
        report = diff_launches(LaunchChoice(good_spec, good_number), LaunchChoice(bad_spec, bad_number), ssh, stdin)
    except LogsleuthError as error:
        from logsleuth.cli.program_io import print_stderr

        print_stderr(str(error), "diff")
        return int(error.exit_status)
    chosen = fmt or default_format(None)
    write_report(render_diff(report, chosen, output_width(width, sys.stdout.isatty()), max_chars), chosen)
    return int(ExitStatus.FAILURE_FOUND if report.differs else ExitStatus.NO_FAILURE)


def render_diff(report: object, fmt: OutputFormat, width: int, max_chars: int) -> str:
    from logsleuth.diff.model import DiffReport
    from logsleuth.render import diff as renderers

    assert isinstance(report, DiffReport)
    if fmt is OutputFormat.JSON:
        return renderers.render_json(report)
    if fmt is OutputFormat.MARKDOWN:
        return renderers.render_markdown(report)
    if fmt is OutputFormat.SLACK:
        return renderers.render_slack(report, max_chars)
    if fmt is OutputFormat.RICH:
        import os

        from logsleuth.render.diff_rich import render_diff_rich
        from logsleuth.render.options import RenderOptions

        color = sys.stdout.isatty() and not os.environ.get("NO_COLOR")
        return render_diff_rich(report, RenderOptions(fmt, width=width, color=color))
    return renderers.render_text(report, width)
