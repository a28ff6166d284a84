"""The `diagnose` program without its parser: from parsed arguments to an exit status (as httpie's
`core.program`).  cli.py parses with typer; cli_quick.py parses a plain command line without importing typer
(its ~40-80 ms were a sixth of a remote diagnose's CPU).  Neither this module nor what it imports at the top
imports typer or rich.
"""

from __future__ import annotations

import codecs
import contextlib
import os
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.json_report import report_status
from logsleuth.render.options import MIN_MAX_CHARS, MIN_WIDTH, OutputFormat, RenderOptions
from logsleuth.render.safety import strip_controls
from logsleuth.sources.base import Progress
from logsleuth.sources.fanout import DEFAULT_PARALLEL
from logsleuth.sources.options import SSHBackend, SSHOptions

if TYPE_CHECKING:
    from rich.text import Text

    from logsleuth.case.model import LogWindow
    from logsleuth.explain import ExplainSettings

DiagnoseSpecs = Callable[[Sequence[str], DiagnoseOptions], Report]
RenderReport = Callable[[Report, RenderOptions], str]


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
        yield lambda message: status.update(status_text(message))
    finally:
        status.stop()


class FleetProgress:
    """The status line of a fleet diagnose: "64 sources: 12 connecting · 8 reading · 40 done · 2 failed to
    read (gpu7: connection refused)".  Updated from the readers' threads, so under a lock."""

    _ORDER = ("connecting", "reading", "done", "error")

    def __init__(self, specs: Sequence[str], show: Progress) -> None:
        self._total = len(specs)
        self._show = show
        self._states: dict[str, str] = {}
        self._last_error = ""
        self._lock = threading.Lock()

    def update(self, name: str, state: str, detail: str | None) -> None:
        with self._lock:
            self._states[name] = state
            if state == "error" and detail:
                self._last_error = detail
            self._show(self.line())

    def line(self) -> str:
        counts = Counter(self._states.values())
        parts = [f"{counts[state]} {'failed to read' if state == 'error' else state}" for state in self._ORDER if counts[state]]
        waiting = self._total - len(self._states)
        if waiting > 0:
            parts.insert(0, f"{waiting} waiting")
        tail = f" ({self._last_error})" if counts["error"] and self._last_error else ""
        return f"{self._total} sources: " + " · ".join(parts) + tail


def ssh_options(
    config: Path | None,
    accept_new_host_key: bool,
    backend: SSHBackend,
    *,
    all_files: bool = False,
    timeout: float | None = None,
) -> SSHOptions:
    """How diagnose, watch and launch reach a host, from their shared command-line options.  `timeout` bounds
    the whole command, connecting included (three connect attempts must not outlast it)."""
    return SSHOptions(
        config_file=str(config) if config else None,
        accept_new_host_key=accept_new_host_key,
        backend=backend,
        all_files=all_files,
        notice=print_stderr,  # "Permanently added … to the list of known hosts", as OpenSSH prints it
        deadline=time.monotonic() + timeout if timeout is not None else None,
    )


def status_text(message: str) -> Text:
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


def sources_or_stdin(sources: list[str] | None, hosts_file: str | None = None) -> list[str]:
    """The sources given, their host ranges and `{host}` templates expanded (docs/fleet-syntax.md), or stdin
    when none is given and a log is piped in (`cat server.log | logsleuth diagnose`).  With a hosts file there
    is no stdin default: the file names the sources (and may itself be stdin)."""
    if sources or hosts_file is not None:
        from logsleuth.sources.fleet import expand_sources

        return expand_sources(sources or [], hosts_file)  # a hosts file that names none is its UsageError
    if sys.stdin is not None and not sys.stdin.isatty():
        return ["-"]
    raise UsageError("no log given: name a file or HOST:PATH, or pipe one in (cat server.log | logsleuth diagnose)")


def redacted(report: Report, redact: bool, anonymize: bool) -> Report:
    """The report with its secrets (`redact`) and identities (`anonymize`) replaced, as the options ask."""
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


def _with_verified_fix(text: str, fmt: OutputFormat, report: Report, suggestion: str) -> str:
    """The report followed by `--verify-fix`'s check of a suggested fix (docs/check.md), for the log's engine version
    and applied to its launch command; in JSON, the check is the report's `verify_fix` key."""
    import json

    from logsleuth.check.render import RENDERERS
    from logsleuth.check.verify import verify_fix
    from logsleuth.redact import redact_secrets

    checked = verify_fix(suggestion, report.launch.engine_version, command=report.launch.command)
    if fmt is OutputFormat.JSON:
        data = json.loads(text)
        data["verify_fix"] = json.loads(redact_secrets(RENDERERS["json"](checked)))
        return json.dumps(data, indent=2) + "\n"  # ASCII: no raw control or bidi character from either part
    rendered = RENDERERS["markdown" if fmt is OutputFormat.MARKDOWN else "text"](checked)
    return text.rstrip("\n") + "\n\n" + redact_secrets(rendered).rstrip("\n") + "\n"


