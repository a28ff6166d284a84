"""`logsleuth case SOURCE…`: the case file of the latest failure (docs/case.md), and `--suggest-pattern`.

Registered in cli/app.py, after the option types it shares with diagnose:

    from logsleuth.cli.case import case_command  # noqa: E402 - reuses the option types defined above
    app.command("case", short_help="Write a case file to paste into any assistant.", epilog=CASE_EXIT_HELP)(case_command)
"""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from logsleuth.case.model import CASE_LIMIT
from logsleuth.cli.options import (
    AcceptNewHostKeyOption,
    AllFailuresOption,
    AnonymizeOption,
    CommandOption,
    EngineVersionOption,
    HostsFileOption,
    MaxBytesOption,
    NoUserPatternsOption,
    ParallelOption,
    PatternDirsOption,
    SSHBackendChoice,
    SSHBackendOption,
    SSHConfigOption,
)
from logsleuth.cli.program_io import print_stderr, sources_or_stdin, ssh_options
from logsleuth.errors import ExitStatus, LogsleuthError, UsageError
from logsleuth.sources.base import DEFAULT_MAX_BYTES
from logsleuth.sources.fanout import DEFAULT_PARALLEL

if TYPE_CHECKING:  # types only: the api and the case builder are imported when the command runs
    from logsleuth.case.model import LogWindow
    from logsleuth.models import Report
    from logsleuth.sources.options import SSHOptions

CASE_EXIT_HELP = (
    "Exit status: 0 no failure found, 1 failure found (its case file written), 2 usage error, 3 a source could "
    "not be read, 4 internal error, 130 interrupted."
)
MIN_CASE_CHARS = 4000  # below this the failure itself no longer fits


class CaseFormat(StrEnum):
    MARKDOWN = "markdown"
    JSON = "json"


def remote_window(report: Report, ssh: SSHOptions) -> LogWindow | None:
    """The window of the primary failure (of the log's end when there is none) read again from its remote log
    (one more connection); None when it cannot be, which the case then says."""
    from logsleuth.case.window import read_window
    from logsleuth.sources.open import is_remote, open_sources

    primary = report.primary
    if primary is not None:
        name = primary.sources[0] if primary.sources else None
    else:
        name = next((source.name for source in report.sources if source.error is None), None)
    if name is None or not is_remote(name):
        return None
    try:
        sources = open_sources(name, ssh)
    except LogsleuthError:
        return None
    try:
        origin = f"the log on {sources[0].host}" if sources and sources[0].host else "the log"
        if not sources:
            return None
        if primary is None:
            return read_window(sources[0], origin)
        return read_window(sources[0], origin, offset=primary.failure.offset, end=primary.failure.end_offset)
    finally:
        for source in sources:
            source.close()


def _case_text(report: Report, fmt: CaseFormat, limit: int, window: LogWindow | None, anonymize: bool) -> str:
    from logsleuth.case import case_json_text, case_markdown

    if fmt is CaseFormat.JSON:
        return case_json_text(report, limit=limit, window=window, anonymize=anonymize)
    return case_markdown(report, limit=limit, window=window, anonymize=anonymize)


def _suggest(report: Report, fix: str | None, out: Path | None, category: str | None, window: LogWindow | None) -> None:
    from logsleuth.case.suggest import suggest_pattern

    if not fix:
        raise UsageError('--suggest-pattern: give the fix you confirmed with --confirmed-fix "FLAGS…"')
    if out is None:
        raise UsageError("--suggest-pattern: name a directory for the draft with --out DIR")
    draft, written = suggest_pattern(report, fix, out, category=category, window=window)
    print(f"Drafted pattern {draft.pattern_id}: it loads, matches its positive fixture and not its negative one.")
    for path in written:
        print(f"  wrote {path}")
    print(f"Try it: logsleuth diagnose LOG --patterns {out}")


