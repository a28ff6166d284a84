"""Secrets planted across the edges of what the case file shows of the log never reach it (issue 26, kept by
issue 28, item 6).

The case shows pieces of the log verbatim: the whole of a small log, else the failure region, each error-looking
line, the last lines.  Each piece is redacted with the log around it before it is cut out, so a secret that
starts above a piece (a private key, a token the terminal wrapped, a `--api-key \\` continuation) or ends below
it is redacted in it too; a key the launch command gave is redacted wherever the log repeats it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose
from logsleuth.case import build_case, case_json_text, case_markdown
from logsleuth.case.window import TAIL_LINES, WHOLE_BYTES
from tests.helpers import real_traceback
from tests.hostile.checks import run_cli_bytes
from tests.logs import crash_record, noise

KEY_BODY = ("MIIEvSECRETpemA", "QwertySECRETpemB", "AsdfSECRETpemC", "ZxcvSECRETpemD", "PoiuSECRETpemE", "LkjhSECRETpemF")
TOKEN = "hf_" + "AbCdEfGhIjKl" + "MnOpQrStUvWxYz0123SECRETwrap"
TOKEN_HEAD, TOKEN_TAIL = TOKEN[:15], TOKEN[15:]
END_TOKEN = "hf_" + "ZyXwVuTsRq" + "PoNmLkJiHgFeDcBa98SECRETend"
END_HEAD, END_TAIL = END_TOKEN[:13], END_TOKEN[13:]
API_KEY = "SECRETlaunchKey4242"
CONTINUED = "SECRETcontinuedFlag"
PIECES = (*KEY_BODY, TOKEN_HEAD, TOKEN_TAIL, END_HEAD, END_TAIL, API_KEY, CONTINUED)


def _crash(message_end: str) -> str:
    head, rest = message_end[:4], message_end[4:]  # the source line CPython shows holds the literal apart
    traceback = real_traceback(
        f"""
        def load():
            raise RuntimeError("weights could not be read " + "{head}" + "{rest}")
        load()
        """,
        "site-packages/sglang/srt/model_loader/loader.py",
    )
    return crash_record("2026-11-29 10:00:01", "TP0", traceback)


def _planted(filler: int) -> str:
    """A log with a secret across each edge of a piece the case shows; `filler` decode lines between them."""
    return "".join([
        f"+ python -m sglang.launch_server --model-path /models/llama --api-key {API_KEY}\n",
        noise(filler),
        # a token wrapped at the line end; its second half starts an error-looking line
        f"[2026-11-29 10:00:00 TP0] downloading with token {TOKEN_HEAD}\n",
        f"{TOKEN_TAIL} ERROR download failed, retrying\n",
        # the launch's key, repeated bare in an error line far from the command
        f"[2026-11-29 10:00:00 TP0] ERROR auth rejected for {API_KEY}\n",
        noise(filler, start=filler),
        # a continued flag whose value is the first of the ten lines before the failure
        "$ vllm serve /m --api-key \\\n",
        f"    {CONTINUED} --port 1\n",
        noise(9, start=2 * filler),
        # a token wrapped across the end of the failure's message
        _crash(END_HEAD),
        f"{END_TAIL} was the token\n",
        # a private key whose BEGIN line is above the last lines and whose body is in them
        "-----BEGIN PRIVATE KEY-----\n",
        *(f"{line}\n" for line in KEY_BODY),
        "-----END PRIVATE KEY-----\n",
        *(f"[2026-11-29 10:00:02] after the crash {index}\n" for index in range(TAIL_LINES - 4)),
    ])


@pytest.fixture(params=["long", "small"])
def planted_log(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    log = tmp_path / "server.log"
    log.write_text(_planted(1500 if request.param == "long" else 2), encoding="utf-8")
    assert (log.stat().st_size > WHOLE_BYTES) == (request.param == "long")
    return log


def _leaked(text: str) -> list[str]:
    return [piece for piece in PIECES if piece in text]


def test_planted_secrets_across_the_edges_never_reach_the_case_file(planted_log: Path) -> None:
    report = diagnose([str(planted_log)], DiagnoseOptions(include_user_patterns=False))
    case = build_case(report)
    shown = "\n".join([*case.paste, *case.failure_lines, *case.lines_before, *case.tail,
                       *(line.text for line in case.error_lines)])
    assert "ERROR download failed" in shown and "after the crash" in shown  # the pieces are there
    for text in (shown, case_markdown(report), case_json_text(report), case_markdown(report, anonymize=True),
                 case_markdown(report, limit=4000)):
        assert _leaked(text) == []


@pytest.mark.parametrize("fmt", ["markdown", "json"])
def test_the_case_command_shows_no_planted_secret(planted_log: Path, fmt: str) -> None:
    result = run_cli_bytes("case", str(planted_log), "--format", fmt)
    assert result.exit_code == 1, result.errors
    assert "after the crash" in result.text
    assert _leaked(result.text) == [] and _leaked(result.errors) == []


def test_a_key_the_first_launch_gave_is_redacted_in_the_error_lines_of_a_long_log(tmp_path: Path) -> None:
    """The launch command at the top of a log far longer than what the case reads again (its last 4 MiB and the
    MiB before the failure): its key, repeated bare in an error line near the end, is still redacted."""
    log = tmp_path / "server.log"
    with log.open("w", encoding="utf-8") as handle:
        handle.write(f"+ python -m sglang.launch_server --model-path /models/llama --api-key {API_KEY}\n")
        filler = noise(6000)
        for _ in range(7):  # about 6 MiB
            handle.write(filler)
        handle.write(f"[2026-11-29 10:00:00 TP0] ERROR auth rejected for {API_KEY}\n")
        handle.write(_crash("plainly"))
    report = diagnose([str(log)], DiagnoseOptions(include_user_patterns=False))
    case = build_case(report)
    assert any("ERROR auth rejected for" in line.text for line in case.error_lines)
    assert API_KEY not in case_markdown(report)
