"""`logsleuth diagnose` in a child process, as a user runs it against the test sshd."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.helpers import default_sigint


def run_diagnose(
    config: Path | None, *args: str, helper: bool | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`logsleuth diagnose ARGS --ssh-config CONFIG --format json`.  No ssh-agent: the test sshd takes only
    the key the config names.  `helper` turns the SSH helper process on or off (None: as the environment
    says).  HOME and XDG come from the autouse fixture in conftest.py."""
    environment = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
    if helper is not None:
        environment["LOGSLEUTH_SSH_WORKER"] = "1" if helper else "0"
    command = [sys.executable, "-m", "logsleuth", "diagnose", *args, "--format", "json"]
    if config is not None:
        command += ["--ssh-config", str(config)]
    return subprocess.run(
        command, capture_output=True, text=True, env=environment, timeout=timeout, preexec_fn=default_sigint
    )
