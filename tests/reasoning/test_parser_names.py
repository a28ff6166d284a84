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
    """The flag's choices of each SGLang release whose static catalog record lists them (read from the records, not
    through the module's own helper)."""
    lists = []
    for release in static_catalogs.releases("sglang"):
        for record in static_catalogs.flag_records("sglang", release) or ():
            if record["name"] == flag and isinstance(record.get("choices"), list) and record["choices"]:
                lists.append(tuple(record["choices"]))
    return lists


def offered_names(summary: str) -> list[str]:
    """The names in the fix's list of every release's names (between ': ' and ';')."""
    listed = summary.split("has: ", 1)[1].split(";", 1)[0]
    return [name.strip() for name in listed.split(",")]


def test_a_reasoning_parser_name_given_as_the_tool_call_parser_is_named_as_such() -> None:
    diagnosis = first_diagnosis(tool_refusal("qwen3"))
    assert diagnosis.pattern == "rule-parser-name" and diagnosis.category == "invalid-flag-value"
    assert "is a choice of --reasoning-parser in SGLang" in diagnosis.root_cause
    assert "of the releases whose list logsleuth knows" in diagnosis.root_cause  # no range stated as the whole truth
    fix = diagnosis.fix
    assert fix is not None and fix.needs_input == ("--tool-call-parser",)
    assert [(op.op, op.flag, op.value) for op in fix.flags] == [("set", "--tool-call-parser", None)]
    assert "named like 'qwen3': qwen25;" in fix.summary  # the family's names every known list has, no range
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
    assert "SGLang 0.5.9's tool-call parsers named like 'hermes2': hermes." in fix.summary


def test_a_tool_call_parser_name_given_as_the_reasoning_parser() -> None:
    log = raised('raise ValueError("Unsupported model type: hermes")', SGLANG + "parser/reasoning_parser.py")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-parser-name"
    assert "is a choice of --tool-call-parser in SGLang" in diagnosis.root_cause


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


def test_vllm_s_old_lists_are_not_stated_as_where_a_name_ends() -> None:
    """REVIEW5 H2: vLLM's --reasoning-parser choices are literal in a few old releases only; its later releases take
    registry names.  The name's releases are said to be those whose list logsleuth knows, and the family note (which
    would rest on those old lists alone) is left out."""
    log = VLLM_BANNER + raised("raise KeyError(\"tool helper: 'deepseek_r1' not found in tool_parsers\")",
                               VLLM + "entrypoints/openai/tool_parsers/abstract_tool_parser.py", "get_tool_parser")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-parser-name"
    assert "of the releases whose list logsleuth knows; its later releases take registry names" in diagnosis.root_cause
    mistral = VLLM_BANNER + raised("raise KeyError(\"tool helper: 'mistral2' not found in tool_parsers\")",
                                   VLLM + "entrypoints/openai/tool_parsers/abstract_tool_parser.py", "get_tool_parser")
    fix = first_diagnosis(mistral).fix
    assert fix is not None and "named like" not in fix.summary and "listed by vLLM 0.6.0" not in fix.summary


def test_a_named_release_that_lists_the_name_says_the_release_read_may_be_wrong() -> None:
    """REVIEW5 M4: SGLang 0.4.9.post3's own list has qwen3 as a tool-call parser; a refusal of it there means the
    release that ran is another, and no name of other releases is offered."""
    listed = static_catalogs.flag_records("sglang", "0.4.9.post3") or ()
    assert any(r["name"] == "--tool-call-parser" and "qwen3" in (r.get("choices") or ()) for r in listed)
    diagnosis = first_diagnosis(tool_refusal("qwen3"), DiagnoseOptions(include_user_patterns=False,
                                                                        engine_version="0.4.9.post3"))
    assert "the release that ran is likely not 0.4.9.post3" in diagnosis.root_cause
    assert diagnosis.fix is not None and "qwen3_coder" not in diagnosis.fix.summary


def test_a_named_release_s_family_note_offers_only_its_own_names() -> None:
    """REVIEW5 M4: the family note of a named release holds that release's names only."""
    catalog = catalogs.load("sglang", "0.4.9.post3")
    info = catalog.find("--tool-call-parser") if catalog else None
    assert info is not None
    diagnosis = first_diagnosis(tool_refusal("qwen30"), DiagnoseOptions(include_user_patterns=False,
                                                                         engine_version="0.4.9.post3"))
    assert diagnosis.fix is not None
    note = diagnosis.fix.summary.split("named like 'qwen30': ", 1)[1].split(".", 1)[0].split(";", 1)[0]
    assert note and all(name.strip() in info.choices for name in note.split(","))
    assert "qwen3_coder" not in diagnosis.fix.summary


@pytest.mark.parametrize(("statement", "frame_file", "endpoint"), [
    ('raise ValueError("Unsupported tool_call_parser: None")', "function_call/function_call_parser.py",
     "parse_function_call_request"),
    ('raise ValueError("Unsupported model type: qwen4")', "parser/reasoning_parser.py", "separate_reasoning_request"),
])
def test_a_native_endpoint_s_request_field_is_not_the_launch_flag(statement: str, frame_file: str,
                                                                   endpoint: str) -> None:
    """REVIEW5 M3: SGLang's /parse_function_call and /separate_reasoning build the parser from the request's
    tool_call_parser / reasoning_parser field (http_server.py's parse_function_call_request, line 1282 in 0.5.9, and
    separate_reasoning_request, line 1304): the launch flag is not what named it."""
    inner = compile(f"def __init__(name):\n    {statement}\n", SGLANG + frame_file, "exec")
    outer = compile(f"def {endpoint}(obj):\n    __init__(obj)\n{endpoint}(None)\n",
                    SGLANG + "entrypoints/http_server.py", "exec")
    scope: dict[str, object] = {}
    exec(inner, scope)  # noqa: S102 - the test's own statement
    try:
        exec(outer, scope)  # noqa: S102
    except Exception as error:  # noqa: BLE001
        log = "".join(traceback.format_exception(error))
    assert f"in {endpoint}" in log
    assert first_diagnosis(log).pattern != "rule-parser-name"
