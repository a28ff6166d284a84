"""Cut tracebacks and worker deaths the first round still misfiled (issue 28, stop 44, branch h-cut2), on real CPython
tracebacks rebuilt in our own words and then cut the way the threads' pastes were:

- a traceback cut inside the model loader of a launch that asks for a quantization (sgl-project/sglang PR#14682,
  vllm-project/vllm#22004, #13640, aivrar/vllm-windows-build#16): since stop 47 a launch's flag alone decides no
  category of a cut traceback (the blind split's quantization guesses from a quantization flag were often wrong): the
  report asks for the exception line instead; a cut in the weights' reading stays weight-loading;
- a traceback cut at the engine's call into its workers (vllm-project/vllm#15630, #32584): unclassified with where the
  worker's error is, never a kill; a loader frame the paste kept below it names the stage;
- vLLM's `WorkerProc failed to start.` record over a cut traceback (vllm-project/vllm#26328): the person's sentence
  above it is the error's words;
- an error raised under SGLang's srt/mem_cache/ that is no assertion (sgl-project/sglang#26690's refusal): not the KV
  cache bookkeeping row."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.models import Diagnosis, LaunchInfo
from logsleuth.reasoning.launch_quantization import launch_quantization
from tests.helpers import diagnose_with_patterns, real_traceback, traceback_of_installed
from tests.test_cut_tracebacks import cut_after

QUANTIZED_TITLE = "Likely the quantization the launch asks for, failing while the model was built"

# A model loader building a model class whose linear layer refuses its split (the shape of vllm-project/vllm#13640).
LOADER = real_traceback('''
class RowParallelLinear:
    def __init__(self, size, tp):
        if size % tp:
            raise ValueError("The input size is not aligned with the quantized weight shape.")


class Qwen2MLP:
    def __init__(self):
        self.down_proj = RowParallelLinear(29568 // 2, 128 * 3)


def initialize_model():
    return Qwen2MLP()


def load_model():
    model = initialize_model()
    return model


load_model()
''', "vllm/model_executor/model_loader/base_loader.py")
CUT_LOADER = cut_after(LOADER, "model = initialize_model()")


def _steps(diagnosis: Diagnosis) -> str:
    return " ".join(diagnosis.fix.steps if diagnosis.fix else ())


@pytest.mark.parametrize(("launch", "quoted"), [
    ("vllm serve /models/qwen2-72b --quantization awq --tensor-parallel-size 2\n", "--quantization awq"),
    ("vllm serve /models/Qwen2.5-VL-72B-Instruct-AWQ --tensor-parallel-size 2\n", "Qwen2.5-VL-72B-Instruct-AWQ"),
    ("python3 -m sglang.launch_server --model-path nvidia/DeepSeek-R1-NVFP4 --tp 4\n", "DeepSeek-R1-NVFP4"),
])
def test_a_quantized_launch_decides_no_category_of_a_cut_in_the_model_loader(launch: str, quoted: str) -> None:
    assert "ValueError" not in CUT_LOADER and "initialize_model()" in CUT_LOADER
    diagnosis = diagnose_with_patterns(launch + CUT_LOADER)
    assert diagnosis.category != "quantization", diagnosis.root_cause
    assert not diagnosis.title.startswith(QUANTIZED_TITLE) and quoted not in diagnosis.root_cause
    # the line that would say what failed is asked for; the quantization is named only as general guidance
    assert diagnosis.fix is not None and any("right after the last frame" in need for need in diagnosis.fix.needs_input)
    assert any(step.startswith("General guidance, not the category: the launch asks for a quantization")
               and quoted in step for step in diagnosis.fix.steps)


def test_the_same_cut_with_no_quantization_in_the_launch_is_no_quantization() -> None:
    diagnosis = diagnose_with_patterns("vllm serve /models/Qwen2.5-72B-Instruct --tensor-parallel-size 2\n" + CUT_LOADER)
    assert diagnosis.category != "quantization", diagnosis.root_cause


def test_a_whole_loader_traceback_keeps_its_own_words() -> None:
    # the exception line is there: the launch's setting is not the evidence, the message is
    diagnosis = diagnose_with_patterns("vllm serve /models/qwen2 --quantization awq\n" + LOADER)
    assert not diagnosis.title.startswith(QUANTIZED_TITLE)


def test_a_cut_in_the_weights_reading_stays_weight_loading() -> None:
    printed = real_traceback('''
def weight_loader(param, loaded_weight):
    param.copy(loaded_weight)


def load_weights(weights):
    for name, loaded in weights:
        weight_loader(None, loaded)


load_weights([("w", 1)])
''', "vllm/model_executor/models/qwen2.py")
    diagnosis = diagnose_with_patterns("vllm serve /models/Qwen2-7B-Instruct-AWQ\n" + cut_after(printed, "weight_loader(None, loaded)"))
    assert diagnosis.category == "weight-loading", diagnosis.root_cause


@pytest.mark.parametrize(("launch", "lines", "expected"), [
    (LaunchInfo(command="vllm serve /m --quantization fp8"), (), "--quantization fp8"),
    (LaunchInfo(command="vllm serve /m --quantization=None"), (), None),
    (LaunchInfo(server_args=(("model_path", "'/models/m'"), ("quantization", "'w8a8_int8'"))), (), "quantization=w8a8_int8"),
    (LaunchInfo(server_args=(("model_path", "'/models/m'"), ("quantization", "None"))), (), None),
    # vLLM's settings dump: its quantization item, or the model it names
    (LaunchInfo(), ("INFO Initializing a V1 LLM engine (v0.10.1) with config: model='/m', dtype=torch.float16, "
                    "quantization=gptq_marlin, enforce_eager=False",), "quantization=gptq_marlin"),
    (LaunchInfo(), ("INFO Initializing a V1 LLM engine (v0.10.1) with config: model='/m', quantization=None",), None),
    (LaunchInfo(), ("non-default args: {'model': 'Qwen/Qwen3-30B-A3B-GPTQ-Int4', 'max_model_len': 8192}",),
     "the checkpoint's name Qwen3-30B-A3B-GPTQ-Int4"),
    # a model name whose letters only contain a method's (no separator around it) names none
    (LaunchInfo(command="vllm serve /models/awqward-llama-8b"), (), None),
    (LaunchInfo(command="vllm serve meta-llama/Llama-3.1-8B-Instruct"), (), None),
    # a line that merely mentions a quantization outside a settings dump says nothing of the launch
    (LaunchInfo(), ("INFO the model was trained with quantization=awq in mind",), None),
])
def test_the_launch_s_quantization(launch: LaunchInfo, lines: tuple[str, ...], expected: str | None) -> None:
    assert launch_quantization(launch, lines) == expected


# -- the engine's call into its workers, cut: no kill, the stage and where the worker's error is

def _executor_into_loader(tmp_path: Path, cut_at: str) -> str:
    proc = traceback_of_installed(tmp_path, {
        "vllm/v1/executor/uniproc_executor.py":
            "from vllm.v1.worker.gpu_worker import Worker\n\n\n"
            "def collective_rpc(method):\n    return getattr(Worker(), method)()\n\n\n"
            "def _init_executor():\n    collective_rpc(\"load_model\")\n",
        "vllm/v1/worker/gpu_worker.py":
            "from vllm.model_executor.model_loader.base_loader import load_model as get_model\n\n\n"
            "class Worker:\n    def load_model(self):\n        self.model = get_model()\n",
        "vllm/model_executor/model_loader/base_loader.py":
            "def load_model():\n    raise RuntimeError(\"cutlass_scaled_mm failed\")\n",
    }, "from vllm.v1.executor.uniproc_executor import _init_executor\n_init_executor()\n")
    assert "RuntimeError" in proc.stderr
    return cut_after(proc.stderr, cut_at)


def test_a_cut_at_the_engine_s_call_into_its_workers_is_no_kill(tmp_path: Path) -> None:
    diagnosis = diagnose_with_patterns(_executor_into_loader(tmp_path, "return getattr(Worker(), method)()"))
    assert diagnosis.category == "unclassified", diagnosis.root_cause
    assert "re-raised by the engine's call into its workers" in diagnosis.title
    assert "The worker's own error is the one to read" in _steps(diagnosis)


def test_a_loader_frame_below_the_call_into_the_workers_decides_nothing_with_a_quantized_checkpoint(tmp_path: Path) -> None:
    # stop 47: the checkpoint's quantization is a launch setting, and a setting alone decides no cut traceback's category
    cut = _executor_into_loader(tmp_path, "self.model = get_model()")
    diagnosis = diagnose_with_patterns("vllm serve /models/Llama-3.1-8B-Instruct-NVFP4\n" + cut)
    assert diagnosis.category == "unclassified", diagnosis.root_cause
    assert diagnose_with_patterns("vllm serve /models/Llama-3.1-8B-Instruct\n" + cut).category == "unclassified"


# -- vLLM's `WorkerProc failed to start.` over a traceback the paste cut (v1/executor/multiproc_executor.py worker_main)

WORKER_START = cut_after(real_traceback('''
class WorkerProc:
    def __init__(self):
        self.load()

    def load(self):
        raise RuntimeError("draft model cannot be split")


def worker_main():
    worker = WorkerProc()


worker_main()
''', "vllm/v1/executor/multiproc_executor.py"), "worker = WorkerProc()")
PREFIX = "(Worker_TP1 pid=530) ERROR 10-06 18:54:30 [v1/executor/multiproc_executor.py:597] "


def _worker_start_log(sentence: str) -> str:
    record = PREFIX + "WorkerProc failed to start.\n"
    return sentence + "\n\n" + record + "".join(PREFIX + line + "\n" for line in WORKER_START.splitlines())


def test_a_sentence_above_a_worker_s_start_failure_names_its_category() -> None:
    diagnosis = diagnose_with_patterns(_worker_start_log("After I turned on speculative decoding with an eagle3 draft, it fails:"))
    assert diagnosis.category == "spec-decoding-args", diagnosis.root_cause
    assert "the words of a line just before it" in diagnosis.root_cause


def test_a_sentence_that_names_nothing_leaves_the_worker_s_start_failure_unclassified() -> None:
    diagnosis = diagnose_with_patterns(_worker_start_log("It fails right away when I start the server:"))
    assert diagnosis.category != "spec-decoding-args", diagnosis.root_cause


# -- an error raised in SGLang's KV cache code that is no assertion: not its bookkeeping

def test_an_error_raised_in_the_kv_cache_code_that_is_no_assertion_is_no_bookkeeping_bug() -> None:
    printed = real_traceback('''
class HostKVCache:
    def __init__(self, layout):
        if layout not in ("layer_first", "page_first"):
            raise ValueError(f"unrecognized layout {layout}")


HostKVCache("page_head")
''', "python/sglang/srt/mem_cache/memory_pool_host.py")
    assert "ValueError" in printed
    assert "KV cache bookkeeping" not in diagnose_with_patterns(printed).title


# -- a worker's error quoted in the engine core's re-raise: the quoted words are the error's (vllm-project/vllm#32622:
# the NVFP4 grouped MoE GEMM's check, csrc/quantization/fp4/)

CORE = "(EngineCore_DP0 pid=4120) ERROR 02-11 09:14:03 [core.py:935] "


def test_a_quantized_moe_gemm_s_check_quoted_in_a_worker_re_raise_is_quantization() -> None:
    line = (CORE + "RuntimeError: Worker failed with error 'Failed to initialize GEMM: status=7 workspace_size=98304 "
            "num_experts=128 M=32768 N=2048 K=4096', please check the stack trace above for the root cause\n")
    assert diagnose_with_patterns(line).category == "quantization"


def test_a_quoted_error_that_names_no_category_stays_the_re_raise() -> None:
    # the look-alike: another library's GEMM set-up failing, with no expert count, names no quantized MoE kernel
    line = (CORE + "RuntimeError: Worker failed with error 'Failed to initialize GEMM: status=7', please check the stack "
            "trace above for the root cause\n")
    assert diagnose_with_patterns(line).category == "process-killed"
