"""The planted-secret suite (issue 26): every secret form, planted in a log, and every output logsleuth writes.

Outputs: the five report formats, `case`, the `--explain` request (the body the OpenAI-compatible stand-in of
tests/explain/llm_standin.py received), `diff`, `health` in every format, the fleet table of several sources,
and what a Slack webhook receives (a local HTTP server on 127.0.0.1 stands in for Slack).  What `launch` prints
is checked against the private sshd in tests/ssh/test_planted_launch.py, which needs that server's fixtures.
Every output must hold none of the planted secrets.
"""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text


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
