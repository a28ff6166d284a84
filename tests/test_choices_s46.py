"""Stop 46 (choices), in generic words (issue 28): a launch gives a value the running release does not take.

- argparse's `invalid choice: 'v' (choose from …)`: a listed choice is offered only when it is the value under another
  spelling (case, dashes, underscores, a documented alias); a choice a few letters away is often another thing
  ('fp4' is not 'fp8_e4m3', 'sharded_state' is not 'safetensors': vllm-project/vllm#7784), so the list is given and
  the pick is the user's, with what the release catalogs say of the value: the releases that list it, or that later
  releases than the printed list take the flag's value from no fixed list (vLLM 0.6.0-0.6.2 printed
  ('mistral', 'hermes') for --tool-call-parser, 0.6.3 checks a registry instead: vllm-project/vllm#9312).
- The engine's own `Unknown <setting>: v. Must be one of [...]` (both engines' ModelConfig._verify_quantization, vLLM's
  tokenizer-mode and prefix-caching checks: the raise site index): the setting's flag, the release's own list, and for
  --quantization that the value may come from the checkpoint's config.json, so no flag is set the command does not give
  (xusenlinzy/api-for-open-llm#196: 'gptq' on a release listing awq and squeezellm; HanGuo97/flute#10).
Tracebacks and usage errors are real CPython's, from our own code; the messages are the engines' templates."""

from __future__ import annotations

import argparse

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import Diagnosis
from tests.helpers import diagnose_without_patterns, real_traceback


def usage_error(prog: str, flag: str, choices: list[str], value: str) -> str:
    """argparse's own refusal of `value` for `flag`, as the program `prog` prints it."""
    parser = argparse.ArgumentParser(prog=prog, exit_on_error=False)
    parser.add_argument(flag, choices=choices)
    with pytest.raises(argparse.ArgumentError) as raised:
        parser.parse_args([flag, value])
    return f"usage: {prog} [-h]\n{prog}: error: {raised.value}\n"


def diagnosis_of(log: str, **options: object) -> Diagnosis:
    report = diagnose_text(log, DiagnoseOptions(include_user_patterns=False, **options))  # type: ignore[arg-type]
    found = report.failures[0].diagnosis
    assert found is not None and found.fix is not None
    return found


def test_a_choice_a_few_letters_away_is_not_offered() -> None:
    log = usage_error("launch_server.py", "--kv-cache-dtype", ["auto", "fp8_e5m2", "fp8_e4m3"], "fp4")
    found = diagnosis_of(log)
    assert found.category == "invalid-flag-value"
    assert found.fix is not None and found.fix.needs_input == ("--kv-cache-dtype",)
    assert [op.value for op in found.fix.flags] == [None] and "use fp8" not in found.fix.summary


def test_the_same_name_spelt_otherwise_is_still_offered() -> None:
    log = usage_error("launch_server.py", "--attention-backend", ["triton", "flashinfer", "fa3"], "FlashInfer")
    found = diagnosis_of(log)
    assert found.fix is not None and [(op.op, op.value) for op in found.fix.flags] == [("set", "flashinfer")]
    assert not found.fix.needs_input


def test_a_list_printed_before_the_flag_took_any_registered_name_says_so() -> None:
    """vLLM 0.6.0 to 0.6.2 list ('mistral', 'hermes'); from 0.6.3 the parser's name is checked after parsing."""
    log = usage_error("api_server.py", "--tool-call-parser", ["mistral", "hermes"], "llama3_json")
    found = diagnosis_of(log, engine="vllm")
    assert found.fix is not None and found.fix.needs_input == ("--tool-call-parser",)
    assert "the list printed is that of vLLM 0.6.0 to 0.6.2" in found.fix.summary
    assert "from vLLM 0.6.3, --tool-call-parser takes no fixed list" in found.fix.summary
    assert "hermes" not in [op.value for op in found.fix.flags]


_VERIFY = '''
def verify_quantization(quantization, supported):
    if quantization not in supported:
        raise ValueError(f"Unknown quantization method: {quantization}. Must be one of {supported}.")

verify_quantization(VALUE, SUPPORTED)
'''


