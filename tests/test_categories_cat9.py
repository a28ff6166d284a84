"""Stop 42's fifth blind split, in generic words (issue 28): the classes it left unclassified or misfiled.

A parallel layout the GPUs or the process groups do not fit (the degrees against the GPUs a process sees, a process
group asked for before it was built or built at another size) is parallel-config, read from the engines' own checks
(the raise site index: vLLM's and SGLang's parallel_state.py, the executors', gpu_worker.py).

A traceback cut before its exception line inside the model loader names the stage, not a category: it is
weight-loading only when its innermost frame reads the weights (load_weights, a weight_loader, weight_utils.py)."""

from __future__ import annotations

import pytest

from tests.helpers import diagnose_without_patterns, real_traceback
from tests.test_categories_cat6 import no_rules  # noqa: F401 (no_rules: the fixture, used by pytestmark)
from tests.test_categories_cat8 import VLLM_BANNER, _cut_before_exception_line

pytestmark = pytest.mark.usefixtures("no_rules")

PARALLEL_LAYOUTS = [
    # vllm vllm/executor/multiproc_gpu_executor.py, mp_distributed_executor.py (the raise site index);
    # vllm-project/vllm#5790 (tensor parallel size above the GPUs the process sees)
    "RuntimeError: please set tensor_parallel_size (4) to less than max local gpu count (1)\n",
    "RuntimeError: please ensure that world_size (2) is less than than max local gpu count (1)\n",
    # vllm vllm/v1/worker/gpu_worker.py (the raise site index)
    "AssertionError: local_world_size (4) must be less than or equal to the number of visible devices (2).\n",
    # vllm and sglang distributed/parallel_state.py: a group asked for before the layout built it, or at another size
    "AssertionError: tensor model parallel group is not initialized\n",
    "AssertionError: pipeline model parallel group is not initialized\n",
    "AssertionError: distributed environment is not initialized\n",
    "AssertionError: tensor parallel group already initialized, but of unexpected size. got: "
    "get_tensor_model_parallel_world_size()=2 vs. wanted: tensor_model_parallel_size=4\n",
]


@pytest.mark.parametrize("text", PARALLEL_LAYOUTS, ids=range(len(PARALLEL_LAYOUTS)))
def test_a_parallel_layout_the_gpus_or_groups_do_not_fit_is_parallel_config(text: str) -> None:
    assert diagnose_without_patterns(text).category == "parallel-config"


def test_a_process_group_missing_at_the_engines_own_check_is_parallel_config_with_its_frames() -> None:
    """The whole traceback: the frames run through the distributed layer (nccl's path, +1), the words decide."""
    traceback = real_traceback("""
        _TP = None

        def get_tp_group():
            assert _TP is not None, "tensor model parallel group is not initialized"
            return _TP

        get_tp_group()
        """, "vllm/distributed/parallel_state.py")
    assert diagnose_without_patterns(VLLM_BANNER + traceback).category == "parallel-config"


@pytest.mark.parametrize("text", [
    # something else that is not initialized: no parallel group
    "AssertionError: CUDA Graph batch info is not initialized.\n",
    # a collective that failed on a layout that was built: NCCL's
    "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled system error, "
    "NCCL version 2.21.5\n",
], ids=["not-a-group", "nccl"])
def test_what_only_looks_like_a_parallel_layout_keeps_its_category(text: str) -> None:
    assert diagnose_without_patterns(text).category != "parallel-config"


MODEL_LOADER_STAGES = [
    # vLLM vllm/worker/worker.py: Worker.load_model -> the model runner's load_model (the model built and loaded)
    ("vllm/worker/worker.py", """
        class ModelRunner:
            def load_model(self):
                raise RuntimeError("cut")

        class Worker:
            def __init__(self):
                self.model_runner = ModelRunner()

            def load_model(self):
                self.model_runner.load_model()  # cut

        Worker().load_model()
        """),
    # vLLM vllm/model_executor/model_loader/loader.py: _initialize_model building the model class
    ("vllm/model_executor/model_loader/loader.py", """
        class Qwen2ForCausalLM:
            def __init__(self, vllm_config):
                raise RuntimeError("cut")

        def _initialize_model(vllm_config):
            return Qwen2ForCausalLM(vllm_config=vllm_config)  # cut

        _initialize_model(None)
        """),
]


