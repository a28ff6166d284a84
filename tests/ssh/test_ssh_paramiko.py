"""Importing paramiko without invoke and importlib.metadata (sources/ssh/importing.py), in fresh processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PROBE = r"""
import json, sys
from logsleuth.sources.options import SSHOptions
config, system = sys.argv[1] or None, sys.argv[2] or None
from logsleuth.sources.ssh.importing import load_paramiko
load_paramiko(SSHOptions(config_file=config, system_config_file=system))
import paramiko, paramiko.config, paramiko.transport
state = {
    "version": paramiko.__version__,
    "client_id": paramiko.transport.Transport._CLIENT_ID,
    "metadata_loaded": "importlib.metadata" in sys.modules,
    "invoke_usable": paramiko.config.invoke is not None,
}
import importlib.metadata  # the real module, now that paramiko is in
state["real_version"] = importlib.metadata.version("paramiko")
state["metadata_is_real"] = hasattr(importlib.metadata, "distributions")
print(json.dumps(state))
"""


def probe(config: Path | None, system: Path | None = None) -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", PROBE, str(config or ""), str(system or "")], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


def test_paramiko_gets_its_true_version_without_importlib_metadata(tmp_path: Path) -> None:
    state = probe(tmp_path / "no-such-config")
    assert state["metadata_loaded"] is False  # the stand-in answered and was removed
    assert state["version"] == state["real_version"]
    assert state["client_id"] == f"paramiko_{state['real_version']}"  # what the SSH banner says
    assert state["metadata_is_real"] is True
    assert state["invoke_usable"] is False  # no Match exec in the config: invoke stays out


MATCH_EXEC = 'Match exec "true"\n    User x\n'


@pytest.mark.parametrize("where", ["config", "included", "system"])
def test_a_config_that_needs_invoke_gets_it(tmp_path: Path, where: str) -> None:
    """`Match exec` in the -F file, in a file it includes, or in the system-wide file read when no -F is given."""
    pytest.importorskip("invoke")
    config = tmp_path / "config"
    if where == "config":
        config.write_text(MATCH_EXEC)
        assert probe(config)["invoke_usable"] is True
    elif where == "included":
        (tmp_path / "other.conf").write_text(MATCH_EXEC)
        config.write_text(f"Include {tmp_path}/other.conf\n")
        assert probe(config)["invoke_usable"] is True
    else:
        config.write_text(MATCH_EXEC)
        assert probe(None, system=config)["invoke_usable"] is True
        empty = tmp_path / "empty"
        empty.write_text("")
        assert probe(empty, system=config)["invoke_usable"] is False  # with -F the system file is not read


def test_an_include_without_match_exec_keeps_invoke_out(tmp_path: Path) -> None:
    """Includes are followed, not feared: Debian's /etc/ssh/ssh_config includes ssh_config.d/*.conf."""
    (tmp_path / "other.conf").write_text("Host x\n    User y\n")
    config = tmp_path / "config"
    config.write_text(f"Include {tmp_path}/other.conf\nInclude {tmp_path}/missing-*.conf\n")
    assert probe(config)["invoke_usable"] is False


def test_invoke_is_given_back_when_a_later_config_needs_it(tmp_path: Path) -> None:
    """The helper imports paramiko with the config it read from the command line; if the config used in the
    end has `Match exec`, paramiko.config gets invoke then."""
    pytest.importorskip("invoke")
    plain, matching = tmp_path / "plain", tmp_path / "matching"
    plain.write_text("Host x\n    User y\n")
    matching.write_text('Match exec "true"\n    User x\n')
    code = (
        "from logsleuth.sources.ssh.importing import load_paramiko\n"
        "from logsleuth.sources.options import SSHOptions as O\n"
        f"load_paramiko(O(config_file={str(plain)!r})); import paramiko.config as c; before = c.invoke is None\n"
        f"load_paramiko(O(config_file={str(matching)!r})); print(before, c.invoke is not None)"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert proc.stdout.split() == ["True", "True"], proc.stderr
