"""Stop 43's wrapper sweep (h-cat10), in generic words (issue 28): an exception Ray re-raises under a class it names
after the cause's class (`RayTaskError(ModuleNotFoundError)`), whose message is only the actor's address, is read by
the cause's type; Ray's ActorDiedError whose words say the actor's process died is a process that died; vLLM's refusal of a prompt longer than the server's
maximum model length is a context length; vLLM's connector factory refusing a connector of the other connector API is a
conflict of the engine mode and the connector.  Each with a look-alike where it must not fire.

The shapes are the code sites': Ray's ray/exceptions.py RayTaskError.as_instanceof_cause, which makes a class named
f"RayTaskError({cause_cls.__name__})" that subclasses the cause's class (the same is done here, so that the real
interpreter prints the line), and ActorDiedError's wording; vLLM's v1/engine/processor.py _validate_model_input
('Prompt length of {} is longer than the maximum model length of {}.') and v1/engine/input_processor.py ('The {} prompt
(length {}) is longer than the maximum model length of {}.'); vLLM's kv_connector/factory.py
`assert issubclass(connector_cls, KVConnectorBase)`."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

# The honest category alone: the reasoning rules set aside.
pytestmark = pytest.mark.usefixtures("no_rules")


# What ray.get does with an actor's exception (ray/exceptions.py RayTaskError.as_instanceof_cause): a class named after
# the cause's class, subclassing it, whose message is the actor's address.  A cause torch or Ray defines is stood in
# for by a class of the same name and module: its short name is what a row reads.
_RAY = """
import sys

def stand_in(name, module):
    return type(name, (RuntimeError,), {"__module__": module})

def as_instanceof_cause(cause_cls, actor):
    name = f"RayTaskError({cause_cls.__name__})"
    cls = type(name, (cause_cls,), {})
    cls.__module__ = "ray.exceptions"
    cls.__qualname__ = name
    return cls(f"ray::{actor}() (pid=334042, ip=10.160.4.102, actor_id=83456c5b3b69, repr=<object at 0x7fc7>)")
"""


def _ray_reraised(cause: str, actor: str = "TaskRunner.run") -> str:
    """What a program that waits on a Ray actor prints when the actor raised `cause` (an expression for its class)."""
    return real_traceback(_RAY + f"""
def get_objects():
    raise as_instanceof_cause({cause}, "{actor}")

def run_ppo():
    get_objects()

run_ppo()
""", "verl/trainer/main_ppo.py")


def test_a_module_missing_in_a_ray_actor_is_a_package_the_install_lacks() -> None:
    """verl-project/verl#5474 (verl's fully-async runner), vllm-project/vllm#16259 (vLLM's Ray worker wrapper)."""
    traceback = _ray_reraised("ModuleNotFoundError")
    assert "ray.exceptions.RayTaskError(ModuleNotFoundError): ray::TaskRunner.run()" in traceback
    assert diagnose_without_patterns(traceback).category == "dependency-version"


def test_an_out_of_memory_in_a_ray_actor_is_gpu_memory() -> None:
    """verl-project/verl#647: the rollout actor's torch.OutOfMemoryError, re-raised by ray.get in the driver."""
    traceback = _ray_reraised('stand_in("OutOfMemoryError", "torch")', "main_task")
    assert "ray.exceptions.RayTaskError(OutOfMemoryError): ray::main_task()" in traceback
    assert diagnose_without_patterns(traceback).category == "gpu-oom"


def test_a_type_named_like_the_cause_outside_ray_keeps_its_own_name() -> None:
    """A class of a program's own whose name merely holds parentheses is no Ray re-raise: no cause is read into it."""
    traceback = real_traceback("""
        name = "Wrapped(ModuleNotFoundError)"
        cls = type(name, (RuntimeError,), {})
        cls.__qualname__ = name
        raise cls("ray::TaskRunner.run() (pid=1)")
        """, "app.py")
    assert diagnose_without_patterns(traceback).category not in ("dependency-version", "feature-conflict")


def test_a_prompt_longer_than_the_maximum_model_length_is_a_context_length() -> None:
    """ritzz-ai/GUI-R1#32: a GRPO run's rollout prompts outgrew the engine's max model length."""
    traceback = real_traceback("""
        def _validate_model_input(prompt_ids, max_model_len=4096):
            if len(prompt_ids) > max_model_len:
                raise ValueError(f"Prompt length of {len(prompt_ids)} is longer than the maximum model length of "
                                 f"{max_model_len}.")

        _validate_model_input(range(4834))
        """, "vllm/v1/engine/processor.py")
    assert diagnose_without_patterns(traceback).category == "context-length"


