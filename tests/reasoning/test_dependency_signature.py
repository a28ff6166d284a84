"""Rule rule-dependency-version, shape "signature" (reasoning/dependencies.py): the engine's own code calls a class of
a package it runs with arguments the installed release of that package does not take.

Every traceback is printed by real CPython: a stub engine module and a stub package in a site-packages directory, the
engine's module calling the package's class with a keyword the stub's signature lacks.  The class names are the real
packages' (facts/engine_classes.json.gz maps them to their package); the code is our own.  The shape is
vllm-project/vllm#21822 (vLLM 0.10.0 calling flashinfer's MultiLevelCascadeAttentionWrapper.plan() with
kv_data_type); kvcache-ai/ktransformers#1278 and Infini-AI-Lab/MagicPIG#14 are the same refusal in other programs."""

from __future__ import annotations

from pathlib import Path

from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

FLASHINFER = {
    "flashinfer/__init__.py": "from flashinfer.cascade import MultiLevelCascadeAttentionWrapper\n",
    "flashinfer/cascade.py": (
        "class MultiLevelCascadeAttentionWrapper:\n"
        "    def plan(self, qo_indptr, q_data_type='float16'):\n"
        "        return None\n"
    ),
}
ENGINE_CALL = {
    "vllm/__init__.py": "",
    "vllm/v1/__init__.py": "",
    "vllm/v1/attention/__init__.py": "",
    "vllm/v1/attention/backends/__init__.py": "",
    "vllm/v1/attention/backends/flashinfer.py": (
        "from flashinfer import MultiLevelCascadeAttentionWrapper\n"
        "\n"
        "def build(metadata):\n"
        "    wrapper = MultiLevelCascadeAttentionWrapper()\n"
        "    wrapper.plan(metadata, q_data_type='bfloat16', kv_data_type='bfloat16')\n"
    ),
}


def _traceback(tmp_path: Path, script: str, files: dict[str, str]) -> str:
    run = traceback_of_installed(tmp_path, files, script, script_name="serve.py")
    assert run.returncode == 1 and "Traceback" in run.stderr, run.stderr
    return run.stderr


def test_the_engine_calling_a_package_with_arguments_its_release_lacks_is_that_package_drifting(tmp_path: Path) -> None:
    traceback = _traceback(
        tmp_path, "from vllm.v1.attention.backends.flashinfer import build\nbuild([0])\n", {**FLASHINFER, **ENGINE_CALL})
    diagnosis = first_diagnosis(traceback)
    assert (diagnosis.pattern, diagnosis.category) == ("rule-dependency-version", "dependency-version"), diagnosis
    assert "flashinfer-python" in diagnosis.title
    assert "MultiLevelCascadeAttentionWrapper.plan()" in diagnosis.root_cause
    assert "engine's code was written for another flashinfer release" in diagnosis.root_cause


def test_a_script_calling_the_package_itself_is_not_the_engine_pins(tmp_path: Path) -> None:
    """The look-alike: the user's own code made the refused call (a research repository calling flashinfer): the
    engine's pins say nothing of it."""
    script = ("from flashinfer import MultiLevelCascadeAttentionWrapper\n"
              "MultiLevelCascadeAttentionWrapper().plan([0], kv_data_type='bfloat16')\n")
    diagnosis = first_diagnosis(_traceback(tmp_path, script, {**FLASHINFER, **ENGINE_CALL}))
    assert diagnosis.pattern != "rule-dependency-version"


def test_the_engine_refusing_its_own_class_call_is_not_a_package_drift(tmp_path: Path) -> None:
    """The look-alike: the refused callee is a class of the engine's own code (an engine bug or a caller's release),
    never a package's pins."""
    files = {"vllm/__init__.py": "", "vllm/sampling_params.py": (
        "class SamplingParams:\n    def __init__(self, n=1):\n        self.n = n\n\n"
        "def make():\n    return SamplingParams(n=1, best_of=2)\n")}
    diagnosis = first_diagnosis(_traceback(tmp_path, "from vllm.sampling_params import make\nmake()\n", files))
    assert diagnosis.pattern != "rule-dependency-version"
