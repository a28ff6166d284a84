"""The program that ran, where a paste shows it in forms logsleuth did not read before (issue 28, item 4: name the
engine from positive evidence, never from a message that only names it).  Each kind stands for the class of programs
built on one engine, and each has its look-alike that must stay unread:

- a Ray actor a wrapper named after the engine it runs, in Ray's prefix or task name: slime's `SGLangEngine`
  (THUDM/slime#1514), SkyRL's `VLLMServerActor` (NovaSky-AI/SkyRL#1788) and `AsyncVLLMInferenceEngine`, NeMo-RL's
  `VllmGenerationWorker`, OpenRLHF's and open-instruct's `LLMRayActor`; not a unit's or a service's name;
- a wrapper's module made for one engine, by the role it plays for it: FastChat's model workers (lm-sys/FastChat#3498),
  SkyRL's server actor, ROLL's strategy, TRL's server, the eval harnesses' backends, lighteval's entry per backend;
- vLLM's own hardware plugins and vllm-omni in a frame (`vllm_ascend/`, `vllm_omni/`; vllm-project/vllm-ascend#4744,
  OpenBMB/VoxCPM#338) and vllm-omni's logger (vllm-project/vllm-omni#352); SGLang's own NPU backend stays SGLang's;
- lighteval's backend subcommand, `lighteval vllm …` / `lighteval sglang …` (huggingface/open-r1#468,
  huggingface/lighteval#504); not an install of its extra.

Tracebacks are real CPython's, raised in mirrored package trees (tests/helpers.traceback_in_package)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.helpers import traceback_in_package

OPTIONS = DiagnoseOptions(include_user_patterns=False)
FAILING = "raise RuntimeError('update_weights_from_tensor failed: shape mismatch')"


def engine_of(log: str) -> str | None:
    report = diagnose_text(log, OPTIONS)
    assert report.failures, log
    return report.launch.engine


def _trainer_failure(tmp_path: Path, module: str = "rl_lab/trainer.py") -> str:
    """Real CPython's traceback of a trainer's own code: no file of either engine."""
    return traceback_in_package(tmp_path, module, FAILING)


def _under_prefix(prefix: str, text: str) -> str:
    return "".join(f"{prefix}{line}\n" for line in text.splitlines())


# -- 1. a Ray actor named after the one engine it runs ------------------------------------------------------------


@pytest.mark.parametrize(
    ("actor", "engine"),
    [
        ("SGLangEngine", "sglang"),  # slime/backends/sglang_utils/sglang_engine.py
        ("AsyncVLLMInferenceEngine", "vllm"),  # SkyRL's inference_engines/vllm/vllm_engine.py
        ("VLLMServerActor", "vllm"),  # SkyRL's inference_servers/vllm_server_actor.py
        ("VllmGenerationWorker", "vllm"),  # NeMo-RL's generation worker
        ("LLMRayActor", "vllm"),  # OpenRLHF's and open-instruct's actor around vllm.LLM
        ("TaskRunner", None),  # verl's driver actor runs either engine
        ("SGLangVLLMBridge", None),  # a name with both engines' names decides nothing
    ],
)
def test_a_ray_actor_named_after_its_engine_names_it(tmp_path: Path, actor: str, engine: str | None) -> None:
    log = _under_prefix(f"({actor} pid=720234, ip=11.251.213.106) ", _trainer_failure(tmp_path))
    assert engine_of(log) == engine


def test_a_ray_task_of_such_an_actor_names_its_engine(tmp_path: Path) -> None:
    """Ray's task name in its error (`ray::VLLMServerActor.start()`), the actor's frames the wrapper's own."""
    failure = _trainer_failure(tmp_path).split("\n", 1)[1]  # the frames, CPython's header dropped as Ray does
    log = ("ray.exceptions.RayTaskError(RuntimeError): ray::VLLMServerActor.start() (pid=59962, ip=10.1.137.178, "
           "actor_id=1b2ed6e627c06ebf3c298df228000000, repr=<rl_lab.servers.VLLMServerActor object at 0x7ed25ead5970>)\n"
           + failure)
    assert engine_of(log) == "vllm"


