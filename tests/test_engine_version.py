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


def test_an_invalid_choice_narrows_a_guessed_release_to_the_ones_that_list_those_choices() -> None:
    # `launch_server.py` is SGLang's program before `sglang serve`: any release up to 0.5.2x.  The choices argparse
    # printed are the running release's own: the newest release whose --attention-backend had exactly these three
    # is the guess (the static catalogs), not a fixed 0.5.9, whose list is much longer
    from logsleuth.api import DiagnoseOptions, diagnose_text
    from logsleuth.fixes import catalog, static_catalogs

    line = ("launch_server.py: error: argument --attention-backend: invalid choice: 'fa3' "
            "(choose from 'flashinfer', 'triton', 'torch_native')\n")
    launch = diagnose_text(line, DiagnoseOptions(include_user_patterns=False)).launch
    assert (launch.engine, launch.engine_version_source) == ("sglang", "inferred")
    assert launch.engine_version in static_catalogs.releases_with_choices(
        "sglang", "--attention-backend", frozenset({"flashinfer", "triton", "torch_native"}))
    choices = catalog.load("sglang", launch.engine_version).find("--attention-backend").choices  # type: ignore[union-attr]
    assert set(choices or ()) == {"flashinfer", "triton", "torch_native"}
    # a list no release had leaves the program's guess
    other = line.replace("'torch_native'", "'no_such_backend'")
    assert diagnose_text(other, DiagnoseOptions(include_user_patterns=False)).launch.engine_version == "0.5.9"
