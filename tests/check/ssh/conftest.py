"""The real test sshd of tests/ssh (its `sshd` fixture and the client isolation), for `check HOST`."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_SSH_TESTS = Path(__file__).resolve().parents[2] / "ssh"
sys.path.insert(0, str(_SSH_TESTS))  # tests/ssh/conftest.py imports sshd_server from its own directory
_spec = importlib.util.spec_from_file_location("check_ssh_fixtures", _SSH_TESTS / "conftest.py")
assert _spec is not None and _spec.loader is not None
_fixtures = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_fixtures)

sshd = _fixtures.sshd
isolated_client_env = _fixtures.isolated_client_env
