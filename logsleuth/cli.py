"""The command line: parse, build frozen options, call `logsleuth.api`, render, exit.

Exit statuses (also in the README and `--help`):
  0 no failure found · 1 failure found · 2 usage error · 3 a source could not be read ·
  4 internal error (a logsleuth bug; reported in one line, never a traceback) · 130 interrupted
"""

from __future__ import annotations

import codecs
import contextlib
import os
import platform
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.ingest.reader import DEFAULT_MAX_BYTES
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.json_report import report_status
from logsleuth.render.options import MIN_MAX_CHARS, MIN_WIDTH, OutputFormat, RenderOptions
from logsleuth.render.safety import strip_controls
from logsleuth.sources.base import Progress
from logsleuth.sources.options import SSHOptions

if TYPE_CHECKING:
    from rich.text import Text

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


def parse_size(text: str) -> int:
    """`256M`, `1G`, `500000` -> bytes (at least one)."""
    units = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}
    raw = text.strip().lower().removesuffix("b").removesuffix("i")
    try:
        size = int(float(raw[:-1]) * units[raw[-1]]) if raw and raw[-1] in units else int(raw)
    except (ValueError, OverflowError):  # OverflowError: `infk`
        raise UsageError(f"--max-bytes: not a size: {text!r} (use e.g. 256M or 1G)") from None
    if size <= 0:
        raise UsageError(f"--max-bytes: must be more than 0 bytes, not {text!r}")
    return size


def terminal_text(message: str) -> str:
    """A message for the terminal, made inert like report text: secrets redacted (always: stderr ends up in
    CI logs, whatever --no-redact says of the report), escape sequences and control characters removed."""
    from logsleuth.redact import redact_secrets

    return strip_controls(redact_secrets(message))


def print_stderr(message: str) -> None:
    """The one way logsleuth prints an error, a warning or a watch line: `logsleuth: ` and one clean line."""
    print(f"logsleuth: {terminal_text(message).replace(chr(10), ' ')}", file=sys.stderr, flush=True)


def write_report(text: str, fmt: OutputFormat) -> None:
    """JSON is UTF-8 by definition (RFC 8259), so it is written as UTF-8 whatever the locale says.  The
    other formats follow the stream's encoding; what it cannot encode (`›` on an ASCII terminal) is
    written as a backslash escape rather than failing the run or printing mojibake."""
    stream = sys.stdout
    encoding = getattr(stream, "encoding", None) or "utf-8"
    buffer = getattr(stream, "buffer", None)
    if fmt is OutputFormat.JSON and buffer is not None and codecs.lookup(encoding).name != "utf-8":
        stream.flush()
        buffer.write(text.encode("utf-8"))
        buffer.flush()
        return
    if buffer is not None:
        text = text.encode(encoding, "backslashreplace").decode(encoding)
    stream.write(text)
    stream.flush()


@contextlib.contextmanager
def _progress_status(enabled: bool) -> Iterator[Progress | None]:
    """A rich status line on a TTY ("connecting to gpu7…", bytes read); nothing otherwise."""
    if not enabled:
        yield None
        return
    from rich.console import Console

    status = Console(stderr=True).status("reading…")
    status.start()
    try:
        yield lambda message: status.update(_status_text(message))
    finally:
        status.stop()


def _status_text(message: str) -> Text:
    """A rich status line from untrusted text: a `Text`, which rich never reads as markup."""
    from rich.text import Text

    return Text(terminal_text(message).replace("\n", " "))


# Where a report's status (the JSON's `status`) sends the exit status: one decision, two spellings.
STATUS_EXIT = {
    "failure": ExitStatus.FAILURE_FOUND,
    "no-failure": ExitStatus.NO_FAILURE,
    "unreadable": ExitStatus.SOURCE_ERROR,
}


def exit_status_for(report: Report) -> ExitStatus:
    return STATUS_EXIT[report_status(report)]


# `-o FILE` without --format: the format its extension names (anything else is plain text).
EXTENSION_FORMATS = {
    ".json": OutputFormat.JSON,
    ".md": OutputFormat.MARKDOWN,
    ".markdown": OutputFormat.MARKDOWN,
    ".slack": OutputFormat.SLACK,
    ".txt": OutputFormat.TEXT,
    ".text": OutputFormat.TEXT,
    ".log": OutputFormat.TEXT,
}


def default_format(output: Path | None) -> OutputFormat:
    """--format when it is not given: the output file's extension, else rich on a terminal, else text."""
    if output is not None:
        return EXTENSION_FORMATS.get(output.suffix.lower(), OutputFormat.TEXT)
    return OutputFormat.RICH if sys.stdout.isatty() else OutputFormat.TEXT


FALLBACK_WIDTH = 80  # a pipe or a file: what rich, man and git assume


