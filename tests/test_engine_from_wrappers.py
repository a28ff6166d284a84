"""The engine a wrapper runs, from what the paste shows in positive form (issue 28: a Ray-prefixed wrapper log named
only the wrapper on a blind split).  A wrapper that runs both engines decides nothing by its name; its module or class
made for one engine does (engine_evidence._WRAPPER_ENGINE_MODULE, _WRAPPER_ENGINE_CLASS; the table's sources are in
its comments: verl's rollouts and sharding managers, slime's SGLang backend, LLaMA-Factory's and OpenRLHF's engines).

Tracebacks are real CPython's, raised in mirrored package trees of the wrappers (no file of either engine)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import traceback_in_package

OPTIONS = DiagnoseOptions(include_user_patterns=False)
FAILING = "raise RuntimeError('weight update failed: tensor size mismatch')"


def engine_of(log: str) -> str | None:
    return diagnose_text(log, OPTIONS).launch.engine


def _traceback_in(tmp_path: Path, module: str, body: str = FAILING) -> str:
    """Real CPython's traceback of a trainer calling `run()` in the wrapper's `module`."""
    return traceback_in_package(tmp_path, module, body)


@pytest.mark.parametrize(
    ("module", "engine"),
    [
        ("verl/workers/sharding_manager/fsdp_vllm.py", "vllm"),
        ("verl/workers/sharding_manager/fsdp_sglang.py", "sglang"),
        ("verl/workers/sharding_manager/megatron_vllm.py", "vllm"),
        ("slime/backends/sglang_utils/arguments.py", "sglang"),  # slime runs SGLang
        ("verl/workers/sharding_manager/fsdp_ulysses.py", None),  # the trainer's own sharding: no engine
        ("slime/backends/megatron_utils/actor.py", None),  # slime's trainer side
        ("verl/workers/fsdp_workers.py", None),  # verl runs either engine
    ],
)
def test_a_wrappers_module_for_one_engine_names_it(tmp_path: Path, module: str, engine: str | None) -> None:
    assert engine_of(_traceback_in(tmp_path, module)) == engine


@pytest.mark.parametrize(
    ("cls", "engine"),
    [("vLLMRollout", "vllm"), ("vLLMAsyncRollout", "vllm"), ("SGLangRollout", "sglang"),
     ("FSDPSGLangShardingManager", "sglang"), ("HFRollout", None), ("MyvLLMRollout", None)],
)
def test_a_wrappers_class_for_one_engine_in_a_message_names_it(tmp_path: Path, cls: str, engine: str | None) -> None:
    """CPython names the object's class (`'vLLMRollout' object has no attribute 'sharding_manager'`); verl's
    transformers rollout (`HFRollout`) runs neither engine."""
    body = f"class {cls}:\n        pass\n    {cls}().sharding_manager"
    log = _traceback_in(tmp_path, "rl_lab/rollout.py", body)
    assert f"AttributeError: '{cls}' object has no attribute 'sharding_manager'" in log
    assert engine_of(log) == engine


def test_an_import_that_names_a_wrappers_class_decides_nothing(tmp_path: Path) -> None:
    """The import failed: which rollout verl then ran is not shown."""
    log = _traceback_in(tmp_path, "rl_lab/rollout.py", "from rl_lab.missing import vLLMRollout")
    assert "vLLMRollout" in log and engine_of(log) is None


@pytest.mark.parametrize(
    ("record", "engine"),
    [
        ("After building vllm rollout, memory allocated (GB): 88.9, memory reserved (GB): 96.1", "vllm"),
        ("After building sglang rollout, memory allocated (GB): 40.2, memory reserved (GB): 52.0", "sglang"),
        ("After building hf rollout, memory allocated (GB): 1.0, memory reserved (GB): 2.0", None),  # neither engine
        ("After building vllm from source the import still fails", None),  # no rollout built
    ],
)
def test_the_rollout_verl_says_it_built_names_the_engine(tmp_path: Path, record: str, engine: str | None) -> None:
    """verl logs the rollout its setting chose (verl/workers/fsdp_workers.py, `After building {rollout_name} rollout`;
    verl-project/verl#138), under Ray's prefix of its actor, before the failure."""
    failure = _traceback_in(tmp_path, "verl/workers/fsdp_workers.py")
    log = f"(WorkerDict pid=130211) {record}\n" + "".join(f"(WorkerDict pid=130211) {line}\n" for line in failure.splitlines())
    report = diagnose_text(log, OPTIONS)
    assert (report.launch.engine, report.launch.wrapper) == (engine, "verl")
