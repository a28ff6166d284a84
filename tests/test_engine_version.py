"""A version the log names, one logsleuth inferred and one the user gave are told apart, and a guess never
keeps the right pattern out."""

from __future__ import annotations

from logsleuth.api import DiagnoseOptions, diagnose_text

FRAME_0523 = '  File "/usr/lib/python3/dist-packages/sglang/srt/arg_groups/speculative_hook.py", line 1162, in _handle_eagle_family\n'
TRACEBACK = (
    "Traceback (most recent call last):\n"
    + FRAME_0523
    + "    assert self.speculative_eagle_topk is None and self.speculative_num_draft_tokens is None\n"
    "AssertionError\n"
)


def test_the_version_source_is_named() -> None:
    inferred = diagnose_text(TRACEBACK, DiagnoseOptions(include_user_patterns=False)).launch
    assert (inferred.engine_version, inferred.engine_version_source) == ("0.5.23", "inferred")
    logged = diagnose_text("sglang==0.5.22 started\n" + TRACEBACK, DiagnoseOptions(include_user_patterns=False)).launch
    assert (logged.engine_version, logged.engine_version_source) == ("0.5.22", "log")
    given = diagnose_text(TRACEBACK, DiagnoseOptions(include_user_patterns=False, engine_version="0.5.9")).launch
    assert (given.engine_version, given.engine_version_source) == ("0.5.9", "user")
    nothing = diagnose_text("ValueError: x\n", DiagnoseOptions(include_user_patterns=False)).launch
    assert nothing.engine_version_source is None


def test_vllm_names_its_version_in_its_own_words() -> None:
    """vllm/entrypoints/openai/api_server.py ("vLLM API server version %s", 0.4.3 to 0.11.0), and the engine's
    start line (vllm/v1/engine/core.py, V0 vllm/engine/llm_engine.py)."""
    options = DiagnoseOptions(include_user_patterns=False)
    for line, version in (
        ("(APIServer pid=7) INFO 10-02 11:00:00 [api_server.py:1839] vLLM API server version 0.11.0", "0.11.0"),
        ("(EngineCore_DP0 pid=9) INFO 10-02 11:00:05 [core.py:77] Initializing a V1 LLM engine (v0.11.0) with "
         "config: model='m'", "0.11.0"),
        ("INFO 01-02 11:00:05 llm_engine.py:235] Initializing an LLM engine (v0.6.6.post1) with config: model='m'",
         "0.6.6.post1"),
    ):
        launch = diagnose_text(line + "\nValueError: x\n", options).launch
        assert (launch.engine, launch.engine_version, launch.engine_version_source) == ("vllm", version, "log"), line
