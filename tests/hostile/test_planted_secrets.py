"""The planted-secret suite (issue 26): every secret form, planted in a log, and every output logsleuth writes.

Outputs: the five report formats, `case`, the `--explain` request (the body the OpenAI-compatible stand-in of
tests/explain/llm_standin.py received), `diff`, `health` in every format, the fleet table of several sources,
what a Slack webhook receives (a local HTTP server on 127.0.0.1 stands in for Slack), `check` and `watch`.  What `launch`
prints is checked against the private sshd in tests/ssh/test_planted_launch.py, which needs that server's fixtures.
Every output must hold none of the planted secrets.  `make test` runs each output in one format for every case;
the other formats are `make test-slow`.
"""

from __future__ import annotations

import dataclasses
import json
import shlex
from collections.abc import Callable
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.redact import redact_secrets
from tests.explain.llm_standin import Behaviour, answer, standin_server
from tests.hostile.checks import Output, run_cli_bytes
from tests.hostile.corpora import REPO, SECRET_CASES, Case, unknown_failure_log


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


# -- every output, every secret form ------------------------------------------------------------------------

CASES = {case.name: case for case in SECRET_CASES}
HEALTH_LOG = REPO / "tests" / "fixtures" / "health" / "0.5.9" / "accept-near-one.log"  # a finding with evidence


def _planted_log(case: Case, folder: Path, stem: str = "server") -> Path:
    """The crash no pattern knows (context, message, frames and command all shown), named after the case."""
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"{stem}-{case.file_name}.log"
    log.write_text(unknown_failure_log(case), encoding="utf-8")
    return log


def _cmd(case: Case) -> list[str]:
    return ["--cmd", case.cmd] if case.cmd else []


def _texts(result: Output) -> list[str]:
    assert result.exit_code in (0, 1), result.errors  # 0 or 1: the output was delivered
    return [result.text, result.errors]


