"""The `diagnose` program without its parser: from parsed arguments to an exit status (as httpie's
`core.program`).  cli/app.py parses with typer; cli/quick.py parses a plain command line without importing typer
(its ~40-80 ms were a sixth of a remote diagnose's CPU).  Neither this module nor what it imports at the top
imports typer or rich.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.cli.program_io import (  # noqa: F401 - also known by these names here (cli/app.py re-exports them)
    EXTENSION_FORMATS,
    FALLBACK_WIDTH,
    STDIN_NAME,
    default_format,
    deliver,
    output_height,
    output_width,
    print_stderr,
    renamed_source,
    sources_or_stdin,
    spooled_stdin,
    ssh_options,
    terminal_text,
    write_output,
    write_report,
)
from logsleuth.errors import ExitStatus, UsageError
from logsleuth.models import Report
from logsleuth.render import render
from logsleuth.render.json_report import report_status
from logsleuth.render.options import MIN_MAX_CHARS, OutputFormat, RenderOptions
from logsleuth.sources.base import Progress
from logsleuth.sources.fanout import DEFAULT_PARALLEL
from logsleuth.sources.options import SSHBackend

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


def redacted(report: Report, redact: bool, anonymize: bool) -> Report:
    """The report with its secrets (`redact`) and identities (`anonymize`) replaced, as the options ask."""
    if not redact and not anonymize:
        return report
    from logsleuth.redact import redact_report

    return redact_report(report, secrets=redact, anonymize=anonymize)


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


def _with_verified_fix(text: str, fmt: OutputFormat, report: Report, suggestion: str) -> tuple[str, bool]:
    """`--verify-fix`'s check of a suggested fix (docs/check.md), for the log's engine version and applied to its
    launch command, then the report: the verdict comes first.  In JSON, the check is the report's `verify_fix` key.
    Also whether the suggestion passed (the exit status)."""
    import json

    from logsleuth.check.render import RENDERERS
    from logsleuth.check.verify import verify_fix
    from logsleuth.redact import redact_secrets

    checked = verify_fix(suggestion, report.launch.engine_version, command=report.launch.command)
    if fmt is OutputFormat.JSON:
        data = json.loads(text)
        data["verify_fix"] = json.loads(redact_secrets(RENDERERS["json"](checked)))
        return json.dumps(data, indent=2) + "\n", checked.passed  # ASCII: no raw control or bidi character
    rendered = RENDERERS["markdown" if fmt is OutputFormat.MARKDOWN else "text"](checked)
    return redact_secrets(rendered).rstrip("\n") + "\n\n" + text, checked.passed


def _explain_settings(explain: bool, llm_url: str | None, llm_model: str | None) -> ExplainSettings | None:
    """--explain's settings; None without --explain (then nothing is sent anywhere).  An endpoint that cannot be
    resolved is one stderr line, and the report goes on without an explanation (docs/explain.md)."""
    if not (explain or llm_url or llm_model):
        return None  # the common case: the explain package is not even imported
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
    from logsleuth.explain import EXPLAIN_CASE_LIMIT, ExplainError, explain_report

    build_case = partial(case_markdown, window=window, limit=EXPLAIN_CASE_LIMIT)
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
    host: str | None = None,
    diagnose_specs: DiagnoseSpecs = diagnose,
    render_report: RenderReport = render,
) -> ExitStatus:
    """`logsleuth diagnose` with its arguments parsed (named as cli.diagnose_command names them), up to the exit
    status.  `diagnose_specs` and `render_report`: api.diagnose and render.render, or the caller's stand-ins
    (cli/app.py passes its own names, which the tests replace)."""
    options = DiagnoseOptions(
        all_failures=all_failures,
        command=command,
        engine_version=engine_version,
        pattern_dirs=tuple(str(p) for p in patterns or ()),
        include_user_patterns=not no_user_patterns,
        max_bytes=parse_size(max_bytes),
        parallel=parallel,
        ssh=ssh_options(ssh_config, accept_new_host_key, ssh_backend, all_files=all_files),
        host=host,
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
    specs: list[str] = list(sources_or_stdin(sources, hosts_file))
    fmt = output_format or default_format(output)
    to_terminal = output is None and sys.stdout.isatty()
    color = fmt is OutputFormat.RICH and output is None and not os.environ.get("NO_COLOR")
    render_options = RenderOptions(
        format=fmt, width=output_width(width, to_terminal), color=color, max_chars=max_chars,
        height=output_height(to_terminal),
    )
    # With --explain, stdin is spooled to a file: the case file it sends needs the lines around the failure
    # again, and a pipe is read once.
    spooling = spooled_stdin(specs) if explaining is not None else contextlib.nullcontext((specs, None))
    with spooling as (specs, spool), _progress_status(enabled=sys.stderr.isatty() and fmt is not OutputFormat.JSON) as progress:
        if progress is not None and len(specs) > 1:  # a fleet: one line counting the hosts in each state
            fleet = FleetProgress(specs, progress)
            report = diagnose(specs, options, on_source=fleet.update)
        else:
            options = replace(options, ssh=replace(options.ssh, progress=progress))
            report = diagnose_specs(specs, options)
        window = _case_window(report) if explaining is not None else None  # read before names are anonymized
        if spool is not None:
            report = renamed_source(report, spool, STDIN_NAME)
    report = redacted(report, redact=not no_redact, anonymize=anonymize)
    if explaining is not None:
        report = _explained(report, explaining, window)
    text = render_report(report, render_options)
    fix_passed = None
    if verify_fix is not None:
        text, fix_passed = _with_verified_fix(text, fmt, report, verify_fix)
    deliver(text, fmt, output, [source.error for source in report.sources if source.error], report.warnings)
    status = _verified_fix_status(exit_status_for(report), fix_passed)
    if webhook and not _posted(webhook, report, render_options):
        # The report was delivered: a failure found stays 1; otherwise the post that did not happen is the news (3).
        return status if status is ExitStatus.FAILURE_FOUND else ExitStatus.SOURCE_ERROR
    return status


def _posted(webhook: str, report: Report, render_options: RenderOptions) -> bool:
    """The Slack report posted (`--slack-webhook`); a post that failed is one stderr line."""
    from logsleuth.cli.slack_webhook import post_to_slack as post
    from logsleuth.errors import LogsleuthError
    from logsleuth.render.slack import render_slack_for_api

    try:
        post(webhook, render_slack_for_api(report, replace(render_options, format=OutputFormat.SLACK)))
    except LogsleuthError as error:
        print_stderr(str(error))
        return False
    print_stderr("posted the report to Slack")
    return True


def _verified_fix_status(status: ExitStatus, fix_passed: bool | None) -> ExitStatus:
    """With --verify-fix, the status is the suggestion's: 0 it passes, 1 it fails (a log that could not be read
    stays 3)."""
    if fix_passed is None or status not in (ExitStatus.NO_FAILURE, ExitStatus.FAILURE_FOUND):
        return status
    return ExitStatus.NO_FAILURE if fix_passed else ExitStatus.FAILURE_FOUND
