"""`logsleuth --version`: ours, Python's and paramiko's.  __main__ answers `logsleuth --version` from here before
typer or the rest of logsleuth is imported (a version check should cost what `python -c pass` costs, near enough);
typer's eager `--version` option prints the same text."""

from __future__ import annotations

import platform

from logsleuth import __version__
from logsleuth.sources.ssh.dist_info import installed_version


def version_text() -> str:
    paramiko = installed_version()
    return "\n".join(
        [
            f"logsleuth {__version__}",
            f"Python {platform.python_version()}",
            f"paramiko {paramiko}" if paramiko else "paramiko: not found",
        ]
    )