def output_width(explicit: int | None, to_terminal: bool) -> int:
    """--width, else $COLUMNS (as rich reads it), else the terminal's width when the report goes to one,
    else 80 columns."""
    if explicit is not None:
        return explicit
    columns = os.environ.get("COLUMNS", "")
    if columns.isdigit() and int(columns) > 0:
        return max(MIN_WIDTH, int(columns))
    if to_terminal:
        with contextlib.suppress(OSError, ValueError):
            return max(MIN_WIDTH, os.get_terminal_size(sys.stdout.fileno()).columns)
    return FALLBACK_WIDTH


def sources_or_stdin(sources: list[str] | None) -> list[str]:
    """The sources given, or stdin when none is and a log is piped in (`cat server.log | logsleuth diagnose`)."""
    if sources:
        return sources
    if sys.stdin is not None and not sys.stdin.isatty():
        return ["-"]
    raise UsageError("no log given: name a file or HOST:PATH, or pipe one in (cat server.log | logsleuth diagnose)")


def _redact(report: Report, redact: bool, anonymize: bool) -> Report:
    if not redact and not anonymize:
        return report
    from logsleuth.redact import redact_report

    return redact_report(report, secrets=redact, anonymize=anonymize)


def _write_output(output: Path, text: str) -> None:
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise LogsleuthError(f"cannot write {output}: {exc.strerror or exc}") from None


def _slack_webhook_url(url: str | None, post: bool) -> str | None:
    """Where to post the Slack report: --slack-webhook URL, or with --post-to-slack the URL in
    $LOGSLEUTH_SLACK_WEBHOOK (which keeps the URL, a secret, out of shell history and `ps`).  The variable
    alone never posts: a report leaves the machine only when the command line asks for it."""
    if url:
        return url
    if not post:
        return None
    from_env = os.environ.get(SLACK_WEBHOOK_ENV, "").strip()
    if not from_env:
        raise UsageError(f"--post-to-slack: set {SLACK_WEBHOOK_ENV} to the incoming-webhook URL, or give --slack-webhook URL")
    return from_env


SLACK_WEBHOOK_ENV = "LOGSLEUTH_SLACK_WEBHOOK"
FORMAT_HELP = "rich (default on a terminal), text (default otherwise), markdown, slack or json."

# Options that diagnose and watch share, declared once.
CommandOption = Annotated[
    str | None, typer.Option("--cmd", help="The launch command, to print it corrected.", metavar="COMMAND")
]
EngineVersionOption = Annotated[
    str | None,
    typer.Option("--engine-version", help="The SGLang version, when the log does not name it.", metavar="VERSION"),
]
WidthOption = Annotated[
    int | None,
    typer.Option("--width", min=MIN_WIDTH, help="Wrap rich and text reports at N columns (default: the "
                 "terminal's width, $COLUMNS, or 80).", metavar="N"),
]
NoRedactOption = Annotated[
    bool, typer.Option("--no-redact", help="Show secrets (API keys, tokens) as they are in the log.")
]
# SSH: how remote sources are reached (docs/ssh.md).
SSHConfigOption = Annotated[
    Path | None, typer.Option("--ssh-config", "-F", help="ssh config file (default ~/.ssh/config).", metavar="FILE")
]
AcceptNewHostKeyOption = Annotated[
    bool, typer.Option("--accept-new-host-key", help="Trust and remember an unknown host key (like accept-new).")
]


class SSHBackendChoice(StrEnum):  # the values of sources.options.SSH_BACKENDS (a test keeps them the same)
    AUTO = "auto"
    PARAMIKO = "paramiko"
    OPENSSH = "openssh"


SSHBackendOption = Annotated[
    SSHBackendChoice,
    typer.Option(
        "--ssh-backend",
        help="How to reach remote hosts: auto (OpenSSH's ssh when the host's config needs it: host certificates, "
        "ControlMaster, FIDO keys, Match exec; else paramiko), paramiko, openssh.",
    ),
]


