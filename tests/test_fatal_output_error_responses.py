"""vLLM's OpenAI-compatible server refusing a request with an error response, not an exception (tracebacks/
typeless_errors.py ERROR_RESPONSE): `create_error_response` in serving_chat.py (tool_choice "auto" on a server started
without tool calling) and api_server.py (`The model does not support <name> API`, a pooling endpoint the served model's
task does not offer).  Pasted alone, in a sentence or an issue's title (vllm-project/vllm#9986, QwenLM/Qwen-Agent#344,
vllm-project/vllm#14693), it is found as a fallback and typed by the response's default type, BadRequestError.  The
lines around the messages are our own."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.typeless_errors import typeless_error
from tests.helpers import real_traceback
from tests.test_fatal_output_shapes import OPTIONS

AUTO_TOOL_CHOICE = '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser to be set'


@pytest.mark.parametrize("text, message", [
    (AUTO_TOOL_CHOICE, AUTO_TOOL_CHOICE),  # the message alone (QwenLM/Qwen-Agent#344)
    ("[Bug]: Serving chatglm fails with an error: " + AUTO_TOOL_CHOICE, AUTO_TOOL_CHOICE),  # a title (vllm#9986)
    ("agent step 3 -> 400 " + AUTO_TOOL_CHOICE, AUTO_TOOL_CHOICE),
    ("Calls to /v1/rerank often fail: The model does not support the Rerank (Score) API.",
     "The model does not support the Rerank (Score) API"),  # prose (vllm-project/vllm#14693)
    ("The model does not support Embeddings API", "The model does not support Embeddings API"),
])
def test_an_error_response_pasted_without_a_type_is_found(text: str, message: str) -> None:
    report = diagnose_text(text + "\n", OPTIONS)
    assert len(report.failures) == 1
    final = report.failures[0].failure.final
    assert (final.type, final.message) == ("BadRequestError", message)


def test_the_tool_choice_refusal_is_filed_as_a_missing_flag() -> None:
    diagnosis = diagnose_text(AUTO_TOOL_CHOICE + "\n", OPTIONS).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "missing-flag"


def test_inside_the_servers_json_body_the_bodys_type_names_it() -> None:
    body = '{"object":"error","message":"\\"auto\\" tool choice requires --enable-auto-tool-choice and ' \
           '--tool-call-parser to be set","type":"BadRequestError","param":null,"code":400}'
    final = diagnose_text("response: " + body + "\n", OPTIONS).failures[0].failure.final
    assert (final.type, final.message) == ("BadRequestError", AUTO_TOOL_CHOICE)


def test_the_openai_clients_exception_line_keeps_its_own_type() -> None:
    line = ("openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': '" + AUTO_TOOL_CHOICE
            + "', 'type': 'BadRequestError', 'param': None, 'code': 400}")
    final = diagnose_text(line + "\n", OPTIONS).failures[0].failure.final
    assert final.type == "openai.BadRequestError"


@pytest.mark.parametrize("text", [
    "Our gateway does not support the Chat API yet.",  # not the engine's wording
    "This model does not support Score API in our router",
    'the "auto" tool choice needs a parser, so we pass --tool-call-parser hermes',
    "INFO:     10.0.0.3:5132 - \"POST /v1/chat/completions HTTP/1.1\" 400 Bad Request",
])
def test_look_alikes_are_no_failure(text: str) -> None:
    assert diagnose_text(text + "\n", OPTIONS).failures == ()


def test_a_traceback_beside_it_stays_the_failure() -> None:
    traceback = real_traceback('raise RuntimeError("Engine core initialization failed. See root cause above.")',
                               "vllm/entrypoints/cli/main.py")
    report = diagnose_text(AUTO_TOOL_CHOICE + "\n" + traceback, OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["RuntimeError"]


def test_a_long_line_is_read_in_linear_time() -> None:
    line = "The model does not support " + " " * 65536 + "x API " + AUTO_TOOL_CHOICE[:40]
    assert typeless_error(line) is None


# llguidance's refusal of a request's tokens, logged by vLLM's backend_guidance.py at WARNING (`LLMatcher error: %s`):
# a grammar the token does not satisfy (vllm-project/vllm#15554, ngram speculative decoding with structured output) or a
# panic in llguidance (guidance-ai/llguidance#174).  The records are rebuilt in vLLM's format with our own values.
@pytest.mark.parametrize("record, said", [
    ("WARNING 04-02 09:10:11 [backend_guidance.py:86] LLMatcher error: Parser Error: token \" true\" doesn't satisfy "
     "the grammar; byte 't' fails parse", "Parser Error: token \" true\" doesn't satisfy the grammar; byte 't' fails parse"),
    ("WARNING 06-01 10:00:00 [backend_guidance.py:128] LLMatcher error: panic: lexer_stack=[LexerState { row_idx: 0 }]",
     "panic: lexer_stack=[LexerState { row_idx: 0 }]"),
])
def test_llguidances_refusal_logged_as_a_warning_is_found(record: str, said: str) -> None:
    paste = "INFO 04-02 09:10:10 [logger.py:39] Received request chatcmpl-1\n" + record + "\n"
    report = diagnose_text(paste, OPTIONS)
    assert len(report.failures) == 1
    final = report.failures[0].failure.final
    assert (final.type, final.message) == ("LLMatcher error", said)


@pytest.mark.parametrize("text", [
    "WARNING 04-02 09:10:11 [backend_xgrammar.py:160] xgrammar could not compile the schema, falling back",
    "We never saw an LLMatcher error in 0.8.4.",  # no message after it
    "WARNING 04-02 09:10:11 [backend_guidance.py:86] LLMatcher error:",
])
def test_other_warnings_are_no_llguidance_refusal(text: str) -> None:
    report = diagnose_text(text + "\n", OPTIONS)
    assert all(group.failure.final.type != "LLMatcher error" for group in report.failures)


def test_a_traceback_beside_llguidances_refusal_stays_the_failure() -> None:
    traceback = real_traceback('raise RuntimeError("Engine core initialization failed. See root cause above.")',
                               "vllm/entrypoints/cli/main.py")
    record = "WARNING 04-02 09:10:11 [backend_guidance.py:86] LLMatcher error: Parser Error: token \"x\" fails\n"
    report = diagnose_text(record + traceback, OPTIONS)
    assert [group.failure.final.type for group in report.failures] == ["RuntimeError"]
