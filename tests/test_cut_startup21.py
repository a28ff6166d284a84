"""Tracebacks cut while the engine was being set up, and start-up pastes that stop before any error (issue 28, stop 57,
branch cutmodel21).  Real CPython tracebacks through the engines' set-up calls, rebuilt in our own words and cut the way
the threads' pastes were:

- a cut in SGLang's scheduler or model construction (sgl-project/sglang#8194, #2362), in vLLM's engine client or engine
  (vllm-project/vllm#12502, #12682), or right after vLLM's banner (#52768): unclassified, with general guidance built on
  what the log names (model, release, transformers' pin, a source tree), never a category;
- a quantization method set on a mixture-of-experts checkpoint, cut while the model was built (sgl-project/sglang#1100,
  #2362): a labelled step, never a category from the name (Qwen3-30B-A3B with fp8 is a supported pairing), the
  tensor-parallel split's step kept;
- a traceback cut at its first line after the server served: no set-up guidance;
- a start-up paste with no error: a quantization on a MoE checkpoint (#1100) as a lead in the notice; no GGUF lead (SGLang
  switches a .gguf path to its gguf load format by itself from the release that added it); none where nothing supports
  one."""

from __future__ import annotations

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.models import LaunchInfo
from logsleuth.reasoning.cut_startup import LABEL
from logsleuth.reasoning.launch_quantization import launch_model, mixture_of_experts_name
from tests.helpers import diagnose_with_patterns, real_traceback
from tests.test_cut_tracebacks import cut_after

# SGLang's scheduler building its worker, runner and model: the model class's constructor raises.
SGLANG_SETUP = '''
class DeepseekV2ForCausalLM:
    def __init__(self, config):
        raise KeyError("experts.w13_qweight")


def _initialize_model(config):
    model_class = DeepseekV2ForCausalLM
    return model_class(
        config)


class ModelRunner:
    def __init__(self):
        self.load_model()

    def load_model(self):
        self.model = _initialize_model({})


class Scheduler:
    def __init__(self):
        self.model_runner = ModelRunner(
        )


def run_scheduler_process():
    scheduler = Scheduler()


run_scheduler_process()
'''


def _sglang_cut(filename: str) -> str:
    return cut_after(real_traceback(SGLANG_SETUP, filename), "return model_class(")


def _steps(text: str) -> tuple[str, ...]:
    diagnosis = diagnose_with_patterns(text)
    assert diagnosis.fix is not None
    return diagnosis.fix.steps


def test_a_cut_in_model_construction_gets_set_up_guidance_and_no_category() -> None:
    cut = _sglang_cut("python3.10/site-packages/sglang/srt/model_loader/loader.py")
    assert "KeyError" not in cut
    diagnosis = diagnose_with_patterns(cut)
    assert diagnosis.category == "unclassified", diagnosis.root_cause
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    stage = next(step for step in steps if "was being set up" in step)
    assert stage.startswith(LABEL) and "sglang/srt/model_loader/loader.py in _initialize_model" in stage
    # the release is not named: the check says how to read it, and no source tree is claimed for an installed package
    assert any("pip show sglang" in step and "architectures" in step for step in steps)
    assert not any("source tree" in step for step in steps)


def test_a_source_tree_is_named_as_a_possible_regression() -> None:
    steps = _steps(_sglang_cut("sgl-workspace/sglang/python/sglang/srt/model_loader/loader.py"))
    tree = next(step for step in steps if "source tree" in step)
    assert tree.startswith(LABEL) and "/sglang/python)" in tree and "development branch" in tree


@pytest.mark.parametrize("cut_at", ["forward([1])", "event_loop_normal()"])
def test_a_cut_after_the_set_up_gets_no_set_up_guidance(cut_at: str) -> None:
    # the scheduler process's entry runs its serving loop too (split 20's B-05: a cut after its first frame)
    printed = real_traceback('''
def forward(batch):
    raise RuntimeError("boom")


def event_loop_normal():
    forward([1])


def run_scheduler_process():
    event_loop_normal()


run_scheduler_process()
''', "python3.10/site-packages/sglang/srt/managers/scheduler.py")
    steps = _steps(cut_after(printed, cut_at))
    assert not any("was being set up" in step for step in steps)


