"""A dump of the launch's settings shows which engine runs (issue 28, item 4; the blind split: a wrapper's log whose
engine-config dump was not taken as evidence).  The engine's own settings classes (SGLang's `ServerArgs(…)`,
vLLM's `EngineArgs(…)`), and the setting by which a wrapper picks its engine: Xinference's launch kwargs
(`'model_engine': 'sglang'`, xorbitsai/inference#2126) and `--model-engine`, verl's `actor_rollout_ref.rollout.name=`,
LLaMA-Factory's `infer_backend`.  A line that only names an engine is no such setting."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.ingest.engine_evidence import settings_engine

OPTIONS = DiagnoseOptions(include_user_patterns=False)
# vLLM's and SGLang's checks word the tensor-parallel heads error alike: the message alone decides nothing here.
FAILURE = ("Traceback (most recent call last):\n"
           '  File "/home/user/run.py", line 3, in <module>\n'
           "    main()\n"
           "ValueError: Total number of attention heads (14) must be divisible by tensor parallel size (4).\n")


@pytest.mark.parametrize(("line", "engine"), [
    ("(TaskRunner pid=2345) ServerArgs(model_path='/models/Qwen2.5-7B', tp_size=2, trust_remote_code=False)", "sglang"),
    ("engine_args: AsyncEngineArgs(model='/models/Qwen2.5-7B', tensor_parallel_size=4)", "vllm"),
    ("2024-08-20 15:30:17,353 xinference.core.worker 9939 DEBUG    Enter launch_builtin_model, args: (), kwargs: "
     "{'model_uid': 'qwen-chat-7b-1-0', 'model_engine': 'sglang', 'n_gpu': 'auto'}", "sglang"),
    ("2024-08-20 15:30:17,353 xinference.core.worker 9939 DEBUG    Enter launch_builtin_model, args: (), kwargs: "
     "{'model_uid': 'qwen2-0', 'model_engine': 'vLLM', 'n_gpu': 'auto'}", "vllm"),
    ("2024-09-20 10:06:21,267 xinference.core.worker 336466 INFO     [request ee3a5cc8] Enter launch_builtin_model, args: "
     "<xinference.core.worker.WorkerActor object at 0x7fc5ac9039c0>, kwargs: model_uid=qwen2-0,model_name=qwen2,"
     "model_engine=SGLang,model_type=LLM,n_gpu=auto", "sglang"),
    ("xinference launch --model-name qwen2.5-instruct --model-engine vllm --size-in-billions 7", "vllm"),
    ("python3 -m verl.trainer.main_ppo actor_rollout_ref.rollout.name=sglang data.train_batch_size=8", "sglang"),
    ("llamafactory-cli api --model_name_or_path /models/q --infer_backend vllm", "vllm"),
])
def test_a_settings_dump_decides_the_engine(line: str, engine: str) -> None:
    assert settings_engine(line) == engine
    assert diagnose_text(f"{line}\n{FAILURE}", OPTIONS).launch.engine == engine


@pytest.mark.parametrize("line", [
    "pip install sglang vllm",
    "WARNING: sglang is not installed, the vllm engine will be used if model_engine is unset",
    "class ServerArgs:",
    "args = ServerArgs.from_cli_args(args)",
    "'model_engine': 'transformers'",
    "kwargs: model_uid=Yi-1.5-chat-1-0,model_engine=Transformers,model_type=LLM",  # xorbitsai/inference#2334
])
def test_a_line_that_only_names_an_engine_is_no_setting(line: str) -> None:
    assert settings_engine(line) is None
