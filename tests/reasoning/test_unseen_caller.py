"""CPython's refusal of a call by the callee's signature, with no frame of the caller (reasoning/engine_api_calls.py
refusal_without_caller): the error line alone (rllm-org/rllm#208), or cut to the receiving side's frames (vLLM's
`LLM.__init__` handing its keywords to `EngineArgs(`: vllm-project/vllm#9398).  The caller and the class's package come
from releases that do not fit (dependency-version), unless the keyword is the user's own: set in the command the log
shows (an unknown flag, huggingface/lighteval#612) or no Python name at all (a value the user wrote in another
release's syntax, split into keywords: huggingface/open-r1#408).

Every traceback is real CPython output: a stub package in a site-packages directory and a script calling it."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.reasoning.diagnosed import first_diagnosis
from tests.reasoning.test_engine_imports import _traceback

ENGINE_ARGS = {
    "vllm/__init__.py": "", "vllm/engine/__init__.py": "", "vllm/entrypoints/__init__.py": "",
    "vllm/engine/arg_utils.py": "from dataclasses import dataclass\n\n@dataclass\nclass EngineArgs:\n    model: str = 'm'\n",
    "vllm/entrypoints/llm.py": ("from vllm.engine.arg_utils import EngineArgs\n\nclass LLM:\n"
                                "    def __init__(self, model, **kwargs):\n        engine_args = EngineArgs(\n"
                                "            model=model, **kwargs)\n"),
}
# A wrapper's own settings class, which the class index does not know (lighteval's VLLMModelConfig).
WRAPPER_CONFIG = {
    "evalkit/__init__.py": "",
    "evalkit/model_config.py": ("from dataclasses import dataclass\n\n@dataclass\nclass VLLMModelConfig:\n"
                                "    pretrained: str = 'm'\n    gpu_memory_utilisation: float = 0.9\n"),
}
EVALKIT_COMMAND = ('lighteval vllm \\\n    "pretrained=$MODEL,dtype=bfloat16,gpu_memory_utilization=0.8" \\\n'
                   '    "custom|$TASK|0|0" \\\n    --output-dir $OUTPUT_DIR\n')


def _last_line(tmp_path: Path, statement: str, files: dict[str, str]) -> str:
    return _traceback(tmp_path, "run.py", statement, files).strip().splitlines()[-1] + "\n"


def test_an_engine_settings_refusal_alone_is_a_caller_of_another_release(tmp_path: Path) -> None:
    line = _last_line(tmp_path, "from vllm.engine.arg_utils import EngineArgs\nEngineArgs(model_hf_config={})", ENGINE_ARGS)
    assert line.startswith("TypeError: EngineArgs.__init__() got an unexpected keyword argument 'model_hf_config'")
    diagnosis = first_diagnosis("pip install -e . installed vllm 0.10.1.1, and I kept getting errors:\n" + line)
    assert (diagnosis.category, diagnosis.engine) == ("dependency-version", "vllm"), diagnosis
    assert "no frame of the caller" in diagnosis.root_cause and "vllm's code" in diagnosis.root_cause
    assert diagnosis.fix is not None and diagnosis.fix.needs_input, "which program made the call is asked"


def test_a_count_of_arguments_refused_alone_reads_the_same(tmp_path: Path) -> None:
    line = _last_line(tmp_path, "from vllm.engine.arg_utils import EngineArgs\nEngineArgs('m', 'x')", ENGINE_ARGS)
    assert "positional arguments but 3 were given" in line, line
    assert first_diagnosis(line).category == "dependency-version"


def test_only_the_receiving_sides_frames_shown(tmp_path: Path) -> None:
    """vllm-project/vllm#9398's paste: the engine's own frame that forwards the keywords, the caller's cut off."""
    traceback = _traceback(tmp_path, "run.py", "from vllm.entrypoints.llm import LLM\nLLM('m', num_scheduler_steps=8)",
                           ENGINE_ARGS)
    lines = traceback.splitlines()
    cut = "\n".join(lines[next(i for i, line in enumerate(lines) if "vllm/entrypoints/llm.py" in line):]) + "\n"
    assert "run.py" not in cut and "EngineArgs(" in cut
    assert first_diagnosis(cut).category == "dependency-version"


