"""The planted-secret suite's `launch` part (issue 26; the rest is tests/hostile/test_planted_secrets.py): what
`launch` prints, on stdout and stderr, in every format, shows none of the secrets its command line carries.  It
needs the private sshd and the fake server of tests/ssh/test_launch.py.  (`--dry-run` prints the user's own
command exactly, on purpose: docs/launch.md.)"""

from __future__ import annotations

from pathlib import Path

import pytest
from sshd_server import SSHD
from test_launch import PARTIAL_EAGLE, _launch, _server, place  # noqa: F401 - `place` is a fixture

from logsleuth.render.options import OutputFormat, RenderOptions

# The fake server knows neither flag: its argparse error repeats them all, as SGLang's does.
SECRET_WORDS = ["--api-key", "SECRETlaunchA", "SECRETlaunchB", "--hf-token=hf_SECRETlaunchTokenabcdefghij",
                "--dist-init-addr", "redis://u:pa/SECRETlaunchPw@cache.internal:6379"]
SECRETS = ("SECRETlaunchA", "SECRETlaunchB", "SECRETlaunchToken", "SECRETlaunchPw")


@pytest.mark.ssh
@pytest.mark.parametrize("fmt", ["text", pytest.param("json", marks=pytest.mark.slow),
                                 pytest.param("markdown", marks=pytest.mark.slow)])
@pytest.mark.parametrize("flags", [pytest.param([], id="rejected-flags"), pytest.param(PARTIAL_EAGLE, id="crash")])
def test_launch_prints_no_secret_of_its_command(sshd: SSHD, place: Path, fmt: str, flags: list[str]) -> None:  # noqa: F811
    log = place / f"planted-{fmt}.log"
    words = ["HF_TOKEN=hf_SECRETlaunchTokenabcdefghij", *_server(place, *flags, *SECRET_WORDS)]
    run = _launch(sshd, words, log_path=str(log), retry=False, render_options=RenderOptions(OutputFormat(fmt)))
    assert run.status == 1, run.stderr
    assert "SECRETlaunchA" in log.read_text()  # the host's own log holds them (its permissions: another item)
    leaked = [secret for secret in SECRETS if secret in run.stdout or secret in run.stderr]
    assert not leaked, f"{leaked} in\n{run.stdout}\n{run.stderr}"
