"""`logsleuth health SOURCE…`: registered by cli/app.py as `app.command("health")(health_command)` (docs/health.md)."""

from __future__ import annotations

from typing import Annotated, Any

import typer

from logsleuth.cli.options import SSHBackendChoice, table_options
from logsleuth.errors import LogsleuthError

HEALTH_EXIT_HELP = (
    "Exit status: 0 healthy (batch lines read, no finding), 1 at least one finding, 2 usage error, 3 no log "
    "could be read, or none has a Prefill/Decode batch line to judge, 130 interrupted."
)


@table_options("health")
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
    **options: Any,
) -> None:
    """Report the health of a running or finished server from its steady-state lines: speculative accept
    length near 1, KV cache retraction storms, a growing queue, a throughput collapse, CUDA graphs off, weights
    not loaded, dtype or quantization fallbacks.  Each finding comes with its evidence lines, likely causes and
    fixes, and the run's throughput, accept length and queue as sparklines.  A large log is sampled."""
    from logsleuth.cli.health_program import run_health

    try:
        status = run_health(sources, **{**options, "ssh_backend": SSHBackendChoice(options["ssh_backend"]).value})
    except LogsleuthError as error:
        from logsleuth.cli.program_io import print_stderr

        print_stderr(str(error), "health")
        raise typer.Exit(int(error.exit_status)) from None
    raise typer.Exit(int(status))
