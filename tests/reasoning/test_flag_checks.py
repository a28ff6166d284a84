"""The engine's own checks of its launch flags after parsing (reasoning/flag_checks.py): one flag needs another, a
value off the engine's registry of parsers.

Each log is a traceback real CPython printed: the raising statement is compiled under the engine's file name and
raised with the message the engine's format string makes (the raise sites are cited in flag_checks.py)."""

from __future__ import annotations

import traceback

import pytest

from logsleuth.api import DiagnoseOptions
from tests.reasoning.diagnosed import app_traceback, category_of, first_diagnosis

API_SERVER = "/usr/local/lib/python3.12/dist-packages/vllm/entrypoints/openai/api_server.py"
BANNER = "INFO 05-10 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"


def raised(statement: str, filename: str = API_SERVER) -> str:
    """The traceback CPython prints for `statement` run as the engine's code (a real traceback, not composed)."""
    code = compile("def run_server(args):\n    " + statement + "\nrun_server(None)\n", filename, "exec")
    try:
        exec(code, {})  # noqa: S102 - the test's own statement
    except Exception as error:  # noqa: BLE001 - any exception the statement raises is the test's log
        return "".join(traceback.format_exception(error))
    raise AssertionError("the statement raised nothing")


def test_a_flag_that_needs_another_gets_that_flag_or_leaves_itself_out() -> None:
    log = BANNER + raised('raise TypeError("Error: --enable-auto-tool-choice requires " "--tool-call-parser")')
    diagnosis = first_diagnosis(log)
    assert diagnosis.basis == "rule" and diagnosis.category == "missing-flag" and diagnosis.engine == "vllm"
    fix = diagnosis.fix
    assert fix is not None and [(op.op, op.flag, op.value) for op in fix.flags] == [("add", "--tool-call-parser", None)]
    assert fix.needs_input == ("--tool-call-parser",) and fix.command is None  # its value is the user's
    assert [(op.op, op.flag) for op in fix.alternatives[0].flags] == [("remove", "--enable-auto-tool-choice")]


@pytest.mark.parametrize(("message", "flag", "value"), [
    # 0.8.5's wording, with the spaces inside the braces
    ("invalid reasoning parser: deepseek-r1 (chose from { deepseek_r1,granite,qwen3 })", "--reasoning-parser", "deepseek_r1"),
    # 0.11's "choose from": the same name written with other case or separators
    ("invalid tool call parser: Hermes (choose from {hermes,mistral,pythonic})", "--tool-call-parser", "hermes"),
])
def test_a_value_off_the_engine_s_registry_gets_the_nearest_listed_value(message: str, flag: str, value: str) -> None:
    log = BANNER + raised(f"raise KeyError({message!r})")
    diagnosis = first_diagnosis(log)
    assert diagnosis.category == "invalid-flag-value" and diagnosis.fix is not None
    assert [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [("set", flag, value)]


def test_a_value_near_nothing_listed_is_the_user_s_to_choose_from_the_list() -> None:
    log = BANNER + raised('raise KeyError("invalid tool call parser: qwen3 (chose from { hermes,mistral,pythonic })")')
    fix = first_diagnosis(log).fix
    assert fix is not None and fix.needs_input == ("--tool-call-parser",)
    assert "hermes, mistral, pythonic" in fix.summary


@pytest.mark.parametrize("message", [
    "invalid tool call parser: hermess (choose from {hermes,mistral,pythonic})",
    "invalid tool call parser: llama4_json (choose from {hermes,llama3_json,mistral})",
])
def test_a_parser_is_never_picked_by_its_spelling(message: str) -> None:
    """Stop 39's blind split: a parser names the model family's format; a listed name spelt like the value (llama3_json
    for llama4_json) may be another family's, so the choices are listed and the pick is the user's."""
    fix = first_diagnosis(BANNER + raised(f"raise KeyError({message!r})")).fix
    assert fix is not None and fix.needs_input == ("--tool-call-parser",)
    assert [(op.op, op.value) for op in fix.flags] == [("set", None)]


def test_an_argparse_choice_of_a_parser_is_never_picked_by_its_spelling() -> None:
    log = ("INFO 05-02 10:00:01 [api_server.py:1043] vLLM API server version 0.8.5\n"
           "usage: vllm serve [model_tag] [options]\n"
           "vllm serve: error: argument --tool-call-parser: invalid choice: 'qwen' (choose from 'granite', 'hermes', "
           "'internlm', 'jamba', 'llama3_json', 'mistral', 'pythonic')\n")
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.op, op.flag, op.value) for op in fix.flags] == [("set", "--tool-call-parser", None)]
    assert "model's family" in fix.summary and "granite, hermes, internlm" in fix.summary


