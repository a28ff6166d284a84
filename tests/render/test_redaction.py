"""Planted secrets of every kind never reach any format, unless redaction is off."""

from __future__ import annotations

import dataclasses

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Fix, LaunchInfo, Report
from logsleuth.redact import Anonymizer, redact_report, redact_secrets
from logsleuth.render.options import OutputFormat
from tests.render.cases import chained, several_hosts, single_failure, unknown_failure
from tests.render.helpers import FORMATS, render

# Each value is a secret that must not appear in any output.
SECRETS = {
    "api_key": "s3cret-api-key-0001",
    "admin_api_key": "s3cret-admin-key-0002",
    "hf_token_field": "s3cret-hf-field-0003",
    "HF_TOKEN_env": "s3cret-hf-env-0004",
    "hf_shape": "hf_AbCdEfGhIjKlMnOpQrStUvWxYz01234567",
    "sk_shape": "sk-proj-AbCdEfGhIjKlMnOpQrSt0005",
    "sk_or_shape": "sk-or-v1-0123456789abcdef0123456789abcdef",
    "aws_access_key": "AKIAIOSFODNN7EXAMPLE",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.payload0006.sig",
    "url_password": "hunter2-0007",
    "cli_api_key": "s3cret-cli-key-0008",
}

SERVER_ARGS = (
    f"server_args=ServerArgs(model_path='/models/llama', api_key='{SECRETS['api_key']}', "
    f"admin_api_key='{SECRETS['admin_api_key']}', hf_token='{SECRETS['hf_token_field']}', tp_size=8)"
)
CONTEXT_LINES = (
    SERVER_ARGS,
    f"env: HF_TOKEN={SECRETS['HF_TOKEN_env']} CUDA_VISIBLE_DEVICES=0",
    f"download failed with token {SECRETS['hf_shape']}",
    f"calling judge with key {SECRETS['sk_shape']} and {SECRETS['sk_or_shape']}",
    f"aws: {SECRETS['aws_access_key']}",
    f"request headers: Authorization: Bearer {SECRETS['bearer']}",
    f"mirror https://alice:{SECRETS['url_password']}@mirror.example.com/models",
)
COMMAND = f"python -m sglang.launch_server --model-path /models/llama --api-key {SECRETS['cli_api_key']}"


def planted(report: Report) -> Report:
    """`report` with a secret in every kind of string field a renderer shows."""
    group = report.failures[0]
    failure = group.failure
    block = failure.final
    message = "; ".join(CONTEXT_LINES)
    new_block = dataclasses.replace(block, message=message)
    failure = dataclasses.replace(
        failure,
        exceptions=(*failure.exceptions[:-1], new_block),
        context=CONTEXT_LINES,
        header=CONTEXT_LINES[1],
    )
    diagnosis = group.diagnosis
    if diagnosis is not None:
        fix = diagnosis.fix or Fix(summary="x")
        fix = dataclasses.replace(
            fix,
            summary=f"{fix.summary} ({CONTEXT_LINES[2]})",
            command=f"{COMMAND} --speculative-num-steps 15",
            env=(("HF_TOKEN", SECRETS["HF_TOKEN_env"]),),
            steps=(CONTEXT_LINES[6],),
        )
        diagnosis = dataclasses.replace(
            diagnosis, root_cause=f"{diagnosis.root_cause} {CONTEXT_LINES[5]}", fix=fix
        )
    group = dataclasses.replace(
        group, failure=failure, diagnosis=diagnosis, cascade=CONTEXT_LINES, signature=CONTEXT_LINES[3]
    )
    return dataclasses.replace(
        report,
        failures=(group, *report.failures[1:]),
        launch=LaunchInfo("sglang", "0.5.9", COMMAND, server_args=(("api_key", repr(SECRETS["api_key"])),)),
        warnings=(CONTEXT_LINES[4],),
    )


