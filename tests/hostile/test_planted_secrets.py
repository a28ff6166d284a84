"""The planted-secret suite (issue 26): every secret form, planted in a log, and every output logsleuth writes.

Outputs: the five report formats, `case`, the `--explain` request (the body the OpenAI-compatible stand-in of
tests/explain/llm_standin.py received), `diff`, `health` in every format, the fleet table of several sources,
and what a Slack webhook receives (a local HTTP server on 127.0.0.1 stands in for Slack).  What `launch` prints
is checked against the private sshd in tests/ssh/test_planted_launch.py, which needs that server's fixtures.
Every output must hold none of the planted secrets.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.hostile.checks import run_cli_bytes
from tests.hostile.corpora import REPO


def test_a_value_continued_right_after_equals_stays_one_word() -> None:
    """`--api-key=\\` then the value on the next line is one shell word, `--api-key=VALUE`: the launch command
    must not split it into an empty key and a stray word (which no redaction rule then knows as a key)."""
    log = (
        "$ vllm serve /m --api-key=\\\n"
        "SECRETglued --port 1 \\\n"
        "    --max-model-len 10\n"
        "Traceback (most recent call last):\n"
        '  File "/x/vllm/y.py", line 3, in <module>\n'
        "    main()\n"
        "RuntimeError: boom\n"
    )
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False))
    assert report.launch.command == "vllm serve /m --api-key=SECRETglued --port 1 --max-model-len 10"


# -- the case file's window: redacted whole, then cut -------------------------------------------------------

FILLER = "[2026-03-14 09:26:5{} TP0] INFO scheduler step {}"
CRASH = (
    "Traceback (most recent call last):\n"
    '  File "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py", line 32, in <module>\n'
    "    main()\n"
    "RuntimeError: boom\n"
)


def _filler(count: int) -> list[str]:
    return [FILLER.format(index % 10, index) for index in range(count)]


# The window keeps the 10 lines before the failure: each log puts the start of a secret just outside it.
WINDOW_LOGS = {
    "private-key": (
        [*_filler(3), "-----BEGIN PRIVATE KEY-----", "MIIEvSECRETwinA", "QwertySECRETwinB", "AsdfSECRETwinC",
         "-----END PRIVATE KEY-----", *_filler(7)],
        ("MIIEvSECRETwinA", "QwertySECRETwinB", "AsdfSECRETwinC"),
    ),
    "wrapped-token": (
        [*_filler(3), "[2026-03-14 09:26:50 TP0] WARNING using token hf_AbCdEfGhIj",
         "KlMnOpQrStUvWxYz0123456789SECRETwrap to download", *_filler(9)],
        ("KlMnOpQrStUvWxYz0123456789SECRETwrap",),
    ),
    "continued-flag": (
        [*_filler(3), "$ vllm serve /m --api-key \\", "    SECRETwinFlag --port 1", *_filler(9)],
        ("SECRETwinFlag",),
    ),
}


@pytest.mark.parametrize("name", sorted(WINDOW_LOGS))
def test_the_case_window_is_redacted_before_it_is_cut(name: str, tmp_path: Path) -> None:
    lines, secrets = WINDOW_LOGS[name]
    log = tmp_path / "server.log"
    log.write_text("\n".join(lines) + "\n" + CRASH)
    result = run_cli_bytes("case", str(log))
    assert result.exit_code in (0, 1), result.errors
    assert "scheduler step" in result.text  # the window is there
    leaked = [secret for secret in secrets if secret in result.text or secret in result.errors]
    assert not leaked, leaked


# -- diff: values with spaces, and the source names in its header ---------------------------------------------

DIFF_FIXTURES = REPO / "tests" / "fixtures" / "diff"
DIFF_FORMATS = ("text", "markdown", "slack", "json", "rich")


def _diff_sources(tmp_path: Path) -> tuple[Path, Path, tuple[str, ...]]:
    """GOOD and BAD: the diff fixtures with spaced secrets in their environment, under secret-bearing names."""
    secrets = ("SECRETdirname", "SECRETspacedGood", "w0rdzGood", "SECRETspacedBad", "w0rdzBad", "SECRETsigDiff")
    folder = tmp_path / "api_key=SECRETdirname"
    folder.mkdir()
    sides = []
    for side, name in (("Good", "secret-good-0.5.9.log"), ("Bad", "secret-bad-0.5.9.log")):
        text = (DIFF_FIXTURES / name).read_text()
        exports = (f"+ export OPENAI_API_KEY='kq SECRETspaced{side} w0rdz{side}'\n"
                   f"+ export HF_ENDPOINT='https://hub.internal/x?sv=1&sig=SECRETsigDiff{side}'\n")
        path = folder / f"{side.lower()}-sig=SECRETsigDiff.log"
        path.write_text(exports + text)
        sides.append(path)
    return sides[0], sides[1], secrets


@pytest.mark.parametrize("fmt", DIFF_FORMATS)
def test_diff_shows_no_secret(fmt: str, tmp_path: Path) -> None:
    good, bad, secrets = _diff_sources(tmp_path)
    result = run_cli_bytes("diff", str(good), str(bad), "--format", fmt)
    assert result.exit_code == 1, result.errors
    assert "OPENAI_API_KEY" in result.text  # the change is shown, without its values
    leaked = [secret for secret in secrets if secret in result.text or secret in result.errors]
    assert not leaked, leaked