BANNER = "\n".join([
    "(APIServer pid=7) INFO 03-02 10:00:00 [utils.py:300]        █     █     █▄   ▄█",
    "(APIServer pid=7) INFO 03-02 10:00:00 [utils.py:300]  ▄▄ ▄█ █     █     █ ▀▄▀ █  version 0.11.0",
    "(APIServer pid=7) INFO 03-02 10:00:00 [utils.py:300]   █▄█▀ █     █     █     █  model   acme/newmodel-9B",
    "(APIServer pid=7) INFO 03-02 10:00:00 [utils.py:300]    ▀▀  ▀▀▀▀▀ ▀▀▀▀▀ ▀     ▀",
    "(APIServer pid=7) INFO 03-02 10:00:00 [utils.py:250] non-default args: {'model': 'acme/newmodel-9B'}",
    "(APIServer pid=7) Traceback (most recent call last):",
]) + "\n"


def test_a_traceback_cut_at_its_first_line_after_the_banner_names_the_banner_s_model_and_release() -> None:
    diagnosis = diagnose_with_patterns(BANNER)
    assert diagnosis.category == "unclassified"
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    assert any("acme/newmodel-9B" in step and "vLLM 0.11.0" in step for step in steps)
    # the release's transformers requirement, from its package metadata, beside the check
    assert any(step.startswith(LABEL) and "vLLM 0.11.0 requires transformers" in step for step in steps)


def test_the_banner_s_model_is_the_launch_s_model() -> None:
    launch = diagnose_text(BANNER, DiagnoseOptions(include_user_patterns=False)).launch
    assert launch.banner_model == "acme/newmodel-9B"
    assert launch_model(launch) == "acme/newmodel-9B"


@pytest.mark.parametrize(("model", "expected"), [
    ("qwen/Qwen2-57B-A14B-Instruct-GPTQ-Int4", "A14B"),
    ("Qwen/Qwen3-30B-A3B", "A3B"),
    ("mistralai/Mixtral-8x7B-Instruct-v0.1", "8x7B"),
    ("Qwen/Qwen1.5-MoE-A2.7B-Chat", "MoE"),
    ("meta-llama/Llama-3.1-8B-Instruct", None),
    ("org/llama-2-7b-chat-awq", None),
    ("/models/Qwen2-AWQ", None),
    # one expert is a dense model, a LoRA's rank and alpha are no active parameters, a directory named moe says nothing
    ("org/qwen-1x8B", None),
    ("org/llama3-8b-lora-r16-a32b", None),
    ("/models/moe", None),
    ("deepseek-ai/deepseek-moe-16b-base", "moe"),
])
def test_a_mixture_of_experts_name(model: str, expected: str | None) -> None:
    assert mixture_of_experts_name(model) == expected


def test_launch_model_reads_the_command_and_the_settings() -> None:
    assert launch_model(LaunchInfo(command="vllm serve /m/x --quantization awq")) == "/m/x"
    assert launch_model(LaunchInfo(server_args=(("model_path", "'org/m'"),))) == "org/m"
    assert launch_model(LaunchInfo()) is None


LOADER = '''
class Qwen2MoeForCausalLM:
    def __init__(self):
        raise KeyError("mlp.experts.w2_qweight")


def _initialize_model():
    model_class = Qwen2MoeForCausalLM
    return model_class(
        )


def load_model():
    model = _initialize_model()


load_model()
'''


def _quantized_cut(model: str, method: str = "gptq") -> str:
    launch = f"python -m sglang.launch_server --model-path {model} --quantization {method} --tp 2\n"
    printed = real_traceback(LOADER, "python3.10/site-packages/sglang/srt/model_loader/loader.py")
    return launch + cut_after(printed, "return model_class(")


def test_a_quantized_moe_checkpoint_cut_in_its_build_gets_a_labelled_step_and_no_category() -> None:
    diagnosis = diagnose_with_patterns(_quantized_cut("org/Qwen2-57B-A14B-Instruct-GPTQ-Int4"))
    assert diagnosis.category == "unclassified", diagnosis.root_cause
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    moe = next(step for step in steps if "mixture-of-experts" in step)
    assert moe.startswith("General guidance, not the category:") and "A14B" in moe and "--quantization gptq" in moe
    # the launch's --tp 2 keeps its step: the split is as likely there as the method
    assert any("tensor parallelism 2" in step for step in steps)


@pytest.mark.parametrize("model", ["Qwen/Qwen3-30B-A3B", "org/Qwen2-72B-Instruct-GPTQ-Int4"])
def test_a_quantized_checkpoint_cut_in_its_build_decides_no_category(model: str) -> None:
    diagnosis = diagnose_with_patterns(_quantized_cut(model, "fp8"))
    assert diagnosis.category == "unclassified", diagnosis.root_cause
    assert any("tensor parallelism 2" in step for step in (diagnosis.fix.steps if diagnosis.fix else ()))


