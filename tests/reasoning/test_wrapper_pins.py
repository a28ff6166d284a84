"""A wrapper calling an engine API that changed (reasoning/wrapper_pins.py, general.py): the advice aligns the two
releases from what the paste says of them, pip's conflict report, and asks which releases fit when it says
nothing; a wrapper failing on its own class, in a module named after the engine, is no sign of another release.
Shapes: hiyouga/LlamaFactory#6654 (a keyword vLLM 0.5.0 lacked, passed by LLaMA-Factory's vllm_engine.py); pip's
resolver report as vllm-project/vllm#6200, vllm-project/vllm-ascend#8286 and vllm-project/llm-compressor#2258 show it."""

from __future__ import annotations

from logsleuth.api import diagnose_text
from logsleuth.reasoning.wrapper_pins import wrapper_pin
from tests.reasoning.diagnosed import OPTIONS, first_diagnosis

CALL = ("Traceback (most recent call last):\n"
        '  File "/opt/conda/lib/python3.10/site-packages/llamafactory/chat/vllm_engine.py", line 104, in __init__\n'
        "    self.model = AsyncLLMEngine.from_engine_args(AsyncEngineArgs(**engine_args))\n"
        "TypeError: __init__() got an unexpected keyword argument 'limit_mm_per_prompt'\n")
PIP = ("ERROR: pip's dependency resolver does not currently take into account all the packages that are installed. "
       "This behaviour is the source of the following dependency conflicts.\n"
       "llamafactory 0.9.2 requires vllm<=0.6.5,>=0.4.3, but you have vllm 0.7.3 which is incompatible.\n")


def test_pip_report_names_the_wrapper_and_its_range() -> None:
    pin = wrapper_pin(PIP.splitlines(), "vllm")
    assert pin is not None
    assert (pin.program, pin.version, pin.requirement, pin.installed) == ("llamafactory", "0.9.2", "vllm<=0.6.5,>=0.4.3", "0.7.3")


def test_a_conflict_on_another_package_or_engine_is_not_a_pin() -> None:
    torch = "vllm 0.7.3 requires torch==2.5.1, but you have torch 2.6.0 which is incompatible."
    assert wrapper_pin([torch], "vllm") is None
    assert wrapper_pin([PIP.splitlines()[1]], "sglang") is None


def test_the_wrapper_call_is_aligned_to_the_range_pip_printed() -> None:
    report = diagnose_text(PIP + CALL, OPTIONS)
    call = next(g.diagnosis for g in report.failures if g.failure.final.type == "TypeError")
    assert call is not None and call.fix is not None
    aligned = [step for step in call.fix.steps if "pip reported" in step]
    assert aligned and "vllm<=0.6.5,>=0.4.3" in aligned[0] and "llamafactory 0.9.2" in aligned[0]
    assert call.fix.needs_input == ()


def test_without_a_pin_which_releases_fit_is_asked() -> None:
    diagnosis = first_diagnosis(CALL)
    assert diagnosis.category == "dependency-version"
    assert diagnosis.fix is not None and diagnosis.fix.needs_input
    assert "which release of" in diagnosis.fix.needs_input[0]
    assert not any("pip reported" in step for step in diagnosis.fix.steps)


def test_a_wrapper_failing_on_its_own_class_is_not_another_release() -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/workspace/verl/verl/workers/rollout/vllm_rollout/vllm_async_server.py", line 188, in build\n'
           "    server = AsyncvLLMServer(config, dp_size)\n"
           "TypeError: AsyncvLLMServer.__init__() missing 1 required positional argument: 'wg_prefix'\n")
    diagnosis = first_diagnosis(log)
    assert diagnosis.category != "dependency-version"
    assert diagnosis.fix is None or not any("another vLLM release" in step or "written for another" in step
                                            for step in diagnosis.fix.steps)


def test_the_engine_class_called_from_such_a_module_still_is() -> None:
    log = ("Traceback (most recent call last):\n"
           '  File "/workspace/verl/verl/workers/rollout/vllm_rollout/vllm_rollout_spmd.py", line 240, in generate\n'
           "    sampling_params = SamplingParams(n=1, max_tokens=16, use_beam_search=False)\n"
           "TypeError: SamplingParams.__init__() got an unexpected keyword argument 'use_beam_search'\n")
    assert first_diagnosis(log).category == "dependency-version"
