"""The command line: parse, build frozen options, call `logsleuth.api`, render, exit.

Exit statuses (also in the README and `--help`):
  0 no failure found · 1 failure found · 2 usage error · 3 a source could not be read ·
  4 internal error (a logsleuth bug; reported in one line, never a traceback) · 130 interrupted
"""

from __future__ import annotations

import os
import sys
from typing import Annotated, Any

import typer

from logsleuth.cli.case import CASE_EXIT_HELP, case_command
from logsleuth.cli.check import CHECK_EXIT_HELP, check_command
from logsleuth.cli.diff import DIFF_EXIT_HELP, diff_command
from logsleuth.cli.health import HEALTH_EXIT_HELP, health_command
from logsleuth.cli.help_text import epilog
from logsleuth.cli.merge import MERGE_EXIT_HELP, merge_command
from logsleuth.cli.options import (
    FORMAT_HELP,
    AcceptNewHostKeyOption,
    EngineVersionOption,
    NoRedactOption,
    SSHBackendChoice,
    SSHBackendOption,
    SSHConfigOption,
    WidthOption,
    table_options,
)
from logsleuth.cli.program_io import default_format, output_width, ssh_options
from logsleuth.cli.quick import COMPLETE_VAR
from logsleuth.errors import ExitStatus, UsageError
from logsleuth.render.options import OutputFormat, RenderOptions

# What `diagnose` runs, imported when it runs: `--help`, completion and an argument error need none of it (the
# api and the pipeline are most of a start's cost).  The tests stand in for these by setting the module's
# attribute (monkeypatch.setattr(cli, "diagnose", ...)); `_late` prefers what they set.
_LATE = {"diagnose": "logsleuth.api", "render": "logsleuth.render", "run_diagnose": "logsleuth.cli.program"}


def __getattr__(name: str) -> Any:
    if name not in _LATE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(_LATE[name]), name)
    globals()[name] = value
    return value


def _late(name: str) -> Any:
    return globals().get(name) or __getattr__(name)


EXIT_CODES_HELP = (
    "Exit status: 0 no failure found, 1 failure found, 2 usage error, "
    "3 a source could not be read, 4 internal error, 130 interrupted. With --verify-fix: 0 the suggested fix "
    "passes, 1 it fails (its verdict is printed first)."
)

app = typer.Typer(
    name="logsleuth",
    help="Find why an SGLang or vLLM launch died: the failure, its frames, the root cause and the flag fix.\n\n"
    + EXIT_CODES_HELP,
    # Completion scripts come from the `completion` command (as with gh and kubectl): printed, so the user
    # chooses where they go, rather than --install-completion guessing the shell and editing rc files.
    add_completion=False,
    # Plain click help: it wraps descriptions and never cuts a flag name, whatever the width.
    rich_markup_mode=None,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


@app.command("diagnose", short_help="Diagnose the latest failure in logs.", epilog=epilog("diagnose", EXIT_CODES_HELP))
@table_options("diagnose")
def diagnose_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            help="Logs to read: PATH, '-' for stdin, HOST:PATH or user@host:path (ssh), "
            "'node[01-16]:PATH' for several hosts. With none, a log piped to stdin is read.",
            metavar="SOURCE",
            show_default=False,
        ),
    ] = None,
    **options: Any,
) -> None:
    """Diagnose the latest failure in one or more logs.  Several logs (a multi-node launch, a fleet) are read
    at once and reported together: the earliest failure across hosts first, its cascades on the others after."""
    status = _late("run_diagnose")(
        sources=sources, **{**options, "ssh_backend": SSHBackendChoice(options["ssh_backend"]).value},
        diagnose_specs=_late("diagnose"), render_report=_late("render"),
    )
    raise typer.Exit(int(status))


def _print_version(value: bool) -> None:
    if value:
        from logsleuth.cli.version import version_text

        print(version_text())
        raise typer.Exit(int(ExitStatus.NO_FAILURE))


@app.callback()
def main_callback(
    version: Annotated[
        bool,
        typer.Option("--version", help="Show the logsleuth, Python and paramiko versions, then exit.",
                     callback=_print_version, is_eager=True),
    ] = False,
) -> None:
    """logsleuth: remote log forensics for LLM inference servers."""


WATCH_EXIT_HELP = (
    "Exit status: 0 the server is ready (every one, for several logs), 1 it failed (the diagnosis is printed), "
    "2 usage error, 3 a log could not be read or ended before ready, 124 --timeout or --stall passed, "
    "130 interrupted."
)


@app.command("watch", short_help="Follow a launch until ready or crashed.", epilog=epilog("watch", WATCH_EXIT_HELP))
@table_options("watch", output_format=f"Format of the diagnosis if the launch fails: {FORMAT_HELP} json "
               "prints one JSON line per event.")
