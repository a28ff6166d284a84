"""The command line: parse, build frozen options, call `logsleuth.api`, render, exit.

Exit statuses (also in the README and `--help`):
  0 no failure found · 1 failure found · 2 usage error · 3 a source could not be read ·
  4 internal error (a logsleuth bug; reported in one line, never a traceback) · 130 interrupted
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.ingest.reader import DEFAULT_MAX_BYTES
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.options import MIN_MAX_CHARS, OutputFormat, RenderOptions
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
    add_completion=False,
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


def exit_status_for(report: Report) -> ExitStatus:
    if report.failures:
        return ExitStatus.FAILURE_FOUND
    if any(source.error for source in report.sources):
        return ExitStatus.SOURCE_ERROR
    return ExitStatus.NO_FAILURE


def _default_format(output: Path | None) -> OutputFormat:
    if output is None and sys.stdout.isatty():
        return OutputFormat.RICH
    return OutputFormat.TEXT


def _redact(report: Report, redact: bool, anonymize: bool) -> Report:
    if not redact and not anonymize:
        return report
    try:
        from logsleuth.redact import redact_report
    except ImportError:  # pragma: no cover - redaction ships with the reports module
        return report
    return redact_report(report, secrets=redact, anonymize=anonymize)


@app.command("diagnose", epilog=EXIT_CODES_HELP)
def diagnose_command(
    sources: Annotated[list[str], typer.Argument(help="Log sources: PATH, '-' for stdin, HOST:PATH, user@host:path.")],
    output_format: Annotated[
        OutputFormat | None, typer.Option("--format", "-f", help="rich (TTY default), text, markdown, slack, json.")
    ] = None,
    all_failures: Annotated[bool, typer.Option("--all", help="Every failure group in the file, not just the latest launch.")] = False,
    command: Annotated[str | None, typer.Option("--cmd", help="The launch command, to print it corrected.")] = None,
    engine_version: Annotated[str | None, typer.Option("--engine-version", help="SGLang version, if the log does not say.")] = None,
    patterns: Annotated[list[Path] | None, typer.Option("--patterns", help="Extra pattern directory (repeatable).")] = None,
    no_user_patterns: Annotated[bool, typer.Option("--no-user-patterns", help="Ignore ~/.config/logsleuth/patterns.")] = False,
    max_bytes: Annotated[str, typer.Option("--max-bytes", help="Read at most this much from the end of each log.")] = str(DEFAULT_MAX_BYTES),
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the report to this file.")] = None,
    width: Annotated[int, typer.Option("--width", help="Line width for rich/text output.")] = 100,
    max_chars: Annotated[int, typer.Option("--max-chars", help="Slack report length limit.")] = 3500,
    no_redact: Annotated[bool, typer.Option("--no-redact", help="Show secrets (API keys, tokens) as they are in the log.")] = False,
    anonymize: Annotated[bool, typer.Option("--anonymize", help="Also replace host names, IPs and user names.")] = False,
    ssh_config: Annotated[Path | None, typer.Option("--ssh-config", "-F", help="ssh config file (default ~/.ssh/config).")] = None,
    accept_new_host_key: Annotated[
        bool, typer.Option("--accept-new-host-key", help="Trust and remember an unknown host key (like accept-new).")
    ] = False,
    all_files: Annotated[bool, typer.Option("--all-files", help="A remote glob reads every match, not the newest.")] = False,
    slack_webhook: Annotated[
        str | None, typer.Option("--slack-webhook", help="Also post the Slack report to this incoming-webhook URL.")
    ] = None,
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
            all_files=all_files,
            notice=print_stderr,  # "Permanently added … to the list of known hosts", as OpenSSH prints it
        ),
    )
    if max_chars < MIN_MAX_CHARS:
        raise UsageError(
            f"--max-chars: must be at least {MIN_MAX_CHARS} (a shorter Slack report cannot hold the verdict), "
            f"not {max_chars}"
        )
    fmt = output_format or _default_format(output)
    color = fmt is OutputFormat.RICH and output is None and not os.environ.get("NO_COLOR")
    render_options = RenderOptions(format=fmt, width=width, color=color, max_chars=max_chars)
    with _progress_status(enabled=sys.stderr.isatty() and fmt is not OutputFormat.JSON) as progress:
        options = replace(options, ssh=replace(options.ssh, progress=progress))
        report = diagnose(sources, options)
    report = _redact(report, redact=not no_redact, anonymize=anonymize)
    text = render(report, render_options)
    # stderr carries each error and warning once; stdout (or --output) carries the report.
    for source in report.sources:
        if source.error:
            print_stderr(source.error)
    for warning in report.warnings:
        print_stderr(f"warning: {warning}")
    if output is not None:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise LogsleuthError(f"cannot write {output}: {exc.strerror or exc}") from None
    else:
        write_report(text, fmt)
    if slack_webhook:
        from logsleuth.render.slack import render_slack_for_api
        from logsleuth.slack_webhook import post_to_slack

        post_to_slack(slack_webhook, render_slack_for_api(report, replace(render_options, format=OutputFormat.SLACK)))
        print_stderr("posted the report to Slack")
    raise typer.Exit(int(exit_status_for(report)))


@app.callback()
def main_callback() -> None:
    """logsleuth: remote log forensics for LLM inference servers."""


@app.command("watch", epilog="Exit status: 0 the server is ready, 1 it failed (the diagnosis is printed), "
             "2 usage error, 3 the log could not be read or --timeout passed, 130 interrupted.")
def watch_command(
    source: Annotated[str, typer.Argument(help="The log to follow: PATH or HOST:PATH.")],
    output_format: Annotated[
        OutputFormat | None, typer.Option("--format", "-f", help="Format of the diagnosis if the launch fails.")
    ] = None,
    timeout: Annotated[float | None, typer.Option("--timeout", help="Give up after this many seconds.")] = None,
    command: Annotated[str | None, typer.Option("--cmd", help="The launch command, to print it corrected.")] = None,
    engine_version: Annotated[str | None, typer.Option("--engine-version")] = None,
    width: Annotated[int, typer.Option("--width")] = 100,
    no_redact: Annotated[bool, typer.Option("--no-redact")] = False,
    ssh_config: Annotated[Path | None, typer.Option("--ssh-config", "-F")] = None,
    accept_new_host_key: Annotated[bool, typer.Option("--accept-new-host-key")] = False,
) -> None:
    """Follow a log while the server launches: show the stage, exit 0 when it is ready,
    print the diagnosis as soon as it crashes."""
    from logsleuth.watch import watch_spec

    options = DiagnoseOptions(
        command=command,
        engine_version=engine_version,
        ssh=SSHOptions(
            config_file=str(ssh_config) if ssh_config else None,
            accept_new_host_key=accept_new_host_key,
            notice=print_stderr,
            # --timeout bounds the whole watch, connecting included (three connect attempts must not outlast it).
            deadline=time.monotonic() + timeout if timeout is not None else None,
        ),
    )
    fmt = output_format or _default_format(None)
    render_options = RenderOptions(format=fmt, width=width, color=fmt is OutputFormat.RICH and not os.environ.get("NO_COLOR"))
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