REPORTS = {"single": single_failure, "chained": chained, "unknown": unknown_failure, "hosts": several_hosts}


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
@pytest.mark.parametrize("case", sorted(REPORTS))
def test_no_secret_in_any_format(case: str, fmt: OutputFormat) -> None:
    report = planted(REPORTS[case]())
    output = render(redact_report(report), fmt)
    leaked = [name for name, secret in SECRETS.items() if secret in output]
    assert not leaked, f"{fmt.value} leaks {leaked}"
    assert "REDACTED" in output


@pytest.mark.parametrize("fmt", FORMATS, ids=[f.value for f in FORMATS])
def test_secrets_shown_without_redaction(fmt: OutputFormat) -> None:
    """--no-redact: the log is shown as it is (the Slack budget may cut some context)."""
    output = render(planted(unknown_failure()), fmt, max_chars=100_000)
    for name in ("api_key", "aws_access_key", "bearer", "url_password"):
        assert SECRETS[name] in output, name


def test_redaction_walks_every_field() -> None:
    """No string anywhere in the redacted report holds a secret, shown or not."""
    report = redact_report(planted(several_hosts()))
    text = repr(report)
    assert not [name for name, secret in SECRETS.items() if secret in text]
    assert report.launch.server_args == (("api_key", "REDACTED"),)


def test_secrets_in_a_real_log_never_reach_the_cli_output() -> None:
    log = "\n".join(
        [
            f"[2026-11-20 10:00:00] {SERVER_ARGS}",
            *CONTEXT_LINES[1:],
            "Traceback (most recent call last):",
            '  File "/usr/local/lib/python3.11/dist-packages/sglang/launch_server.py", line 32, in <module>',
            "    main()",
            f"RuntimeError: cannot reach {CONTEXT_LINES[6]} using {SECRETS['sk_shape']}",
            "",
        ]
    )
    raw = diagnose_text(log, DiagnoseOptions(command=COMMAND))
    for fmt in FORMATS:
        output = render(redact_report(raw), fmt)
        assert not [name for name, secret in SECRETS.items() if secret in output], fmt
    assert SECRETS["sk_shape"] in render(raw, OutputFormat.TEXT)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("max_total_num_tokens=1234, token usage: 0.52", "max_total_num_tokens=1234, token usage: 0.52"),
        ("#token: 8192, tokenizer_path='/m'", "#token: 8192, tokenizer_path='/m'"),
        ("api_key=None, admin_api_key=''", "api_key=None, admin_api_key=''"),
        ("{'api_key': 'abc123'}", "{'api_key': 'REDACTED'}"),
        ("--hf-token=abc123 --port 30000", "--hf-token=REDACTED --port 30000"),
        ("redis://:pw@cache:6379", "redis://:REDACTED@cache:6379"),
        (
            "OPENAI_API_KEY=abc AWS_SECRET_ACCESS_KEY=wJalr/K7MDENG",
            "OPENAI_API_KEY=REDACTED AWS_SECRET_ACCESS_KEY=REDACTED",
        ),
    ],
)
def test_redact_secrets_keeps_what_is_not_secret(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


def test_anonymize_replaces_hosts_ips_and_users_stably() -> None:
    report = redact_report(several_hosts(), anonymize=True)
    text = repr(report)
    for original in ("gpu-node-1", "gpu-node-2", "gpu-node-3", "gpu-node-4"):
        assert original not in text
    assert report.failures[0].hosts == ("host-1", "host-2")
    assert report.sources[0].name == "host-1:/var/log/sglang.log"
    anonymize = Anonymizer(["gpu-node-1"])
    line = "alice@gpu-node-1 read /home/alice/x from 10.1.2.3 and 10.1.2.3, not 127.0.0.1; gpu-node-12 stays"
    assert (
        anonymize(line)
        == "user-1@host-1 read /home/user-1/x from ip-1 and ip-1, not 127.0.0.1; gpu-node-12 stays"
    )


def test_anonymize_without_secrets_keeps_secrets() -> None:
    report = redact_report(planted(single_failure()), secrets=False, anonymize=True)
    assert SECRETS["api_key"] in repr(report)