def quantization_refused(value: str, supported: list[str]) -> str:
    return real_traceback(_VERIFY.replace("VALUE", repr(value)).replace("SUPPORTED", repr(supported)))


def test_an_unlisted_quantization_method_sets_no_flag_the_command_does_not_give() -> None:
    """The method may be the checkpoint's own (its config.json), read when --quantization is not given."""
    found = diagnose_without_patterns(quantization_refused("gptq", ["awq", "squeezellm"]))
    assert found.pattern == "rule-flag-checks-listed" and found.category == "invalid-flag-value"
    assert found.fix is not None and found.fix.flags == () and not found.fix.needs_input
    assert "awq, squeezellm" in found.root_cause and "config.json" in found.root_cause
    assert "a release that has 'gptq'" in found.fix.summary


def test_an_unlisted_quantization_method_the_command_gives_is_the_users_pick() -> None:
    log = ("$ vllm serve /models/q --quantization flute\n"
           + quantization_refused("flute", ["aqlm", "awq", "fp8", "gptq", "gptq_marlin"]))
    found = diagnose_without_patterns(log)
    assert found.fix is not None and found.fix.needs_input == ("--quantization",)
    assert [(op.op, op.flag, op.value) for op in found.fix.flags] == [("set", "--quantization", None)]
    assert "gptq_marlin" not in found.fix.summary.split("listed values")[-1]  # never a look-alike picked


def test_a_listed_method_spelt_otherwise_is_offered() -> None:
    found = diagnose_without_patterns("$ vllm serve /models/q --quantization AWQ\n"
                                      + quantization_refused("AWQ", ["awq", "gptq"]))
    assert found.fix is not None and [(op.flag, op.value) for op in found.fix.flags] == [("--quantization", "awq")]


def test_a_setting_no_table_row_names_is_not_read_as_a_flag() -> None:
    """"model type" is not --model: only the settings whose raise sites are indexed name a flag."""
    text = real_traceback('raise ValueError("Unknown model type: foo. Must be one of [\'llama\', \'qwen2\'].")\n')
    assert diagnose_without_patterns(text).pattern != "rule-flag-checks-listed"


@pytest.mark.parametrize(("choices", "expected"), [(["auto", "slow", "mistral", "custom"], "auto"),
                                                   (["auto", "hf", "slow", "mistral"], "hf")])
def test_the_fast_tokenizer_mode_is_the_mode_the_release_documents_for_it(choices: list[str], expected: str) -> None:
    """"'auto' will use the fast tokenizer if available" (SGLang's ServerArgs, vLLM's ModelConfig to 0.11); later vLLM
    documents "hf" as the fast tokenizer's mode."""
    found = diagnosis_of(usage_error("vllm serve", "--tokenizer-mode", choices, "fast"), engine="vllm")
    assert found.fix is not None and [op.value for op in found.fix.flags] == [expected]


def test_a_listed_alias_gets_no_text_only_alternative() -> None:
    """'bf16' is bfloat16: what later releases' open lists might take is no other way beside it."""
    found = diagnosis_of(usage_error("vllm serve", "--dtype", ["auto", "half", "float16", "bfloat16", "float",
                                                               "float32"], "bf16"), engine="vllm", engine_version="0.11.2")
    assert found.fix is not None and [op.value for op in found.fix.flags] == ["bfloat16"] and not found.fix.alternatives


def test_a_checkpoints_method_the_command_does_not_give_is_not_read_as_a_flag_value() -> None:
    """With the pattern library loaded (the path users take): the command shown gives no --quantization, so the method
    is the checkpoint's (config.json); the fix is a release that lists it, never a flag set to a listed method, which
    cannot load a checkpoint made with another one."""
    log = ("$ vllm serve /models/q --max-model-len 8192\n"
           + quantization_refused("mxfp4", ["aqlm", "awq", "fp8", "gptq", "gptq_marlin"]))
    found = diagnosis_of(log)
    assert found.pattern == "rule-flag-checks-listed" and found.category == "quantization"
    assert found.fix is not None and found.fix.flags == () and found.fix.command is None
    assert "gives no --quantization" in found.root_cause and "a release that has 'mxfp4'" in found.fix.summary