def test_an_unregistered_parser_names_the_release_s_flag() -> None:
    serving = API_SERVER.replace("api_server.py", "serving_chat.py")
    log = BANNER + raised("raise TypeError(\"Error: --enable-auto-tool-choice requires tool_parser:'qwen3_coder' which has not been registered\")", serving)
    diagnosis = first_diagnosis(log)
    assert diagnosis.category == "invalid-flag-value" and diagnosis.fix is not None
    assert diagnosis.fix.flags[0].flag == "--tool-call-parser"


def test_a_flag_the_release_lacks_is_never_offered() -> None:
    """--enable-auto-tool-choice is vLLM's: an SGLang launch that printed the words gets no rule's fix naming it."""
    log = ("$ python -m sglang.launch_server --model-path /m\n"
           + raised('raise TypeError("Error: --enable-auto-tool-choice requires --tool-call-parser")',
                    "/usr/local/lib/python3.12/dist-packages/sglang/srt/server_args.py"))
    assert category_of(log) != "missing-flag"


def test_a_user_s_own_script_is_not_claimed() -> None:
    """No engine decided: no release to check the flags in.  (vLLM's own wording, TypeError and all, now names vLLM
    from the message alone, issue 29 item 3; a script's own flags of the same shape name no engine.)"""
    diagnosis = first_diagnosis(app_traceback("TypeError: Error: --enable-report requires --report-dir"),
                                DiagnoseOptions(include_user_patterns=False))
    assert diagnosis.basis != "rule"


# SGLang's ServerArgs checks of the same shape (sglang/srt/arg_groups/*_hook.py, 0.5.23; the raise site index holds them)
HOOKS = "/usr/local/lib/python3.12/dist-packages/sglang/srt/arg_groups/{}.py"
SGLANG_LAUNCH = "$ python -m sglang.launch_server --model-path /m --tp-size 2 --enable-session-radix-cache\n"


def test_sglang_a_flag_needing_a_value_the_message_names_gets_it_in_the_user_s_command() -> None:
    log = SGLANG_LAUNCH + raised('raise ValueError("--enable-session-radix-cache requires --radix-eviction-policy priority")',
                                 HOOKS.format("kv_cache_hook"))
    diagnosis = first_diagnosis(log)
    assert diagnosis.engine == "sglang" and diagnosis.category == "missing-flag" and diagnosis.fix is not None
    assert [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [("set", "--radix-eviction-policy", "priority")]
    assert not diagnosis.fix.needs_input and diagnosis.fix.command is not None
    assert "--tp-size 2 --enable-session-radix-cache --radix-eviction-policy priority" in diagnosis.fix.command


def test_sglang_a_flag_needing_a_switch_and_a_value_only_the_user_knows() -> None:
    log = ("$ python -m sglang.launch_server --model-path /m --enable-ssl-refresh\n"
           + raised('raise ValueError("--enable-ssl-refresh requires --ssl-certfile and --ssl-keyfile to be specified.")',
                    HOOKS.format("serving_hook")))
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.op, op.flag, op.value) for op in fix.flags] == [
        ("add", "--ssl-certfile", None), ("add", "--ssl-keyfile", None)]
    assert fix.needs_input == ("--ssl-certfile", "--ssl-keyfile")


def test_sglang_a_needed_switch_is_added_alone() -> None:
    log = ("$ python -m sglang.launch_server --model-path /m --watermark-config /w.json\n"
           + raised('raise ValueError("--watermark-config requires --enable-watermark")', HOOKS.format("validation_hook")))
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.op, op.flag, op.value) for op in fix.flags] == [("set", "--enable-watermark", "")]
    assert fix.command is not None and fix.command.endswith("--watermark-config /w.json --enable-watermark")  # the user's own


def test_a_word_after_the_needed_flag_that_is_no_value_of_it_is_not_taken_as_one() -> None:
    log = SGLANG_LAUNCH + raised('raise ValueError("--kv-canary-sweep-interval requires --kv-canary in {log, raise}")',
                                 HOOKS.format("validation_hook"))
    fix = first_diagnosis(log).fix
    assert fix is not None and fix.flags[0].value is None and fix.needs_input == ("--kv-canary",)
    assert "log, raise" in fix.summary or "none, log, raise" in fix.summary


# -- two settings the engine compared (vllm/config/scheduler.py SchedulerConfig) ------------------------------------------------

SCHEDULER_MESSAGE = ("max_num_batched_tokens (4096) is smaller than max_model_len (32768). This effectively limits the maximum "
                     "sequence length to max_num_batched_tokens and makes vLLM reject longer sequences. Please increase "
                     "max_num_batched_tokens or decrease max_model_len.")


