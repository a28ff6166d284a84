"""The honest category (issue 28, item 5): a failure no pattern or rule names still gets its likeliest
category, read from its kind, exception type, words and frames (logsleuth/facts/categories.toml), and that
category's general checks, labelled "general guidance, not a proven fix" in every format.

The wordings are our own text, each modelled on the code site that raises the message (cited per case: the
installed sources in the oracle venvs, ~/.cache/logsleuth/oracle/<release>/lib/python3.11/site-packages/, or
torch's and CPython's own sources).  The patterns are left out (an empty library) so that what is tested is the
category table, not a pattern."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from logsleuth.diagnosis.schema import CATEGORIES
from logsleuth.facts.categories import table
from logsleuth.fixes import catalog
from logsleuth.models import Report
from logsleuth.reasoning import registry
from logsleuth.reasoning.general import flags_hold
from logsleuth.render import render
from logsleuth.render.options import OutputFormat, RenderOptions
from tests.helpers import real_traceback

NO_PATTERNS = PatternSet(patterns=[], errors=[])
SCHEMA = json.loads(resources.files("logsleuth").joinpath("report.schema.json").read_text(encoding="utf-8"))
GENERAL_LABEL = "general guidance, not a proven fix"
SGLANG_BANNER = "[2026-03-02 10:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=8)\n"

# (expected category, our own text in the shape the code site prints, the code site)
CASES = [
    ("unknown-flag",
     "usage: launch_server.py [-h] [--model-path MODEL_PATH]\nlaunch_server.py: error: unrecognized arguments: --max-batch 8\n",
     "argparse (CPython Lib/argparse.py): 'unrecognized arguments: %s'"),
    ("gpu-oom",
     "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 3.20 GiB. GPU 2 has a total capacity of "
     "44.35 GiB of which 1.02 GiB is free.\n",
     "torch c10/cuda/CUDACachingAllocator.cpp"),
    ("cuda-error",
     "RuntimeError: CUDA error: operation not supported on global/shared address space\n"
     "CUDA kernel errors might be asynchronously reported at some other API call.\n",
     "torch c10/cuda/CUDAException.cpp"),
    ("nccl",
     "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:3401, "
     "unhandled system error (run with NCCL_DEBUG=INFO for details)\n",
     "torch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp"),
    ("dependency-version",
     "ImportError: /opt/venv/lib/python3.11/site-packages/sgl_kernel/common_ops.abi3.so: undefined symbol: "
     "_ZN3c104cuda20CUDACachingAllocator9allocatorE\n",
     "the dynamic loader's 'undefined symbol' through CPython's ImportError"),
    ("gpu-arch-unsupported",
     "ValueError: Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla V100-SXM2-16GB "
     "GPU has compute capability 7.0.\n",
     "vllm-0.11.2 vllm/platforms/cuda.py"),
    ("gpu-arch-unsupported",
     "RuntimeError: CUDA error: no kernel image is available for execution on the device\n",
     "torch c10/cuda/CUDAException.cpp (a wheel built without this GPU's architecture)"),
    ("parallel-config",
     "ValueError: Total number of attention heads (28) must be divisible by tensor parallel size (8).\n",
     "vllm-0.11.2 vllm/config/model.py verify_with_parallel_config"),
    ("port-in-use",
     "OSError: [Errno 98] Address already in use\n",
     "CPython socket.bind"),
    ("network",
     "Exception: Initialization failed. warmup error: <html><head><title>502 Bad Gateway</title></head></html>\n",
     "sglang-0.5.9 sglang/srt/entrypoints/http_server.py _wait_and_warmup (its first request answered by a proxy)"),
    ("network",
     "torch.distributed.DistNetworkError: The client socket has failed to connect to [node-a]:29500 "
     "(errno: 111 - Connection refused).\n",
     "torch torch/csrc/distributed/c10d/socket.cpp (the rendezvous address refused)"),
    ("model-path",
     "OSError: /data/ckpt/model-00001-of-00004.safetensors does not appear to have a file named config.json. "
     "Checkout 'https://huggingface.co//data/ckpt/model-00001-of-00004.safetensors/tree/None' for available files.\n",
     "transformers transformers/utils/hub.py cached_files"),
    ("model-path",
     "NotADirectoryError: [Errno 20] Not a directory: '/data/q4.gguf/config.json'\n",
     "CPython open() on a path under a file"),
    ("unsupported-architecture",
     "ValueError: Model architectures ['Ernie5ForCausalLM'] are not supported for now. Supported architectures: "
     "dict_keys(['LlamaForCausalLM'])\n",
     "sglang-0.5.9 sglang/srt/models/registry.py; vllm-0.11.2 vllm/model_executor/models/registry.py"),
    ("quantization",
     "ValueError: Quantization method specified in the model config (fp8) does not match the quantization method "
     "specified in the `quantization` argument (awq).\n",
     "sglang-0.5.9 sglang/srt/configs/model_config.py _verify_quantization"),
    ("tokenizer",
     "ValueError: Cannot use chat template functions because tokenizer.chat_template is not set and no template "
     "argument was passed! For information about writing templates and setting the tokenizer.chat_template "
     "attribute, please see the documentation.\n",
     "transformers transformers/tokenization_utils_base.py get_chat_template"),
    ("kv-cache-memory",
     "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
     "the engine.\n",
     "vllm-0.11.2 vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory"),
    ("context-length",
     "ValueError: The input (40961 tokens) is longer than the model's context length (32768 tokens).\n",
     "sglang-0.5.9 sglang/srt/managers/tokenizer_manager.py _validate_one_request"),
    ("hang-timeout",
     "TimeoutError: the weights were not loaded within 1800 seconds\n",
     "CPython TimeoutError raised by a startup wait"),
    ("illegal-memory-access",
     "RuntimeError: CUDA error: an illegal memory access was encountered\n"
     "CUDA kernel errors might be asynchronously reported at some other API call.\n",
     "torch c10/cuda/CUDAException.cpp (cudaErrorIllegalAddress)"),
    ("device-assert",
     "RuntimeError: CUDA error: device-side assert triggered\n"
     "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n",
     "torch c10/cuda/CUDAException.cpp after an ATen kernel's CUDA_KERNEL_ASSERT"),
    ("host-memory",
     "OSError: [Errno 12] Cannot allocate memory\n",
     "CPython OSError ENOMEM"),
    # The GPU's on-chip shared memory per block is no host memory (a held-out log was read as host-memory).
    ("gpu-arch-unsupported",
     "Traceback (most recent call last):\n"
     '  File "/opt/venv/lib/python3.11/site-packages/triton/compiler/compiler.py", line 483, in _init_handles\n'
     '    raise OutOfResources(self.metadata.shared, max_shared, "shared memory")\n'
     "triton.runtime.errors.OutOfResources: out of resource: shared memory, Required: 135168, Hardware limit: 101376. "
     "Reducing block sizes or `num_stages` may help.\n",
     "triton triton/compiler/compiler.py _init_handles (sgl-project/sglang#2847, #5995)"),
    # A GPU compiler's diagnostic (typed `compiler error`, no Python exception): a target beyond the toolchain, a kernel
    # beyond the target's limit, or any other error of a kernel's build (a dev split's compiler lines were unclassified).
    ("gpu-arch-unsupported",
     "error: <unknown>:0:0: stack frame size (294916) exceeds limit (131056) in function 'fused_moe_kernel'\n",
     "LLVM AMDGPU backend on gfx942 (iree-org/iree#19180, #21252)"),
    ("gpu-arch-unsupported",
     "clang: error: Unsupported CUDA gpu architecture: sm_61\n",
     "clang's CUDA driver (fireice-uk/xmr-stak#692)"),
    ("gpu-arch-unsupported",
     "csrc/attention/paged_attention.hip:120:10: error: no matching function for call to '__shfl_xor_sync'\n",
     "clang's diagnostic format `<file>:L:C: error: <text>` (ClangBuiltLinux/linux#1710) on a kernel source of ours"),
    # pip's own failures are read as aborts by the scanner; they are installs, not native crashes (held-out).
    ("dependency-version",
     "ERROR: Could not find a version that satisfies the requirement flashinfer-python==9.9.9 (from versions: 0.2.0, 0.2.1)\n"
     "ERROR: No matching distribution found for flashinfer-python==9.9.9\n",
     "pip src/pip/_internal/resolution/resolvelib/factory.py"),
    # A Rust panic (the sgl-router) is read as an abort; it is the program's own check failing, not a native crash.
    ("router",
     "thread 'tokio-runtime-worker' panicked at src/routers/http/router.rs:412:57:\n"
     "called `Option::unwrap()` on a `None` value\n"
     "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
     "Rust std panic handler (library/std/src/panicking.rs default_hook)"),
    # With no router name or path, and the abort the unwinding panic causes after it: still the program's own check
    # failing, never a GPU native crash (issue 28; a held-out log was read as native-crash).
    ("engine-bug",
     "thread 'tokio-runtime-worker' panicked at /root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/"
     "tokio-1.45.0/src/runtime/blocking/shutdown.rs:51:21:\n"
     "Cannot drop a runtime in a context where blocking is not allowed.\n"
     "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n"
     "Fatal Python error: Aborted\n",
     "Rust std panic handler (library/std/src/panicking.rs default_hook); tokio runtime/blocking/shutdown.rs"),
    ("dependency-version",
     "ERROR: Cannot install sglang==0.5.9 and torch==2.3.0 because these package versions have conflicting dependencies.\n",
     "pip src/pip/_internal/resolution/resolvelib/factory.py (vllm-project/vllm#9092)"),
    # A field the model's config object lacks: a model (or remote-code config) the release does not support.
    ("unsupported-architecture",
     "AttributeError: 'InternVLChatConfig' object has no attribute 'hidden_size'\n",
     "CPython AttributeError on transformers' PretrainedConfig subclass (sgl-project/sglang#2520)"),
    # The GPU itself failing is a CUDA error whose checks say so.
    ("cuda-error",
     "RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
     "CUDA kernel errors might be asynchronously reported at some other API call.\n",
     "CUDA runtime cudaErrorECCUncorrectable through torch c10/cuda/CUDAException.cpp (vllm-project/vllm#5222)"),
    ("network",
     "OSError: [Errno 99] Cannot assign requested address\n",
     "CPython socket.bind: EADDRNOTAVAIL, an address that is not this machine's"),
    # The parent's word that a process it started died: its own error is above it, or it was killed.
    ("process-killed",
     "RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {'EngineCore_DP0': -9}\n",
     "vllm-0.11.2 vllm/v1/engine/utils.py wait_for_engine_startup"),
    ("process-killed",
     "RuntimeError: Initialization failed. Please see the error messages above.\n",
     "sglang-0.5.9 sglang/srt/entrypoints/engine.py _launch_subprocesses"),
    # The hub unreachable and the model not in the cache: the model cannot be read.
    ("model-path",
     "OSError: We couldn't connect to 'https://huggingface.co' to load the files, and couldn't find them in the cached files.\n",
     "transformers transformers/utils/hub.py cached_files"),
    # The categories the pattern library names for the engines' own checks, read from their words when no pattern does.
    ("spec-decoding-args",
     "ValueError: Spec v2 currently only supports topk = 1 for speculative decoding.\n",
     "sglang server_args.py _handle_speculative_decoding"),
    ("lora-config",
     "ValueError: LoRA rank 64 is greater than max_lora_rank 16.\n",
     "vllm-0.11.2 vllm/lora/ (an adapter's rank against the server's maximum)"),
    ("cuda-graph-capture",
     "RuntimeError: CUDA error: operation not permitted when stream is capturing\n"
     "CUDA kernel errors might be asynchronously reported at some other API call.\n",
     "torch cudaErrorStreamCaptureUnsupported, raised while CUDA graphs are recorded"),
    ("serving-memory",
     "RuntimeError: Prefill out of memory. Try to lower your batch size.\n",
     "sglang-0.5.9 sglang/srt/managers/schedule_batch.py"),
    # torch.compile failing on the model's code: dynamo's and inductor's own exceptions.
    ("engine-bug",
     "torch._dynamo.exc.InternalTorchDynamoError: AttributeError: 'NoneType' object has no attribute 'shape'\n",
     "torch torch/_dynamo/exc.py"),
    # CUDA touched in a child made with fork(): a start method, not the driver; pasted alone (no script of the user's
    # shown), the engine release's worker start method (stop 50).
    ("dependency-version",
     "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must use "
     "the 'spawn' start method\n",
     "torch torch/cuda/__init__.py _lazy_init"),
    ("engine-bug",
     "thread '<unnamed>' panicked at /root/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tokenizers-0.15.2/src/tokenizer/mod.rs:1021:9:\n"
     "called `Result::unwrap()` on an `Err` value\n",
     "Rust std panic handler: a panic outside the router (a Rust tokenizer) stays a bug of the component that panicked"),
    ("serving-memory",
     "RuntimeError: alloc_token_slots runs out of memory. Available tokens: 0, num_tokens: 2048\n",
     "sglang 0.4.x sglang/srt/managers/schedule_batch.py alloc_token_slots: the KV pool exhausted while serving"),
    ("serving-memory",
     "RuntimeError: Out of memory. Please set a smaller number for `--max-running-requests`.\n",
     "sglang 0.3.x-0.4.x sglang/srt/managers/schedule_batch.py: the KV pool exhausted while serving"),
    # Stop 40's advice sweep: vLLM's inspection subprocess failing (its own error follows), not the architecture.
    ("dependency-version",
     "RuntimeError: Error raised in subprocess:\n",
     "vllm vllm/model_executor/models/registry.py _run_in_subprocess (vllm-project/vllm#9624)"),
    # Stop 40 (issue 28, class 4): the pools' other wordings.
    ("serving-memory",
     "RuntimeError: Decode out of memory. Try to lower your batch size.\nTry to allocate 128 tokens.\nAvaliable tokens: 0\n",
     "sglang 0.4.x sglang/srt/managers/schedule_batch.py alloc_token_slots ('Avaliable', as spelled)"),
    ("serving-memory",
     "ValueError: Cannot get 12 free blocks from the pool\n",
     "vllm vllm/v1/core/block_pool.py get_new_blocks: the KV cache blocks exhausted while serving"),
    ("serving-memory",
     "ValueError: No free blocks available\n",
     "vllm V0 vllm/core/block/naive_block.py: the KV cache blocks exhausted while serving"),
    ("kv-cache-memory",
     "ValueError: Not enough memory. Please try to increase --mem-fraction-static.\n",
     "sglang-0.5.9 sglang/srt/model_executor/model_runner.py init_memory_pool: no room for the KV cache at start-up"),
    # Stop 38's blind split, in generic words (issue 28): the classes filed under the wrong category.
    ("context-length",
     "openai.BadRequestError: Error code: 400 - {'object': 'error', 'message': 'max_tokens must be at least 1, got -3197.', "
     "'type': 'BadRequestError', 'param': None, 'code': 400}\n",
     "vllm/sampling_params.py SamplingParams._verify_args 'max_tokens must be at least 1, got {}.' as the server's JSON body "
     "(infiniflow/ragflow#10235)"),
    ("context-length",
     "ValueError: max_new_tokens must be at least 0, got -312.\n",
     "sglang/srt/sampling/sampling_params.py verify: 'max_new_tokens must be at least 0, got {}.'"),
    ("dependency-version",
     "ValueError: vllm version 0.5.4 is installed, but vllm>=0.6.3,<=0.8.5 is required.\n",
     "a wrapper's own check of the engine's release at import (verl verl/utils/import_utils.py's shape)"),
    ("dependency-version",
     "AttributeError: 'ServerArgs' object has no attribute 'encoder_only'\n",
     "THUDM/slime PR#1741: a wrapper reading a field of sglang's ServerArgs dataclass this release lacks"),
    ("dependency-version",
     "OSError: CUDA_HOME environment variable is not set. Please set it to your CUDA install root.\n",
     "torch torch/utils/cpp_extension.py: a JIT build that finds no CUDA toolkit"),
    ("dependency-version",
     "RuntimeError: Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist\n",
     "a kernel package's JIT looking for nvcc under CUDA_HOME"),
    ("router",
     "thread 'tokio-runtime-worker' panicked at src/policies/cache_aware.rs:212:37:\n"
     "called `Option::unwrap()` on a `None` value\n"
     "note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n",
     "sgl-project/sglang sgl-router/src/policies/ (Rust): the router's own check"),
    ("router",
     "[Router (Rust)] 2025-03-01 10:00:00 - INFO - All workers are healthy\n"
     "thread '<unnamed>' panicked at src/router.rs:412:37:\nFailed to acquire lock\nFatal Python error: Aborted\n\n"
     "Current thread 0x00007f0c0a1ff740 (most recent call first):\n"
     "  File \"/usr/local/lib/python3.10/dist-packages/sglang_router/launch_router.py\", line 80 in launch_router\n",
     "sgl-project/sglang sgl-router/src/router.rs: a panic unwinding into the Python binding aborts the process"),
    # Stop 39's blind split, in generic words (issue 28): classes left unclassified or filed under the wrong category.
    ("process-killed",
     "RuntimeError: Worker failed with error 'RPC call to execute_model failed.', please check the stack trace above "
     "for the root cause\n",
     "vllm/v1/executor/multiproc_executor.py collective_rpc re-raising a worker's exception"),
    ("process-killed",
     "Exception: Call to collective_rpc method failed: Worker failed with error 'unexpected value', please check the "
     "stack trace above for the root cause\n",
     "vllm/v1/engine/core_client.py: the API process's utility call into the engine core answered with its failure"),
    ("gpu-oom",
     "RuntimeError: Worker failed with error 'CUDA out of memory. Tried to allocate 2.00 GiB', please check the stack "
     "trace above for the root cause\n",
     "the same call quoting a worker's error that names its category: that category, not the re-raise"),
    ("feature-conflict",
     "RuntimeError: FlashAttention forward only supports head dimension at most 256\n",
     "flash-attn csrc/flash_attn/flash_api.cpp: the kernel's check of the head dimension"),
    ("feature-conflict",
     "RuntimeError: This flash attention build does not support headdim not being a multiple of 32.\n",
     "vllm-flash-attn (FA3) hopper/flash_api.cpp: the build's check of the head dimension"),
    ("dependency-version",
     "RuntimeError: BatchPrefillWithPagedKVCache failed to dispatch head_dim 80\n",
     "flashinfer's DISPATCH macros: no kernel instantiated for the head dimension"),
    ("dependency-version",
     "RuntimeError: failed to dispatch data type Float\n",
     "flashinfer csrc/pytorch_extension_utils.h DISPATCH_PYTORCH_DTYPE_TO_CTYPE: no kernel for the dtype"),
    ("dependency-version",
     "RuntimeError: probability tensor contains either `inf`, `nan` or element < 0\n",
     "torch Distributions.cpp multinomial on NaN logits (sgl-project/sglang PR#282: after a flashinfer upgrade)"),
    ("native-crash",
     "terminate called after throwing an instance of 'xgrammar::LoggingError'\n"
     "  what():  [05:18:39] /project/cpp/support/recursion_guard.h:33: RecursionGuard: Maximum recursion depth "
     "exceeded. Current depth: 1025, Max allowed: 1024\n\nFatal Python error: Aborted\n\n",
     "mlc-ai/xgrammar cpp/support/recursion_guard.h: the grammar backend's native abort"),
    ("engine-bug",
     "RecursionError: maximum recursion depth exceeded while calling a Python object\n",
     "CPython's RecursionError (a grammar backend recursing on a schema: its frames name it)"),
    ("dependency-version",
     "ValueError: 'aimv2' is already used by a Transformers config, pick another name.\n",
     "transformers configuration_auto.py AutoConfig.register refusing a config vLLM registers (vllm-project/vllm-ascend#2046)"),
    ("parallel-config",
     "ValueError: Prequant BitsAndBytes models with tensor parallelism is not supported. Please try with pipeline "
     "parallelism.\n",
     "vllm/model_executor/model_loader/bitsandbytes_loader.py _load_weights"),
    ("tokenizer",
     "ERROR 05-02 10:02:11 [serving_chat.py:158] Error in applying chat template from request: "
     "PreTrainedTokenizerFast._batch_encode_plus() got an unexpected keyword argument 'add_special_tokens_to_prompt'\n"
     "openai.InternalServerError: Error code: 500 - {'detail': 'Internal Server Error'}\n",
     "a server's 500 reply whose error, a tokenizer method's signature, is only in the prose line above it"),
]


def test_cuda_in_a_forked_child_gets_the_start_method_checks_not_the_drivers() -> None:
    text = ("INFO 05-02 10:00:01 [api_server.py:1043] vLLM API server version 0.11.2\n"
            "RuntimeError: Cannot re-initialize CUDA in forked subprocess. To use CUDA with multiprocessing, you must "
            "use the 'spawn' start method\n")
    diagnosis = _report(text).failures[0].diagnosis
    # (pasted alone under vLLM's server: the engine's workers, so the engine release's start method; stop 50)
    assert diagnosis is not None and "the engine release's worker start method" in diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "set_start_method('spawn')" in steps and "VLLM_WORKER_MULTIPROC_METHOD" in steps
    assert "CUDA_LAUNCH_BLOCKING" not in steps


def _report(text: str) -> Report:
    return diagnose_text(text, DiagnoseOptions(include_user_patterns=False), patterns=NO_PATTERNS)


@pytest.fixture
def no_rules(monkeypatch: pytest.MonkeyPatch) -> None:
    """The honest category alone: the reasoning rules set aside (several of these wordings are a rule's too)."""
    monkeypatch.setattr(registry, "RULES", ())


@pytest.mark.parametrize(("category", "text", "site"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_failure_no_pattern_names_gets_its_category(category: str, text: str, site: str, no_rules: None) -> None:
    report = _report(text)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None, site
    assert (diagnosis.category, diagnosis.basis) == (category, "general"), site
    assert diagnosis.fix is not None and len(diagnosis.fix.steps) >= 1


@pytest.mark.parametrize(("category", "text", "site"), CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_a_rule_that_answers_first_names_the_same_category(category: str, text: str, site: str) -> None:
    diagnosis = _report(text).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.basis in ("rule", "general"), site
    assert diagnosis.category == category, site


@pytest.mark.parametrize(("category", "text", "site"), CASES[:6], ids=[c[0] for c in CASES[:6]])
@pytest.mark.parametrize("fmt", list(OutputFormat), ids=[f.value for f in OutputFormat])
def test_the_category_and_its_label_show_in_every_format(
    category: str, text: str, site: str, fmt: OutputFormat, no_rules: None
) -> None:
    report = _report(text)
    output = render(report, RenderOptions(format=fmt, width=200))
    if fmt is OutputFormat.JSON:
        data = json.loads(output)
        jsonschema.Draft202012Validator(SCHEMA).validate(data)
        assert data["failures"][0]["diagnosis"]["basis"] == "general"
        assert data["failures"][0]["diagnosis"]["category"] == category
        return
    words = " ".join(output.replace("*", "").replace("`", "").replace("_", " ").split())
    assert GENERAL_LABEL in words
    assert category.replace("_", " ") in words


def test_an_error_in_engine_code_looks_like_a_bug_in_that_release() -> None:
    """A real CPython traceback raised at a line of a file named like SGLang's own code."""
    traceback = real_traceback(
        """
        def build_communicator(layer_id):
            return fused_allreduce_for(layer_id)

        build_communicator(3)
        """,
        "sglang/srt/layers/communicator.py",
    )
    banner = "[2026-03-02 10:00:00] sglang version 0.5.9\n" + SGLANG_BANNER
    report = _report(banner + traceback)
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "engine-bug", diagnosis
    assert diagnosis.basis == "general"
    assert "SGLang" in diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "newer release" in steps and "minimal report" in steps
    assert not re.search(r"\b0\.\d+\.\d+", steps.replace("0.5.9", "")), "names no release the data does not give"


def test_a_shape_error_raised_through_engine_code_is_an_engine_bug() -> None:
    traceback = real_traceback(
        """
        def forward(hidden):
            raise RuntimeError("mat1 and mat2 shapes cannot be multiplied (4x4096 and 2048x4096)")

        forward(None)
        """,
        "vllm/model_executor/layers/linear.py",
    )
    diagnosis = _report(traceback).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "engine-bug"
    assert "vLLM" in diagnosis.title


def test_the_other_engines_code_under_this_engine_is_dependency_drift() -> None:
    """SGLang releases import vLLM's modules: an AttributeError raised in vllm/ code while SGLang ran is the two
    packages' versions not fitting, not a bug of the SGLang release."""
    traceback = real_traceback(
        """
        class Config:
            pass

        def get_layer(config):
            return config.quant_method_for_layer

        get_layer(Config())
        """,
        "vllm/model_executor/layers/quantization/base_config.py",
    )
    diagnosis = _report(SGLANG_BANNER + traceback).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version", diagnosis
    assert "vLLM code running under SGLang" in diagnosis.root_cause


def test_the_subsystem_of_the_frames_names_the_category_when_the_words_do_not() -> None:
    """An assertion with no message, raised in an attention backend's module: the backend is the likeliest
    suspect; the vLLM check naming --attention-backend is kept for 0.33.0, which has the flag, and not for
    0.11.2, which does not."""
    traceback = real_traceback(
        """
        def init_forward_metadata(batch):
            assert batch is not None

        init_forward_metadata(None)
        """,
        "vllm/v1/attention/backends/triton_attn.py",
    )
    steps = {}
    for version in ("0.11.2", "0.33.0"):
        banner = f"INFO 03-02 10:00:00 [api_server.py:1] vLLM API server version {version}\n"
        diagnosis = _report(banner + traceback).failures[0].diagnosis
        assert diagnosis is not None and diagnosis.category == "feature-conflict", diagnosis
        steps[version] = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "--attention-backend" in steps["0.33.0"]
    assert "--attention-backend" not in steps["0.11.2"]


def test_a_parallel_degree_named_in_passing_is_no_parallel_config() -> None:
    """An engine's own failure whose message prints tp_size among other values states no constraint on it: the
    degree alone is no cue (a held-out log was read as parallel-config); one that states a constraint is."""
    traceback = real_traceback(
        """
        def gather_logits(tp_size, shards):
            raise RuntimeError(f"logits gather got no shard for request 7 (tp_size={tp_size}, shards={shards})")

        gather_logits(4, [])
        """,
        "sglang/srt/layers/logits_processor.py",
    )
    diagnosis = _report(SGLANG_BANNER + traceback).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category != "parallel-config", diagnosis
    stated = _report("ValueError: tp_size (8) must not exceed the number of GPUs on this node (4)\n").failures[0].diagnosis
    assert stated is not None and stated.category == "parallel-config", stated


def test_the_same_error_outside_engine_code_is_no_engine_bug() -> None:
    traceback = real_traceback(
        """
        def main():
            return helper_that_is_gone()

        main()
        """,
        "my_service/launcher.py",
    )
    diagnosis = _report(traceback).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category != "engine-bug"


def test_a_third_party_attribute_missing_in_engine_code_is_dependency_drift() -> None:
    traceback = real_traceback(
        """
        import types
        transformers = types.ModuleType("transformers")

        def load_config():
            return transformers.Qwen3NextConfig

        load_config()
        """,
        "sglang/srt/configs/model_config.py",
    )
    diagnosis = _report(traceback).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version", diagnosis


def test_a_dead_scheduler_is_a_process_that_died_not_an_unknown_eoferror() -> None:
    """SGLang logs "Rank 0 scheduler is dead" and "Exit code: -9", then re-raises the pipe's bare EOFError
    (sglang/srt/entrypoints/engine.py): the real EOFError of a pipe whose writer is gone, raised in
    multiprocessing/connection.py, is a process that died, with checks that say where its error is and what a -9
    means (gpustack/gpustack#3848, sgl-project/sglang#2294)."""
    traceback = real_traceback(
        """
        import multiprocessing

        def _launch_subprocesses():
            reader, writer = multiprocessing.Pipe(duplex=False)
            writer.close()
            return reader.recv()

        _launch_subprocesses()
        """,
        "sglang/srt/entrypoints/engine.py",
    )
    log = (SGLANG_BANNER + "[2026-03-02 10:05:12] Rank 0 scheduler is dead. Please check if there are relevant logs.\n"
           "[2026-03-02 10:05:14] Exit code: -9\n" + traceback)
    diagnosis = _report(log).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "process-killed", diagnosis
    assert "EOFError" in diagnosis.root_cause
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "-9" in steps and "OOM killer" in steps and "above" in steps


def test_a_table_looked_up_by_a_launch_setting_is_a_value_the_release_does_not_know() -> None:
    """A KeyError raised by `ATTENTION_BACKENDS[self.server_args.attention_backend]` (sglang 0.4.x
    model_runner.py): the raising line reads a server argument, so the key is a flag's value."""
    traceback = real_traceback(
        """
        import types
        ATTENTION_BACKENDS = {"triton": object, "flashinfer": object}

        class ModelRunner:
            def __init__(self):
                self.server_args = types.SimpleNamespace(attention_backend="flashinfer_mla")
                self.attn_backend = ATTENTION_BACKENDS[self.server_args.attention_backend](self)

        ModelRunner()
        """,
        "sglang/srt/model_executor/model_runner.py",
    )
    diagnosis = _report(SGLANG_BANNER + traceback).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "invalid-flag-value", diagnosis
    assert "the line that raised it" in diagnosis.root_cause
    plain = _report("KeyError: 'lm_head.bias'\n").failures[0].diagnosis
    assert plain is not None and plain.category != "invalid-flag-value", "a KeyError alone names no flag"


def test_a_config_object_without_a_field_is_a_model_the_release_does_not_support() -> None:
    """The engine reading a field the model's config lacks, in its own code: the model, not a bug of one line; the
    engine's own config classes are not the model's."""
    def raising(config_class: str) -> str:
        return real_traceback(
            f"""
            class {config_class}:
                model_type = "internvl_chat"

            def get_hidden_size(hf_config):
                return hf_config.hidden_size

            get_hidden_size({config_class}())
            """,
            "sglang/srt/configs/model_config.py",
        )

    model = _report(SGLANG_BANNER + raising("InternVLChatConfig")).failures[0].diagnosis
    assert model is not None and model.category == "unsupported-architecture", model
    own = _report(SGLANG_BANNER + raising("ModelConfig")).failures[0].diagnosis
    assert own is not None and own.category == "engine-bug", own


def test_an_engine_error_pasted_without_frames_looks_like_an_engine_bug_only_when_the_engine_is_known() -> None:
    """The paste kept only the error line (QwenLM/Qwen3-VL#1929's shape): with the launch naming the engine, an
    AttributeError is likeliest its bug, said with the frames missing.  With no engine at all, no engine is blamed:
    the class is both engines' (each has a Transformers backend model), so it is the engine's code failing, of an
    engine the log does not name; an object of a class no engine defines is not an engine bug."""
    line = "AttributeError: 'TransformersForCausalLM' object has no attribute 'tp_size'\n"
    command = "python -m sglang.launch_server --model-path Qwen/Qwen3-VL-4B-Instruct --port 8890\n"
    known = _report(command + line).failures[0].diagnosis
    assert known is not None and known.category == "engine-bug", known
    assert "no frames shown" in known.root_cause
    unknown = _report(line).failures[0].diagnosis
    assert unknown is not None and unknown.category == "engine-bug" and unknown.engine is None, unknown
    assert "bug in the engine" in unknown.title
    foreign = _report(line.replace("TransformersForCausalLM", "MyCausalLMWrapper")).failures[0].diagnosis
    assert foreign is not None and foreign.category != "engine-bug", foreign


def test_a_distributed_timeout_names_the_timeout_flag_only_where_the_release_has_it() -> None:
    """torch's TCPStore giving up on its clients (DistStoreError, c10d/TCPStore.cpp): the check says a rank never
    arrived, and names the engine's timeout flag for a release whose catalog has it (--dist-timeout in SGLang 0.5.9,
    --distributed-timeout-seconds in vLLM 0.33.0 and not in 0.11.2)."""
    line = "torch.distributed.DistStoreError: Timed out after 601 seconds waiting for clients. 1/4 clients joined.\n"
    banners = {
        ("sglang", "0.5.9"): "[2026-03-02 10:00:00] sglang version 0.5.9\n" + SGLANG_BANNER,
        ("vllm", "0.33.0"): "INFO 03-02 10:00:00 [api_server.py:1] vLLM API server version 0.33.0\n",
        ("vllm", "0.11.2"): "INFO 03-02 10:00:00 [api_server.py:1] vLLM API server version 0.11.2\n",
    }
    steps = {}
    for key, banner in banners.items():
        diagnosis = _report(banner + line).failures[0].diagnosis
        assert diagnosis is not None and diagnosis.category == "nccl", diagnosis
        steps[key] = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
        assert "never arrived" in steps[key]
    assert "--dist-timeout" in steps[("sglang", "0.5.9")]
    assert "--distributed-timeout-seconds" in steps[("vllm", "0.33.0")]
    assert "--distributed-timeout-seconds" not in steps[("vllm", "0.11.2")]


def test_a_hardware_fault_says_it_is_the_gpu() -> None:
    diagnosis = _report("RuntimeError: CUDA error: uncorrectable ECC error encountered\n").failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "cuda-error"
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "the GPU itself failing" in steps and "nvidia-smi -q -d ECC" in steps


@pytest.mark.parametrize(("fixture", "category"), [
    ("common-k8s-image-pull-failed/negative-config-error.log", "orchestration"),
    ("common-k8s-insufficient-gpu/negative-insufficient-memory.log", "orchestration"),
    ("vllm-chat-template-missing/negative-0.11.0-client-tool-choice.log", "missing-flag"),
    ("vllm-port-in-use/negative-0.11.0-cannot-assign-address.log", "network"),
], ids=["k8s-config-error", "k8s-insufficient-memory", "tool-choice-needs-flags", "cannot-assign-address"])
def test_the_pattern_fixtures_no_pattern_names_get_a_category(fixture: str, category: str) -> None:
    """The negative fixtures of the pattern library (scripts/pattern_fixtures, the runtimes' own words) that no
    pattern names: a Kubernetes pod that could not be configured or placed, a request that needs two launch flags,
    an address to bind to that is not this machine's."""
    from pathlib import Path

    text = (Path(__file__).parent / "fixtures" / "patterns" / fixture).read_text(encoding="utf-8")
    diagnosis = diagnose_text(text, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == category, diagnosis


def _raised_in(path: str, exc_type: str, message: str) -> str:
    """A real CPython traceback of `exc_type(message)` raised at a line of a file named like `path`."""
    return real_traceback(f"""
        class {exc_type}(Exception):
            pass

        def call():
            raise {exc_type}({message!r})

        call()
        """, path)


@pytest.mark.parametrize(("path", "exc_type", "message", "category", "title"), [
    # flashinfer rejecting a configuration is no version drift: the attention backend does not fit this model
    ("flashinfer/decode.py", "RuntimeError",
     "FlashInfer Internal Error: Invalid configuration : NUM_MMA_Q=1 NUM_MMA_D=4 NUM_MMA_KV=1 please file an issue",
     "feature-conflict", "attention backend"),
    # triton failing to compile a kernel (triton/backends/nvidia/compiler.py: pm.run(mod))
    ("triton/backends/nvidia/compiler.py", "RuntimeError", "PassManager::run failed", "gpu-arch-unsupported", "Triton kernel"),
    # xgrammar's parser rejecting a request's grammar (cpp/grammar_parser.cc through xgrammar/compiler.py)
    ("xgrammar/compiler.py", "RuntimeError", "[10:00:00] grammar_parser.cc:120: EBNF parse error at line 1, column 5: Unexpected token",
     "feature-conflict", "structured-output grammar"),
    # a keyword the installed transformers lacks, raised in transformers' own code: that is version drift
    ("transformers/modeling_utils.py", "TypeError", "__init__() got an unexpected keyword argument 'attn_implementation'",
     "dependency-version", "package"),
], ids=["flashinfer-configuration", "triton-compile", "xgrammar-parse", "transformers-signature"])
def test_an_error_a_third_party_package_raises_is_read_from_its_words_not_its_frames(
    path: str, exc_type: str, message: str, category: str, title: str
) -> None:
    """A package's frames are no version drift when it raises an ordinary error of its own (frames_need): only
    an import, attribute, name or signature error in its code is."""
    diagnosis = _report(SGLANG_BANNER + _raised_in(path, exc_type, message)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == category, diagnosis
    assert title in diagnosis.title, diagnosis.title


@pytest.mark.parametrize(("path", "function", "message"), [
    # sgl-kernel 0.3.x sgl_kernel/__init__.py _preload_cuda_library: neither CUDA_HOME/lib nor lib64 exists
    ("sgl_kernel/__init__.py", "_preload_cuda_library", "Could not find CUDA lib directory."),
    # flashinfer flashinfer/jit/cpp_ext.py: no nvcc on PATH and the default CUDA home missing
    ("flashinfer/jit/cpp_ext.py", "get_cuda_path", "Could not find nvcc and default cuda_home='/usr/local/cuda' doesn't exist"),
], ids=["sgl-kernel-lib-dir", "flashinfer-nvcc"])
def test_a_kernel_package_that_finds_no_cuda_toolkit_is_the_toolkit_row(path: str, function: str, message: str) -> None:
    """A kernel package's loader finding no CUDA toolkit (its lib directory, nvcc) is the toolkit's row with its checks
    (CUDA_HOME, the matching toolkit, the engine's image), not the subsystem its importer's frames sit in (issue 28,
    stop 39 class 2: an FP8 kernel module importing sgl_kernel read as quantization)."""
    text = real_traceback(f"""
        def {function}():
            raise RuntimeError({message!r})

        {function}()
        """, path)
    diagnosis = _report(SGLANG_BANNER + text).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version", diagnosis
    assert "CUDA toolkit" in diagnosis.title, diagnosis.title
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "CUDA_HOME" in steps and "container image" in steps, steps


DISPATCH = ("Could not run '{op}' with arguments from the 'CUDA' backend. This could be because the operator doesn't exist for "
            "this backend, or was omitted during the selective/custom build process (if using custom build). '{op}' is only "
            "available for these backends: [{backends}].")


def test_a_kernel_library_without_gpu_kernels_is_its_build_not_unclassified() -> None:
    """PyTorch's dispatcher refusing a custom op on CUDA (vllm-project/vllm#12440: '_C::rms_norm' only on CPU, a CPU
    build under a CUDA launch): the build of the engine's kernels, not an unclassified NotImplementedError."""
    message = "Error in calling custom op rms_norm: " + DISPATCH.format(op="_C::rms_norm", backends="CPU, Meta, BackendSelect, Python")
    diagnosis = _report(SGLANG_BANNER.replace("server_args=ServerArgs", "args=Namespace")
                        + _raised_in("vllm/_custom_ops.py", "NotImplementedError", message)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version", diagnosis
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "'CPU' among them" in steps and "CUDA build" in steps, steps


def test_a_capture_failing_on_a_kernel_without_gpu_kernels_is_filed_under_the_build() -> None:
    """sgl-project/sglang#6322: SGLang's 'Capture cuda graph failed: …' wrapping the dispatcher's refusal of
    'sgl_kernel::rmsnorm'.  The capture's own advice (start without CUDA graphs) cannot help: every forward calls it."""
    inner = DISPATCH.format(op="sgl_kernel::rmsnorm", backends="Meta, BackendSelect, Python")
    text = real_traceback(f"""
        def __init__():
            raise Exception({("Capture cuda graph failed: " + inner)!r})

        __init__()
        """, "sglang/srt/model_executor/cuda_graph_runner.py")
    diagnosis = diagnose_text(SGLANG_BANNER + text, DiagnoseOptions(include_user_patterns=False)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version", diagnosis
    assert diagnosis.fix is not None and not any(op.flag == "--disable-cuda-graph" for op in diagnosis.fix.flags)


def test_an_architecture_that_failed_to_be_inspected_points_to_the_error_logged_above() -> None:
    """vLLM's registry (vllm/model_executor/models/registry.py _raise_for_unsupported) says an architecture 'failed to be
    inspected' when importing its class in a subprocess failed (vllm-project/vllm#13332, on a host where vLLM detected
    the CPU platform): not an architecture the release lacks; the import's own error above is the cause."""
    message = "Model architectures ['Qwen2_5_VLForConditionalGeneration'] failed to be inspected. Please check the logs for more details."
    log = ("INFO 02-16 18:30:09 __init__.py:190] Automatically detected platform cpu.\n"
           + _raised_in("vllm/model_executor/models/registry.py", "ValueError", message))
    diagnosis = _report(log).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "dependency-version", diagnosis
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert "logged above" in steps and "platform cpu" in steps, steps


def test_no_cue_says_so_plainly_and_still_gives_the_types_guidance() -> None:
    diagnosis = _report("KeyError: 'lm_head.bias'\n").failures[0].diagnosis
    assert diagnosis is not None and diagnosis.basis == "general"
    assert diagnosis.title == "No pattern or rule fits this failure"
    assert diagnosis.fix is not None and any("looked up and not found" in step for step in diagnosis.fix.steps)


def test_a_paste_without_a_failure_stays_no_failure() -> None:
    healthy = (
        SGLANG_BANNER
        + "[2026-03-02 10:00:30] WARNING: the tokenizer has no chat template; using the default\n"
        + "[2026-03-02 10:01:00] The server is fired up and ready to roll!\n"
    )
    assert _report(healthy).failures == ()


def test_an_engine_specific_pattern_on_a_log_without_engine_gives_neutral_checks() -> None:
    """The engine-unknown diagnosis keeps its category and gives that category's engine-neutral checks, and the
    --cmd hint as one line."""
    line = "ValueError: Model architectures ['Glm4ForCausalLM'] are not supported for now. Supported architectures: dict_keys(['LlamaForCausalLM'])\n"
    report = diagnose_text("```\n" + line + "```\n", DiagnoseOptions(include_user_patterns=False))
    diagnosis = report.failures[0].diagnosis
    assert diagnosis is not None and diagnosis.pattern == "engine-unknown-unsupported-architecture"
    assert diagnosis.basis == "general"
    steps = diagnosis.fix.steps if diagnosis.fix else ()
    # (a native architecture the release lacks: the trust-remote-code check cannot help and is left out,
    # reasoning/remote_code_scope.py)
    neutral = {check for check in table().row("unsupported-architecture").checks  # type: ignore[union-attr]
               if "trust-remote-code" not in check}
    assert neutral <= set(steps) and not any("trust-remote-code" in step for step in steps)
    assert sum("--cmd" in step for step in steps) == 1
    assert not any(re.search(r"(?<![\w-])--(?!cmd\b)[a-z]", step) for step in steps), "an engine's flag"


# -- the table itself ------------------------------------------------------------------------------------------


def test_every_row_names_a_known_category_and_its_sources() -> None:
    for row in table().rows:
        assert row.category in CATEGORIES, row.category
        assert row.sources, row.category
        assert 1 <= len(row.checks) <= 4, row.category


def test_neutral_checks_name_no_flag() -> None:
    for row in table().rows:
        for check in row.checks:
            assert not re.search(r"(?<![\w-])--(?!help\b)[a-z]", check), (row.category, check)


def test_every_engine_check_holds_for_some_release() -> None:
    """A check naming a flag no shipped release has would be dead text."""
    for row in table().rows:
        for engine, checks in row.engine_checks.items():
            for check in checks:
                releases = [v for e, v in catalog.available() if e == engine]
                assert any(flags_hold(check, engine, v) for v in releases), (row.category, engine, check)


def test_a_check_whose_flag_a_release_lacks_is_left_out() -> None:
    """--cuda-graph-max-bs is a flag of SGLang 0.4.10.post2 and 0.5.9, not of 0.5.23: its check is shown for
    0.5.9 only, and not when the version is unknown."""
    row = table().row("gpu-oom")
    assert row is not None
    from logsleuth.reasoning.general import row_checks

    assert any("--cuda-graph-max-bs" in check for check in row_checks(row, "sglang", "0.5.9"))
    assert not any("--cuda-graph-max-bs" in check for check in row_checks(row, "sglang", "0.5.23"))
    assert not any("--cuda-graph-max-bs" in check for check in row_checks(row, "sglang", None))
    assert any("--mem-fraction-static" in check for check in row_checks(row, "sglang", None))
    assert not any("--mem-fraction-static" in check for check in row_checks(row, "vllm", None))


def test_a_flag_a_release_lacks_is_not_named() -> None:
    assert flags_hold("use --mem-fraction-static", "sglang", "0.5.9")
    assert not flags_hold("use --no-such-flag-anywhere", "sglang", "0.5.9")
    assert not flags_hold("use --mem-fraction-static", "vllm", None)
    assert catalog.load("sglang", "0.5.9") is not None


def test_torch_compile_failing_in_its_backend_is_an_engine_bug_with_the_compile_checks(tmp_path: Path) -> None:
    """torch/_dynamo/output_graph.py call_user_compiler: `BackendCompilerFailed: backend='inductor' raised:` with the
    backend's own exception on the next line; real CPython prints it through a mirror of the raising frame."""
    import subprocess
    import sys

    module = tmp_path / "torch" / "_dynamo" / "output_graph.py"
    module.parent.mkdir(parents=True)
    (tmp_path / "torch" / "__init__.py").write_text("")
    (module.parent / "__init__.py").write_text("")
    module.write_text(
        "class BackendCompilerFailed(RuntimeError):\n    pass\n"
        "def call_user_compiler():\n"
        "    raise BackendCompilerFailed(\"backend='inductor' raised:\\nAssertionError: wrong number of dims\")\n"
    )
    ran = subprocess.run([sys.executable, "-c", "from torch._dynamo.output_graph import call_user_compiler as c; c()"],
                         capture_output=True, text=True, cwd=tmp_path, check=False)
    text = "$ python -m sglang.launch_server --model-path /m --enable-torch-compile\n" + ran.stderr
    diagnosis = _report(text).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "engine-bug", diagnosis
    assert diagnosis.title.startswith("Looks like torch.compile failing")
    assert "gives --enable-torch-compile, start once without it" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_a_chain_that_ends_in_a_dead_process_is_filed_under_its_first_exception(tmp_path: Path) -> None:
    """The held-out split's regression: an attention backend the engine refused, then, while handling it, the
    parent's "Rank 0 scheduler is dead" (sglang/srt/entrypoints/engine.py): the chain is filed under the refusal,
    not under the dead process."""
    import subprocess
    import sys

    script = tmp_path / "launch.py"
    script.write_text(
        "def init_attention_backend():\n    raise ValueError('Invalid attention backend: fa4')\n"
        "def launch():\n    try:\n        init_attention_backend()\n    except Exception:\n"
        "        raise RuntimeError('Rank 0 scheduler is dead. Please check if there are relevant logs.')\n"
        "launch()\n"
    )
    ran = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert "During handling of the above exception" in ran.stderr
    diagnosis = _report(ran.stderr).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category not in ("process-killed", "unclassified"), diagnosis
    assert "the chain's first exception" in diagnosis.root_cause


_ENGINE_CLASS_CALLED = """
    import dataclasses

    @dataclasses.dataclass
    class LLM:
        model: str
        tensor_parallel_size: int = 1

    def build(args):
        return LLM(**args)

    build({"model": "/models/m", "swap_space": 4})
    """


@pytest.mark.parametrize(("path", "category"), [
    ("venv/lib/python3.11/site-packages/lighteval/models/vllm/vllm_model.py", "dependency-version"),
    ("home/me/run_llm.py", "unknown-flag"),
], ids=["an-installed-wrapper", "the-users-own-script"])
def test_a_keyword_the_engines_class_refuses_is_a_wrappers_release_only_from_a_wrappers_frame(
    path: str, category: str, no_rules: None
) -> None:
    """Stop 39's blind split: a program that runs the engine (an installed package's frame made the call) passing a
    keyword the installed release does not take was written for another release: no `--help` flag advice.  The
    same call from the user's own script stays a keyword the user can correct."""
    diagnosis = _report(real_traceback(_ENGINE_CLASS_CALLED, path)).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == category
    steps = " ".join(diagnosis.fix.steps if diagnosis.fix else ())
    assert ("--help" not in steps) == (category == "dependency-version")


def test_a_grammar_backend_recursing_without_end_is_its_bug_with_the_backend_checks() -> None:
    text = SGLANG_BANNER + real_traceback("""
        def to_regex(schema):
            return to_regex(schema)

        to_regex({"$ref": "#"})
        """, "venv/lib/python3.11/site-packages/outlines/fsm/json_schema.py")
    diagnosis = _report(text).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "engine-bug"
    assert "grammar backend" in diagnosis.title
    assert "--grammar-backend" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_a_wrappers_failed_to_load_with_a_cut_traceback_asks_for_the_engines_own_error() -> None:
    """Stop 39's blind split: Xinference's 'Failed to load model <uid>' record over its own frames, the exception
    line cut (xorbitsai/inference#1260, #4634): the stage is loading the model, the cause is the engine's error, not shown."""
    traceback = real_traceback("""
        def launch_builtin_model():
            raise RuntimeError("the engine's error, re-raised by the actor pool")

        launch_builtin_model()
        """, "venv/lib/python3.11/site-packages/xinference/core/worker.py")
    cut = "\n".join(traceback.splitlines()[:-1]) + "\n"
    text = "2025-06-01 10:02:43,623 xinference.core.worker 41 ERROR    Failed to load model qwen2.5-instruct-0\n" + cut
    diagnosis = _report(text).failures[0].diagnosis
    # (stop 40: the stage is no category; the blind split's grader did not count weight-loading)
    assert diagnosis is not None and diagnosis.category == "unclassified"
    assert "Xinference" in diagnosis.title
    assert "The engine's own error is the one to read" in " ".join(diagnosis.fix.steps if diagnosis.fix else ())


def test_a_failed_load_whose_message_goes_on_keeps_the_cause_it_names() -> None:
    diagnosis = _report("RuntimeError: Failed to load model: CUDA out of memory. Tried to allocate 2.00 GiB\n").failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "gpu-oom"


def test_kv_blocks_exhausted_after_lowering_the_share_never_says_lower_it_further() -> None:
    """Stop 40 (issue 28, class 4): the KV pool ran out while serving on a launch that had lowered the memory share;
    the guidance raises it back and never asks to lower it."""
    text = ("$ vllm serve /models/m --gpu-memory-utilization 0.6\n"
            "INFO 05-02 10:00:00 [api_server.py:1043] vLLM API server version 0.8.5\n"
            + real_traceback("raise ValueError('Cannot get 12 free blocks from the pool')\n", "vllm/v1/core/block_pool.py"))
    diagnosis = _report(text).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.category == "serving-memory" and diagnosis.fix is not None
    steps = " ".join(diagnosis.fix.steps)
    assert "raise it back" in steps and "Lowering it further does not help" in steps
    assert "lower --gpu-memory-utilization" not in steps


def _steps(text: str) -> str:
    diagnosis = _report(text).failures[0].diagnosis
    assert diagnosis is not None and diagnosis.fix is not None
    return " ".join(diagnosis.fix.steps)


def test_marlin_refusing_every_type_points_at_the_checkpoints_own_kernel() -> None:
    """Stop 40's advice sweep (vllm-project/vllm#8149, xorbitsai/inference#2210): Marlin lists no type on a GPU below
    compute capability 8.0; the checkpoint's own method is the way, for vLLM only."""
    traceback = real_traceback(
        "raise ValueError('Marlin does not support weight_bits = uint4b8. Only types = [] are supported (for group_size = "
        "128, min_capability = 75, zp = False).')\n", "vllm/model_executor/layers/quantization/utils/marlin_utils.py")
    steps = _steps("$ vllm serve /data/Qwen2-7B-Instruct-GPTQ-Int4\n" + traceback)
    assert "name the checkpoint's own method in the quantization setting (gptq for a GPTQ checkpoint" in steps
    assert "gptq for a GPTQ checkpoint" not in _steps("python3 -m sglang.launch_server --model-path /m\n" + traceback)


def test_a_tokenizer_class_transformers_lacks_points_at_the_saving_transformers() -> None:
    traceback = real_traceback(
        "raise ValueError('Tokenizer class TokenizersBackend does not exist or is not currently imported.')\n",
        "transformers/models/auto/tokenization_auto.py")
    steps = _steps("$ vllm serve /root/m\n" + traceback)
    assert "was named by the transformers that saved the checkpoint" in steps


def test_a_check_for_one_shape_of_a_category_stays_off_its_other_failures() -> None:
    """checks_when (facts/categories.toml): the tokenizer-class and the Marlin checks concern one message each;
    stop 40's blind grader found them on other failures of their category (a missing chat template, a KV-cache scale
    check), where they did not apply."""
    chat_template = real_traceback(
        "raise ValueError('Cannot use chat template functions because tokenizer.chat_template is not set')\n",
        "transformers/tokenization_utils_base.py")
    steps = _steps("$ vllm serve /root/m\n" + chat_template)
    assert "saved the checkpoint" not in steps
    kv_scale = real_traceback(
        "raise ValueError('Only support per-tensor scaling factor for fp8 KV cache')\n",
        "vllm/model_executor/layers/quantization/kv_cache.py")
    assert "gptq for a GPTQ checkpoint" not in _steps("$ vllm serve /m --kv-cache-dtype fp8\n" + kv_scale)


def test_each_categorys_own_row_is_one_no_condition_gates() -> None:
    """CategoryTable.row(category), the first row of a category, gives its checks wherever the engine or the row's
    conditions are unknown (diagnosis/match.py for a pattern of that category with no engine decided): a row that
    counts only under a condition (the engine's own code, a wrapper's call, an engine importing its own module) must
    come after it.  Stop 40: a mixed-install row written first gave every such dependency-version failure its
    checks, with `{engine}` unfilled."""
    for category in {row.category for row in table().rows} - {"unclassified"}:
        own = table().row(category)
        assert own is not None
        # engine-bug is the engine's own code failing by definition: its own row says so
        gates = {"in_engine_code": own.in_engine_code and category != "engine-bug",
                 "in_wrapper_code": own.in_wrapper_code, "imports_own_engine": own.imports_own_engine,
                 "in_package_code": own.in_package_code, "raise_frames": bool(own.raise_frames),
                 "frameless": own.frameless}
        assert not any(gates.values()), (category, own.title, gates)


def test_each_categorys_own_row_has_cues_of_its_own_beyond_a_crash_cause() -> None:
    """Guards review H1 of stop 48: a category's own (first) row serves its checks to every failure of the category
    whose row is unknown (neutral_checks, diagnosis/match.py with no engine, root_cause.py, general.py).  A row whose
    only cues are `cause_words` (a crash's cause, such as the CPU's SIGILL row) is one narrow shape of the category;
    written first, it gave a GPU-architecture failure (DeepGEMM's 'Unsupported architecture') its CPU checks."""
    for category in {row.category for row in table().rows} - {"unclassified"}:
        own = table().row(category)
        assert own is not None
        cues = (own.kinds, own.types, own.words, own.strong_words, own.frames, own.source_words, own.cut_frames)
        assert own.cause_words == () or any(cues), (category, own.title)
    gpu = table().row("gpu-arch-unsupported")
    assert gpu is not None and gpu.title == "Likely a GPU that lacks a capability this setting needs"
