"""`logsleuth health SOURCE…`: registered by cli.py as `app.command("health")(health_command)` (docs/health.md)."""

from __future__ import annotations

import sys
from typing import Annotated

import typer

from logsleuth.cli_options import (
    AcceptNewHostKeyOption,
    CommandOption,
    EngineVersionOption,
    FormatOption,
    HostsFileOption,
    MaxCharsOption,
    NoRedactOption,
    NoUserPatternsOption,
    OutputFileOption,
    ParallelOption,
    PatternDirsOption,
    SSHBackendChoice,
    SSHBackendOption,
    SSHConfigOption,
    WidthOption,
)
from logsleuth.errors import LogsleuthError
from logsleuth.sources.fanout import DEFAULT_PARALLEL

HEALTH_EXIT_HELP = (
    "Exit status: 0 healthy (batch lines read, no finding), 1 at least one finding, 2 usage error, 3 no log "
    "could be read, or none has a Prefill/Decode batch line to judge, 130 interrupted."
)


def health_command(
    sources: Annotated[
        list[str] | None,
        typer.Argument(
            help="Logs to read, as for diagnose: PATH, '-', HOST:PATH, 'node[01-16]:PATH', docker:C, journal:UNIT, "
            "k8s:NS/POD. With none, a log piped to stdin is read.",
            metavar="SOURCE",
            show_default=False,
        ),
    ] = None,
    output_format: FormatOption = None,
    output: OutputFileOption = None,
    width: WidthOption = None,
    command: CommandOption = None,
    engine_version: EngineVersionOption = None,
    patterns: PatternDirsOption = None,
    no_user_patterns: NoUserPatternsOption = False,
    max_chars: MaxCharsOption = 3500,
    no_redact: NoRedactOption = False,
    ssh_config: SSHConfigOption = None,
    accept_new_host_key: AcceptNewHostKeyOption = False,
    ssh_backend: SSHBackendOption = SSHBackendChoice.AUTO,
    hosts_file: HostsFileOption = None,
    parallel: ParallelOption = DEFAULT_PARALLEL,
    host: Annotated[str | None, typer.Option("--host", help="Name this machine in the JSON report (default: its host name); `logsleuth merge` names its logs after it.", metavar="NAME")] = None,
) -> None:
    """Report the health of a running or finished server from its steady-state lines: speculative accept
    length near 1, KV cache retraction storms, a growing queue, a throughput collapse, CUDA graphs off, weights
    not loaded, dtype or quantization fallbacks.  Each finding comes with its evidence lines, likely causes and
    fixes, and the run's throughput, accept length and queue as sparklines.  A large log is sampled."""
    from logsleuth.health_program import run_health

    try:
        status = run_health(
            sources, output_format, output, width=width, command=command, engine_version=engine_version,
            patterns=patterns, no_user_patterns=no_user_patterns, max_chars=max_chars, no_redact=no_redact,
            ssh_config=ssh_config, accept_new_host_key=accept_new_host_key, ssh_backend=ssh_backend.value,
            hosts_file=hosts_file, parallel=parallel, host=host,
        )
    except LogsleuthError as error:
        print(f"logsleuth health: {error}", file=sys.stderr)
        raise typer.Exit(int(error.exit_status)) from None
    raise typer.Exit(int(status))