def _explain_settings(explain: bool, llm_url: str | None, llm_model: str | None) -> ExplainSettings | None:
    """--explain's settings; None without --explain (then nothing is sent anywhere).  An endpoint that cannot be
    resolved is one stderr line, and the report goes on without an explanation (docs/explain.md)."""
    from logsleuth.explain import ExplainError, explain_options, resolve_settings

    options = explain_options(explain, llm_url, llm_model)  # --llm-url without --explain: UsageError
    if not options.enabled:
        return None
    from logsleuth.explain.config import config_file

    try:
        return resolve_settings(options, config_file=config_file())
    except ExplainError as error:
        print_stderr(str(error))
        return None


def _case_window(report: Report) -> LogWindow | None:
    """The lines before the primary failure, read again from its local file for the case file (none for stdin or a
    remote log: --explain opens no second connection)."""
    from logsleuth.case.window import local_window

    return local_window(report, report.primary) if report.primary is not None else None


def _explained(report: Report, settings: ExplainSettings, window: LogWindow | None) -> Report:
    """The report with the model's unverified explanation; unchanged (and one stderr line) when there is none."""
    from functools import partial

    from logsleuth.case import case_markdown
    from logsleuth.check.ops import check_flag_ops
    from logsleuth.explain import ExplainError, explain_report

    build_case = partial(case_markdown, window=window)
    try:
        return replace(report, explanation=explain_report(report, settings, build_case=build_case, check_flags=check_flag_ops))
    except ExplainError as error:
        print_stderr(str(error))
        return report


def run_diagnose(
    *,
    sources: list[str] | None,
    output_format: OutputFormat | None,
    output: Path | None,
    width: int | None,
    all_failures: bool,
    command: str | None,
    engine_version: str | None,
    patterns: list[Path] | None,
    no_user_patterns: bool,
    max_bytes: str,
    max_chars: int,
    no_redact: bool,
    anonymize: bool,
    slack_webhook: str | None,
    post_to_slack: bool,
    ssh_config: Path | None,
    accept_new_host_key: bool,
    ssh_backend: SSHBackend,
    all_files: bool,
    hosts_file: str | None = None,
    parallel: int = DEFAULT_PARALLEL,
    explain: bool = False,
    llm_url: str | None = None,
    llm_model: str | None = None,
    verify_fix: str | None = None,
    diagnose_specs: DiagnoseSpecs = diagnose,
    render_report: RenderReport = render,
) -> ExitStatus:
    """`logsleuth diagnose` with its arguments parsed (named as cli.diagnose_command names them), up to the exit
    status.  `diagnose_specs` and `render_report`: api.diagnose and render.render, or the caller's stand-ins
    (cli.py passes its own names, which the tests replace)."""
    options = DiagnoseOptions(
        all_failures=all_failures,
        command=command,
        engine_version=engine_version,
        pattern_dirs=tuple(str(p) for p in patterns or ()),
        include_user_patterns=not no_user_patterns,
        max_bytes=parse_size(max_bytes),
        parallel=parallel,
        ssh=ssh_options(ssh_config, accept_new_host_key, ssh_backend, all_files=all_files),
    )
    if max_chars < MIN_MAX_CHARS:
        raise UsageError(
            f"--max-chars: must be at least {MIN_MAX_CHARS} (a shorter Slack report cannot hold the verdict), "
            f"not {max_chars}"
        )
    webhook = _slack_webhook_url(slack_webhook, post_to_slack)
    if parallel < 1:
        raise UsageError(f"--parallel: must be at least 1, not {parallel}")
    explaining = _explain_settings(explain, llm_url, llm_model)  # before reading: a usage error reads nothing
    specs = sources_or_stdin(sources, hosts_file)
    fmt = output_format or default_format(output)
    to_terminal = output is None and sys.stdout.isatty()
    color = fmt is OutputFormat.RICH and output is None and not os.environ.get("NO_COLOR")
    render_options = RenderOptions(
        format=fmt, width=output_width(width, to_terminal), color=color, max_chars=max_chars
    )
    with _progress_status(enabled=sys.stderr.isatty() and fmt is not OutputFormat.JSON) as progress:
        if progress is not None and len(specs) > 1:  # a fleet: one line counting the hosts in each state
            fleet = FleetProgress(specs, progress)
            report = diagnose(specs, options, on_source=fleet.update)
        else:
            options = replace(options, ssh=replace(options.ssh, progress=progress))
            report = diagnose_specs(specs, options)
    window = _case_window(report) if explaining is not None else None  # read before names are anonymized
    report = redacted(report, redact=not no_redact, anonymize=anonymize)
    if explaining is not None:
        report = _explained(report, explaining, window)
    text = render_report(report, render_options)
    if verify_fix is not None:
        text = _with_verified_fix(text, fmt, report, verify_fix)
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
    return exit_status_for(report)
