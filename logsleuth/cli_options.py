"""The command-line options that several commands share (diagnose, watch, launch, case), declared once."""

from __future__ import annotations

from enum import StrEnum
from pathlib import Path
from typing import Annotated

import typer

from logsleuth.render.options import MIN_WIDTH, OutputFormat

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


HostsFileOption = Annotated[
    str | None,
    typer.Option("--hosts-file", help="Read sources from FILE, one per line (# comments): HOST:PATH, or a bare "
                 "HOST that fills each {host} SOURCE. '-' reads it from stdin.", metavar="FILE"),
]
ParallelOption = Annotated[
    int, typer.Option("--parallel", min=1, help="Read at most N sources at once.", metavar="N")
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


# The report options of the commands that print a report of logs (diagnose, health).
FormatOption = Annotated[
    OutputFormat | None,
    typer.Option("--format", "-f", help=f"Report format: {FORMAT_HELP} With -o, the file's extension decides."),
]
OutputFileOption = Annotated[
    Path | None,
    typer.Option("--output", "-o", help="Write the report to FILE (.json, .md, .slack, .txt pick the format).",
                 metavar="FILE"),
]
PatternDirsOption = Annotated[
    list[Path] | None, typer.Option("--patterns", help="Also read patterns from DIR (repeatable).", metavar="DIR")
]
NoUserPatternsOption = Annotated[bool, typer.Option("--no-user-patterns", help="Ignore ~/.config/logsleuth/patterns.")]
MaxCharsOption = Annotated[
    int, typer.Option("--max-chars", help="Length limit of the Slack report, in characters.", metavar="N")
]