def test_the_users_own_script_frame_keeps_its_reading(tmp_path: Path) -> None:
    """The look-alike: the user's script is shown making the call, the keyword its own (unknown-flag, as before)."""
    traceback = _traceback(tmp_path, "run.py", "from vllm.entrypoints.llm import LLM\nLLM('m', num_scheduler_steps=8)",
                           ENGINE_ARGS)
    assert first_diagnosis(traceback).category == "unknown-flag"


def test_a_wrapper_config_refusing_a_keyword_of_the_users_command_is_an_unknown_flag(tmp_path: Path) -> None:
    """huggingface/lighteval#612: the keyword is set in the wrapper's model arguments the paste shows."""
    line = _last_line(tmp_path, "from evalkit.model_config import VLLMModelConfig\n"
                      "VLLMModelConfig(pretrained='m', gpu_memory_utilization=0.8)", WRAPPER_CONFIG)
    assert first_diagnosis(line + "\n" + EVALKIT_COMMAND).category == "unknown-flag"
    unseen_keyword = EVALKIT_COMMAND.replace("gpu_memory_utilization=0.8", "dtype=float16")
    assert first_diagnosis(line + "\n" + unseen_keyword).category == "dependency-version", "a call the user did not write"


def test_a_keyword_that_is_no_python_name_is_a_value_in_another_syntax(tmp_path: Path) -> None:
    """huggingface/open-r1#408: `generation_parameters={...,temperature:0.6,...}` split into keywords by a release that
    does not read that syntax."""
    line = _last_line(tmp_path, "from evalkit.model_config import VLLMModelConfig\n"
                      "VLLMModelConfig(pretrained='m', **{'temperature:0.6': None})", WRAPPER_CONFIG)
    assert "'temperature:0.6'" in line, line
    assert first_diagnosis(line).category == "invalid-flag-value"


def test_a_command_line_parser_and_an_argparse_error_stay_unknown_flag(tmp_path: Path) -> None:
    parser_line = _last_line(tmp_path, "import argparse\nargparse.ArgumentParser(exit_on_errors=False)", {})
    assert parser_line.startswith("TypeError: ArgumentParser.__init__() got an unexpected keyword argument")
    assert first_diagnosis(parser_line).category != "dependency-version"
    argparse_error = "usage: vllm serve [-h]\nvllm serve: error: unrecognized arguments: --num-scheduler-step 8\n"
    assert first_diagnosis(argparse_error).category == "unknown-flag"


def test_a_misspelt_engine_flag_alone_stays_the_users_typo(tmp_path: Path) -> None:
    """The look-alike: a keyword no vLLM release has, a letter from `--max-num-batched-tokens`: a typo of the caller's,
    whatever its release."""
    line = _last_line(tmp_path, "from vllm.engine.arg_utils import EngineArgs\nEngineArgs(max_num_batched_token=8192)",
                      ENGINE_ARGS)
    diagnosis = first_diagnosis(line)
    assert diagnosis.category == "unknown-flag" and "--max-num-batched-tokens" in diagnosis.root_cause, diagnosis


def test_a_class_nothing_indexes_refusing_alone_names_no_release(tmp_path: Path) -> None:
    """The look-alike: a class the class index does not know, with no program shown in the log, may be the user's own
    (its frames, cut away, were the user's): no release skew is claimed."""
    line = _last_line(tmp_path, "from evalkit.model_config import VLLMModelConfig\nVLLMModelConfig(dtype='float16')",
                      WRAPPER_CONFIG)
    assert first_diagnosis(line).category != "dependency-version"


