"""A server's JSON error body as clients print it (issue 28, stop 39 class 1): escaped, as a Python dict, hard-wrapped
or indented.  Only its type was read before, and the failure was "unclassified"; the body's message names the
category.

Each shape is produced by the program that prints it, here: `json.dumps` (with `indent=2` as `jq` and pretty-printing
clients show it), `repr()` of the bytes a client received and of the dict the openai client holds, `textwrap.wrap`
for a paste cut at a width.  The body is the one SGLang answers a request longer than the context with
(sglang/srt/managers/tokenizer_manager.py `_validate_one_request`: "The input ({input_token_num} tokens) is longer
than the model's context length ({self.context_len} tokens)."; the server's ErrorResponse: object, message, type,
param, code)."""

from __future__ import annotations

import json

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.ingest.normalize import normalize_text
from logsleuth.tracebacks.scanner import scan

MESSAGE = "The input (9120 tokens) is longer than the model's context length (8192 tokens)."
BODY = {"object": "error", "message": MESSAGE, "type": "BadRequestError", "param": None, "code": 400}
ONE_LINE = json.dumps(BODY, separators=(",", ":"))


def _wrapped(text: str, width: int) -> str:
    return "\n".join(text[i:i + width] for i in range(0, len(text), width))


SHAPES = {
    "bytes-repr": f"request failed: {repr(ONE_LINE.encode())}",  # b'{"object":"error",…the model\'s…}'
    "python-dict": repr(BODY),  # {'object': 'error', 'message': "…model's…", …}
    "json-in-json": json.dumps({"detail": ONE_LINE}),  # the body as a string inside another body
    "indented": json.dumps(BODY, indent=2),  # one member a line
    "indented-after-a-line": "Error response:\n" + json.dumps(BODY, indent=4),
    "hard-wrapped": _wrapped(ONE_LINE, 80),  # a terminal's or the issue form's wrap, cutting inside the message
}


@pytest.mark.parametrize("shape", list(SHAPES))
def test_the_bodys_message_is_read_whatever_the_paste_did_to_it(shape: str) -> None:
    text = SHAPES[shape]
    assert "context length" in text
    failures = scan(normalize_text(text + "\n"))
    assert [(f.final.type, f.final.message) for f in failures] == [("BadRequestError", MESSAGE)], failures


@pytest.mark.parametrize("shape", ["python-dict", "indented", "hard-wrapped"])
def test_a_request_longer_than_the_context_is_the_context_length_category(shape: str) -> None:
    launch = "$ python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --context-length 8192\n"
    report = diagnose_text(launch + SHAPES[shape] + "\n", DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "context-length", diagnosis
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "shorten the prompt" in steps and "--context-length" in steps, steps


@pytest.mark.parametrize("text", [
    json.dumps({"model": "Qwen/Qwen3-8B", "messages": [{"role": "user", "content": "hi"}]}, indent=2),  # a request, no error
    json.dumps({"object": "list", "data": [{"id": "Qwen/Qwen3-8B", "object": "model"}]}, indent=2),
    '{\n  "object": "error",\n  "message": "The input (9120 tok',  # cut off before it closes
])
def test_json_over_lines_that_is_no_whole_error_body_is_no_failure(text: str) -> None:
    assert [f for f in scan(normalize_text(text + "\n")) if f.kind == "line"] == []


def test_the_lines_of_an_indented_body_start_no_failure_of_their_own() -> None:
    """The `"type": "BadRequestError",` member alone looks like a quoted exception name: it is part of the body."""
    failures = scan(normalize_text(SHAPES["indented"] + "\n"))
    assert len(failures) == 1 and failures[0].line == 1
