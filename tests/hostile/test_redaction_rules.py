"""What each redaction rule leaves: exact strings, so a placeholder change is a visible decision.

Free text gets `REDACTED`; a command (the launch command, a corrected command, or a launch command
line inside log text) gets a quoted shell variable named after the flag or variable, so that a pasted
command stays one harmless, runnable shell line.
"""

from __future__ import annotations

import pytest

from logsleuth.redact import redact_command, redact_lines, redact_secrets

TEXT_CASES = [
    # Quoted values are redacted whole, spaces and all.
    ("server_args=ServerArgs(api_key='two SECRET words', tp_size=1)",
     "server_args=ServerArgs(api_key='REDACTED', tp_size=1)"),
    ('password="pass SECRET" user=x', 'password="REDACTED" user=x'),
    ('{"api_key": "a SECRET b", "n": 1}', '{"api_key": "REDACTED", "n": 1}'),
    ("{'hf_token': 'x\\'y SECRET'}", "{'hf_token': 'REDACTED'}"),
    # Names glued to the secret word, and values that start with a dash.
    ("PGPASSWORD=s3cret psql", "PGPASSWORD=REDACTED psql"),
    ("error: --api-key -DashSECRET is not valid", "error: --api-key REDACTED is not valid"),
    ("--api-key --port 30000", "--api-key --port 30000"),  # a flag follows: nothing to redact
    # The password of a URL runs to the last @ before the host.
    ("redis://u:p4ss@word@host:6379/0", "redis://u:REDACTED@host:6379/0"),
    ("https://host:8080/path?a=b@c", "https://host:8080/path?a=b@c"),
    # Cookies, private keys, service tokens.
    ("Cookie: session=abc; theme=dark", "Cookie: REDACTED"),
    ("Set-Cookie: id=abc; Path=/; HttpOnly", "Set-Cookie: REDACTED"),
    ("upstream cookie=abc rejected", "upstream cookie=REDACTED rejected"),
    ("key -----BEGIN RSA PRIVATE KEY----- MIIEpAbc -----END RSA PRIVATE KEY----- end",
     "key -----BEGIN RSA PRIVATE KEY----- REDACTED -----END RSA PRIVATE KEY----- end"),
    ("-----BEGIN PRIVATE KEY-----\nMIIEv\nQwerty\n-----END PRIVATE KEY-----",
     "-----BEGIN PRIVATE KEY-----\nREDACTED\nREDACTED\n-----END PRIVATE KEY-----"),
    ("-----BEGIN EC PRIVATE KEY-----\nMIIEv (cut off)", "-----BEGIN EC PRIVATE KEY-----\nREDACTED"),
    ("ghp_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789 gho_aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789", "REDACTED REDACTED"),
    ("github_pat_11AAAA0aBcDeFgHiJ_kLmNoPqRsTuVwXyZ0123456789", "REDACTED"),
    ("xoxb-1234-5678-abcdefghij xoxp-1234-5678-abcdefghij", "REDACTED REDACTED"),
    ("https://hooks.slack.com/services/T000/B000/XXXXXXXX failed",
     "https://hooks.slack.com/services/REDACTED failed"),
    ("aws AKIAIOSFODNN7EXAMPLE", "aws REDACTED"),
    # A token wrapped at the end of a line: both parts go.
    ("token hf_AbCdEfGhIj\nKlMnOpQrStUvWxYz0123456789 rest", "token REDACTED\nREDACTED rest"),
    ("token hf_AbCdEfGhIjKlMnOpQrStUv\nWxYz0123 rest", "token REDACTED\nREDACTED rest"),
    # Not secrets: counts, empty values, environment references, names where the secret word is not last.
    ("#token: 8192, max_total_num_tokens=1234, api_key=None", "#token: 8192, max_total_num_tokens=1234, api_key=None"),
    ('api_key="$SGLANG_API_KEY" tokenizer_path=/m', 'api_key="$SGLANG_API_KEY" tokenizer_path=/m'),
    ("load hf_hub_download\nfailed", "load hf_hub_download\nfailed"),
    # A launch command inside log text is redacted as a command.
    ("+ python -m sglang.launch_server --model-path /m --api-key 'two SECRET words' --port 1",
     '+ python -m sglang.launch_server --model-path /m --api-key "$SGLANG_API_KEY" --port 1'),
    ("[2026-01-01] + HF_TOKEN=hf_x PGPASSWORD='a b' sglang serve --hf-token x --admin-api-key=y",
     '[2026-01-01] + HF_TOKEN="$HF_TOKEN" PGPASSWORD="$PGPASSWORD" sglang serve --hf-token "$HF_TOKEN" '
     '--admin-api-key="$SGLANG_ADMIN_API_KEY"'),
]


