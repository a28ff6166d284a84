"""The command line: parse, build frozen options, call `logsleuth.api`, render, exit.

Exit statuses (also in the README and `--help`):
  0 no failure found · 1 failure found · 2 usage error · 3 a source could not be read ·
  4 internal error (a logsleuth bug; reported in one line, never a traceback) · 130 interrupted
"""

from __future__ import annotations

import os
import platform
import sys
from pathlib import Path
from typing import Annotated

import typer

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.cli_case import CASE_EXIT_HELP, case_command
from logsleuth.cli_check import CHECK_EXIT_HELP, check_command
from logsleuth.cli_diff import DIFF_EXIT_HELP, diff_command
from logsleuth.cli_health import HEALTH_EXIT_HELP, health_command
from logsleuth.cli_merge import MERGE_EXIT_HELP, merge_command
from logsleuth.cli_options import (
    FORMAT_HELP,
    AcceptNewHostKeyOption,
    CommandOption,
    EngineVersionOption,
    HostsFileOption,
    NoRedactOption,
    ParallelOption,
    SSHBackendChoice,
    SSHBackendOption,
    SSHConfigOption,
    WidthOption,
)
from logsleuth.cli_quick import COMPLETE_VAR
from logsleuth.errors import ExitStatus, UsageError
from logsleuth.ingest.reader import DEFAULT_MAX_BYTES
from logsleuth.program import (  # noqa: F401 - re-exported: the helpers tests and __main__ know as cli's
    SLACK_WEBHOOK_ENV,
    default_format,
    exit_status_for,
    output_width,
    parse_size,
    print_stderr,
    redacted,
    run_diagnose,
    ssh_options,
    status_text,
    terminal_text,
    write_report,
)
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from logsleuth.sources.fanout import DEFAULT_PARALLEL

EXIT_CODES_HELP = (
    "Exit status: 0 no failure found, 1 failure found, 2 usage error, "
    "3 a source could not be read, 4 internal error, 130 interrupted."
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


@app.command("diagnose", short_help="Diagnose the latest failure in logs.", epilog=EXIT_CODES_HELP)
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
    output_format: Annotated[
        OutputFormat | None,
        typer.Option("--format", "-f", help=f"Report format: {FORMAT_HELP} With -o, the file's extension decides."),
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="Write the report to FILE (.json, .md, .slack, .txt pick the format).",
                     metavar="FILE"),
    ] = None,
    width: WidthOption = None,
    all_failures: Annotated[bool, typer.Option("--all", help="Every failure group in the file, not just the latest launch.")] = False,
    command: CommandOption = None,
    engine_version: EngineVersionOption = None,
    patterns: Annotated[
        list[Path] | None,
        typer.Option("--patterns", help="Also read patterns from DIR (repeatable).", metavar="DIR"),
    ] = None,
    no_user_patterns: Annotated[
        bool, typer.Option("--no-user-patterns", help="Ignore ~/.config/logsleuth/patterns.")
    ] = False,
    max_bytes: Annotated[
        str,
        typer.Option("--max-bytes", help="Read at most SIZE from the end of each log (e.g. 256M, 1G).", metavar="SIZE"),
    ] = f"{DEFAULT_MAX_BYTES >> 20}M",
    max_chars: Annotated[
        int, typer.Option("--max-chars", help="Length limit of the Slack report, in characters.", metavar="N")
    ] = 3500,
    no_redact: NoRedactOption = False,
    anonymize: Annotated[bool, typer.Option("--anonymize", help="Also replace host names, IPs and user names.")] = False,
    slack_webhook: Annotated[
        str | None,
        typer.Option("--slack-webhook", help="Also post the Slack report to this incoming-webhook URL.", metavar="URL"),
    ] = None,
    post_to_slack: Annotated[
        bool,
        typer.Option("--post-to-slack", help=f"Also post the Slack report to the webhook URL in ${SLACK_WEBHOOK_ENV}."),
    ] = False,
    # SSH: how remote sources are reached (docs/ssh.md).
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
    all_files: Annotated[bool, typer.Option("--all-files", help="A remote glob reads every match, not the newest.")] = False,
    # Fleets (docs/fleet-syntax.md): node[01-16]:/var/log/sglang.log, {host} templates, a hosts file.
    hosts_file: HostsFileOption = None,
    parallel: ParallelOption = DEFAULT_PARALLEL,
    # --explain (docs/explain.md): opt-in; nothing is sent anywhere without it.
    explain: Annotated[
        bool,
        typer.Option("--explain", help="Also send the redacted case file of the failure to your own "
                     "OpenAI-compatible model and show its answer, labelled unverified (docs/explain.md)."),
    ] = False,
    llm_url: Annotated[
        str | None,
        typer.Option("--llm-url", help="The model's endpoint for --explain (default: $LOGSLEUTH_LLM_URL, then url "
                     "in ~/.config/logsleuth/config.toml).", metavar="URL"),
    ] = None,
    llm_model: Annotated[
        str | None,
        typer.Option("--llm-model", help="The model to ask with --explain (default: $LOGSLEUTH_LLM_MODEL, the "
                     "config file, else the one the server serves).", metavar="NAME"),
    ] = None,
    verify_fix: Annotated[
        str | None,
        typer.Option("--verify-fix", help="Also check a fix someone suggested (flags or a command, as pasted) "
                     "against the log's SGLang version and launch command (docs/check.md).", metavar="TEXT"),
    ] = None,
    host: Annotated[str | None, typer.Option("--host", help="Name this machine in the JSON report (default: its host name); `logsleuth merge` names its logs after it.", metavar="NAME")] = None,
) -> None:
    """Diagnose the latest failure in one or more logs.  Several logs (a multi-node launch, a fleet) are read
    at once and reported together: the earliest failure across hosts first, its cascades on the others after."""
    status = run_diagnose(
        sources=sources, output_format=output_format, output=output, width=width, all_failures=all_failures,
        command=command, engine_version=engine_version, patterns=patterns, no_user_patterns=no_user_patterns,
        max_bytes=max_bytes, max_chars=max_chars, no_redact=no_redact, anonymize=anonymize,
        slack_webhook=slack_webhook, post_to_slack=post_to_slack, ssh_config=ssh_config,
        accept_new_host_key=accept_new_host_key, ssh_backend=ssh_backend.value, all_files=all_files,
        hosts_file=hosts_file, parallel=parallel, explain=explain, llm_url=llm_url, llm_model=llm_model,
        verify_fix=verify_fix, host=host,
        diagnose_specs=diagnose, render_report=render,  # cli's names: the tests stand in for them
    )
    raise typer.Exit(int(status))


