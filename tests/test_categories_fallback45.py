"""Stop 45 (fallback), in generic words (issue 28, item 5): engine checks whose words name their category, which the
honest category left unclassified on fresh pastes.

- vLLM's model loader checking that every parameter the model built got a tensor ("Following weights were not
  initialized from checkpoint: {…}", model_loader/default_loader.py) is a checkpoint that does not fit the model
  (weight-loading), also as the error line alone and as a person retypes it (vllm-project/vllm#28712, #12860).
- vLLM's engine process logs str(exception) on the line above its traceback (engine/multiprocessing/engine.py
  run_mp_engine): a KeyError's is its quoted key, so a traceback the paste cut keeps the checkpoint tensor's dotted
  name on that line (vllm-project/vllm#11010).
- A kernel naming the AMD architecture it requires ("… requires gfx950", "requires CDNA3 or newer") is a GPU that
  lacks it, as "requires SM100" already is (vllm-project/vllm#51964; vLLM's deepseek_v4/amd and kimi_k3/amd checks).
- The engines' checks of the Ray placement group their executor reserves or is given (vLLM executor/ray_utils.py,
  SGLang srt/ray/engine.py) are Ray's orchestration, not the engine's flags (vllm-project/vllm#1116).
Tracebacks are real CPython's, from a site-packages tree laid out as vLLM's; the wordings are the engines' own
templates, rebuilt in our own code."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.models import Diagnosis
from tests.helpers import diagnose_without_patterns, traceback_of_installed
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used below)

LOADER_MESSAGE = "Following weights were not initialized from checkpoint: {'model.layers.15.self_attn.k_norm.weight'}"

_DEFAULT_LOADER = f'''
class DefaultModelLoader:
    def load_weights(self, model_config):
        weights_not_loaded = {{"model.layers.15.self_attn.k_norm.weight"}}
        if weights_not_loaded:
            raise ValueError({LOADER_MESSAGE.split(":")[0]!r} + ": " + str(weights_not_loaded))
'''

# vLLM's engine process: its model's load_weights looks each checkpoint tensor up in the parameters it built.
_MP_ENGINE = '''
def load_weights(weights):
    params_dict = {"layers.0.mlp.down_proj.weight": None}
    for name in weights:
        param = params_dict[name]


class MQLLMEngine:
    @classmethod
    def from_engine_args(cls, checkpoint):
        load_weights(checkpoint)


def run_mp_engine():
    engine = MQLLMEngine.from_engine_args(["layers.0.mlp.down_proj.weight", "layers.0.mlp.down_proj.weight.absmax"])
'''

_RAY_UTILS = '''
def initialize_cluster(bundles):
    for bundle in bundles:
        gpus = bundle.get("GPU", 0)
        if gpus > 1:
            raise ValueError("Placement group bundle cannot have more than 1 GPU.")
'''


def _installed_traceback(tmp_path: Path, files: dict[str, str], script: str) -> str:
    proc = traceback_of_installed(tmp_path, files, script)
    assert proc.returncode != 0 and "Traceback" in proc.stderr, proc.stderr
    return proc.stderr


def _checks(diagnosis: Diagnosis) -> str:
    return "\n".join(diagnosis.fix.steps) if diagnosis.fix else ""


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("line", [
    f"ValueError: {LOADER_MESSAGE}\n",
    # vllm-project/vllm#28712: a multiproc worker's record, the message retyped ("initialize", two spaces, no set)
    "ERROR 11-13 21:06:35 [multiproc_executor.py:597]  ValueError: Following weights were not initialize  from checkpoint: \n",
])
def test_loader_check_of_uninitialized_weights_is_weight_loading(line: str) -> None:
    diagnosis = diagnose_without_patterns(line)
    assert diagnosis.category == "weight-loading", diagnosis.root_cause


@pytest.mark.usefixtures("no_rules")
def test_vllm_record_of_a_key_above_a_cut_traceback_is_weight_loading(tmp_path: Path) -> None:
    """vLLM's run_mp_engine logs the KeyError's str(), the quoted key, then the traceback; the paste cut the
    traceback before its exception line (vllm-project/vllm#11010)."""
    stderr = _installed_traceback(tmp_path, {"vllm/engine/multiprocessing/engine.py": _MP_ENGINE},
                                  "from vllm.engine.multiprocessing.engine import run_mp_engine\nrun_mp_engine()\n")
    lines = stderr.rstrip("\n").splitlines()
    assert lines[-1] == "KeyError: 'layers.0.mlp.down_proj.weight.absmax'"
    # The paste stops after run_mp_engine's own frame: nothing of the model's load_weights is left to place it.
    kept = lines[: next(n for n, line in enumerate(lines) if "in run_mp_engine" in line) + 2]
    record = "ERROR 12-09 00:49:29 engine.py:366] "
    cut = [record + "'layers.0.mlp.down_proj.weight.absmax'", *(record + line for line in kept)]
    diagnosis = diagnose_without_patterns("\n".join(cut) + "\n")
    assert diagnosis.category == "weight-loading", diagnosis.root_cause


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("line", [
    "AssertionError: mla_gluon requires gfx950 (CDNA4), got gfx942\n",  # vllm-project/vllm#51964
    "NotImplementedError: AITER MegaMoE requires gfx950.\n",  # vLLM's models/deepseek_v4/amd/model.py
    "NotImplementedError: Step-5 sparse attention on ROCm requires CDNA3 or newer.\n",  # vLLM's models/step5/amd
])
def test_an_amd_architecture_a_kernel_requires_is_gpu_arch_unsupported(line: str) -> None:
    diagnosis = diagnose_without_patterns(line)
    assert diagnosis.category == "gpu-arch-unsupported", diagnosis.root_cause


@pytest.mark.usefixtures("no_rules")
def test_the_amd_check_comes_only_with_an_amd_architecture() -> None:
    amd = diagnose_without_patterns("NotImplementedError: AITER MegaMoE requires gfx950.\n")
    nvidia = diagnose_without_patterns("NotImplementedError: DeepGEMM MegaMoE requires SM100 GPUs.\n")
    assert (amd.category, nvidia.category) == ("gpu-arch-unsupported", "gpu-arch-unsupported")
    assert "rocminfo" in _checks(amd) and "rocminfo" not in _checks(nvidia)


@pytest.mark.usefixtures("no_rules")
def test_vllm_ray_placement_group_check_is_orchestration(tmp_path: Path) -> None:
    text = _installed_traceback(tmp_path, {"vllm/executor/ray_utils.py": _RAY_UTILS},
                                "from vllm.executor.ray_utils import initialize_cluster\ninitialize_cluster([{'GPU': 2}])\n")
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "orchestration", diagnosis.root_cause
    assert "one GPU per bundle" in _checks(diagnosis)


@pytest.mark.usefixtures("no_rules")
@pytest.mark.parametrize("line", [
    "ValueError: Custom placement group must have exactly 1 GPU per bundle. Found bundle with 2 GPUs.\n",  # SGLang
    "ValueError: Ray does not allocate any GPUs on the driver node. Consider adjusting the Ray placement group or "
    "running the driver on a GPU node.\n",  # vLLM's ray_distributed_executor.py
])
def test_placement_group_checks_alone_are_orchestration(line: str) -> None:
    assert diagnose_without_patterns(line).category == "orchestration"
