"""A tool-call or reasoning parser name the engine's registry refused, or none given (reasoning/parser_names.py): the
flag, the kind the name is, and only names the release has.

Threads: THUDM/slime#2019 (SGLang's "Unsupported tool_call_parser: qwen3": qwen3 is a reasoning parser),
sgl-project/sglang#9102 ("Unsupported tool_call_parser: None": tools sent to a server launched without
--tool-call-parser).  Each log is a traceback real CPython printed: the raising statement is compiled under the
engine's file name and raised with the message the engine's format string makes (the raise sites are cited in
parser_names.py)."""

from __future__ import annotations

import traceback

import pytest

from logsleuth.api import DiagnoseOptions
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from tests.reasoning.diagnosed import first_diagnosis

SGLANG = "/usr/local/lib/python3.12/dist-packages/sglang/srt/"
VLLM = "/usr/local/lib/python3.12/dist-packages/vllm/"
VLLM_BANNER = "INFO 05-10 10:00:00 [api_server.py:1043] vLLM API server version 0.11.2\n"


def raised(statement: str, filename: str, function: str = "__init__") -> str:
    """The traceback CPython prints for `statement` run as the engine's code (a real traceback, not composed)."""
    code = compile(f"def {function}(name):\n    {statement}\n{function}(None)\n", filename, "exec")
    try:
        exec(code, {})  # noqa: S102 - the test's own statement
    except Exception as error:  # noqa: BLE001 - any exception the statement raises is the test's log
        return "".join(traceback.format_exception(error))
    raise AssertionError("the statement raised nothing")


def tool_refusal(value: str) -> str:
    return raised(f'raise ValueError("Unsupported tool_call_parser: {value}")',
                  SGLANG + "function_call/function_call_parser.py")


def every_known_list(flag: str) -> list[tuple[str, ...]]:
    lists = []
    for release in static_catalogs.releases("sglang"):
        info = (catalog := catalogs.load("sglang", release)) and catalog.find(flag)
        if info and info.choices_known and info.choices:
            lists.append(info.choices)
    return lists


def offered_names(summary: str) -> list[str]:
    """The names in the fix's list of every release's names (between ': ' and ';')."""
    listed = summary.split("has: ", 1)[1].split(";", 1)[0]
    return [name.strip() for name in listed.split(",")]


def test_a_reasoning_parser_name_given_as_the_tool_call_parser_is_named_as_such() -> None:
    diagnosis = first_diagnosis(tool_refusal("qwen3"))
    assert diagnosis.pattern == "rule-parser-name" and diagnosis.category == "invalid-flag-value"
    assert "reasoning parser name (--reasoning-parser, in SGLang" in diagnosis.root_cause
    fix = diagnosis.fix
    assert fix is not None and fix.needs_input == ("--tool-call-parser",)
    assert [(op.op, op.flag, op.value) for op in fix.flags] == [("set", "--tool-call-parser", None)]
    assert "qwen25 (listed by SGLang 0.4.2 and later)" in fix.summary  # the family's tool-call parsers, with releases
    # no release known: only names every release with a known list has
    for name in offered_names(fix.summary):
        assert all(name in known for known in every_known_list("--tool-call-parser")), name


def test_no_parser_given_is_a_missing_flag() -> None:
    diagnosis = first_diagnosis(tool_refusal("None"))
    assert (diagnosis.pattern, diagnosis.category) == ("rule-parser-name", "missing-flag")
    assert diagnosis.fix is not None
    assert [(op.op, op.flag) for op in diagnosis.fix.flags] == [("add", "--tool-call-parser")]


def test_the_named_release_s_own_names_are_offered() -> None:
    diagnosis = first_diagnosis(tool_refusal("hermes2"), DiagnoseOptions(include_user_patterns=False,
                                                                          engine_version="0.5.9"))
    fix = diagnosis.fix
    catalog = catalogs.load("sglang", "0.5.9")
    info = catalog.find("--tool-call-parser") if catalog else None
    assert fix is not None and info is not None
    assert f"SGLang 0.5.9's tool-call parsers: {', '.join(info.choices)}" in fix.summary
    assert "hermes (listed by SGLang 0.5.9 and later)" in fix.summary


def test_a_tool_call_parser_name_given_as_the_reasoning_parser() -> None:
    log = raised('raise ValueError("Unsupported model type: hermes")', SGLANG + "parser/reasoning_parser.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-parser-name"
    assert "tool-call parser name (--tool-call-parser, in SGLang" in diagnosis.root_cause


def test_the_model_config_s_unsupported_model_type_is_not_a_parser() -> None:
    """Look-alike: the same words raised where the model's config is read name the model."""
    log = raised('raise ValueError("Unsupported model type: hermes")', SGLANG + "configs/model_config.py")
    assert first_diagnosis(log).pattern != "rule-parser-name"


@pytest.mark.parametrize("statement", [
    "raise KeyError(\"Reasoning parser 'qwen3_coder' not found. Available parsers: ['deepseek_r1', 'qwen3']\")",
])
def test_vllm_s_own_list_is_the_one_offered(statement: str) -> None:
    log = VLLM_BANNER + raised(statement, VLLM + "reasoning/abs_reasoning_parsers.py", "get_reasoning_parser")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-parser-name" and diagnosis.fix is not None
    assert "the names this release lists: deepseek_r1, qwen3)" in diagnosis.fix.summary
    assert "--help" not in diagnosis.fix.summary