def test_the_decoder_prompt_wording_is_a_context_length_too() -> None:
    """vLLM's later wording of the same check, pasted as the error line alone."""
    line = "ValueError: The decoder prompt (length 9000) is longer than the maximum model length of 8192. Make sure...\n"
    assert diagnose_without_patterns(line).category == "context-length"


def test_a_kv_cache_smaller_than_the_maximum_model_length_stays_the_kv_cache() -> None:
    """The look-alike: the KV cache too small for --max-model-len is a memory setting, not a request's length."""
    line = ("ValueError: The model's max seq len (8192) is larger than the maximum number of tokens that can be "
            "stored in KV cache (6048). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when "
            "initializing the engine.\n")
    assert diagnose_without_patterns(line).category == "kv-cache-memory"


def _connector_assertion(base: str, source: str) -> str:
    """vLLM's connector factory refusing a connector class of the other connector API: `source` is the factory's
    statement (the raising line is the evidence: a bare AssertionError has no message)."""
    return real_traceback(f"""
        class {base}:
            pass

        class LMCacheConnectorV1:
            pass

        def create_connector(connector_cls):
            {source}

        create_connector(LMCacheConnectorV1)
        """, "vllm/distributed/kv_transfer/kv_connector/factory.py")


def test_a_connector_of_the_other_connector_api_is_an_engine_mode_conflict() -> None:
    """vllm-project/production-stack#582 and #574 (an LMCache image whose connector the V0 factory refuses),
    vllm-project/vllm#19524 (a V0 connector under the V1 factory), LMCache/LMCache#2062 (VLLM_USE_V1=0 with a V1
    connector)."""
    for base in ("KVConnectorBase", "KVConnectorBase_V1"):
        traceback = _connector_assertion(base, f"assert issubclass(connector_cls, {base})")
        assert traceback.rstrip().endswith("AssertionError"), traceback
        assert diagnose_without_patterns(traceback).category == "feature-conflict", base


def test_another_issubclass_assertion_is_not_read_as_a_connector() -> None:
    """The look-alike: the same statement shape about another class says nothing of a connector."""
    traceback = _connector_assertion("LinearBase", "assert issubclass(connector_cls, LinearBase)")
    assert diagnose_without_patterns(traceback).category not in ("dependency-version", "feature-conflict")


def _actor_died(detail: str) -> str:
    """Ray's ActorDiedError as a driver prints it when raised directly (ray/exceptions.py's wording)."""
    return real_traceback(_RAY + f"""
def get_objects():
    raise stand_in("ActorDiedError", "ray.exceptions")(
        "The actor died unexpectedly before finishing this task.\\n\\tclass_name: WorkerDict\\n" + {detail!r})

get_objects()
""", "verl/trainer/main_ppo.py")


def test_an_actor_that_died_is_a_process_that_died() -> None:
    """hiyouga/EasyR1#324: the actor died unexpectedly, its owner's node crashed."""
    crashed = _actor_died("The actor is dead because its owner has died. Worker exit detail: Owner's node has crashed.")
    diagnosis = diagnose_without_patterns(crashed)
    assert diagnosis.category == "process-killed"
    assert any("Ray's ActorDiedError" in step for step in diagnosis.fix.steps), diagnosis.fix.steps


def test_an_actor_whose_creation_raised_is_no_process_that_died() -> None:
    """The look-alike: Ray's ActorDiedError for an error raised in the actor's creation task (OpenRLHF's LLMRayActor
    refusing an engine argument) is that error, not a death; and the type alone, re-raised with only the actor's
    address, names no category."""
    creation = real_traceback(_RAY + """
def get_objects():
    raise stand_in("ActorDiedError", "ray.exceptions")(
        "The actor died because of an error raised in its creation task, ray::LLMRayActor.__init__() (pid=236832)")

get_objects()
""", "openrlhf/trainer/ray/vllm_engine.py")
    assert diagnose_without_patterns(creation).category != "process-killed"
    reraised = _ray_reraised('stand_in("ActorDiedError", "ray.exceptions")')
    assert "RayTaskError(ActorDiedError): ray::TaskRunner.run()" in reraised
    assert diagnose_without_patterns(reraised).category != "process-killed"


def test_an_actor_the_oom_killer_took_stays_host_memory() -> None:
    """The look-alike: Ray's exit detail naming the OOM killer names the cause (Simple-Efficient/RL-Factory#8)."""
    killed = _actor_died("The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR "
                         "Worker exit detail: Worker unexpectedly exits with a connection error code 2. End of file. "
                         "There are some potential root causes. (1) The process is killed by SIGKILL by OOM killer due "
                         "to high memory usage.")
    assert diagnose_without_patterns(killed).category == "host-memory"