@pytest.mark.parametrize(
    "prefix",
    [
        "Aug 19 18:34:27 gpu-host vllm[8727]: ",  # journald: the unit's identifier, a name the user chose
        "Aug 19 18:34:27 gpu-host Sglang[8727]: ",
        "vllm_vllm_1  | ",  # a compose service of the user's naming
    ],
)
def test_a_unit_or_service_named_after_an_engine_names_nothing(tmp_path: Path, prefix: str) -> None:
    assert engine_of(_under_prefix(prefix, _trainer_failure(tmp_path))) is None


# -- 2. a wrapper's module made for one engine ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "engine"),
    [
        ("fastchat/serve/vllm_worker.py", "vllm"),
        ("fastchat/serve/sglang_worker.py", "sglang"),
        ("skyrl/backends/skyrl_train/inference_servers/vllm_server_actor.py", "vllm"),
        ("roll/distributed/strategy/vllm_strategy.py", "vllm"),
        ("trl/scripts/vllm_serve.py", "vllm"),
        ("lmms_eval/models/chat/sglang.py", "sglang"),
        ("lmms_eval/models/simple/vllm.py", "vllm"),
        ("opencompass/models/vllm.py", "vllm"),
        ("lighteval/main_vllm.py", "vllm"),
        ("lighteval/main_sglang.py", "sglang"),
        ("fastchat/serve/model_worker.py", None),  # FastChat's worker for transformers
        ("roll/distributed/strategy/deepspeed_strategy.py", None),
        ("trl/scripts/sft.py", None),
        ("lighteval/main_accelerate.py", None),
        ("rl_lab/vllm_utils.py", None),  # helpers named after an engine run whichever the caller chose
    ],
)
def test_a_wrappers_module_for_one_engine_names_it(tmp_path: Path, module: str, engine: str | None) -> None:
    assert engine_of(_trainer_failure(tmp_path, module)) == engine


# -- 3. vLLM's plugins and vllm-omni ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("module", "engine"),
    [
        ("vllm_ascend/worker/worker_v1.py", "vllm"),  # vLLM's Ascend platform plugin
        ("vllm_omni/engine/stage_engine_core_proc.py", "vllm"),  # vllm-omni's stage engine core
        ("vllm_gaudi/extension/ops.py", "vllm"),
        ("vllm_fl/worker/model_runner.py", "vllm"),  # FlagOS's vllm-plugin-FL (flagos-ai/vllm-plugin-FL#196)
        ("rl_lab/my_vllm_fl/runner.py", None),  # a directory that only ends in the plugin's name
        ("sglang/srt/hardware_backend/npu/allocator_npu.py", "sglang"),  # SGLang's own NPU backend
        ("rl_lab/vllm_ascend_compat.py", None),  # a file named after the plugin, not the plugin
    ],
)
def test_vllms_plugins_in_a_frame_name_vllm(tmp_path: Path, module: str, engine: str | None) -> None:
    assert engine_of(_trainer_failure(tmp_path, module)) == engine


@pytest.mark.parametrize(
    ("line", "engine"),
    [
        ("ERROR:vllm_omni.entrypoints.omni_llm:Stage 0 error on request 0_3846ea5f: list index out of range", "vllm"),
        ("ModuleNotFoundError: No module named 'vllm_omni.entrypoints'", None),  # an import names, nothing ran
    ],
)
def test_vllm_omnis_logger_names_vllm(tmp_path: Path, line: str, engine: str | None) -> None:
    assert engine_of(f"{line}\n{_trainer_failure(tmp_path)}") == engine


# -- 4. lighteval's backend subcommand ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "engine"),
    [
        ('lighteval vllm "pretrained=Qwen/Qwen2.5-1.5B,dtype=bfloat16" "lighteval|gsm8k|0|0" --use-chat-template', "vllm"),
        ('lighteval sglang "model_name=Qwen/Qwen2.5-1.5B,dtype=float16" "lighteval|gsm8k|0|0"', "sglang"),
        ('lighteval accelerate "model_name=openai-community/gpt2" "lighteval|truthfulqa:mc|0|0"', None),
        ('pip install "lighteval[vllm]"', None),  # an install of its extra runs nothing
    ],
)
def test_lightevals_backend_subcommand_names_the_engine(tmp_path: Path, command: str, engine: str | None) -> None:
    assert engine_of(f"$ {command}\n{_trainer_failure(tmp_path)}") == engine