def case_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(help="Logs to read, as for diagnose: PATH, '-' for stdin, HOST:PATH (ssh), 'node[01-16]:PATH'. "
                       "With none, a log piped to stdin is read.", metavar="SOURCE", show_default=False),
    ] = None,
    output_format: Annotated[CaseFormat, typer.Option("--format", "-f", help="markdown (default) or json.")] = CaseFormat.MARKDOWN,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the case file to FILE.", metavar="FILE")] = None,
    max_chars: Annotated[
        int, typer.Option("--max-chars", min=MIN_CASE_CHARS, help="Length limit of the case file, in characters.", metavar="N")
    ] = CASE_LIMIT,
    all_failures: AllFailuresOption = False,
    command: CommandOption = None,
    engine_version: EngineVersionOption = None,
    patterns: PatternDirsOption = None,
    no_user_patterns: NoUserPatternsOption = False,
    max_bytes: MaxBytesOption = f"{DEFAULT_MAX_BYTES >> 20}M",
    anonymize: AnonymizeOption = False,
    suggest_pattern: Annotated[
        bool, typer.Option("--suggest-pattern", help="Instead of the case file, draft a pattern (TOML and fixtures) "
                           "from it and the fix you confirmed.")
    ] = False,
    confirmed_fix: Annotated[
        str | None, typer.Option("--confirmed-fix", help="The fix that worked, as flags: \"--x 3 remove --y\" "
                                 "(with --suggest-pattern).", metavar="FLAGS")
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Directory for the drafted pattern (never overwritten).", metavar="DIR")] = None,
    category: Annotated[str | None, typer.Option("--category", help="The draft's category (default: guessed).", metavar="NAME")] = None,
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
    hosts_file: HostsFileOption = None,
    parallel: ParallelOption = DEFAULT_PARALLEL,
) -> None:
    """Write the case file of the latest failure: the log's own lines (the whole log when small, else the failure
    as the log printed it, every error-looking line and the last lines), the engine and its version, the launch
    command, the GPU facts, then logsleuth's reading and the catalog rows of the flags it touches; redacted and at
    most 20,000 characters, to paste into any assistant."""
    if (confirmed_fix or out or category) and not suggest_pattern:
        raise UsageError("--confirmed-fix, --out and --category go with --suggest-pattern")
    if parallel < 1:
        raise UsageError(f"--parallel: must be at least 1, not {parallel}")
    from logsleuth.api import DiagnoseOptions, diagnose
    from logsleuth.cli.program import exit_status_for, parse_size
    from logsleuth.cli.program_io import STDIN_NAME, renamed_source, spooled_stdin

    ssh = ssh_options(ssh_config, accept_new_host_key, ssh_backend.value)
    options = DiagnoseOptions(
        all_failures=all_failures, command=command, engine_version=engine_version,
        pattern_dirs=tuple(str(p) for p in patterns or ()), include_user_patterns=not no_user_patterns,
        max_bytes=parse_size(max_bytes), parallel=parallel, ssh=ssh,
    )
    with spooled_stdin(sources_or_stdin(sources, hosts_file)) as (specs, spool):
        report = diagnose(specs, options)
        window = None
        if spool is not None:
            from logsleuth.case.window import local_window

            window = local_window(report, report.primary)
            report = renamed_source(report, spool, STDIN_NAME)
    window = window or remote_window(report, ssh)
    for source in report.sources:
        if source.error:
            print_stderr(source.error)
    status = exit_status_for(report)
    if status is ExitStatus.SOURCE_ERROR:  # nothing was read: no case to write
        raise typer.Exit(int(status))
    if suggest_pattern:
        if report.primary is None:
            print_stderr("no failure in the log: no pattern drafted")
        else:
            _suggest(report, confirmed_fix, out, category, window)
        raise typer.Exit(int(status))
    text = _case_text(report, output_format, max_chars, window, anonymize)
    if output is not None:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as exc:
            raise LogsleuthError(f"cannot write {output}: {exc.strerror or exc}") from None
    else:
        from logsleuth.cli.program import write_report
        from logsleuth.render.options import OutputFormat

        write_report(text, OutputFormat.JSON if output_format is CaseFormat.JSON else OutputFormat.MARKDOWN)
    raise typer.Exit(int(status))