@app.command("diagnose", short_help="Diagnose the latest failure in logs.", epilog=EXIT_CODES_HELP)
def diagnose_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            help="Logs to read: PATH, '-' for stdin, HOST:PATH or user@host:path (ssh). "
            "With none, a log piped to stdin is read.",
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
) -> None:
    """Diagnose the latest failure in one or more logs."""
    options = DiagnoseOptions(
        all_failures=all_failures,
        command=command,
        engine_version=engine_version,
        pattern_dirs=tuple(str(p) for p in patterns or ()),
        include_user_patterns=not no_user_patterns,
        max_bytes=parse_size(max_bytes),
        ssh=SSHOptions(
            config_file=str(ssh_config) if ssh_config else None,
            accept_new_host_key=accept_new_host_key,
            backend=ssh_backend.value,
            all_files=all_files,
            notice=print_stderr,  # "Permanently added … to the list of known hosts", as OpenSSH prints it
        ),
    )
    if max_chars < MIN_MAX_CHARS:
        raise UsageError(
            f"--max-chars: must be at least {MIN_MAX_CHARS} (a shorter Slack report cannot hold the verdict), "
            f"not {max_chars}"
        )
    webhook = _slack_webhook_url(slack_webhook, post_to_slack)
    specs = sources_or_stdin(sources)
    fmt = output_format or default_format(output)
    to_terminal = output is None and sys.stdout.isatty()
    color = fmt is OutputFormat.RICH and output is None and not os.environ.get("NO_COLOR")
    render_options = RenderOptions(
        format=fmt, width=output_width(width, to_terminal), color=color, max_chars=max_chars
    )
    with _progress_status(enabled=sys.stderr.isatty() and fmt is not OutputFormat.JSON) as progress:
        options = replace(options, ssh=replace(options.ssh, progress=progress))
        report = diagnose(specs, options)
    report = _redact(report, redact=not no_redact, anonymize=anonymize)
    text = render(report, render_options)
    # stderr carries each error and warning once; stdout (or --output) carries the report.
    for source in report.sources:
        if source.error:
            print_stderr(source.error)
    for warning in report.warnings:
        print_stderr(f"warning: {warning}")
    if output is not None:
        _write_output(output, text)
    else:
        write_report(text, fmt)
    if webhook:
        from logsleuth.render.slack import render_slack_for_api
        from logsleuth.slack_webhook import post_to_slack as post

        post(webhook, render_slack_for_api(report, replace(render_options, format=OutputFormat.SLACK)))
        print_stderr("posted the report to Slack")
    raise typer.Exit(int(exit_status_for(report)))


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


@app.command("watch", short_help="Follow a launch until ready or crashed.", epilog="Exit status: 0 the server is ready, 1 it failed (the diagnosis is printed), "
             "2 usage error, 3 the log could not be read or --timeout passed, 130 interrupted.")
def watch_command(
    source: Annotated[
        str, typer.Argument(help="The log to follow: PATH or HOST:PATH (ssh).", metavar="SOURCE", show_default=False)
    ],
    output_format: Annotated[
        OutputFormat | None,
        typer.Option("--format", "-f", help=f"Format of the diagnosis if the launch fails: {FORMAT_HELP}"),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option("--timeout", help="Give up after SECONDS (exit 3); default: wait for ready or a crash.",
                     metavar="SECONDS"),
    ] = None,
    command: CommandOption = None,
    engine_version: EngineVersionOption = None,
    width: WidthOption = None,
    no_redact: NoRedactOption = False,
    # SSH: how a remote log is reached (docs/ssh.md).
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
) -> None:
    """Follow a log while the server launches: show the stage, exit 0 when it is ready,
    print the diagnosis as soon as it crashes."""
    from logsleuth.watch import watch_spec

    if timeout is not None and not timeout > 0:  # `not >`: also NaN
        raise UsageError(f"--timeout: must be more than 0 seconds, not {timeout:g}")
    options = DiagnoseOptions(
        command=command,
        engine_version=engine_version,
        ssh=SSHOptions(
            config_file=str(ssh_config) if ssh_config else None,
            accept_new_host_key=accept_new_host_key,
            backend=ssh_backend.value,
            notice=print_stderr,
            # --timeout bounds the whole watch, connecting included (three connect attempts must not outlast it).
            deadline=time.monotonic() + timeout if timeout is not None else None,
        ),
    )
    fmt = output_format or default_format(None)
    render_options = RenderOptions(
        format=fmt,
        width=output_width(width, sys.stdout.isatty()),
        color=fmt is OutputFormat.RICH and not os.environ.get("NO_COLOR"),
    )
    interactive = sys.stderr.isatty()
    status = None
    if interactive:
        from rich.console import Console

        status = Console(stderr=True).status(_status_text(f"watching {source}…"))
        status.start()
    try:
        for event in watch_spec(source, options, timeout=timeout):
            if event.kind in ("stage", "restarted"):
                message = event.stage.label if event.stage else (event.text or "")
                if status is not None:
                    status.update(_status_text(f"{source}: {message}"))
                else:
                    print_stderr(f"{source}: {message}")
            elif event.kind == "ready":
                if status is not None:
                    status.stop()
                write_report(f"{terminal_text(source)}: the server is ready\n", fmt)
                raise typer.Exit(int(ExitStatus.NO_FAILURE))
            elif event.kind == "failure" and event.report is not None:
                if status is not None:
                    status.stop()
                report = _redact(event.report, redact=not no_redact, anonymize=False)
                write_report(render(report, render_options), fmt)
                raise typer.Exit(int(ExitStatus.FAILURE_FOUND))
    finally:
        if status is not None:
            status.stop()


SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_LOGSLEUTH_COMPLETE"


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