COMMAND_CASES = [
    ("python -m sglang.launch_server --model-path /m --api-key 'two SECRET words'",
     'python -m sglang.launch_server --model-path /m --api-key "$SGLANG_API_KEY"'),
    ("python -m sglang.launch_server --api-key -DashSECRET --port 30000",
     'python -m sglang.launch_server --api-key "$SGLANG_API_KEY" --port 30000'),
    ("HF_TOKEN=hf_abc OPENAI_API_KEY='sk x y' python -m sglang.launch_server --hf-token=abc",
     'HF_TOKEN="$HF_TOKEN" OPENAI_API_KEY="$OPENAI_API_KEY" python -m sglang.launch_server --hf-token="$HF_TOKEN"'),
    ("vllm serve /m --api-key abc", 'vllm serve /m --api-key "$VLLM_API_KEY"'),
    ("python -m sglang.launch_server --json-model-override-args '{\"api_key\": \"a b\"}'",
     "python -m sglang.launch_server --json-model-override-args '{\"api_key\": \"REDACTED\"}'"),
    ("python -m sglang.launch_server --dist-init-addr 'redis://u:p@w@h:1'",
     "python -m sglang.launch_server --dist-init-addr redis://u:REDACTED@h:1"),
    ("python -m sglang.launch_server --model-path /m --tp 2", "python -m sglang.launch_server --model-path /m --tp 2"),
]


def test_a_token_wrapped_across_two_log_lines() -> None:
    """Context lines are separate strings: the wrap is seen across them, and the line count is kept."""
    lines = ("warning: token hf_AbCdEfGhIj", "KlMnOpQrStUvWxYz0123456789 to download", "-----BEGIN PRIVATE KEY-----",
             "MIIEv", "-----END PRIVATE KEY-----")
    assert redact_lines(lines) == ("warning: token REDACTED", "REDACTED to download", "-----BEGIN PRIVATE KEY-----",
                                   "REDACTED", "-----END PRIVATE KEY-----")


# -- second hardening round (issue 26) ----------------------------------------------------------------------

ROUND_TWO_TEXT_CASES = [
    # vLLM's --api-key takes several keys, and vLLM logs them as a list among its non-default args.
    ("INFO 03-25 21:13:53 [utils.py:1] non-default args: {'model': '/m', 'api_key': ['k1SECRET', 'k2SECRET'], 'port': 1}",
     "INFO 03-25 21:13:53 [utils.py:1] non-default args: {'model': '/m', 'api_key': ['REDACTED', 'REDACTED'], 'port': 1}"),
    ("args: Namespace(api_key=['k1SECRET', \"k2SECRET\"], port=1)", "args: Namespace(api_key=['REDACTED', \"REDACTED\"], port=1)"),
    ('{"api_key": ["k1SECRET", "k2SECRET"]}', '{"api_key": ["REDACTED", "REDACTED"]}'),
    ("api_key=[] api_key=[None]", "api_key=[] api_key=[None]"),
    ("+ vllm serve /m --api-key k1SECRET k2SECRET --port 1",
     '+ vllm serve /m --api-key "$VLLM_API_KEY" "$VLLM_API_KEY_2" --port 1'),
    ("docker run --gpus all vllm/vllm-openai:v0.9.0 --model /m --api-key k1SECRET k2SECRET",
     'docker run --gpus all vllm/vllm-openai:v0.9.0 --model /m --api-key "$VLLM_API_KEY" "$VLLM_API_KEY_2"'),
    # A line continuation between a secret flag and its value.
    ("python -m sglang.launch_server --api-key \\\n  SECRETcont --port 1",
     'python -m sglang.launch_server --api-key \\\n  "$SGLANG_API_KEY" --port 1'),
    ("error: --api-key \\\nSECRETcont", "error: --api-key \\\nREDACTED"),
    ("error: --api-key=\\\nSECRETcont", "error: --api-key=\\\nREDACTED"),
    ("export HF_TOKEN=\\\nSECRETcont", "export HF_TOKEN=\\\nREDACTED"),
    # Passwords with a slash, in URLs and scp-style user:password@host.
    ("postgres://u:pa/ss@db.internal/x", "postgres://u:REDACTED@db.internal/x"),
    ("https://host:8080/path/a@b", "https://host:8080/path/a@b"),
    ("rsync -a admin:hun/ter2@backup.example.com:/data .", "rsync -a admin:REDACTED@backup.example.com:/data ."),
    ("git clone deploy:SECRETscp@git.internal:repo.git", "git clone deploy:REDACTED@git.internal:repo.git"),
    # JWTs, wherever they are.
    ("claims eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV rejected",
     "claims REDACTED rejected"),
    ("claims eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIx\nMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fw rejected", "claims REDACTED\nREDACTED rejected"),
    # A token wrapped in a raw log, where the next line starts with its record header.
    ("WARNING 03-25 21:13:53 [a.py:1] token hf_AbCdEfGhIj\nWARNING 03-25 21:13:53 [a.py:1] KlMnOpQrStUvWxYz0123 x",
     "WARNING 03-25 21:13:53 [a.py:1] token REDACTED\nWARNING 03-25 21:13:53 [a.py:1] REDACTED x"),
    ("[2026-03-14 09:26:54 TP0] token hf_AbCdEfGhIj\n[2026-03-14 09:26:54 TP0] KlMnOpQrStUvWxYz0123 x",
     "[2026-03-14 09:26:54 TP0] token REDACTED\n[2026-03-14 09:26:54 TP0] REDACTED x"),
    # Slack webhooks: over http, JSON-escaped, or without a scheme.
    ("http://hooks.slack.com/services/T0SECRET/B0SECRET/XXSECRET failed", "http://hooks.slack.com/services/REDACTED failed"),
    ('{"url": "https:\\/\\/hooks.slack.com\\/services\\/T0SECRET\\/B0SECRET\\/XXSECRET"}',
     '{"url": "https:\\/\\/hooks.slack.com\\/services\\/REDACTED"}'),
    # More secret names and token shapes.
    ("openssl passphrase=SECRETpass rest", "openssl passphrase=REDACTED rest"),
    ("Server=db;Uid=sa;Pwd=SECRETpwd;Database=x", "Server=db;Uid=sa;Pwd=REDACTED;Database=x"),
    ("DB_PWD='two SECRET words'", "DB_PWD='REDACTED'"),
    ("glpat-AbCdEfGhIjKlMnOpQrSt", "REDACTED"),
    ("GET https://maps.googleapis.com/x?key=AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW&q=1",
     "GET https://maps.googleapis.com/x?key=REDACTED&q=1"),
    ("GET https://a.blob.core.windows.net/c/b?sv=2020-08-04&sig=AbC%2Bd3fSECRET%3D&se=x",
     "GET https://a.blob.core.windows.net/c/b?sv=2020-08-04&sig=REDACTED&se=x"),
    # Not secrets: the working directory, a signal, a host without a password, a log header.
    ("PWD=/home/u/run OLDPWD=/tmp", "PWD=/home/u/run OLDPWD=/tmp"),
    ("handler(sig=SIGTERM) sig=15", "handler(sig=SIGTERM) sig=15"),
    ("scp model.bin user@node1:/data", "scp model.bin user@node1:/data"),
    ("pulled sglang:v0.5.9@sha256:0123abcd", "pulled sglang:v0.5.9@sha256:0123abcd"),
    ("ERROR 03-14 09:26:54 engine.py:366] failed", "ERROR 03-14 09:26:54 engine.py:366] failed"),
]