def version_text() -> str:
    """`logsleuth --version`: ours, Python's and paramiko's (read from its metadata: importing it costs
    ~0.2 s, and an installation whose paramiko is broken should still say which one it has)."""
    from logsleuth import __version__
    from logsleuth.sources.ssh.importing import installed_version

    paramiko = installed_version()
    return "\n".join(
        [
            f"logsleuth {__version__}",
            f"Python {platform.python_version()}",
            f"paramiko {paramiko}" if paramiko else "paramiko: not found",
        ]
    )


def _print_version(value: bool) -> None:
    if value:
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


@app.command("watch", short_help="Follow a launch until ready or crashed.", epilog=WATCH_EXIT_HELP)
def watch_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="The logs to follow: PATH, '-' or HOST:PATH (ssh); several (or 'node[01-04]:PATH') "
                       "are watched as one multi-node launch.", metavar="SOURCE", show_default=False),
    ] = None,
    output_format: Annotated[
        OutputFormat | None,
        typer.Option("--format", "-f", help=f"Format of the diagnosis if the launch fails: {FORMAT_HELP} "
                     "json prints one JSON line per event."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", help="Give up after SECONDS (exit 124); default: wait for ready or a crash.",
                     metavar="SECONDS"),
    ] = None,
    stall: Annotated[
        float | None,
        typer.Option("--stall", metavar="SECONDS", help="Exit 124 when no new stage or progress shows for SECONDS; "
                     "print the stuck stage, its last lines and the usual causes."),
    ] = None,
    settle: Annotated[
        float | None,
        typer.Option("--settle", metavar="SECONDS", help="After a crash, wait up to SECONDS (default 1) for ranks "
                     "that have not failed yet (a single-rank launch is reported at once)."),
    ] = None,
    then_follow: Annotated[
        bool,
        typer.Option("--then-follow", help="After ready, keep watching: report a runtime crash (exit 1), warn of a "
                     "struggling server."),
    ] = False,
    from_start: Annotated[bool, typer.Option("--from-start", help="Read the whole log, not only its last 1 MiB.")] = False,
    command: CommandOption = None,
    engine_version: EngineVersionOption = None,
    width: WidthOption = None,
    no_redact: NoRedactOption = False,
    # SSH: how a remote log is reached (docs/ssh.md).
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
    hosts_file: HostsFileOption = None,
) -> None:
    """Follow a log while the server launches: show the stages, exit 0 when it is ready,
    print the diagnosis as soon as it crashes."""
    from logsleuth.program import sources_or_stdin
    from logsleuth.watch import SETTLE_SECONDS
    from logsleuth.watch_output import run_watch

    if timeout is not None and not timeout > 0:  # `not >`: also NaN
        raise UsageError(f"--timeout: must be more than 0 seconds, not {timeout:g}")
    specs = sources_or_stdin(sources, hosts_file)
    options = DiagnoseOptions(
        command=command,
        engine_version=engine_version,
        ssh=ssh_options(ssh_config, accept_new_host_key, ssh_backend.value, timeout=timeout),
    )
    status = run_watch(
        specs, options, fmt=output_format or default_format(None), timeout=timeout, stall=stall,
        settle=SETTLE_SECONDS if settle is None else settle, then_follow=then_follow, from_start=from_start, width=output_width(width, sys.stdout.isatty()),
        color=not os.environ.get("NO_COLOR"), redact=not no_redact,
    )
    raise typer.Exit(status)


@app.command("launch", short_help="Start a server on a host and watch it.",
             epilog="Exit status: 0 the server is ready (or --dry-run), 1 it crashed or exited before ready (the "
             "diagnosis is printed), 2 usage error, 3 nothing could be started or the log could not be read, "
             "130 interrupted.")
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
    there, and watch the log until the server is ready or crashes (docs/launch.md).  The only command that
    writes to a remote host."""
    from logsleuth.launch import run_launch, terminal_confirm

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
             epilog="Exit status: 0, or 2 for a shell that is not supported.")
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


app.command("case", short_help="Write a case file to paste into any assistant.", epilog=CASE_EXIT_HELP)(case_command)
app.command("diff", short_help="Show what changed between a good launch and a bad one.",
            epilog=DIFF_EXIT_HELP)(diff_command)
app.command("health", short_help="Report a running server's health from its batch lines.",
            epilog=HEALTH_EXIT_HELP)(health_command)
app.command("merge", short_help="Merge many nodes' JSON reports into one fleet report.", epilog=MERGE_EXIT_HELP)(merge_command)
app.command("check", short_help="Check a command's or a suggested fix's flags for an SGLang version.",
            epilog=CHECK_EXIT_HELP)(check_command)