def _cuda_error_at_set_device(message: str) -> str:
    """A rank's CUDA error when it takes its GPU (torch.cuda.set_device's wording, raised by CUDA's runtime)."""
    return real_traceback(f"""
        def set_device(gpu_id):
            raise RuntimeError("CUDA error: {message}\\nCUDA kernel errors might be asynchronously reported at some "
                               "other API call, so the stacktrace below might be incorrect.")

        def init_torch_distributed(gpu_id=9):
            set_device(gpu_id)

        init_torch_distributed()
        """, "sglang/srt/model_executor/model_runner.py")


def test_a_device_index_beyond_the_visible_gpus_is_the_parallel_layout() -> None:
    """sgl-project/sglang#3470 (tp 16 over 2 nodes, one GPU per pod), sgl-project/sglang#6072 (tp against
    CUDA_VISIBLE_DEVICES): CUDA's 'invalid device ordinal'."""
    diagnosis = diagnose_without_patterns(_cuda_error_at_set_device("invalid device ordinal"))
    assert diagnosis.category == "parallel-config"
    assert any("cannot see" in step for step in diagnosis.fix.steps), diagnosis.fix.steps
    assert diagnose_without_patterns("RuntimeError: CUDA error: invalid device ordinal\n").category == "parallel-config"


def test_another_cuda_error_at_the_same_call_stays_a_cuda_error() -> None:
    """The look-alike: an invalid argument at the same call is CUDA's, not the layout's."""
    assert diagnose_without_patterns(_cuda_error_at_set_device("invalid argument")).category == "cuda-error"


# SGLang's word that a scheduler died while starting (sglang/srt/entrypoints/engine.py), whose hint names the OOM killer
# for one exit code only.
SCHEDULER_DIED = ("RuntimeError: Rank 0 scheduler died during initialization (exit code: {code}). If exit code is -9 "
                  "(SIGKILL), a common cause is the OS OOM killer. Run `dmesg -T | grep -i oom` to check.\n")


def test_a_scheduler_that_died_is_not_the_oom_killer_the_hint_names_for_another_exit_code() -> None:
    """sgl-project/sglang#23602: exit code 255, the scheduler's own error above it; the hint is a conditional.  (The
    look-alike, an OOM killer named as what happened, is Ray's exit detail above: it still names host-memory.)"""
    diagnosis = diagnose_without_patterns(SCHEDULER_DIED.format(code=255))
    assert diagnosis.category == "process-killed", diagnosis
    # (stop 56, reasoning/child_death.py: the child's error said absent from the paste, the kill named only as what the
    # paste or the host would have to show)
    assert any("own error is not in the paste" in step for step in diagnosis.fix.steps), diagnosis.fix.steps
    assert not any(step.startswith("A kill from outside") for step in diagnosis.fix.steps), diagnosis.fix.steps


def test_a_setting_passed_twice_to_the_engines_settings_class_is_a_caller_for_another_release() -> None:
    """lm-sys/FastChat#3372: FastChat's SGLang worker passed log_level both by name and in its keywords."""
    traceback = real_traceback("""
        from dataclasses import dataclass

        @dataclass
        class ServerArgs:
            model_path: str
            log_level: str = "error"

        def launch(model_path, **kwargs):
            return ServerArgs(model_path=model_path, log_level="info", **kwargs)

        launch("/models/x", log_level="warning")
        """, "fastchat/serve/sglang_worker.py")
    assert "ServerArgs() got multiple values for keyword argument 'log_level'" in traceback
    assert diagnose_without_patterns(traceback).category == "dependency-version"
    line = "TypeError: sglang.srt.server_args.ServerArgs() got multiple values for keyword argument 'log_level'\n"
    assert diagnose_without_patterns(line).category == "dependency-version"


def test_a_setting_passed_twice_to_an_engine_function_stays_the_engines_bug() -> None:
    """The look-alike: the same refusal of a call between two functions of the engine's own code."""
    traceback = real_traceback("""
        def build_batch(reqs, chunked=False):
            return reqs

        def schedule(reqs, **kwargs):
            return build_batch(reqs, chunked=True, **kwargs)

        schedule([], chunked=False)
        """, "sglang/srt/managers/scheduler.py")
    assert diagnose_without_patterns(traceback).category == "engine-bug"


def test_a_monitored_barrier_naming_the_faulty_rank_is_the_distributed_layer() -> None:
    """sgl-project/sglang#5602: torch's gloo monitoredBarrier reports the rank that never arrived (c10d's wording)."""
    line = ("[rank3]:[E421 04:13:43.426633564 ProcessGroupGloo.cpp:143] Rank 3 successfully reached monitoredBarrier, "
            "but received errors while waiting for send/recv from rank 0. Please check rank 0 logs for faulty rank.\n")
    diagnosis = diagnose_without_patterns(line)
    assert diagnosis.category == "nccl", diagnosis
    assert any("find the rank that failed or stalled first" in step for step in diagnosis.fix.steps), diagnosis.fix.steps