ROUND_TWO_COMMAND_CASES = [
    ("vllm serve /m --api-key k1SECRET k2SECRET k3SECRET --port 1",
     'vllm serve /m --api-key "$VLLM_API_KEY" "$VLLM_API_KEY_2" "$VLLM_API_KEY_3" --port 1'),
    ("vllm serve /m --api-key k1SECRET k2SECRET > run.log 2>&1",
     'vllm serve /m --api-key "$VLLM_API_KEY" "$VLLM_API_KEY_2" > run.log 2>&1'),
    ("vllm serve /m --api-key \\\n  k1SECRET \\\n  k2SECRET",
     'vllm serve /m --api-key \\\n  "$VLLM_API_KEY" \\\n  "$VLLM_API_KEY_2"'),
    ("vllm serve /m --api-key \\", "vllm serve /m --api-key \\"),
    ("vllm serve /m --api-key=\\\nk1SECRET --port 1", 'vllm serve /m --api-key=\\\n"$VLLM_API_KEY" --port 1'),
    ("HF_TOKEN=\\\nhf_SECRET vllm serve /m", 'HF_TOKEN=\\\n"$HF_TOKEN" vllm serve /m'),
]


@pytest.mark.parametrize(("text", "expected"), TEXT_CASES + ROUND_TWO_TEXT_CASES)
def test_redact_secrets(text: str, expected: str) -> None:
    assert redact_secrets(text) == expected


@pytest.mark.parametrize(("command", "expected"), COMMAND_CASES + ROUND_TWO_COMMAND_CASES)
def test_redact_command(command: str, expected: str) -> None:
    assert redact_command(command) == expected


def test_a_continued_command_across_log_lines() -> None:
    """The value of `--api-key \\` is on the next log line: seen across the lines, the line count kept."""
    lines = ("$ vllm serve /m --api-key \\", "    SECRETcont --port 1", "INFO ready")
    assert redact_lines(lines) == ("$ vllm serve /m --api-key \\", '    "$VLLM_API_KEY" --port 1', "INFO ready")
