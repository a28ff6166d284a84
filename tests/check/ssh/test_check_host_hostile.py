"""`check HOST` against a hostile host (issue 26): what the host prints (its SGLang version, its errors, the path
of its Python) reaches the user's terminal only without escape sequences; a HOST that is a source spec is
refused.  The host is the real test sshd; its "Python" is a script written here, which answers the probe and the
validation with escape sequences (OSC 52 writes the user's clipboard, OSC 0 the window title)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sshd_server import SSHD

from logsleuth.cli.check import run_check

HOST = "root@logsleuth-alias"
OSC = ("\x1b]52;c;b3duZWQ=\x07", "\x1b]0;owned\x07", "\x9b2J", "\u202e")
FAKE_PYTHON = r"""#!/bin/sh
case "$3" in launch_server|serve) ;; *) {probe} ;; esac
printf '%s\n' 'LOGSLEUTH-CHECK {{"outcome": "error", "version": "0.5.9\u001b]52;c;b3duZWQ=\u0007", "type": "Value\u001b]0;owned\u0007Error", "message": "bad \u009b2J\u202e", "where": "sglang/x.py:1 in \u001b[2Jf", "source": ""}}'
"""


def _fake_python(path: Path, *, has_sglang: bool) -> Path:
    probe = r"printf '0.5.9\033]52;c;b3duZWQ=\007\033]0;owned\007\n'; exit 0" if has_sglang else "exit 1"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(FAKE_PYTHON.format(probe=probe))
    path.chmod(0o755)
    return path


def _assert_inert(text: str) -> None:
    assert not any(marker in text for marker in ("\x1b", "\x07", "\x9b", "\u202e")), repr(text)


@pytest.mark.ssh
@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_the_hosts_version_and_errors_are_inert(sshd: SSHD, tmp_path: Path, fmt: str,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    python = _fake_python(tmp_path / "host" / "python3", has_sglang=True)
    status = run_check([HOST, str(python), "-m", "sglang.launch_server", "--model-path", "/"], None, fmt,
                       ssh_config=sshd.config)
    out, err = capsys.readouterr()
    assert status == 1, (out, err)
    _assert_inert(out + err)
    if fmt == "json":
        _assert_inert(json.dumps(json.loads(out), ensure_ascii=False))
    assert "0.5.9" in out and "owned" not in out.replace("b3duZWQ", "")  # the version is shown, the payload not


@pytest.mark.ssh
def test_the_hosts_python_path_is_inert_in_an_error(sshd: SSHD, tmp_path: Path,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    python = _fake_python(tmp_path / "bin\x1b]0;owned\x07" / "python3", has_sglang=False)
    script = tmp_path / "sglang"
    script.write_text(f"#!{python}\n")
    script.chmod(0o755)
    status = run_check([HOST, str(script), "serve", "--model-path", "/"], None, "text", ssh_config=sshd.config)
    out, err = capsys.readouterr()
    assert status == 3 and out == ""
    assert "has no SGLang" in err and err.count("\n") == 1
    _assert_inert(err)