def _report_formats(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    """diagnose with --cmd: the five formats (what tests/hostile/test_hostile_cli.py checks further)."""
    return _texts(run_cli_bytes("diagnose", str(_planted_log(case, tmp_path)), "--format", fmt, *_cmd(case)))


def _case_file(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    return _texts(run_cli_bytes("case", str(_planted_log(case, tmp_path)), "--format", fmt, *_cmd(case)))


def _explained(case: Case, fmt: str, tmp_path: Path, *options: str) -> tuple[Output, list[str]]:
    """diagnose --explain against the stand-in: what it printed, and the request bodies the stand-in received
    (as sent, and with their JSON escapes undone)."""
    behaviour = Behaviour(content=answer())
    with standin_server(behaviour) as url:
        result = run_cli_bytes("diagnose", str(_planted_log(case, tmp_path)), "--format", fmt, "--explain",
                               "--llm-url", url, *options, *_cmd(case))
    bodies = [request.body.decode("utf-8") for request in behaviour.requests if request.method == "POST"]
    assert bodies, result.errors  # the case file was sent
    return result, [*bodies, *(json.dumps(json.loads(body), ensure_ascii=False) for body in bodies)]


def _explain_request(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    result, bodies = _explained(case, fmt, tmp_path)
    return [*_texts(result), *bodies]


def _explain_request_without_redaction(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    """--no-redact shows the secrets in the report, by request; what is sent is redacted all the same."""
    _, bodies = _explained(case, fmt, tmp_path, "--no-redact")
    return bodies


def _slack_post(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    """What a Slack webhook receives: any local HTTP server that records its POSTs stands in for Slack (the
    explain stand-in does; Slack needs only a 200)."""
    behaviour = Behaviour(content="ok")
    with standin_server(behaviour) as url:
        result = run_cli_bytes("diagnose", str(_planted_log(case, tmp_path)), "--format", fmt, "--slack-webhook",
                               f"{url}/services/T0/B0/hook", *_cmd(case))
    posts = [json.loads(request.body)["text"] for request in behaviour.requests if request.method == "POST"]
    assert len(posts) == 1, result.errors
    return [*_texts(result), *posts]


def _fleet_table(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    """Several sources: the fleet table names each one and its first failure."""
    logs = [str(_planted_log(case, tmp_path, f"node{index}")) for index in range(1, 4)]
    return _texts(run_cli_bytes("diagnose", *logs, "--format", fmt, *_cmd(case)))


def _secret_on_its_own(line: str, case: Case) -> bool:
    """A line that holds a secret the redaction knows without the lines around it (half a wrapped token does not
    count), and is not a launch's own (server_args, a command: after each batch line, it would start a launch)."""
    return (any(secret in line for secret in case.secrets) and "server_args" not in line and "+ " not in line
            and not any(secret in redact_secrets(line) for secret in case.secrets))


def _planted_health_log(case: Case, folder: Path) -> Path:
    """The health fixture with the case's command first, its lines before the first batch line, and its first
    secret-bearing line after each line the finding shows as evidence."""
    lines = HEALTH_LOG.read_text().splitlines()
    first_batch = next(index for index, line in enumerate(lines) if "batch" in line)
    planted = [*case.context, *case.message]
    trailer = next((line for line in [*case.message, *case.context] if _secret_on_its_own(line, case)), "")
    lines = [f"{line}, note: {trailer}" if "accept len" in line else line for line in lines]
    lines[first_batch:first_batch] = planted
    if case.command:
        lines.insert(0, f"+ {case.command}")
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"health-{case.file_name}.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return log


def _health(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    return _texts(run_cli_bytes("health", str(_planted_health_log(case, tmp_path)), "--format", fmt,
                                "--no-user-patterns"))


def _planted_diff_log(case: Case, folder: Path) -> Path:
    """BAD: the diff fixture's bad launch, with the case's command for its own and the case's crash at its end."""
    lines = (DIFF_FIXTURES / "secret-bad-0.5.9.log").read_text().splitlines()
    if case.command:
        launch = next(index for index, line in enumerate(lines) if "sglang.launch_server" in line)
        lines[launch] = f"+ {case.command}"
    crash = unknown_failure_log(dataclasses.replace(case, command=None))
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / f"bad-{case.file_name}.log"
    log.write_text("\n".join(lines) + "\n" + crash, encoding="utf-8")
    return log


def _diff(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    good = DIFF_FIXTURES / "secret-good-0.5.9.log"
    return _texts(run_cli_bytes("diff", str(good), str(_planted_diff_log(case, tmp_path)), "--format", fmt))


def _watch(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    """`watch` of a log that already crashed: its events (JSON lines) or its view, then the report."""
    return _texts(run_cli_bytes("watch", str(_planted_log(case, tmp_path)), "--format", fmt, *_cmd(case)))


def _check(case: Case, fmt: str, tmp_path: Path) -> list[str]:
    """`check` of the case's commands (none: nothing to check), each flag listed with its values."""
    texts = []
    for command in filter(None, (case.command, case.cmd)):
        result = run_cli_bytes("check", "--format", fmt, "--", *shlex.split(command))
        assert result.exit_code in (0, 1), result.errors
        texts += [result.text, result.errors]
    return texts


FIVE = ("json", "text", "markdown", "slack", "rich")
OUTPUTS: dict[str, tuple[Callable[[Case, str, Path], list[str]], tuple[str, ...]]] = {
    "report": (_report_formats, FIVE),
    "case": (_case_file, ("markdown", "json")),
    "explain-request": (_explain_request, FIVE),
    "explain-request-no-redact": (_explain_request_without_redaction, ("json",)),
    "slack-post": (_slack_post, ("text",)),
    "fleet": (_fleet_table, FIVE),
    "health": (_health, FIVE),
    "diff": (_diff, FIVE),
    "check": (_check, ("json", "text", "markdown")),
    "watch": (_watch, ("json", "text")),
}
# The default run: every output in its first format, for every case; the other formats are `make test-slow`.
PLANTED = [
    pytest.param(output, fmt, name, marks=() if index == 0 else pytest.mark.slow)
    for output, (_, formats) in OUTPUTS.items()
    for index, fmt in enumerate(formats)
    for name in sorted(CASES)
]


@pytest.mark.parametrize(("output", "fmt", "name"), PLANTED)
def test_no_output_shows_a_planted_secret(output: str, fmt: str, name: str, tmp_path: Path) -> None:
    case = CASES[name]
    produce, _ = OUTPUTS[output]
    texts = produce(case, fmt, tmp_path)
    leaked = sorted({secret for secret in case.secrets for text in texts if secret in text})
    assert not leaked, f"{output} ({fmt}) shows {leaked}"


def test_a_key_the_launch_command_gave_is_redacted_wherever_the_log_repeats_it(tmp_path: Path) -> None:
    """SGLang takes one --api-key: given two, vLLM's way, its argparse error names the second alone, which no
    rule can know for a key.  The launch command says it is one: it is redacted everywhere in the report."""
    log = tmp_path / "server.log"
    log.write_text(
        "+ python -m sglang.launch_server --model-path /m --api-key SECRETfirstKey SECRETsecondKey\n"
        "usage: launch_server.py [-h] --model-path MODEL_PATH [--api-key API_KEY]\n"
        "launch_server.py: error: unrecognized arguments: SECRETsecondKey\n"
    )
    for fmt in FIVE:
        result = run_cli_bytes("diagnose", str(log), "--format", fmt)
        assert "unrecognized arguments" in result.text
        assert "SECRETsecondKey" not in result.text and "SECRETfirstKey" not in result.text, fmt
    case = run_cli_bytes("case", str(log))
    assert "SECRETsecondKey" not in case.text


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_check_shows_no_key_of_the_command(fmt: str) -> None:
    """`check` lists each flag with its values, and SGLang's one-key --api-key leaves the second key a stray word."""
    words = ["python", "-m", "sglang.launch_server", "--model-path", "/m", "--api-key", "SECRETcheckA", "SECRETcheckB",
             "--hf-token", "hf_SECRETcheckTokenabcdefghijk"]
    result = run_cli_bytes("check", "--format", fmt, "--", *words)
    assert result.exit_code == 1, result.errors  # the stray word fails the check
    assert "--api-key" in result.text
    leaked = [secret for secret in ("SECRETcheckA", "SECRETcheckB", "SECRETcheckToken")
              if secret in result.text or secret in result.errors]
    assert not leaked, leaked
