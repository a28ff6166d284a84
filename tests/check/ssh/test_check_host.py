"""`logsleuth check HOST -- COMMAND` over the real test sshd: the host's own SGLang (the 0.5.9 oracle venv, reached
as root, whose login the test sshd accepts with the shared key) validates a good and a bad command.  Nothing is
mocked: sshd, the remote /bin/sh, the host's Python and SGLang."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from sshd_server import SSHD

from logsleuth.cli.check import run_check

pytestmark = [pytest.mark.ssh, pytest.mark.oracle]

HOST = "root@logsleuth-alias"
VENV_PYTHON = Path("/root/.cache/logsleuth/oracle/sglang-0.5.9/bin/python")
TINY = Path("/root/.cache/logsleuth/oracle/models")


@pytest.fixture(autouse=True)
def _host_sglang() -> None:
    if not (VENV_PYTHON.parent.parent / ".ready").exists():
        pytest.skip(f"no SGLang 0.5.9 oracle venv at {VENV_PYTHON.parent.parent} (make oracle-setup as root)")


def _check(sshd: SSHD, capsys: pytest.CaptureFixture[str], *words: str, allow_download: bool = False) -> tuple[int, str, str]:
    status = run_check([HOST, *words], None, "json", ssh_config=sshd.config, allow_download=allow_download)
    out, err = capsys.readouterr()
    return status, out, err


def _launch(*flags: str) -> list[str]:
    return [str(VENV_PYTHON), "-m", "sglang.launch_server", "--model-path", str(TINY / "tiny-llama"), "--device", "cpu",
            *flags]


def test_good_command_validated_by_the_hosts_sglang(sshd: SSHD, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _check(sshd, capsys, *_launch("--tp-size", "1"))
    result = json.loads(out)
    assert status == 0, (out, err)
    assert result["validation"]["state"] == "validated"
    assert result["validation"]["message"] == "validated on SGLang 0.5.9"
    assert result["validation"]["where"] == f"{HOST}: SGLang 0.5.9"
    assert result["catalog_version"] == "0.5.9"  # the version the host has, read there


def test_bad_command_rejected_by_the_hosts_sglang(sshd: SSHD, capsys: pytest.CaptureFixture[str]) -> None:
    words = _launch("--speculative-algorithm", "EAGLE3", "--speculative-draft-model-path", str(TINY / "tiny-eagle3"),
                    "--speculative-num-draft-tokens", "16", "--speculative-eagle-topk", "1")
    status, out, _err = _check(sshd, capsys, *words)
    result = json.loads(out)
    assert status == 1
    assert result["validation"]["state"] == "rejected"
    assert result["validation"]["message"].startswith("SGLang 0.5.9 raised AssertionError at sglang/srt/server_args.py")
    assert [trap["pattern"] for trap in result["traps"]] == ["sglang-eagle-partial-spec-args"]


def test_argparse_error_is_one_line(sshd: SSHD, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _err = _check(sshd, capsys, *_launch("--max-model-len", "4096"))
    result = json.loads(out)
    assert status == 1
    assert result["validation"]["message"] == "SGLang 0.5.9 rejects it: unrecognized arguments: --max-model-len 4096"


def test_hub_model_refused_without_a_terminal(sshd: SSHD, capsys: pytest.CaptureFixture[str]) -> None:
    words = [str(VENV_PYTHON), "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-8B-Instruct"]
    status, out, err = _check(sshd, capsys, *words)
    assert status == 2 and out == ""
    assert err.count("\n") == 1 and "--allow-download" in err and "meta-llama/Llama-3.1-8B-Instruct" in err


def test_python_without_sglang_is_exit_3(sshd: SSHD, capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = _check(sshd, capsys, "/usr/bin/python3", "-m", "sglang.launch_server", "--model-path", "/m")
    assert status == 3 and out == ""
    assert "has no SGLang" in err and err.count("\n") == 1



def test_hub_model_asked_first_and_declined_runs_nothing(sshd: SSHD) -> None:
    """The y/N question is answered by a function passed in (the terminal prompt itself is not driven)."""
    from logsleuth.check.remote import check_host
    from logsleuth.check.words import parse_words
    from logsleuth.sources.options import SSHOptions

    questions: list[str] = []

    def say_no(question: str) -> bool:
        questions.append(question)
        return False

    command = parse_words([str(VENV_PYTHON), "-m", "sglang.launch_server", "--model-path", "org/some-model"])
    result = check_host(HOST, command, None, SSHOptions(config_file=str(sshd.config), connect_attempts=1),
                        allow_download=False, confirm=say_no)
    assert len(questions) == 1 and "org/some-model" in questions[0] and "Hugging Face hub" in questions[0]
    assert result.validation is not None and result.validation.state == "unavailable"
    assert result.validation.message == "not validated: downloading org/some-model was declined"
    assert result.catalog_version == "0.5.9"  # the host's version, from the probe
