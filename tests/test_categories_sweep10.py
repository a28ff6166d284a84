"""Stop 41's vLLM dev sweep (h-sweep10), in generic words (issue 28): vLLM's worker wrapper line, whose 'deadlock' is
no hang and whose method names the stage; an Ascend NPU whose SoC the vllm-ascend build does not support; and a
wrapper's frames, which name a version drift only with the errors such a call raises.  Each with a look-alike.

The shapes are the code sites' (vLLM V0 vllm/worker/worker_base.py execute_method's logged line, vllm-ascend
vllm_ascend/utils.py check_ascend_device_type); tracebacks are printed by the real interpreter."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)

# The honest category alone: the reasoning rules set aside.
pytestmark = pytest.mark.usefixtures("no_rules")

# What vLLM V0's worker_base.py logs for any exception of a worker's method, before the traceback.
WRAPPER_LINE = "ERROR 06-28 06:11:45 worker_base.py:145] Error executing method {method}. This might cause deadlock in distributed execution.\n"


def _cut_worker_traceback(method: str) -> str:
    """The worker's logged line and its traceback, cut before the exception line (a paste that stopped there)."""
    traceback = real_traceback(f"""
        def {method}():
            raise ValueError("some check")

        def execute_method():
            return {method}()

        execute_method()
        """, "vllm/worker/worker_base.py")
    lines = traceback.splitlines()
    # cut right after execute_method's frame, as the pastes stop (the worker's own frames never shown)
    cut = next(i for i, line in enumerate(lines) if line.strip().startswith(f"return {method}()")) + 1
    frames = lines[:cut]
    assert frames[0].startswith("Traceback") and "in execute_method" in frames[-2]
    return WRAPPER_LINE.format(method=method) + "".join(f"ERROR 06-28 06:11:45 worker_base.py:145] {line}\n" for line in frames)


def test_a_worker_method_that_sizes_the_kv_cache_is_the_kv_cache_not_a_hang() -> None:
    """OpenRLHF/OpenRLHF#336: the paste stops after initialize_cache's frames (the KV cache larger than it can hold)."""
    diagnosis = diagnose_without_patterns(_cut_worker_traceback("initialize_cache"))
    assert diagnosis.category == "kv-cache-memory", diagnosis


def test_the_wrapper_lines_deadlock_is_no_hang_for_another_method() -> None:
    diagnosis = diagnose_without_patterns(_cut_worker_traceback("load_model"))
    assert diagnosis.category not in {"hang-timeout", "kv-cache-memory"}, diagnosis


def test_a_deadlock_the_message_reports_is_still_a_hang() -> None:
    traceback = real_traceback("""
        raise RuntimeError("deadlock detected: rank 1 waits on a collective rank 0 never joined")
        """, "vllm/distributed/parallel_state.py")
    assert diagnose_without_patterns(traceback).category == "hang-timeout"


def test_an_npu_whose_soc_the_build_does_not_support_lacks_a_device_capability() -> None:
    """vllm-project/vllm-ascend#6796: check_ascend_device_type refuses the device's SoC."""
    traceback = real_traceback("""
        def check_ascend_device_type(soc_version):
            raise RuntimeError(f"Can not support soc_version: {soc_version}.")

        check_ascend_device_type(104)
        """, "vllm_ascend/utils.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert any("Ascend NPU" in step for step in diagnosis.fix.steps), diagnosis.fix.steps


def test_a_gpu_without_bfloat16_gets_no_npu_check() -> None:
    traceback = real_traceback("""
        raise ValueError("Bfloat16 is only supported on GPUs with compute capability of at least 8.0. "
                         "Your Tesla T4 GPU has compute capability 7.5.")
        """, "vllm/platforms/cuda.py")
    diagnosis = diagnose_without_patterns(traceback)
    assert diagnosis.category == "gpu-arch-unsupported"
    assert not any("Ascend NPU" in step for step in diagnosis.fix.steps), diagnosis.fix.steps


def test_a_soc_version_named_in_another_error_is_no_device_capability() -> None:
    traceback = real_traceback("""
        raise RuntimeError("failed to read soc_version from the driver: permission denied")
        """, "vllm_ascend/utils.py")
    assert diagnose_without_patterns(traceback).category != "gpu-arch-unsupported"


def _through(wrapper_module: str, body: str) -> str:
    return real_traceback(f"""
        def run():
            {body}

        run()
        """, wrapper_module)


def test_an_engine_class_left_undefined_in_a_wrappers_module_is_the_wrapper_row() -> None:
    """EvolvingLMMs-Lab/lmms-eval#726, arcee-ai/mergekit#524 (lm_eval): the wrapper guards `from vllm import LLM`,
    so a failed import leaves the name undefined where the wrapper calls it."""
    diagnosis = diagnose_without_patterns(_through("lmms_eval/models/vllm.py", "client = LLM(model='m')"))
    assert diagnosis.category == "dependency-version", diagnosis
    assert any("try/except" in step for step in diagnosis.fix.steps), diagnosis.fix.steps


def test_a_traceback_cut_under_a_wrappers_frames_is_no_version_drift() -> None:
    """verl-project/verl#302: an out-of-memory wake_up cut after verl's frames says nothing of a release."""
    traceback = real_traceback("""
        def wake_up():
            raise RuntimeError("CUDA error: out of memory")

        def enter():
            return wake_up()

        enter()
        """, "verl/workers/sharding_manager/fsdp_vllm.py")
    lines = traceback.splitlines()
    cut = next(i for i, line in enumerate(lines) if line.strip() == "return wake_up()") + 1
    diagnosis = diagnose_without_patterns("\n".join(lines[:cut]) + "\n")
    assert diagnosis.category != "dependency-version", diagnosis


def test_the_same_undefined_name_in_a_users_script_is_no_wrapper_drift() -> None:
    diagnosis = diagnose_without_patterns(_through("app.py", "client = LLM(model='m')"))
    assert diagnosis.category != "dependency-version", diagnosis


ENGINE_WITHOUT_ATTRIBUTE = """
        class AsyncLLM:
            pass

        def build(llm_engine):
            return llm_engine.engine.tokenizer

        build(AsyncLLM())
        """


def test_fastchats_worker_reaching_into_an_engine_class_the_release_changed_is_the_wrapper_row() -> None:
    """lm-sys/FastChat#3704: FastChat's vllm_worker written for vLLM V0 reads `AsyncLLM.engine`, which V1 lacks."""
    diagnosis = diagnose_without_patterns(real_traceback(ENGINE_WITHOUT_ATTRIBUTE, "FastChat/fastchat/serve/vllm_worker.py"))
    assert diagnosis.category == "dependency-version", diagnosis
    assert not any("try/except" in step for step in diagnosis.fix.steps), diagnosis.fix.steps


def test_the_same_attribute_error_in_a_users_script_is_no_wrapper_drift() -> None:
    diagnosis = diagnose_without_patterns(real_traceback(ENGINE_WITHOUT_ATTRIBUTE, "app.py"))
    assert diagnosis.category != "dependency-version" or "program that runs the engine" not in diagnosis.title, diagnosis