def test_a_wrapper_config_refusing_a_keyword_is_no_engine_bug_when_the_launch_names_the_engine(tmp_path: Path) -> None:
    """The refusal above (lighteval's VLLMModelConfig) with the engine named by the launch (`VLLM_USE_V1=0`): lighteval's own
    `VLLMModelConfig` is no engine's class and no frame of vLLM ran, so the engine-code rows give way as when no engine
    is known: not 'a bug in vLLM'."""
    line = _last_line(tmp_path, "from evalkit.model_config import VLLMModelConfig\n"
                      "VLLMModelConfig(pretrained='m', gpu_memory_utilization=0.8)", WRAPPER_CONFIG)
    report = diagnose_text(line + "\nVLLM_USE_V1=0 " + EVALKIT_COMMAND, DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert report.launch.engine == "vllm" and diagnosis is not None
    assert diagnosis.category != "engine-bug" and "bug in vLLM" not in diagnosis.title, diagnosis

SERVER_ARGS = {
    "sglang/__init__.py": "", "sglang/srt/__init__.py": "",
    "sglang/srt/server_args.py": "from dataclasses import dataclass\n\n@dataclass\nclass ServerArgs:\n    model_path: str = 'm'\n",
}


def _steps(diagnosis: object) -> str:
    fix = getattr(diagnosis, "fix", None)
    return "\n".join(fix.steps) if fix is not None else ""


def test_a_flags_dashed_spelling_as_a_keyword_is_an_unknown_flag_told_keywords_take_underscores(tmp_path: Path) -> None:
    """xorbitsai/inference#3778: a wrapper hands an extra launch parameter to vLLM's AsyncEngineArgs as a Python keyword
    spelt as the flag is (`limit-mm-per-prompt`): unknown-flag, told that keywords take underscores."""
    line = _last_line(tmp_path, "from vllm.engine.arg_utils import EngineArgs\nEngineArgs(**{'max-num-seqs': 8})",
                      ENGINE_ARGS)
    assert "'max-num-seqs'" in line, line
    diagnosis = first_diagnosis(line)
    assert (diagnosis.category, diagnosis.engine) == ("unknown-flag", "vllm"), diagnosis
    assert "--max-num-seqs" in _steps(diagnosis) and "never spelt with dashes" in _steps(diagnosis), diagnosis


def test_sglangs_server_args_read_the_same(tmp_path: Path) -> None:
    line = _last_line(tmp_path, "from sglang.srt.server_args import ServerArgs\nServerArgs(**{'mem-fraction-static': 0.8})",
                      SERVER_ARGS)
    diagnosis = first_diagnosis(line)
    assert diagnosis.category == "unknown-flag" and "--mem-fraction-static" in _steps(diagnosis), diagnosis


@pytest.mark.parametrize(("keyword", "not_a_field"), [
    ("chat-template", "chat_template"),  # a front-end option: vllm/entrypoints/openai/cli_args.py, no EngineArgs field
    ("api-key", "api_key"),  # the same
    ("no-enable-prefix-caching", "no_enable_prefix_caching"),  # a negation: its dest is enable_prefix_caching
])
def test_a_dashed_flag_is_never_turned_into_a_keyword_the_class_may_not_have(tmp_path: Path, keyword: str,
                                                                             not_a_field: str) -> None:
    """The catalogs hold the whole server's command line: a flag's dest is no proof of a field of AsyncEngineArgs, so
    no underscored keyword is named (each would fail again with the same TypeError)."""
    line = _last_line(tmp_path, f"from vllm.engine.arg_utils import EngineArgs\nEngineArgs(**{{'{keyword}': 1}})",
                      ENGINE_ARGS)
    diagnosis = first_diagnosis(line)
    assert diagnosis.category == "unknown-flag", diagnosis
    assert not_a_field not in _steps(diagnosis) and not_a_field not in diagnosis.root_cause, diagnosis


def test_a_dashed_keyword_no_release_has_as_a_flag_is_not_told_to_take_underscores(tmp_path: Path) -> None:
    """The look-alike: 'max-num-seq' is no vLLM flag, so no underscored argument is named for it."""
    line = _last_line(tmp_path, "from vllm.engine.arg_utils import EngineArgs\nEngineArgs(**{'max-num-seq': 8})",
                      ENGINE_ARGS)
    diagnosis = first_diagnosis(line)
    assert "max_num_seq" not in _steps(diagnosis) and "underscores" not in _steps(diagnosis), diagnosis