def pydantic_error(message: str, config: str) -> str:
    """The statement that raises pydantic-core's ValidationError as vLLM's config dataclasses do (pydantic_core's type is
    a Rust class; a Python class with its module and name prints the same traceback line)."""
    text = (f"1 validation error for {config}\n  Value error, {message} [type=value_error, input_value=ArgsKwargs((), "
            "{'runner_type': 'generate'}), input_type=ArgsKwargs]\n    For further information visit "
            "https://errors.pydantic.dev/2.11/v/value_error")
    return (f"raise type('ValidationError', (ValueError,), {{'__module__': 'pydantic_core._pydantic_core'}})({text!r})")


def test_two_compared_settings_get_the_value_the_check_asks_for_in_the_user_s_command() -> None:
    launch = "$ vllm serve /models/qwen --max-model-len 32768 --max-num-batched-tokens 4096 --port 8000\n"
    log = launch + raised(pydantic_error(SCHEDULER_MESSAGE, "SchedulerConfig"),
                          "/usr/local/lib/python3.12/dist-packages/pydantic/_internal/_dataclasses.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.engine == "vllm" and diagnosis.category == "invalid-flag-value" and diagnosis.fix is not None
    assert [(op.op, op.flag, op.value) for op in diagnosis.fix.flags] == [("set", "--max-num-batched-tokens", "32768")]
    assert diagnosis.fix.command is not None and "--max-num-batched-tokens 32768" in diagnosis.fix.command
    assert [(op.flag, op.value) for op in diagnosis.fix.alternatives[0].flags] == [("--max-model-len", "4096")]


def test_a_v0_scheduler_check_as_a_plain_value_error() -> None:
    """vLLM 0.6's SchedulerConfig._verify_args raised the same words as a ValueError (vllm/config.py)."""
    log = BANNER + raised(f"raise ValueError({SCHEDULER_MESSAGE!r})", "/usr/local/lib/python3.12/dist-packages/vllm/config.py")
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--max-num-batched-tokens", "32768")]


def test_a_requirement_that_is_strict_moves_past_the_other_value() -> None:
    log = BANNER + raised('raise ValueError("max_num_batched_tokens (64) must be greater than max_num_seqs (128).")',
                          "/usr/local/lib/python3.12/dist-packages/vllm/config/scheduler.py")
    fix = first_diagnosis(log).fix
    assert fix is not None and [(op.flag, op.value) for op in fix.flags] == [("--max-num-batched-tokens", "129")]
    assert [(op.flag, op.value) for op in fix.alternatives[0].flags] == [("--max-num-seqs", "63")]


# -- --quantization against the checkpoint's own method (ModelConfig._verify_quantization, both engines) ---------------------------

QUANT_MISMATCH = ("Quantization method specified in the model config (fp8) does not match the quantization method specified "
                  "in the `quantization` argument (awq).")


@pytest.mark.parametrize(("launch", "path"), [
    ("$ python -m sglang.launch_server --model-path /m --quantization awq --tp-size 2\n",
     "/usr/local/lib/python3.12/dist-packages/sglang/srt/configs/model_config.py"),
    ("$ vllm serve /m --quantization awq --max-model-len 8192\n" + BANNER,
     "/usr/local/lib/python3.12/dist-packages/vllm/config.py"),
], ids=["sglang", "vllm"])
def test_a_quantization_flag_against_the_checkpoint_s_method_is_left_out(launch: str, path: str) -> None:
    log = launch + raised(f"raise ValueError({QUANT_MISMATCH!r})", path)
    diagnosis = first_diagnosis(log)
    assert diagnosis.basis == "rule" and diagnosis.category == "quantization" and diagnosis.fix is not None
    assert [(op.op, op.flag) for op in diagnosis.fix.flags] == [("remove", "--quantization")]
    assert diagnosis.fix.command is not None and "--quantization" not in diagnosis.fix.command
    assert "fp8" in diagnosis.fix.summary


def test_gguf_weights_with_another_method_s_config_keep_their_quantization() -> None:
    """vllm-project/vllm#19050: a GGUF file read with the fp8 checkpoint's config.json; leaving out --quantization would
    not help (the weights are GGUF): the config's quantization_config is what goes."""
    message = QUANT_MISMATCH.replace("(awq)", "(gguf)")
    log = ("$ vllm serve /models/R1-GGUF/R1-UD-IQ2_XXS-00001-of-00005.gguf --quantization gguf\n" + BANNER
           + raised(f"raise ValueError({message!r})", "/usr/local/lib/python3.12/dist-packages/vllm/config.py"))
    diagnosis = first_diagnosis(log)
    assert diagnosis.category == "quantization" and diagnosis.fix is not None
    assert not diagnosis.fix.flags and "quantization_config" in diagnosis.fix.summary