def _notice(text: str) -> tuple[str, ...]:
    report = diagnose_text(text, DiagnoseOptions(include_user_patterns=False))
    assert not report.failures and report.launch.ended_in_startup
    return report.launch.startup_leads


def _server_args(model: str, load_format: str = "auto", quantization: str = "None") -> str:
    return (f"[2024-11-02 10:00:00] server_args=ServerArgs(model_path='{model}', tokenizer_path='{model}', "
            f"load_format='{load_format}', dtype='auto', quantization={quantization}, tp_size=1, port=30000, "
            "mem_fraction_static=0.8, schedule_pol\n")


def _whole_server_args(model: str, load_format: str) -> str:
    return (f"[2024-11-02 10:00:00] server_args=ServerArgs(model_path='{model}', tokenizer_path='{model}', "
            f"load_format='{load_format}', dtype='auto', quantization=None, tp_size=1, port=30000)\n")


@pytest.mark.parametrize("version", ["", "sglang==0.3.6\n", "sglang==0.4.0.post3\n", "sglang==0.5.24\n"])
@pytest.mark.parametrize("dump", [_server_args, _whole_server_args])
def test_a_gguf_file_under_sglang_s_default_load_format_gets_no_lead(version: str, dump) -> None:  # type: ignore[no-untyped-def]
    # SGLang switches a .gguf path to its gguf load format by itself from the release that added the choice
    # (server_args.py: check_gguf_file(self.model_path)): a bare command or a dump saying auto shows nothing wrong
    command = "python -m sglang.launch_server --model-path /models/qwen2.5-3b-q5_k_m.gguf --port 30000\n"
    assert _notice(version + command + dump("/models/qwen2.5-3b-q5_k_m.gguf", "auto")) == ()
    assert _notice(version + command) == ()


def test_a_quantization_on_a_moe_checkpoint_is_a_lead_and_on_a_dense_one_none() -> None:
    moe = "org/Qwen2-57B-A14B-Instruct-GPTQ-Int4"
    command = f"python -m sglang.launch_server --quantization gptq --model-path {moe} --tp 2\n"
    leads = _notice(command + _server_args(moe, quantization="'gptq'"))
    assert len(leads) == 1 and leads[0].startswith(LABEL) and "A14B" in leads[0] and "--quantization gptq" in leads[0]
    dense = "org/Qwen2-72B-Instruct-GPTQ-Int4"
    command = f"python -m sglang.launch_server --quantization gptq --model-path {dense} --tp 2\n"
    assert _notice(command + _server_args(dense, quantization="'gptq'")) == ()


SERVED = "\n".join([
    *BANNER.splitlines()[:5],
    "(APIServer pid=7) INFO:     Application startup complete.",
    '(APIServer pid=7) INFO:     127.0.0.1:51234 - "POST /v1/chat/completions HTTP/1.1" 200 OK',
    "(APIServer pid=7) Traceback (most recent call last):",
]) + "\n"


def test_a_traceback_cut_at_its_first_line_after_the_server_served_gets_no_set_up_guidance() -> None:
    steps = _steps(SERVED)
    assert not any("start" in step and "serving" in step for step in steps), steps
    assert not any("implements acme/newmodel-9B" in step for step in steps)


def _transformers_steps(version_line: str, release: str = "0.27.1") -> list[str]:
    banner = BANNER.replace("version 0.11.0", f"version {release}")
    return [step for step in _steps(version_line + banner) if "transformers" in step and "requires" in step]


def test_a_transformers_within_an_open_floor_is_a_labelled_guess_not_fine() -> None:
    # vLLM 0.27.1 requires transformers>=5.5.3 and no upper bound (vllm-project/vllm#52768: 5.15 under 0.27.1)
    within = _transformers_steps("transformers 5.15.0\n")
    assert len(within) == 1 and within[0].startswith(LABEL), within
    assert "no upper bound" in within[0] and "rules nothing out" in within[0] and "a guess, not a finding" in within[0]
    unshown = _transformers_steps("")
    assert len(unshown) == 1 and "no upper bound" in unshown[0] and "within it" not in unshown[0], unshown
    outside = _transformers_steps("transformers 4.40.0\n")
    assert len(outside) == 1 and "outside what vLLM 0.27.1 requires" in outside[0], outside