@pytest.mark.parametrize(("filename", "code"), MODEL_LOADER_STAGES, ids=["load_model", "_initialize_model"])
def test_a_traceback_cut_in_the_model_loaders_stage_does_not_guess_weight_loading(filename: str, code: str) -> None:
    diagnosis = diagnose_without_patterns(VLLM_BANNER + _cut_before_exception_line(real_traceback(code, filename)))
    assert diagnosis.category == "unclassified", diagnosis
    assert "the paste stops inside the traceback, before its exception line" in diagnosis.root_cause


def test_a_traceback_cut_in_the_checkpoints_iterator_is_weight_loading() -> None:
    """The look-alike: the innermost frame reads the checkpoint (weight_utils.py's iterator), so the stage is the weights'."""
    traceback = real_traceback("""
        def safe_open(path):
            raise RuntimeError("cut")

        def safetensors_weights_iterator(files):
            for path in files:
                yield safe_open(path)  # cut

        list(safetensors_weights_iterator(["model-00001-of-00002.safetensors"]))
        """, "vllm/model_executor/model_loader/weight_utils.py")
    diagnosis = diagnose_without_patterns(VLLM_BANNER + _cut_before_exception_line(traceback))
    assert diagnosis.category == "weight-loading", diagnosis


def test_a_whole_traceback_in_the_model_loader_still_reads_the_weights_words() -> None:
    traceback = real_traceback("""
        def load_model():
            raise RuntimeError("Error(s) in loading state_dict: size mismatch for lm_head.weight: copying a param "
                               "with shape torch.Size([151936, 3584]) from checkpoint")

        load_model()
        """, "vllm/model_executor/model_loader/loader.py")
    assert diagnose_without_patterns(VLLM_BANNER + traceback).category == "weight-loading"


def _installed(path: str) -> str:
    return f"venv/lib/python3.11/site-packages/{path}"


ENGINE_MODULE_CALLS = [
    # verl's sharding manager reaching into vLLM's distributed module (verl-project/verl#2812's class: a wrapper written
    # for another release); CPython's AttributeError names the engine's module
    ("verl/workers/sharding_manager/fsdp_vllm.py", """
        import types
        parallel_state = types.ModuleType("vllm.distributed.parallel_state")
        parallel_state.get_tp_group()
        """),
    # slime's engine wrapper taking a helper from SGLang's utils that the installed release moved
    ("slime/backends/sglang_utils/sglang_engine.py", """
        import types
        utils = types.ModuleType("sglang.srt.utils")
        host = utils.get_ip()
        """),
]


@pytest.mark.parametrize(("filename", "code"), ENGINE_MODULE_CALLS, ids=["verl-vllm", "slime-sglang"])
def test_a_wrappers_call_on_a_name_the_engines_module_lacks_is_dependency_version(filename: str, code: str) -> None:
    diagnosis = diagnose_without_patterns(real_traceback(code, _installed(filename)))
    assert diagnosis.category == "dependency-version", diagnosis
    assert "a module of the engine's code" in diagnosis.root_cause


@pytest.mark.parametrize("message", [
    # a script named like the engine importing itself: a circular import (CPython's wording), not another release
    "partially initialized module 'vllm' has no attribute 'LLM' (most likely due to a circular import)",
    # another package's module: not the engine's API
    "module 'numpy' has no attribute 'bool'",
], ids=["circular-import", "other-package"])
def test_an_attribute_error_on_a_module_that_is_not_the_engines_is_no_call_into_its_api(message: str) -> None:
    traceback = real_traceback(f"raise AttributeError({message!r})\n", _installed("verl/workers/rollout/vllm_rollout.py"))
    diagnosis = diagnose_without_patterns(traceback)
    assert "of the engine's code" not in diagnosis.root_cause, diagnosis


