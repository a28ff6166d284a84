"""Rule rule-model-inspection-subprocess (reasoning/model_inspection.py): vLLM's model inspection subprocess failing.

Real CPython prints each traceback: a mirrored vllm/model_executor/models/registry.py in a site-packages directory
raises the CalledProcessError `returned.check_returncode()` raises, with the command vLLM runs (its interpreter, `-m
vllm.model_executor.models.registry`).  The environments are our own; the shapes are vllm-project/vllm#9624 (the
interpreter of another environment than the one vLLM was imported from) and vllm-project/vllm#9712."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.reasoning.diagnosed import first_diagnosis

REGISTRY = '''
import subprocess

def _run_in_subprocess(interpreter):
    returned = subprocess.CompletedProcess([interpreter, "-m", "vllm.model_executor.models.registry"], 1)
    returned.check_returncode()
'''


def _inspection_failure(tmp_path: Path, interpreter: str) -> str:
    site = tmp_path / "conda" / "lib" / "python3.11" / "site-packages"
    registry = site / "vllm" / "model_executor" / "models" / "registry.py"
    registry.parent.mkdir(parents=True)
    for package in (site / "vllm", site / "vllm" / "model_executor", registry.parent):
        (package / "__init__.py").write_text("")
    registry.write_text(REGISTRY)
    script = tmp_path / "serve.py"
    script.write_text(f"from vllm.model_executor.models.registry import _run_in_subprocess\n_run_in_subprocess({interpreter!r})\n")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env={"PYTHONPATH": str(site)})
    assert "CalledProcessError" in done.stderr, done.stderr
    return done.stderr


def test_an_interpreter_of_another_environment_is_named(tmp_path: Path) -> None:
    log = _inspection_failure(tmp_path, str(tmp_path / "conda" / "envs" / "myenv" / "bin" / "python"))
    diagnosis = first_diagnosis(log)
    assert (diagnosis.pattern, diagnosis.category, diagnosis.basis) == (
        "rule-model-inspection-subprocess", "dependency-version", "rule")
    assert "another environment" in diagnosis.root_cause and str(tmp_path / "conda") in diagnosis.root_cause
    assert diagnosis.fix is not None and "no vLLM upgrade" in diagnosis.fix.summary
    assert diagnosis.fix.command is None and not diagnosis.fix.flags


def test_the_same_environment_points_to_the_subprocess_s_own_error(tmp_path: Path) -> None:
    log = _inspection_failure(tmp_path, str(tmp_path / "conda" / "bin" / "python3.11"))
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-model-inspection-subprocess"
    assert "another environment" not in diagnosis.root_cause and "Its own error" in diagnosis.root_cause


def test_another_subprocess_failing_is_not_the_inspection(tmp_path: Path) -> None:
    """The look-alike: a CalledProcessError of another command (a compiler run by a JIT) is not vLLM's inspection."""
    log = _inspection_failure(tmp_path, "/usr/bin/python3").replace("vllm.model_executor.models.registry", "build_ext")
    assert first_diagnosis(log).pattern != "rule-model-inspection-subprocess"
