"""The engine from CPython's refusal of a constructor's arguments (issue 28: a wrapper passing the engine a setting
its release does not have, `TypeError: AsyncEngineArgs.__init__() got an unexpected keyword argument '…'`, named
no engine on a blind split).  CPython's wording is anyone's; the class it names decides only when one engine's code
alone defines it, in every indexed release of both (ingest/engine_from_message.py _ENGINE_CONSTRUCTOR): vLLM's
EngineArgs and AsyncEngineArgs (vllm/engine/arg_utils.py), SGLang's ServerArgs (sglang/srt/server_args.py).  `LLM`
(vLLM's, and TensorRT-LLM's) and `SamplingParams` (both engines') decide nothing.

Tracebacks are real CPython's: a wrapper's module (no file of either engine) calls a dataclass of the engine's name,
as the engines' own settings classes are.  Before 3.10 CPython named no class; the innermost frame's line, the call,
then says which (run with an older interpreter where one is installed)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text

OPTIONS = DiagnoseOptions(include_user_patterns=False)


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


def _wrapper_traceback(tmp_path: Path, cls: str, python: str = sys.executable) -> str:
    """What CPython prints when a wrapper's rollout module builds `cls(model=…, enable_sleep_mode=True)`."""
    package = tmp_path / "rl_wrapper"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "settings.py").write_text(
        f"from dataclasses import dataclass\n\n\n@dataclass\nclass {cls}:\n    model: str = ''\n", encoding="utf-8")
    (package / "rollout.py").write_text(
        f"from rl_wrapper.settings import {cls}\n\n\ndef build(model):\n"
        f"    settings = {cls}(model=model, enable_sleep_mode=True)\n    return settings\n", encoding="utf-8")
    (tmp_path / "train.py").write_text("from rl_wrapper.rollout import build\n\nbuild('m')\n", encoding="utf-8")
    run = subprocess.run([python, "train.py"], capture_output=True, text=True, cwd=tmp_path)
    assert run.returncode == 1 and "got an unexpected keyword argument 'enable_sleep_mode'" in run.stderr
    return run.stderr


@pytest.mark.parametrize(("cls", "engine"), [("AsyncEngineArgs", "vllm"), ("EngineArgs", "vllm"), ("ServerArgs", "sglang")])
def test_a_refused_argument_of_one_engines_settings_class_names_that_engine(tmp_path: Path, cls: str, engine: str) -> None:
    log = _wrapper_traceback(tmp_path, cls)
    assert f"TypeError: {cls}.__init__() got an unexpected keyword argument" in log
    assert engine_of(log) == engine
    assert engine_of(log.splitlines()[-1] + "\n") == engine  # the exception line alone


@pytest.mark.parametrize("cls", ["LLM", "SamplingParams", "WorkerArgs"])
def test_a_class_both_engines_or_other_libraries_define_decides_nothing(tmp_path: Path, cls: str) -> None:
    assert engine_of(_wrapper_traceback(tmp_path, cls)) is None


def test_cpythons_wording_alone_and_a_class_named_like_one_decide_nothing() -> None:
    assert engine_of("TypeError: __init__() got an unexpected keyword argument 'enable_sleep_mode'\n") is None
    assert engine_of("TypeError: MyEngineArgs.__init__() got an unexpected keyword argument 'x'\n") is None


def _older_python() -> str | None:
    """An interpreter older than 3.10 (no class in the refusal) that runs, where one is installed."""
    candidates = [str(path) for path in sorted(Path.home().glob(".pyenv/versions/3.[89].*/bin/python"))]
    candidates += [found for name in ("python3.9", "python3.8") if (found := shutil.which(name))]
    for python in candidates:  # (a pyenv shim on PATH fails when the version is not selected)
        if subprocess.run([python, "-c", "pass"], capture_output=True).returncode == 0:
            return python
    return None


@pytest.mark.parametrize(("cls", "engine"), [("AsyncEngineArgs", "vllm"), ("ServerArgs", "sglang"), ("LLM", None)])
def test_before_python_3_10_the_calling_line_names_the_class(tmp_path: Path, cls: str, engine: str | None) -> None:
    older = _older_python()
    if older is None:
        pytest.skip("no Python 3.8 or 3.9 installed")
    log = _wrapper_traceback(tmp_path, cls, older)
    assert "TypeError: __init__() got an unexpected keyword argument 'enable_sleep_mode'" in log
    assert engine_of(log) == engine


@pytest.mark.parametrize(
    ("cls", "engine"),
    [("LLMEngine", "vllm"), ("AsyncLLMEngine", "vllm"), ("ServerArgs", "sglang"), ("LLM", None), ("SamplingParams", None)],
)
def test_a_missing_attribute_of_one_engines_class_names_that_engine(tmp_path: Path, cls: str, engine: str | None) -> None:
    """A wrapper reaching into an engine object of another release (`'LLMEngine' object has no attribute
    'driver_worker'`, vllm-project/vllm#9318): CPython names the object's class."""
    script = tmp_path / "wrapper.py"
    script.write_text(f"class {cls}:\n    pass\n\n\nengine = {cls}()\nengine.driver_worker.execute_model()\n", encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, cwd=tmp_path)
    assert f"AttributeError: '{cls}' object has no attribute 'driver_worker'" in run.stderr
    assert engine_of(run.stderr) == engine
    assert engine_of(f"[rank0]: AttributeError: '{cls}' object has no attribute 'driver_worker'\n") == engine