ENGINE_REFUSALS = [
    # vllm vllm/config.py SchedulerConfig / ModelConfig checks (the raise site index), pasted as the line alone
    "ValueError: Chunked prefill is not supported for pooling models\n",
    "ValueError: --enable-prompt-embeds is not supported with encoder-decoder models.\n",
    # the same check's words quoted in prose (a third of a fresh split's pastes)
    "Our launch stops with: ValueError: Chunked prefill is not supported with multi-step (--num-scheduler-steps > 1)\n",
]


@pytest.mark.parametrize("text", ENGINE_REFUSALS, ids=range(len(ENGINE_REFUSALS)))
def test_an_engines_own_check_refusing_a_combination_is_feature_conflict(text: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "feature-conflict", diagnosis
    assert "the engine's own checks" in diagnosis.root_cause


def test_the_engines_refusal_with_its_frames_is_read_from_its_words_not_the_frames_path() -> None:
    """The whole traceback: its frames through arg_utils.py (+1) named invalid-flag-value before."""
    traceback = real_traceback("""
        def _verify_args():
            raise ValueError("Chunked prefill is not supported with multi-step (--num-scheduler-steps > 1)")

        _verify_args()
        """, "vllm/engine/arg_utils.py")
    assert diagnose_without_patterns(VLLM_BANNER + traceback).category == "feature-conflict"


@pytest.mark.parametrize(("text", "category"), [
    # the same words in no engine's check: a plugin's or a script's own message names no engine refusal
    ("ValueError: This feature is not supported with my custom plugin\n", "unclassified"),
    # the engine's check whose words name another row's category, written earlier: that row wins the tie
    ("ValueError: LoRA is not supported for Qwen3NextForCausalLM (qwen3_next). Supported models implement the "
     "`SupportsLoRA` interface. Run this model without `enable_lora`.\n", "lora-config"),
], ids=["not-the-engines-words", "lora"])
def test_a_refusal_not_worded_by_the_engine_or_named_by_another_row_keeps_its_category(text: str, category: str) -> None:
    assert diagnose_without_patterns(text).category == category


MEMORY_PROFILING = [
    # vllm vllm/v1/worker/gpu_worker.py determine_available_memory (vllm-project/vllm#56830's class), pasted alone
    "AssertionError: Error in memory profiling. Initial free memory 82.9 GiB, current free memory 90.2 GiB. This happens "
    "when other processes sharing the same container release GPU memory while vLLM is profiling during initialization. "
    "To fix this, ensure consistent GPU memory allocation or isolate vLLM in its own container.\n",
    # vllm vllm/worker/worker.py (V0): the used-memory wording of the same check
    "AssertionError: Error in memory profiling. Initial used memory 5.2 GiB, currently used memory 4.1 GiB. This happens "
    "when the GPU memory was not properly cleaned up before initializing the vLLM instance.\n",
]


@pytest.mark.parametrize("text", MEMORY_PROFILING, ids=["free", "used"])
def test_the_engines_memory_profiling_check_failing_is_no_memory_setting(text: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "engine-bug", diagnosis
    assert "No memory setting of the launch fixes this check" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_the_memory_profiling_check_with_its_frames_is_the_same() -> None:
    traceback = real_traceback("""
        class Worker:
            init_free_memory = 82.9

            def determine_available_memory(self):
                free_gpu_memory = 90.2
                assert self.init_free_memory > free_gpu_memory, (
                    f"Error in memory profiling. Initial free memory {self.init_free_memory} GiB, current free memory "
                    f"{free_gpu_memory} GiB. This happens when other processes sharing the same container release GPU "
                    "memory while vLLM is profiling during initialization.")

        Worker().determine_available_memory()
        """, "vllm/v1/worker/gpu_worker.py")
    assert diagnose_without_patterns(VLLM_BANNER + traceback).category == "engine-bug"


def test_the_engines_check_that_asks_for_a_larger_memory_share_keeps_kv_cache_memory() -> None:
    """The look-alike: the engine's own check says the memory share is the cause."""
    text = ("ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when "
            "initializing the engine.\n")
    assert diagnose_without_patterns(text).category == "kv-cache-memory"


WRAPPER_CLIS = [
    # a wrapper's argparse refusing an engine's flag name (LLaMA-Factory and ms-swift take engine settings under their own
    # names: hiyouga/LlamaFactory#6654's class), under a launch the log shows an engine for
    ("unknown-flag", "INFO 05-02 10:00:00 [__init__.py:239] Automatically detected platform cuda.\n"
     "usage: llamafactory-cli [-h]\nllamafactory-cli: error: unrecognized arguments: --tensor-parallel-size 2\n"),
    ("invalid-flag-value", "[2025-06-01 10:00:00] server_args=ServerArgs(model_path='/models/qwen')\n"
     "usage: xinference-local [-h] [--log-level LOG_LEVEL]\nxinference-local: error: argument --log-level: invalid "
     "choice: 'verbose' (choose from 'debug', 'info', 'warning', 'error')\n"),
]


@pytest.mark.parametrize(("category", "text"), WRAPPER_CLIS, ids=["llamafactory", "xinference"])
def test_a_wrappers_own_cli_refusing_an_argument_names_the_wrapper_and_no_engine_flag_fix(category: str, text: str) -> None:
    from logsleuth.api import DiagnoseOptions, diagnose_text

    diagnosis = diagnose_text(text, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == category, diagnosis
    program = text.split(": error:")[0].rsplit("\n", 1)[-1]
    assert program in diagnosis.title
    assert diagnosis.basis == "general" and diagnosis.engine is None
    assert diagnosis.fix is None or not diagnosis.fix.flags


def test_the_engines_own_cli_refusing_a_value_keeps_its_engine_pattern() -> None:
    """The look-alike: `vllm serve` is the engine's own argparse program."""
    from logsleuth.api import DiagnoseOptions, diagnose_text

    text = ("usage: vllm serve [model_tag] [options]\nvllm serve: error: argument --dtype: invalid choice: 'bf16' (choose "
            "from 'auto', 'half', 'float16', 'bfloat16', 'float', 'float32')\n")
    diagnosis = diagnose_text(text, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "invalid-flag-value"
    assert diagnosis.engine == "vllm" and diagnosis.basis != "general"


PROXY_IN_THE_WAY = [
    # CPython ssl.py under urllib3's _connect_tls_proxy: an https:// proxy URL (kanha95/HPC-IIT-Delhi PR#2,
    # kaixindelele/ChatPaper#146)
    ("ValueError: check_hostname requires server_hostname\n", "http://host:port"),
    # aiohttp aiohttp/client_exceptions.py: the proxy unreachable
    ("aiohttp.client_exceptions.ClientProxyConnectionError: Cannot connect to host 10.1.2.3:7890 ssl:default "
     "[Connect call failed ('10.1.2.3', 7890)]\n", "NO_PROXY"),
    # SGLang's warm-up request to itself answered by a gateway (sgl-project/sglang#9814's class), the line alone
    ("[2025-08-30 10:12:02] Initialization failed. warmup error: AssertionError: res=<Response [502]>, res.text=''\n",
     "NO_PROXY"),
]


@pytest.mark.parametrize(("text", "check"), PROXY_IN_THE_WAY, ids=["https-proxy-url", "aiohttp-proxy", "warmup-502"])
def test_a_proxy_in_the_way_is_network(text: str, check: str) -> None:
    diagnosis = diagnose_without_patterns(text)
    assert diagnosis.category == "network", diagnosis
    assert check in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_the_engines_own_error_status_in_a_response_is_no_proxy() -> None:
    """The look-alike: a 500 is the server's own error, not a gateway's."""
    diagnosis = diagnose_without_patterns("AssertionError: res=<Response [500]>, res.text='Internal Server Error'\n")
    assert diagnosis.category != "network"