def watch_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="The logs to follow: PATH, '-' or HOST:PATH (ssh); several (or 'node[01-04]:PATH') "
                       "are watched as one multi-node launch.", metavar="SOURCE", show_default=False),
    ] = None,
    **options: Any,
) -> None:
    """Follow a log while the server launches: show the stages, exit 0 when it is ready,
    print the diagnosis as soon as it crashes."""
    from logsleuth.api import DiagnoseOptions
    from logsleuth.cli.program_io import sources_or_stdin
    from logsleuth.cli.watch_output import run_watch
    from logsleuth.watch.follow import SETTLE_SECONDS

    timeout = options["timeout"]
    if timeout is not None and not timeout > 0:  # `not >`: also NaN
        raise UsageError(f"--timeout: must be more than 0 seconds, not {timeout:g}")
    specs = sources_or_stdin(sources, options["hosts_file"])
    diagnose_options = DiagnoseOptions(
        command=options["command"],
        engine_version=options["engine_version"],
        ssh=ssh_options(
            options["ssh_config"], options["accept_new_host_key"], SSHBackendChoice(options["ssh_backend"]).value,
            timeout=timeout,
        ),
    )
    settle = options["settle"]
    status = run_watch(
        specs, diagnose_options, fmt=options["output_format"] or default_format(None), timeout=timeout,
        stall=options["stall"], settle=SETTLE_SECONDS if settle is None else settle,
        then_follow=options["then_follow"], from_start=options["from_start"],
        width=output_width(options["width"], sys.stdout.isatty()), color=not os.environ.get("NO_COLOR"),
        redact=not options["no_redact"],
    )
    raise typer.Exit(status)


@app.command("launch", short_help="Start a server on a host and watch it.",
             epilog=epilog("launch", "Exit status: 0 the server is ready (or --dry-run), 1 it crashed or exited before ready (the "
             "diagnosis is printed), 2 usage error, 3 nothing could be started or the log could not be read, "
             "130 interrupted."))
def launch_command(
    host: Annotated[str, typer.Argument(help="Where to start it: HOST, user@host or user@host:port (ssh).",
                                        metavar="HOST", show_default=False)],
    command_words: Annotated[list[str] | None, typer.Argument(help="The server's command line, after --.",
                                                              metavar="-- COMMAND...", show_default=False)] = None,
    log: Annotated[str | None, typer.Option("--log", help="The log on the host (default "
                                            "~/logsleuth/launch-<UTC time>.log); its pid goes to LOG.pid.",
                                            metavar="PATH")] = None,
    dry_run: Annotated[bool, typer.Option("--dry-run", help="Print what would run on the host; connect to nothing.")] = False,
    retry: Annotated[bool, typer.Option("--retry", help="After a crash with a corrected command, ask, then run "
                                        "that command.")] = False,
    overwrite: Annotated[bool, typer.Option("--overwrite", help="Replace an existing log and pid file (never a "
                                            "running launch's).")] = False,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option("--format", "-f", help=f"Format of the diagnosis if the launch fails: {FORMAT_HELP}"),
    ] = None,
    engine_version: EngineVersionOption = None,
    width: WidthOption = None,
    no_redact: NoRedactOption = False,
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
) -> None:
    """Start COMMAND on HOST, detached (setsid nohup, output to a log, pid recorded), print exactly what runs
    there, and watch the log until the server is ready or crashes.  The only command that
    writes to a remote host."""
    from logsleuth.api import DiagnoseOptions
    from logsleuth.watch.launch import run_launch, terminal_confirm

    options = DiagnoseOptions(
        engine_version=engine_version, ssh=ssh_options(ssh_config, accept_new_host_key, ssh_backend.value)
    )
    fmt = output_format or default_format(None)
    render_options = RenderOptions(
        format=fmt,
        width=output_width(width, sys.stdout.isatty()),
        color=fmt is OutputFormat.RICH and not os.environ.get("NO_COLOR"),
    )
    status = run_launch(
        host, command_words or [], log_path=log, dry_run=dry_run, retry=retry, overwrite=overwrite,
        options=options, render_options=render_options, confirm=terminal_confirm(), redact=not no_redact,
    )
    raise typer.Exit(status)


SHELLS = ("bash", "zsh", "fish")


@app.command("completion", short_help="Print a shell completion script.",
             epilog=epilog("completion", "Exit status: 0, or 2 for a shell that is not supported."))
def completion_command(
    shell: Annotated[str, typer.Argument(help="bash, zsh or fish.", metavar="SHELL", show_default=False)],
) -> None:
    """Print the shell completion script for SHELL.

    Save it where the shell looks for completions: for bash
    ~/.local/share/bash-completion/completions/logsleuth, for zsh a file named _logsleuth in a directory of
    $fpath, for fish ~/.config/fish/completions/logsleuth.fish.
    """
    if shell not in SHELLS:
        raise UsageError(f"completion: unsupported shell {shell!r} (choose bash, zsh or fish)")
    from typer.completion import get_completion_script

    print(get_completion_script(prog_name="logsleuth", complete_var=COMPLETE_VAR, shell=shell))


app.command("case", short_help="Write a case file to paste into any assistant.", epilog=epilog("case", CASE_EXIT_HELP))(case_command)
app.command("diff", short_help="Show what changed between a good launch and a bad one.",
            epilog=epilog("diff", DIFF_EXIT_HELP))(diff_command)
app.command("health", short_help="Report a running server's health from its batch lines.",
            epilog=epilog("health", HEALTH_EXIT_HELP))(health_command)
app.command("merge", short_help="Merge many nodes' JSON reports into one fleet report.",
            epilog=epilog("merge", MERGE_EXIT_HELP))(merge_command)
app.command("check", short_help="Check a command's or a suggested fix's flags for an SGLang version.",
            epilog=epilog("check", CHECK_EXIT_HELP))(check_command)
