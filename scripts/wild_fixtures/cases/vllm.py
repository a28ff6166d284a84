"""vLLM launch failures as users pasted them into public issue threads (issue 16): the KV cache too small for
max_model_len (V0), bf16 on pre-Ampere GPUs, no kernel image for the GPU, a quantization method or scheme the
GPU is too old for, quantization scales the model has no parameter for, attention heads that TP does not
divide, max_model_len above the model's own, a port already taken, CUDA OOM at profiling, NCCL failing in a
worker, a Ray placement group that never forms, argparse rejections, and the API server's cascade alone.

Each process is real CPython in vLLM's paths (pattern_fixtures/cases/vllm.py mirrors vLLM's logging and dying
processes; wild_fixtures/vllm_blocks.py adds the V0 API server, workers and older headers).  Line numbers of
frames the thread did not show are ours; each case's `facts` says what came from the thread.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from pattern_fixtures.cases import vllm as mirror
from pattern_fixtures.engine import Case, Frame
from pattern_fixtures.mirror import CUDA_ASYNC_NOTE, failing_at, frame_at

from .. import paste
from ..blocks import argparse_case, c_attr, cuda_oom, no_grad
from ..corpus import DOCKER, Expect, Install, Run, Text, Weave, WildCase
from ..vllm_blocks import (
    before_prefixes,
    colour_dropped,
    engine_core,
    engine_startup_failed,
    engine_waits_for_workers,
    log_only,
    uncaught,
    v0_api_server_failed,
    v0_kv_check,
    worker_process,
)

VLLM = "vllm"
GPU_EXECUTOR = "vllm/executor/gpu_executor.py"
KV_FIX = (("set --max-model-len",), ("set --gpu-memory-utilization",))


def v0_kv_message(max_model_len: int, max_seq_len: int) -> str:
    """vllm/worker/worker.py raise_if_cache_size_invalid (0.4-0.6)."""
    return (f"The model's max seq len ({max_model_len}) is larger than the maximum number of tokens that can be stored in KV "
            "cache ({max_seq_len}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
            "the engine.").replace("{max_seq_len}", str(max_seq_len))


def until_traceback(text: str) -> str:
    """Only the lines above the first traceback: the paste stops at the engine's one-line error record."""
    lines = text.splitlines()
    end = next(index for index, line in enumerate(lines) if "Traceback (most recent call last)" in line)
    return "".join(line + "\n" for line in lines[:end])


def v0_headers_dropped(text: str) -> str:
    """The V0 record header (`INFO 12-02 10:00:01 worker.py:232] `) left out of every line, messages kept."""
    import re

    return re.sub(r"^(?:INFO|WARNING|ERROR|DEBUG) \d\d-\d\d \d\d:\d\d:\d\d [\w.]+:\d+\] ", "", text, flags=re.M)


def lost_first_chars(text: str, count: int = 3) -> str:
    """The copy began a few characters into the first line (aibrix#927: `NING 04-01 ...` for `WARNING ...`)."""
    return text[count:]


def issue_title(text: str, lead: str, limit: int = 256) -> str:
    """The exception line as (part of) an issue title, cut at GitHub's title length (vllm#3676)."""
    return (lead + text.strip())[:limit] + "\n"


COMMAND_R_TITLE_LEAD = "[Bug]: CohereForAI/c4ai-command-r-v01 : "


def title_shows(exception_type: str, message: str, lead: str, limit: int = 256) -> str:
    """What of `message` an issue title cut at `limit` characters still shows (what a reader can quote)."""
    return issue_title(f"{exception_type}: {message}", lead, limit)[len(lead) + len(exception_type) + 2 :].strip()


def trailing_prompt(text: str, prompt: str) -> str:
    """The shell prompt that came back after the crash, copied with the output (vllm#23176)."""
    return f"{text.rstrip(chr(10))}\n{prompt}\n"


# -- vllm#10517: max_model_len 29000 does not fit, 20k and 35k do (V0, RTX 3090) ------------------------------------------

KV_10517_RECORDS = (
    ("INFO", "vllm/worker/model_runner.py", 1077, "Loading model weights took 14.9888 GB"),
    ("INFO", "vllm/worker/worker.py", 232, "Memory profiling results: total_gpu_memory=23.58GiB initial_memory_usage=15.34GiB "
     "peak_torch_memory=17.98GiB memory_usage_post_profile=15.35GiB non_torch_memory=0.35GiB kv_cache_size=2.89GiB "
     "gpu_memory_utilization=0.90"),
    ("INFO", GPU_EXECUTOR, 76, "# GPU blocks: 1478, # CPU blocks: 2048"),
    ("INFO", GPU_EXECUTOR, 80, "Maximum concurrency for 29000 tokens per request: 0.82x"),
)
KV_10517 = engine_core("0.6.6.post1", v0_kv_check(1478, 29000), records=KV_10517_RECORDS)
KV_10517_MESSAGE = v0_kv_message(29000, 1478 * 16)
KV_10517_THREAD = dict(
    thread="https://github.com/vllm-project/vllm/issues/10517", kind="vllm-max-model-len-exceeds-kv-cache-v0", engine_version="0.6.4.post1",
    resolution="Not a bug: the KV cache left after the profiling run is smaller than one request of max_model_len; lower --max-model-len or raise --gpu-memory-utilization (the profiled peak changes with max_model_len, hence 20k and 35k fitting).",
    engine=VLLM,
)

# -- deepseek-ai/DeepSeek-V2#83: DeepSeek-V2's 163840 tokens under ms-swift's deploy (vLLM 0.5.x in-process) -----------------

SWIFT = "swift/llm/utils/vllm_utils.py"
ASYNC_ENGINE = "vllm/engine/async_llm_engine.py"
SWIFT_KV = uncaught((
    frame_at("swift/utils/run_utils.py", "x_main", "result = llm_x(args, **kwargs)", 32, env=(("llm_x", "NEXT"), ("args", "None"), ("kwargs", "{}"))),
    frame_at("swift/llm/deploy.py", "llm_deploy", "llm_engine, template = prepare_vllm_engine_template(args, use_async=True)", 773),
    mirror.placed(SWIFT, "prepare_vllm_engine_template", 542, "llm_engine = get_vllm_engine(\n    args.model_type,\n    args.torch_dtype)",
                  env=(("get_vllm_engine", "NEXT"), ("args", "_Any()"))),
    frame_at(SWIFT, "get_vllm_engine", "llm_engine = llm_engine_cls.from_engine_args(engine_args)", 116),
    mirror.placed(ASYNC_ENGINE, "from_engine_args", 471, "engine = cls(\n    executor_class=executor_class)", env=(("cls", "NEXT"), ("executor_class", "None"))),
    frame_at(ASYNC_ENGINE, "__init__", "self.engine = self._engine_class(*args, **kwargs)", 380, env=(("self", "HOP:_engine_class"), ("args", "()"), ("kwargs", "{}"))),
    frame_at("vllm/engine/llm_engine.py", "__init__", "self._initialize_kv_caches()", 282),
    frame_at("vllm/engine/llm_engine.py", "_initialize_kv_caches", "self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)", 401),
    frame_at("vllm/executor/distributed_gpu_executor.py", "initialize_cache", "self._run_workers(\"initialize_cache\", num_gpu_blocks=num_gpu_blocks, num_cpu_blocks=num_cpu_blocks)", 62,
             env=(("self", "HOP:_run_workers"), ("num_gpu_blocks", "835"), ("num_cpu_blocks", "1092"))),
    frame_at("vllm/executor/multiproc_gpu_executor.py", "_run_workers", "driver_worker_output = driver_worker_method(*args, **kwargs)", 178,
             env=(("driver_worker_method", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    *v0_kv_check(835, 163840)[-2:],
), "v0", None, 41377, "2024-08-15 10:21:07")

# -- vllm-project/llm-compressor#959: a compressed checkpoint's weight_scale Qwen2 has no parameter for (V0 0.6.4.post1) ----

SCALE_KEY = "layers.0.mlp.down_proj.weight_scale"
SCALE_959 = engine_core("0.6.6.post1", mirror.v0_key_error(SCALE_KEY), records=(
    ("INFO", "vllm/worker/model_runner.py", 1072, "Starting to load model /data/models/qwen2.5-7b-w8a8..."),))
SCALE_959_THREAD = dict(
    thread="https://github.com/vllm-project/llm-compressor/issues/959", kind="vllm-weight-key-quant-scale", engine_version="0.6.4.post1",
    resolution="The checkpoint's quantization format was not the one the installed vLLM reads (an llm-compressor/compressed-tensors mismatch); matching the versions fixed it.",
    engine=VLLM,
)
SCALE_EXPECT = Expect("weight-loading", "KeyError", repr(SCALE_KEY), frame="load_weights")

# -- bf16 on Volta and Turing (V0 wording: no space in "the`dtype`") -------------------------------------------------------

BF16_FIX = (("set --dtype",),)


def bf16_message(gpu: str, capability: str) -> str:
    """vllm/worker/worker.py _check_if_gpu_supports_dtype (0.4-0.6)."""
    return (f"Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {gpu} GPU has compute capability "
            f"{capability}. You can use float16 instead by explicitly setting the`dtype` flag in CLI, for example: --dtype=half.")


def bf16_engine(gpu: str, capability: str, records: tuple[tuple[str, str, int, str], ...] = ()) -> Case:
    return engine_core("0.6.6.post1", mirror.v0_bf16(gpu, capability), records=records)


TRANSFORMERLAB_RECORDS = (
    ("WARNING", "vllm/engine/arg_utils.py", 766, "Chunked prefill is enabled by default for models with max_model_len > 32K. Currently, "
     "chunked prefill might not work with some features or models. If you encounter any issues, please disable chunked prefill by "
     "setting --enable-chunked-prefill=False."),
    ("INFO", "vllm/config.py", 820, "Chunked prefill is enabled with max_num_batched_tokens=512."),
    ("INFO", "vllm/engine/llm_engine.py", 174, "Initializing an LLM engine (v0.5.4) with config: model='deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B', "
     "speculative_config=None, tokenizer='deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B', skip_tokenizer_init=False, tokenizer_mode=auto, "
     "revision=None, trust_remote_code=True, dtype=torch.bfloat16, max_seq_len=131072, download_dir=None, load_format=LoadFormat.AUTO, "
     "tensor_parallel_size=1, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, "
     "kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=deepseek-ai/DeepSeek-R1-Distill-Qwen-1.5B, use_v2_block_manager=False, "
     "enable_prefix_caching=False)"),
)

# -- vllm#14452 (comment): an RTX 50xx (sm_120) with a vLLM/torch build without Blackwell kernels (V1, 0.10.0) --------------

NO_KERNEL_MESSAGE = f"CUDA error: no kernel image is available for execution on the device{CUDA_ASYNC_NOTE}"
NO_KERNEL = Case("", "", mirror.engine_process("0.11.0", mirror.NO_KERNEL_0110), mode="plain", ranks="", extra_modules=(mirror._HELPER,),
                 torch_error=("RuntimeError", NO_KERNEL_MESSAGE))
NO_KERNEL_THREAD = dict(
    thread="https://github.com/vllm-project/vllm/issues/14452", kind="vllm-no-kernel-image", engine_version="0.10.0",
    resolution="The thread's recipe: a torch built for CUDA 12.8 (sm_120) and vLLM built from source against it; later wheels ship Blackwell kernels.",
    engine=VLLM,
)
NO_KERNEL_EXPECT = Expect("gpu-arch-unsupported", "RuntimeError", NO_KERNEL_MESSAGE, frame="__torch_function__", fix=((),))

# -- the API server's cascade with nothing above it -----------------------------------------------------------------------

CASCADE_MESSAGE = "Engine core initialization failed. See root cause above. Failed core proc(s): {}"
CASCADE_EXPECT = Expect("process-killed", "RuntimeError", CASCADE_MESSAGE, frame="wait_for_engine_startup")

# -- attention heads that TP does not divide (config validation in the API server) --------------------------------------------

API = "vllm/entrypoints/openai/api_server.py"
CONFIG = "vllm/config.py"


def heads_not_divisible(heads: int, tp: int) -> tuple[Frame, ...]:
    """`vllm serve` (0.8.5.post1) building VllmConfig: ModelConfig.verify_with_parallel_config raising."""
    return (
        frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 53, env=(("args", "HOP:dispatch_function"),)),
        frame_at("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))", 27,
                 env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
        frame_at(API, "build_async_engine_client_from_engine_args", "vllm_config = engine_args.create_engine_config(usage_context=usage_context)", 150),
        mirror.placed("vllm/engine/arg_utils.py", "create_engine_config", 1308,
                      "config = VllmConfig(\n    model_config=model_config,\n    cache_config=cache_config,\n    parallel_config=parallel_config)",
                      env=(("VllmConfig", "NEXT"), ("model_config", "None"), ("cache_config", "None"), ("parallel_config", "None"))),
        frame_at("<string>", "__init__", "self.__post_init__()", 19, env=(("self", "HOP:__post_init__"),)),
        frame_at(CONFIG, "__post_init__", "self.model_config.verify_with_parallel_config(self.parallel_config)", 3751,
                 env=(("self", "HOP:verify_with_parallel_config"),)),
        failing_at(CONFIG, "verify_with_parallel_config", """
            total_num_attention_heads = getattr(self.hf_text_config, "num_attention_heads", 0)
            tensor_parallel_size = parallel_config.tensor_parallel_size
            if total_num_attention_heads % tensor_parallel_size != 0:
                raise ValueError(
                    f"Total number of attention heads ({total_num_attention_heads})"
                    " must be divisible by tensor parallel size "
                    f"({tensor_parallel_size}).")
            """, 835, env=(("self", f"NS(hf_text_config=NS(num_attention_heads={heads}))"), ("parallel_config", f"NS(tensor_parallel_size={tp})"))),
    )


HEADS_RECORDS = (
    ("INFO", "vllm/platforms/__init__.py", 239, "Automatically detected platform cuda."),
    ("INFO", API, 1043, "vLLM API server version 0.8.5.post1"),
)
GPUSTACK_LINES = (
    "2025-06-19T11:30:14+08:00 - gpustack.worker.backends.vllm - INFO - Starting vllm server\n"
    "2025-06-19T11:30:14+08:00 - gpustack.worker.backends.vllm - DEBUG - Run vllm with arguments: serve "
    "/var/lib/gpustack/cache/model_scope/LLM-Research/gemma-3-27b-it --max-model-len 8192 --tensor-parallel-size 3 "
    "--host 0.0.0.0 --port 40059 --served-model-name gemma-3-27b-it\n"
)
HEADS_FIX = (("set --tensor-parallel-size",),)

# -- max_model_len above the model's own (config validation, 0.4.x) -------------------------------------------------------------


def derived_len(message: str, shown: str = "") -> tuple[Frame, ...]:
    """AsyncLLMEngine.from_engine_args -> EngineArgs.create_engine_config -> ModelConfig -> _get_and_verify_max_len (0.4.3)."""
    return (
        frame_at(ASYNC_ENGINE, "from_engine_args", "engine_config = engine_args.create_engine_config()", 386),
        mirror.placed("vllm/engine/arg_utils.py", "create_engine_config", 520, "model_config = ModelConfig(\n    self.model, self.tokenizer)",
                      env=(("ModelConfig", "NEXT"), ("self", "_Any()"))),
        mirror.placed(CONFIG, "__init__", 134, "self.max_model_len = _get_and_verify_max_len(\n    hf_config=self.hf_text_config,\n    max_model_len=max_model_len)",
                      env=(("_get_and_verify_max_len", "NEXT"), ("self", "_Any()"), ("max_model_len", "None"))),
        failing_at(CONFIG, "_get_and_verify_max_len", """
            if max_model_len > derived_max_model_len:
                raise ValueError(
                    f"{_shown}{_message}")
            """, 1255, env=(("max_model_len", "1"), ("derived_max_model_len", "0"), ("_shown", repr(shown)), ("_message", repr(message)))),
    )


def derived_message(max_model_len: int, key: str, derived: int, model_max_length: str | None) -> str:
    """vllm/config.py _get_and_verify_max_len: 0.4.1+ names tokenizer's model_max_length too (None: the 0.4.0 wording)."""
    where = f"{key}={derived}" + (f" or model_max_length={model_max_length}" if model_max_length is not None else "")
    return (f"User-specified max_model_len ({max_model_len}) is greater than the derived max_model_len ({where} in model's "
            "config.json). This may lead to incorrect model outputs or CUDA errors. Make sure the value is correct and within "
            "the model context size.")


XOSCAR = "[address=127.0.0.1:38467, pid=29417] "
XINFERENCE_MESSAGE = derived_message(4096, "seq_length", 2048, "None")
XINFERENCE_FRAMES = (
    frame_at("xinference/model/llm/vllm/core.py", "load", "self._engine = AsyncLLMEngine.from_engine_args(engine_args)", 233,
             env=(("AsyncLLMEngine", "HOP:from_engine_args"), ("engine_args", "None"))),
    *derived_len(XINFERENCE_MESSAGE, XOSCAR),
)
COMMAND_R_MESSAGE = derived_message(131072, "None", 8192, None)
COMMAND_R_TITLE_SHOWS = title_shows("ValueError", COMMAND_R_MESSAGE, COMMAND_R_TITLE_LEAD)  # the title is cut mid-message

# -- a port already taken --------------------------------------------------------------------------------------------------

UVICORN_LINES = (
    "INFO:     Started server process [58213]\n"
    "INFO:     Waiting for application startup.\n"
    "INFO:     Application startup complete.\n"
    "ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 5001): address already in use\n"
    "INFO:     Waiting for application shutdown.\n"
    "INFO:     Application shutdown complete.\n"
)
PORT_FIX = (("set --port",),)
BIND = uncaught((
    frame_at("vllm/scripts.py", "main", "args.dispatch_function(args)", 201, env=(("args", "HOP:dispatch_function"),)),
    frame_at("vllm/scripts.py", "serve", "uvloop.run(run_server(args))", 42,
             env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
    frame_at(API, "run_server", "sock = create_server_socket(sock_addr)", 565, env=(("create_server_socket", "NEXT"), ("sock_addr", "None"))),
    failing_at(API, "create_server_socket", """
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(addr)
        """, 531, marker="sock.bind", env=(("socket", "__import__('socket')"), ("addr", "('127.0.0.1', _listen().getsockname()[1])"))),
), "v0", None, 40811, "2024-10-28 06:12:40", records=(
    ("INFO", API, 528, "vLLM API server version 0.6.3.post2.dev171+g890ca360"),
    ("INFO", API, 529, "args: Namespace(subparser='serve', model_tag='/models/Qwen2.5-72B-Instruct', host=None, port=8000, "
     "uvicorn_log_level='info', tensor_parallel_size=8, gpu_memory_utilization=0.9, max_model_len=32768)"),
))

# -- a quantization the GPU is too old for ------------------------------------------------------------------------------------

MODEL_LOADER = "vllm/model_executor/model_loader.py"
AWQ_V100 = uncaught((
    mirror.placed(ASYNC_ENGINE, "from_engine_args", 348, "engine = cls(\n    parallel_config.worker_use_ray)",
                  env=(("cls", "NEXT"), ("parallel_config", "_Any()"))),
    frame_at(ASYNC_ENGINE, "__init__", "self.engine = self._init_engine(*args, **kwargs)", 311, env=(("self", "HOP:_init_engine"), ("args", "()"), ("kwargs", "{}"))),
    frame_at(ASYNC_ENGINE, "_init_engine", "return engine_class(*args, **kwargs)", 422, env=(("engine_class", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    mirror.placed("vllm/engine/llm_engine.py", "__init__", 148, "self.model_executor = executor_class(\n    model_config=model_config)",
                  env=(("executor_class", "NEXT"), ("model_config", "None"))),
    frame_at("vllm/executor/gpu_executor.py", "__init__", "self._init_worker()", 40),
    frame_at("vllm/executor/gpu_executor.py", "_init_worker", "self.driver_worker.load_model()", 67),
    frame_at("vllm/worker/worker.py", "load_model", "self.model_runner.load_model()", 99),
    mirror.placed("vllm/worker/model_runner.py", "load_model", 88, "self.model = get_model(\n    self.model_config,\n    self.device_config)",
                  env=(("get_model", "NEXT"), ("self", "_Any()"))),
    failing_at(MODEL_LOADER, "get_model", """
        if model_config.quantization is not None:
            quant_config = get_quant_config(model_config)
            capability = torch.cuda.get_device_capability()
            capability = capability[0] * 10 + capability[1]
            if capability < quant_config.get_min_capability():
                raise ValueError(
                    f"The quantization method {model_config.quantization} is not "
                    "supported for the current GPU. "
                    f"Minimum capability: {quant_config.get_min_capability()}. "
                    f"Current capability: {capability}.")
        """, 86, env=(("model_config", "NS(quantization='awq')"), ("get_quant_config", "lambda config: NS(get_min_capability=lambda: 75)"),
                      ("torch", "NS(cuda=NS(get_device_capability=lambda: (7, 0)))"))),
), "v0", None, 18236, "2024-04-19 09:25:10", records=(
    ("INFO", "vllm/entrypoints/openai/api_server.py", 149, "vLLM API server version 0.4.0.post1"),
    ("INFO", "vllm/engine/llm_engine.py", 87, "Initializing an LLM engine (v0.4.0.post1) with config: model='/data/qwen1.5/Qwen1.5-32B-Chat-AWQ', "
     "tokenizer='/data/qwen1.5/Qwen1.5-32B-Chat-AWQ', tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.float16, "
     "max_seq_len=512, download_dir=None, load_format=auto, tensor_parallel_size=1, disable_custom_all_reduce=True, quantization=awq, "
     "enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0)"),
))
AWQ_MESSAGE = "The quantization method awq is not supported for the current GPU. Minimum capability: 75. Current capability: 70."

LINEAR = "vllm/model_executor/layers/linear.py"
COMPRESSED = "vllm/model_executor/layers/quantization/compressed_tensors/compressed_tensors.py"
LLAMA = "vllm/model_executor/models/llama.py"
SCHEME_FRAMES = (
    *mirror.to_worker("0.11.0", "load_model"),
    frame_at(mirror.GPU_WORKER, "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)", 213),
    mirror.placed("vllm/v1/worker/gpu_model_runner.py", "load_model", 2635,
                  "self.model = model_loader.load_model(\n    vllm_config=self.vllm_config, model_config=self.model_config)",
                  env=(("self", "_Any()"), ("model_loader", "HOP:load_model"))),
    frame_at("vllm/model_executor/model_loader/base_loader.py", "load_model", "model = initialize_model(vllm_config=vllm_config, model_config=model_config)", 45,
             env=(("initialize_model", "NEXT"), ("vllm_config", "None"), ("model_config", "None"))),
    frame_at("vllm/model_executor/model_loader/utils.py", "initialize_model", "return model_class(vllm_config=vllm_config, prefix=prefix)", 62,
             env=(("model_class", "NEXT"), ("vllm_config", "None"), ("prefix", "''"))),
    mirror.placed(LLAMA, "__init__", 276, "self.self_attn = LlamaAttention(\n    config=config,\n    hidden_size=self.hidden_size)",
                  env=(("LlamaAttention", "NEXT"), ("config", "None"), ("self", "NS(hidden_size=4096)"))),
    mirror.placed(LLAMA, "__init__", 150, "self.qkv_proj = QKVParallelLinear(\n    hidden_size=hidden_size,\n    head_size=self.head_dim)",
                  env=(("QKVParallelLinear", "NEXT"), ("hidden_size", "4096"), ("self", "NS(head_dim=128)"))),
    frame_at(LINEAR, "__init__", "super().__init__(input_size=input_size, output_size=output_size, bias=bias, quant_config=quant_config, prefix=prefix)", 884),
    frame_at(LINEAR, "__init__", "self.quant_method = quant_config.get_quant_method(self, prefix=prefix)", 244,
             env=(("quant_config", "HOP:get_quant_method"), ("prefix", "'model.layers.0.self_attn.qkv_proj'"))),
    frame_at(COMPRESSED, "get_quant_method", "quant_scheme = self.get_scheme(layer=layer, layer_name=prefix)", 117,
             env=(("self", "HOP:get_scheme"), ("layer", "None"), ("prefix", "None"))),
    frame_at(COMPRESSED, "get_scheme", "self._check_scheme_supported(scheme.get_min_capability())", 570,
             env=(("self", "HOP:_check_scheme_supported"), ("scheme", "NS(get_min_capability=lambda: 80)"))),
    failing_at(COMPRESSED, "_check_scheme_supported", """
        capability_tuple = current_platform.get_device_capability()

        if capability_tuple is not None:
            capability = capability_tuple.to_int()
            supported = capability >= min_capability
            if error and not supported:
                raise RuntimeError(
                    "Quantization scheme is not supported for ",
                    f"the current GPU. Min capability: {min_capability}. ",
                    f"Current capability: {capability}.")
        """, 312, env=(("current_platform", "NS(get_device_capability=lambda: NS(to_int=lambda: 75))"), ("min_capability", "80"), ("error", "True"))),
)
SCHEME_MESSAGE = "('Quantization scheme is not supported for ', 'the current GPU. Min capability: 80. ', 'Current capability: 75.')"

# -- vllm#10569: CUDA OOM in the multimodal profile run (Llama-3.2-11B-Vision, 0.6.3, LLM class) ------------------------------

MLLAMA = "vllm/model_executor/models/mllama.py"
MODULE = "torch/nn/modules/module.py"
ENC_DEC = "vllm/worker/enc_dec_model_runner.py"


def module_call() -> tuple[Frame, ...]:
    """torch.nn.Module.__call__ -> _call_impl -> forward (torch 2.4)."""
    return (
        frame_at(MODULE, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)", 1553, env=(("self", "HOP:_call_impl"), ("args", "()"), ("kwargs", "{}"))),
        frame_at(MODULE, "_call_impl", "return forward_call(*args, **kwargs)", 1562, env=(("forward_call", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    )


OOM_10569_MESSAGE = cuda_oom("7.03 GiB", 0, "44.52 GiB", "3.41 GiB", "41.10 GiB", "39.85 GiB", "758.41 MiB")
OOM_10569 = uncaught((
    mirror.placed("vllm/entrypoints/llm.py", "__init__", 177, "self.llm_engine = LLMEngine.from_engine_args(\n    engine_args, usage_context=UsageContext.LLM_CLASS)",
                  env=(("LLMEngine", "HOP:from_engine_args"), ("engine_args", "None"), ("UsageContext", "_Any()"))),
    mirror.placed("vllm/engine/llm_engine.py", "from_engine_args", 573, "engine = cls(\n    **engine_config.to_dict())",
                  env=(("cls", "NEXT"), ("engine_config", "_Any()"))),
    frame_at("vllm/engine/llm_engine.py", "__init__", "self._initialize_kv_caches()", 348),
    mirror.placed("vllm/engine/llm_engine.py", "_initialize_kv_caches", 482, "num_gpu_blocks, num_cpu_blocks = (\n    self.model_executor.determine_num_available_blocks())",
                  env=(("self", "HOP:determine_num_available_blocks"),)),
    frame_at(GPU_EXECUTOR, "determine_num_available_blocks", "return self.driver_worker.determine_num_available_blocks()", 114),
    no_grad(116),
    frame_at("vllm/worker/worker.py", "determine_num_available_blocks", "self.model_runner.profile_run()", 223),
    no_grad(116),
    frame_at(ENC_DEC, "profile_run", "self.execute_model(model_input, kv_caches, intermediate_tensors)", 348,
             env=(("self", "HOP:execute_model"), ("model_input", "None"), ("kv_caches", "None"), ("intermediate_tensors", "None"))),
    no_grad(116),
    mirror.placed(ENC_DEC, "execute_model", 201, "hidden_or_intermediate_states = model_executable(\n    input_ids=model_input.input_tokens)",
                  env=(("model_executable", "NEXT"), ("model_input", "_Any()"))),
    *module_call(),
    mirror.placed(MLLAMA, "forward", 1364, "cross_attention_states = self.vision_model(pixel_values,\n    aspect_ratio_ids, aspect_ratio_mask)",
                  env=(("self", "HOP:vision_model"), ("pixel_values", "None"), ("aspect_ratio_ids", "None"), ("aspect_ratio_mask", "None"))),
    *module_call(),
    mirror.placed(MLLAMA, "forward", 529, "hidden_state = self.gated_positional_embedding(hidden_state,\n    aspect_ratio_ids)",
                  env=(("self", "HOP:gated_positional_embedding"), ("hidden_state", "None"), ("aspect_ratio_ids", "None"))),
    *module_call(),
    frame_at(MLLAMA, "forward", "hidden_state = hidden_state.reshape(bsz, num_chunks, num_tokens, dim) + gated_tile_position_embedding", 231,
             env=(("hidden_state", c_attr("reshape")), ("bsz", "1"), ("num_chunks", "4"), ("num_tokens", "1601"), ("dim", "1280"),
                  ("gated_tile_position_embedding", "None"))),
), "v0", None, 27905, "2024-11-22 07:19:24", records=(
    ("INFO", "vllm/worker/model_runner.py", 1067, "Loading model weights took 19.9073 GB"),
    ("INFO", ENC_DEC, 301, "Starting profile run for multi-modal models."),
), torch_error=OOM_10569_MESSAGE)



# -- vllm#39774: NCCL cannot initialise the TP communicator in the workers (V1, TP 2) -----------------------------------------

PARALLEL_STATE = "vllm/distributed/parallel_state.py"
PYNCCL_WRAPPER = "vllm/distributed/device_communicators/pynccl_wrapper.py"
NCCL_MESSAGE = "NCCL error: unhandled system error (run with NCCL_DEBUG=INFO for details)"


def nccl_worker(rank: int, pid: int) -> Case:
    below = (
        mirror.placed(mirror.GPU_WORKER, "init_device", 188, "init_worker_distributed_environment(self.vllm_config, self.rank,\n"
                      "                                    self.distributed_init_method,\n                                    self.local_rank,\n"
                      "                                    current_platform.dist_backend)",
                      env=(("init_worker_distributed_environment", "NEXT"), ("self", "_Any()"), ("current_platform", "_Any()"))),
        mirror.placed(mirror.GPU_WORKER, "init_worker_distributed_environment", 747,
                      "ensure_model_parallel_initialized(parallel_config.tensor_parallel_size,\n"
                      "                                  parallel_config.pipeline_parallel_size)",
                      env=(("ensure_model_parallel_initialized", "NEXT"), ("parallel_config", "_Any()"))),
        frame_at(PARALLEL_STATE, "ensure_model_parallel_initialized", "initialize_model_parallel(tensor_model_parallel_size, pipeline_model_parallel_size, backend)", 1218,
                 env=(("initialize_model_parallel", "NEXT"), ("tensor_model_parallel_size", "2"), ("pipeline_model_parallel_size", "1"), ("backend", "'nccl'"))),
        frame_at(PARALLEL_STATE, "initialize_model_parallel", "_TP = init_model_parallel_group(group_ranks, get_world_group().local_rank, backend, use_message_queue_broadcaster=True, group_name=\"tp\")", 1135,
                 env=(("init_model_parallel_group", "NEXT"), ("group_ranks", "None"), ("get_world_group", "_Any()"), ("backend", "None"))),
        frame_at(PARALLEL_STATE, "init_model_parallel_group", "return GroupCoordinator(group_ranks=group_ranks, local_rank=local_rank, torch_distributed_backend=backend, use_device_communicator=use_device_communicator, use_message_queue_broadcaster=use_message_queue_broadcaster, group_name=group_name)", 881,
                 env=(("GroupCoordinator", "NEXT"),)),
        frame_at(PARALLEL_STATE, "__init__", "self.device_communicator = device_comm_cls(cpu_group=self.cpu_group, device=self.device, device_group=self.device_group, unique_name=self.unique_name)", 264,
                 env=(("device_comm_cls", "NEXT"), ("self", "_Any()"))),
        frame_at("vllm/distributed/device_communicators/cuda_communicator.py", "__init__", "self.pynccl_comm = PyNcclCommunicator(group=self.cpu_group, device=self.device)", 53,
                 env=(("PyNcclCommunicator", "NEXT"), ("self", "_Any()"))),
        frame_at("vllm/distributed/device_communicators/pynccl.py", "__init__", "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(self.world_size, self.unique_id, self.rank)", 106,
                 env=(("self", "HOP:ncclCommInitRank"),)),
        frame_at(PYNCCL_WRAPPER, "ncclCommInitRank", "self.NCCL_CHECK(self._funcs[\"ncclCommInitRank\"](ctypes.byref(comm), world_size, unique_id, rank))", 301,
                 env=(("self", "HOP:NCCL_CHECK"), ("ctypes", "NS(byref=lambda x: x)"), ("comm", "None"), ("world_size", "2"), ("unique_id", "None"), ("rank", str(rank)))),
        failing_at(PYNCCL_WRAPPER, "NCCL_CHECK", """
            if result != 0:
                error_str = self.ncclGetErrorString(result)
                raise RuntimeError(f"NCCL error: {error_str}")
            """, 272, env=(("result", "2"), ("self", "NS(ncclGetErrorString=lambda r: 'unhandled system error (run with NCCL_DEBUG=INFO for details)')"))),
    )
    return Case("", "", worker_process("Worker", pid, "2026-04-14 13:46:58", below), mode="plain", ranks="", extra_modules=(mirror._HELPER,))


# -- aibrix#927: a Ray placement group that never forms (multi-node TP, vLLM 0.8) ----------------------------------------------

RAY_UTILS = "vllm/executor/ray_utils.py"
SPECS = "[{'node:10.0.12.7': 0.001, 'GPU': 1.0}, {'GPU': 1.0}]"
PLACEMENT = log_only("v1", None, 1, "2025-04-01 02:45:49", (
    ("WARNING", RAY_UTILS, 320, "The number of required GPUs exceeds the total number of available GPUs in the placement group."),
    *(("INFO", RAY_UTILS, 214, f"Waiting for creating a placement group of specs for {seconds} seconds. specs={SPECS}. Check `ray status` "
       "to see if you have enough resources, and make sure the IP addresses used by ray cluster are the same as VLLM_HOST_IP "
       "environment variable specified in each node if you are running on a multi-node.") for seconds in (10, 30, 70, 150, 310)),
))

# -- V1 wordings of the KV check: vllm-project/tpu-inference PR#223 (0.9-era "models's"), intel-arc cookbook#4 (0.33 "model's") ---


def kv_v1(version: str, available_gib: float, max_model_len: int | None = None, needed_gib: float | None = None) -> tuple[Frame, ...]:
    """The V1 engine core's KV check with the thread's numbers (the estimated length is our mirror's)."""
    frames = mirror.kv_check(version, int(available_gib * mirror.GIB))
    check = frames[-1]
    overrides = {}
    if max_model_len is not None:
        overrides["max_model_len"] = str(max_model_len)
        overrides["estimate_max_model_len"] = f"lambda memory: {int(max_model_len * available_gib / needed_gib) // 16 * 16}"
    if needed_gib is not None:
        overrides["get_needed_memory"] = f"lambda: {int(needed_gib * mirror.GIB)}"
    env = tuple((name, overrides.get(name, value)) for name, value in check.env)
    return (*frames[:-1], Frame(check.path, check.function, body=check.body, env=env, lineno=check.lineno))


KV_TPU = Case("", "", mirror.engine_process("0.11.0", kv_v1("0.11.0", 0.71)), mode="plain", ranks="", extra_modules=(mirror._HELPER,))
KV_TPU_MESSAGE = ("To serve at least one request with the models's max seq len (131072), (16.00 GiB KV cache is needed, which is larger "
                  "than the available KV cache memory (0.71 GiB). Based on the available memory, the estimated maximum model length is 5808. "
                  "Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine.")
KV_ARC_MESSAGE = ("To serve at least one request with the model's max seq len (100000), (4.26 GiB KV cache is needed, which is larger than "
                  "the available KV cache memory (4.25 GiB). Based on the available memory, the estimated maximum model length is 99760. Try "
                  "increasing `gpu_memory_utilization` (which also controls CPU memory on the CPU backend) or decreasing `max_model_len` when "
                  "initializing the engine. See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ for more details.")
KV_ARC = Case("", "", mirror.engine_process("0.33.0", kv_v1("0.33.0", 4.25, 100000, 4.26)), mode="plain", ranks="", extra_modules=(mirror._HELPER,))

# -- pytorch/pytorch#175666: vLLM's distributed tests on a torch release candidate, free memory below the asked share --------------

FREE_CI_MESSAGE = ("Free memory on device cuda:1 (19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, 19.84 GiB). "
                   "Decrease GPU memory utilization or reduce GPU memory used by other processes.")
FREE_CI_FRAMES = mirror.free_memory_0330()
_request = FREE_CI_FRAMES[-1]
FREE_CI = Case("", "", mirror.engine_process("0.11.0", (*FREE_CI_FRAMES[:-1], Frame(_request.path, _request.function, body=_request.body, lineno=_request.lineno,
               env=tuple((name, f"NS(device_='cuda:1', free_memory={int(19.77 * mirror.GIB)}, total_memory={int(22.049 * mirror.GIB)})" if name == "init_snapshot" else value)
                         for name, value in _request.env)))),
               mode="plain", ranks="", extra_modules=(mirror._HELPER,))

# -- vllm#9656: a local path that does not exist on this node, validated as a Hub repo id (0.6.3) -----------------------------------

HF_ERRORS = ("huggingface_hub/errors.py", "class HFValidationError(ValueError):\n    pass\n")
MISSING_DIR = "/data/models/Llama-3.1_405B-Instruct"
HF_MESSAGE = f"Repo id must be in the form 'repo_name' or 'namespace/repo_name': '{MISSING_DIR}'. Use `repo_type` argument if needed."
HF_VALIDATION = uncaught((
    frame_at("vllm/scripts.py", "main", "args.dispatch_function(args)", 201, env=(("args", "HOP:dispatch_function"),)),
    frame_at("vllm/scripts.py", "serve", "uvloop.run(run_server(args))", 42,
             env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
    frame_at(API, "build_async_engine_client_from_engine_args", "engine_config = engine_args.create_engine_config()", 133),
    frame_at("vllm/engine/arg_utils.py", "create_engine_config", "model_config = self.create_model_config()", 959),
    mirror.placed("vllm/engine/arg_utils.py", "create_model_config", 891, "return ModelConfig(\n    model=self.model,\n    task=self.task)",
                  env=(("ModelConfig", "NEXT"), ("self", "_Any()"))),
    frame_at(CONFIG, "__init__", "self.hf_config = get_config(self.model, trust_remote_code, revision, code_revision, config_format)", 207,
             env=(("get_config", "NEXT"), ("self", "NS(model=None)"), ("trust_remote_code", "False"), ("revision", "None"), ("code_revision", "None"),
                  ("config_format", "None"))),
    failing_at("vllm/transformers_utils/config.py", "get_config", """
        elif file_or_path_exists(model, HF_CONFIG_NAME, revision=revision, token=kwargs.get("token")):
            config_format = ConfigFormat.HF
        """.replace("elif", "if", 1), 178, marker="if file_or_path_exists",
               env=(("file_or_path_exists", "NEXT"), ("model", "None"), ("HF_CONFIG_NAME", "'config.json'"), ("revision", "None"), ("kwargs", "{}"),
                    ("ConfigFormat", "_Any()"))),
    frame_at("vllm/transformers_utils/config.py", "file_or_path_exists", "return file_exists(model, config_name, revision=revision, token=token)", 116,
             env=(("file_exists", "NEXT"), ("model", repr(MISSING_DIR)), ("config_name", "None"), ("revision", "None"), ("token", "None"))),
    failing_at("huggingface_hub/utils/_validators.py", "_inner_fn", """
        for arg_name, arg_value in chain(
            zip(signature.parameters, args),  # Args values
            kwargs.items(),  # Kwargs values
        ):
            if arg_name in ["repo_id", "from_id", "to_id"]:
                validate_repo_id(arg_value)
        """, 106, marker="validate_repo_id", env=(("chain", "__import__('itertools').chain"), ("signature", "NS(parameters=['repo_id'])"),
                                                  ("args", f"({MISSING_DIR!r},)"), ("kwargs", "{}"), ("validate_repo_id", "NEXT"))),
    failing_at("huggingface_hub/utils/_validators.py", "validate_repo_id", """
        if repo_id.count("/") > 1:
            raise HFValidationError(
                "Repo id must be in the form 'repo_name' or 'namespace/repo_name':"
                f" '{repo_id}'. Use `repo_type` argument if needed."
            )
        """, 154, env=(("HFValidationError", "__import__('huggingface_hub.errors', fromlist=['x']).HFValidationError"), ("repo_id", "_args[0]"))),
), "v0", None, 2208, "2024-10-24 07:40:11", modules=(HF_ERRORS,))
HF_THREAD = dict(
    thread="https://github.com/vllm-project/vllm/issues/9656", kind="vllm-hf-validation-error", engine_version="0.6.3", engine=VLLM,
    resolution="Not resolved in the thread (moved to a discussion). The path did not exist where vLLM ran, so it was read as a Hub repo id; "
               "point --model at a directory that exists on that node.",
)
HF_EXPECT = Expect("model-path", "huggingface_hub.errors.HFValidationError", HF_MESSAGE)

# -- vllm#12847 (comment): the vllm-openai container started without a GPU (0.8.4) ----------------------------------------------------

NO_DEVICE_MESSAGE = ("Failed to infer device type, please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` to turn on verbose "
                     "logging to help debug the issue.")
NO_DEVICE = uncaught((
    # the api_server module, run_server and the asyncio frames above are left out, as in pattern_fixtures/cases/vllm.py
    frame_at(API, "build_async_engine_client_from_engine_args", "vllm_config = engine_args.create_engine_config(usage_context=usage_context)", 166),
    frame_at("vllm/engine/arg_utils.py", "create_engine_config", "device_config = DeviceConfig(device=self.device)", 1154,
             env=(("DeviceConfig", "NEXT"), ("self", "NS(device='auto')"))),
    failing_at(CONFIG, "__init__", """
        if device == "auto":
            # Automated device type detection
            from vllm.platforms import current_platform
            self.device_type = current_platform.device_type
            if not self.device_type:
                raise RuntimeError(
                    "Failed to infer device type, please set "
                    "the environment variable `VLLM_LOGGING_LEVEL=DEBUG` "
                    "to turn on verbose logging to help debug the issue.")
        """.replace("            from vllm.platforms import current_platform\n", ""), 2192,
               env=(("device", "'auto'"), ("self", "NS()"), ("current_platform", "NS(device_type='')"))),
), "v1", None, 1, "2025-05-14 04:44:34", records=(
    ("INFO", "vllm/platforms/__init__.py", 243, "No platform detected, vLLM is running on UnspecifiedPlatform"),
    ("INFO", API, 1034, "vLLM API server version 0.8.4"),
    ("INFO", API, 1035, "args: Namespace(host=None, port=8000, uvicorn_log_level='info', model='/mnt/model/', tensor_parallel_size=2, "
     "served_model_name=None, device='auto')"),
))

# -- vllm#15182: CUDA OOM while a worker builds the model's weights (V1 multiproc, 0.8.x) ------------------------------------------------

LOAD_OOM_MESSAGE = cuda_oom("896.00 MiB", 5, "79.25 GiB", "412.94 MiB", "78.84 GiB", "77.93 GiB", "271.40 MiB")
LOAD_OOM_FRAMES = (
    mirror.placed("stdlib:multiprocessing/process.py", "_bootstrap", 311, mirror.lines_at(mirror._BOOTSTRAP_LINES), env=(
        ("_vllm_logging", "__import__('_lsfx_vllm').process('VllmWorker rank=5', 3073, 'v1', '2025-03-20 06:12:40', (), False)"),
        ("self", "NS(run=_target('f1'), name='VllmWorkerProcess')"), ("util", "NS(_exit_function=lambda: None)"))),
    frame_at("stdlib:multiprocessing/process.py", "run", "self._target(*self._args, **self._kwargs)", 108),
    frame_at("vllm/v1/executor/multiproc_executor.py", "worker_main", "worker = WorkerProc(*args, **kwargs)", 311,
             env=(("WorkerProc", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    frame_at("vllm/v1/executor/multiproc_executor.py", "__init__", "self.worker.load_model()", 244, env=(("self", "HOP:load_model"),)),
    frame_at(mirror.GPU_WORKER, "load_model", "self.model_runner.load_model()", 136),
    frame_at("vllm/v1/worker/gpu_model_runner.py", "load_model", "self.model = get_model(vllm_config=self.vllm_config)", 1167,
             env=(("get_model", "NEXT"), ("self", "_Any()"))),
    frame_at("vllm/model_executor/model_loader/__init__.py", "get_model", "return loader.load_model(vllm_config=vllm_config)", 14,
             env=(("loader", "HOP:load_model"), ("vllm_config", "None"))),
    frame_at("vllm/model_executor/model_loader/loader.py", "load_model", "model = _initialize_model(vllm_config=vllm_config)", 441,
             env=(("_initialize_model", "NEXT"), ("vllm_config", "None"))),
    frame_at("vllm/model_executor/model_loader/loader.py", "_initialize_model", "return model_class(vllm_config=vllm_config, prefix=prefix)", 133,
             env=(("model_class", "NEXT"), ("vllm_config", "None"), ("prefix", "''"))),
    mirror.placed(LLAMA, "__init__", 491, "self.model = self._init_model(vllm_config=vllm_config,\n                               prefix=maybe_prefix(prefix, \"model\"))",
                  env=(("self", "HOP:_init_model"), ("vllm_config", "None"), ("maybe_prefix", "lambda *a: ''"), ("prefix", "''"))),
    frame_at(LLAMA, "_init_model", "return LlamaModel(vllm_config=vllm_config, prefix=prefix)", 536, env=(("LlamaModel", "NEXT"), ("vllm_config", "None"), ("prefix", "''"))),
    mirror.placed(LLAMA, "__init__", 323, "self.start_layer, self.end_layer, self.layers = make_layers(\n    config.num_hidden_layers)",
                  env=(("make_layers", "NEXT"), ("config", "_Any()"))),
    frame_at("vllm/model_executor/models/utils.py", "make_layers", "[PPMissingLayer() for _ in range(start_layer)] + [maybe_offload_to_cpu(layer_fn(prefix=f\"{prefix}.{idx}\")) for idx in range(start_layer, end_layer)]", 609,
             env=(("PPMissingLayer", "None"), ("start_layer", "0"), ("end_layer", "1"), ("maybe_offload_to_cpu", "lambda layer: layer"), ("layer_fn", "NEXT"), ("prefix", "'model.layers'"))),
    # make_layers calls llama.py's `lambda prefix: layer_type(...)`, a frame the generator cannot name: left out
    mirror.placed(LLAMA, "__init__", 263, "self.mlp = LlamaMLP(\n    hidden_size=self.hidden_size)", env=(("LlamaMLP", "NEXT"), ("self", "NS(hidden_size=8192)"))),
    mirror.placed(LLAMA, "__init__", 70, "self.gate_up_proj = MergedColumnParallelLinear(\n    input_size=hidden_size)", env=(("MergedColumnParallelLinear", "NEXT"), ("hidden_size", "8192"))),
    frame_at(LINEAR, "__init__", "super().__init__(input_size=input_size, output_size=sum(output_sizes), bias=bias, gather_output=gather_output, skip_bias_add=skip_bias_add, params_dtype=params_dtype, quant_config=quant_config, prefix=prefix)", 442),
    mirror.placed(LINEAR, "__init__", 314, "self.quant_method.create_weights(\n    layer=self,\n    input_size_per_partition=self.input_size_per_partition)",
                  env=(("self", "HOP:create_weights"),)),
    frame_at(LINEAR, "create_weights", "weight = Parameter(torch.empty(sum(output_partition_sizes), input_size_per_partition, dtype=params_dtype), requires_grad=False)", 129,
             env=(("Parameter", "lambda *a, **k: None"), ("torch", "__import__('torch')"), ("output_partition_sizes", "[7168]"),
                  ("input_size_per_partition", "8192"), ("params_dtype", "None"))),
)
LOAD_OOM = Case("", "", LOAD_OOM_FRAMES, mode="plain", ranks="", extra_modules=(mirror._HELPER,), torch_error=LOAD_OOM_MESSAGE)

# -- argparse ----------------------------------------------------------------------------------------------------------------

VLLM_0_6_0_PARSER = """
parser.prog = "vllm"
parser.add_argument("-v", "--version", action="version", version="0.6.0")
commands = parser.add_subparsers(required=True, dest="subparser")
serve = commands.add_parser("serve", usage="vllm serve <model_tag> [options]")
serve.add_argument("model_tag")
serve.add_argument("--host", type=str, default=None)
serve.add_argument("--port", type=int, default=8000)
serve.add_argument("--uvicorn-log-level", type=str, default="info", choices=["debug", "info", "warning", "error", "critical", "trace"])
serve.add_argument("--api-key", type=str, default=None)
serve.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
serve.add_argument("--max-model-len", type=int, default=None)
commands.add_parser("complete")
commands.add_parser("chat")
"""
API_SERVER_0_11_PARSER = """
parser.prog = "api_server.py"
parser.add_argument("model_tag", nargs="?", default=None)
parser.add_argument("--host", type=str, default=None)
parser.add_argument("--port", type=int, default=8000)
parser.add_argument("--api-key", type=str, nargs="*", default=None)
parser.add_argument("--served-model-name", type=str, nargs="+", default=None)
parser.add_argument("--tensor-parallel-size", "-tp", type=int, default=1)
parser.add_argument("--max-model-len", type=str, default=None)
parser.add_argument("--gpu-memory-utilization", type=float, default=0.9)
"""

# ------------------------------------------------------------------------------------------------------------------------------

CASES = (
    # kv-cache-memory ------------------------------------------------------------------------------------------------------------
    WildCase(**KV_10517_THREAD, style="records-without-type", parts=(Run(KV_10517, primary=True),),
             expect=Expect("kv-cache-memory", fix=KV_FIX),
             facts="the engine's records after profiling (weights 14.9888 GB, the memory profile with kv_cache_size=2.89GiB, 1478 GPU blocks, "
                   "concurrency 0.82x for 29000 tokens) and the engine's one-line error record, its message without the exception type, "
                   "headers left out; vLLM 0.6.4-era wording, frames of 0.6.6.post1's MQ engine",
             paste=(until_traceback, v0_headers_dropped, paste.fenced)),
    WildCase(**KV_10517_THREAD, style="full-log", parts=(Run(KV_10517, primary=True), Run(v0_api_server_failed("2024-11-22 10:31:02"))),
             expect=Expect("kv-cache-memory", "ValueError", KV_10517_MESSAGE, frame="raise_if_cache_size_invalid", fix=KV_FIX),
             facts="the same numbers; the whole engine log with the MQ engine's traceback and the API server's 'Engine process failed to start' "
                   "after it: paste style ours", paste=(paste.fenced,)),
    WildCase(thread="https://github.com/deepseek-ai/DeepSeek-V2/issues/83", kind="vllm-max-model-len-exceeds-kv-cache-v0", style="torchrun-prefix",
             parts=(Run(SWIFT_KV, primary=True),), install=Install("/home/apus/mambaforge/envs/vllm_deepseekv2/lib/python3.11/site-packages"),
             engine_version="0.5.3.post1", engine=VLLM,
             expect=Expect("kv-cache-memory", "ValueError", v0_kv_message(163840, 835 * 16), frame="raise_if_cache_size_invalid", fix=KV_FIX),
             facts="ms-swift's deploy frames (run_utils.x_main, deploy.llm_deploy, vllm_utils.prepare_vllm_engine_template and get_vllm_engine) "
                   "into AsyncLLMEngine.from_engine_args, DeepSeek-V2's 163840-token max seq len against 13360 KV tokens, every line "
                   "prefixed `[rank0]: ` with its indentation gone; executor frames ours",
             resolution="Not visible (open). The model's 160k context does not fit; a smaller --max-model-len (max_model_len in swift) starts it.",
             paste=(partial(paste.torchrun, rank=0), paste.fenced)),
    # weight-loading ---------------------------------------------------------------------------------------------------------------
    WildCase(**SCALE_959_THREAD, style="cut-at-start", parts=(Run(SCALE_959, primary=True),), expect=SCALE_EXPECT,
             facts="the V0 engine's ERROR records (engine.py:366) from models/utils.py load_weights down to qwen2.py's params_dict lookup, "
                   "then 'Process SpawnProcess-1:' and its traceback; the paste begins inside the logged traceback",
             paste=(partial(paste.cut_at_start, marker="model_executor/models/utils.py", occurrence=1), paste.fenced)),
    WildCase(**SCALE_959_THREAD, style="full-log", parts=(Run(SCALE_959, primary=True), Run(v0_api_server_failed("2024-12-05 20:24:47"))),
             expect=SCALE_EXPECT, facts="the same failure with the loader's record above it and the API server's cascade: paste style ours",
             paste=(paste.fenced,)),
    # gpu-arch-unsupported: bf16 ---------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/transformerlab/transformerlab-app/issues/370", kind="vllm-bf16-unsupported-gpu", style="wrapper-log",
             parts=(Text("Starting VLLM Server\n"), Run(bf16_engine("Tesla V100-SXM2-32GB", "7.0", TRANSFORMERLAB_RECORDS), primary=True)),
             engine_version="0.5.4", engine=VLLM,
             expect=Expect("gpu-arch-unsupported", "ValueError", bf16_message("Tesla V100-SXM2-32GB", "7.0"), frame="_check_if_gpu_supports_dtype", fix=BF16_FIX),
             facts="Transformer Lab's 'Starting VLLM Server' line, vLLM 0.5.4's chunked-prefill warning and engine config record "
                   "(DeepSeek-R1-Distill-Qwen-1.5B, dtype=torch.bfloat16, max_seq_len=131072) before the V100 failure; frames of 0.6.6.post1",
             resolution="Run with float16 (--dtype half); the plugin later passed a dtype for pre-Ampere GPUs.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/hiyouga/LlamaFactory/issues/4960", kind="vllm-bf16-unsupported-gpu", style="quote",
             parts=(Run(bf16_engine("Tesla V100-SXM2-32GB", "7.0"), primary=True),), engine_version="0.4.3", engine=VLLM,
             expect=Expect("gpu-arch-unsupported", "ValueError", bf16_message("Tesla V100-SXM2-32GB", "7.0"), fix=BF16_FIX),
             facts="LlamaFactory's vLLM backend on a V100 (vLLM 0.4.3), only the exception line, as a Markdown quote",
             resolution="Maintainer: pass vllm_dtype: float16 (LlamaFactory's name for vLLM's --dtype).",
             paste=(partial(paste.exception_only, marker="ValueError: Bfloat16"), paste.quote)),
    WildCase(thread="https://github.com/substratusai/vllm-docker/issues/37", kind="vllm-bf16-unsupported-gpu", style="prose",
             parts=(Run(bf16_engine("Tesla T4", "7.5"), primary=True),), engine_version="0.6.3", engine=VLLM,
             expect=Expect("gpu-arch-unsupported", "ValueError", bf16_message("Tesla T4", "7.5"), fix=BF16_FIX),
             facts="a T4 (7.5) under the vllm-docker image, the exception line alone between two sentences of prose",
             resolution="Not visible (open); the image passes extra arguments through, so --dtype half is the way.",
             paste=(partial(paste.exception_only, marker="ValueError: Bfloat16"),
                    partial(paste.prose, before="The container exits right after loading with:", after="How do I set the dtype with this image?"))),
    # gpu-arch-unsupported: no kernel image, quantization --------------------------------------------------------------------------
    WildCase(**NO_KERNEL_THREAD, style="engine-records", parts=(Run(NO_KERNEL, primary=True, reformat=before_prefixes),), expect=NO_KERNEL_EXPECT,
             facts="vLLM 0.10.0's engine records without a process prefix (`ERROR 07-28 ... [core.py:632]`), torch.zeros in "
                   "CudaPlatform.set_device failing, 'Process EngineCore_0:' and its traceback; the paste begins at the failing statement",
             paste=(partial(paste.cut_at_start, marker="_ = torch.zeros(1, device=device)", occurrence=1), paste.fenced)),
    WildCase(**NO_KERNEL_THREAD, style="full-log", install=DOCKER,
             parts=(Run(NO_KERNEL, primary=True, reformat=before_prefixes), Run(engine_startup_failed("{'EngineCore_DP0': 1}"), reformat=before_prefixes)),
             expect=NO_KERNEL_EXPECT, facts="the same failure with the API server's cascade below it: paste style ours",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/4202", kind="vllm-quantization-capability", style="records-then-traceback",
             parts=(Run(AWQ_V100, primary=True),), engine_version="0.4.0.post1", engine=VLLM,
             expect=Expect("gpu-arch-unsupported", "ValueError", AWQ_MESSAGE, frame="get_model", fix=((),)),
             facts="vLLM 0.4.0.post1 on a V100: the API server's version and engine-config records (Qwen1.5-32B-Chat-AWQ, quantization=awq, "
                   "max_seq_len=512), then model_loader.get_model's capability check (awq needs 75, the GPU has 70); api_server module "
                   "frame left out",
             resolution="AWQ kernels need compute capability 7.5 (Turing); on a V100 use a GPTQ or unquantized model.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/14040", kind="vllm-quantization-capability", style="prefixed-cascade",
             parts=(Run(Case("", "", mirror.engine_process("0.11.0", SCHEME_FRAMES), mode="plain", ranks="", extra_modules=(mirror._HELPER,)), primary=True),
                    Run(engine_startup_failed("{'EngineCore_DP0': 1}"))),
             engine_version="0.10.2", engine=VLLM, install=Install("/root/miniconda3/lib/python3.11/site-packages"),
             expect=Expect("gpu-arch-unsupported", "RuntimeError", SCHEME_MESSAGE, frame="_check_scheme_supported", fix=((),)),
             facts="the (EngineCore_DP0 pid=N) prefix of 0.10.2, the model's constructor (llama.py LlamaAttention, QKVParallelLinear) asking "
                   "compressed-tensors for a quant method, _check_scheme_supported raising RuntimeError with three arguments (a tuple "
                   "printed), min capability 80 on a 75 GPU, the API server's cascade",
             resolution="The scheme's kernel needs Ampere; later releases fall back to a kernel for 7.5 for some AWQ schemes. Open.",
             paste=(colour_dropped, paste.fenced)),
    # process-killed: the cascade alone ------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/31940", kind="vllm-engine-core-init-failed", style="cut-at-start",
             parts=(Run(engine_startup_failed("{}"), primary=True),), engine_version="0.13.0", engine=VLLM,
             install=Install("/root/autodl-tmp/miniconda3/envs/vllm_serve/lib/python3.11/site-packages"),
             expect=CASCADE_EXPECT,
             facts="only the end of the API server's traceback with its (APIServer pid=N) prefix, from core_client's __init__ down to "
                   "wait_for_engine_startup, 'Failed core proc(s): {}'; nothing of the engine core in the paste",
             resolution="Not visible (open, stale); the engine's own error was not in the report.",
             paste=(colour_dropped, partial(paste.cut_at_start, marker="core_client.py", occurrence=2), paste.fenced)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/23176", kind="vllm-engine-core-init-failed", style="inline-span-prompt",
             parts=(Run(engine_startup_failed("{}"), primary=True),), engine_version="0.10.1", engine=VLLM,
             install=Install("/home/user/vllm-local-build/vllm"),
             expect=CASCADE_EXPECT,
             facts="a source build (frames under the checkout), the API server's traceback with its prefix, the shell prompt that came back, "
                   "all inside one inline-code span; no engine output",
             resolution="Closed as an installation problem of the local build; the engine process's own error never reached the log.",
             paste=(colour_dropped, partial(trailing_prompt, prompt="(vllm-dev) user@workstation:~/vllm-local-build/vllm$ "), paste.inline_span)),
    # parallel-config -------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/gpustack/gpustack/issues/2259", kind="vllm-tp-heads-divisible", style="gpustack-then-vllm",
             parts=(Text(GPUSTACK_LINES), Run(uncaught(heads_not_divisible(32, 3), "v1", None, 1183, "2025-06-19 03:30:18", HEADS_RECORDS), primary=True)),
             engine_version="0.8.5.post1", engine=VLLM,
             expect=Expect("parallel-config", "ValueError", "Total number of attention heads (32) must be divisible by tensor parallel size (3).",
                           frame="verify_with_parallel_config", fix=HEADS_FIX),
             facts="GPUStack's own lines (the vllm serve command it ran: gemma-3-27b-it, --tensor-parallel-size 3) then vLLM 0.8.5.post1's "
                   "records and the config validation in the API server (VllmConfig's generated __init__ running __post_init__)",
             resolution="GPUStack's scheduler picked 3 GPUs; it now only proposes TP sizes that divide the model's attention heads.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/4232", kind="vllm-tp-heads-divisible", style="inline-in-sentence",
             parts=(Run(uncaught(heads_not_divisible(40, 6), "v1", None, 1183, "2024-04-21 08:00:00"), primary=True),),
             engine_version="0.4.1", engine=VLLM,
             expect=Expect("parallel-config", "ValueError", "Total number of attention heads (40) must be divisible by tensor parallel size (6).",
                           fix=HEADS_FIX),
             facts="Qwen1.5-32B (40 heads) on six T4s, the message quoted inline in a question; frames not in the paste",
             resolution="Maintainer: use a tensor-parallel size that divides 40 (2, 4, 8); with six GPUs run TP 2 three times behind a router.",
             paste=(partial(paste.exception_only, marker="ValueError: Total number"), partial(paste.last_lines, count=1),
                    partial(paste.inline_in_sentence, lead="Deploying on six GPUs stops with ", tail=" -- how can I use all six?"))),
    # context-length ------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/xorbitsai/inference/issues/1715", kind="vllm-max-model-len-exceeds-derived", style="xinference-log",
             parts=(Text(f"2024-06-25 16:32:00,563 xinference.api.restful_api 3118895 ERROR    {XOSCAR}{XINFERENCE_MESSAGE}\n"),
                    Run(uncaught(XINFERENCE_FRAMES, "v0", None, 29417, "2024-06-25 08:31:58"), primary=True)),
             engine_version="0.4.3", engine=VLLM,
             expect=Expect("context-length", "ValueError", XINFERENCE_MESSAGE, frame="_get_and_verify_max_len", fix=(("set --max-model-len",),),
                           shown_prefix=XOSCAR),
             facts="Xinference's ERROR line with xoscar's [address=..., pid=...] prefix, then the traceback from its vLLM model's load into "
                   "ModelConfig's _get_and_verify_max_len: 4096 asked, seq_length=2048 in Qwen-14B-Chat's config, model_max_length=None",
             resolution="Launch with a max_model_len of 2048 or less (Xinference passes it to vLLM), or set VLLM_ALLOW_LONG_MAX_MODEL_LEN on vLLM >= 0.5.4.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/3676", kind="vllm-max-model-len-exceeds-derived", style="title-cut",
             parts=(Run(uncaught(derived_len(COMMAND_R_MESSAGE), "v0", None, 5012, "2024-03-28 10:00:00"), primary=True),),
             engine_version="0.4.0", engine=VLLM,
             expect=Expect("context-length", "ValueError", COMMAND_R_TITLE_SHOWS, fix=(("set --max-model-len",), ())),
             facts="c4ai-command-r-v01 with max_model_len 131072, the derived 8192 under a key vLLM 0.4.0 printed as None (model_max_length "
                   "not yet named); the exception line as an issue title, cut at GitHub's title length",
             resolution="Fixed in vLLM: the model_max_length in Command-R's config is now read (PR #3727), so 131072 is accepted.",
             fixed_in="https://github.com/vllm-project/vllm/pull/3727",
             paste=(partial(paste.exception_only, marker="ValueError: User-specified"),
                    partial(issue_title, lead=COMMAND_R_TITLE_LEAD))),
    # port-in-use --------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/7514", kind="vllm-port-in-use", style="uvicorn-line",
             parts=(Run(log_only("v0", None, 41205, "2025-02-27 19:31:23", (
                 ("INFO", API, 912, "vLLM API server version 0.7.3"),
                 ("INFO", API, 913, "args: Namespace(host='0.0.0.0', port=5001, uvicorn_log_level='info', model='mistralai/Pixtral-12B-2409', "
                  "tokenizer_mode='mistral', max_model_len=49152, tensor_parallel_size=2)"),
                 ("INFO", "vllm/entrypoints/launcher.py", 26, "Available routes are:"),
             ))), Text(UVICORN_LINES, primary=True)),
             engine_version="0.7.3", engine=VLLM,
             expect=Expect("port-in-use", fix=PORT_FIX),
             facts="vLLM 0.7.3's API server records (port 5001), uvicorn's own lines with its '[Errno 98] error while attempting to bind on "
                   "address ('0.0.0.0', 5001): address already in use' ERROR: a message without an exception type, not from Python's "
                   "traceback printer",
             resolution="Not confirmed (closed as stale); the reporter found nothing listening on the port afterwards, so the holder was gone by then.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/9763", kind="vllm-port-in-use", style="records-then-traceback",
             parts=(Run(BIND, primary=True),), engine_version="0.6.3.post2.dev171", engine=VLLM,
             expect=Expect("port-in-use", "OSError", "[Errno 98] Address already in use", frame="create_server_socket", fix=PORT_FIX),
             facts="a dev build of 0.6.3 binding its API socket before starting the engine (run_server -> create_server_socket), the real "
                   "EADDRINUSE of a bind on a port another socket listens on; the args record shortened",
             resolution="Another process listened on the port; choosing a free --port fixed it.",
             paste=(paste.fenced,)),
    # gpu-oom ---------------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/10569", kind="vllm-oom-profiling", style="torchrun-prefix",
             parts=(Run(OOM_10569, primary=True),), engine_version="0.6.3", engine=VLLM, install=DOCKER,
             expect=Expect("gpu-oom", OOM_10569_MESSAGE[0], OOM_10569_MESSAGE[1], frame="forward", fix=(("set --max-num-seqs",), ("set --max-model-len",))),
             facts="Llama-3.2-11B-Vision with the LLM class on an L20: weights 19.9073 GB, 'Starting profile run for multi-modal models.', "
                   "the profile run through enc_dec_model_runner into mllama's vision tower, lines prefixed `[rank0]: `; the OOM numbers ours",
             resolution="Maintainers: the multimodal profile run uses max_num_seqs images at full size; lower max_num_seqs (and max_model_len).",
             paste=(partial(paste.torchrun, rank=0), paste.fenced)),
    # nccl ------------------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/39774", kind="vllm-nccl-error", style="workers-interleaved",
             parts=(Weave((Run(nccl_worker(0, 1541060), primary=True), Run(nccl_worker(1, 1541061)))),
                    Run(engine_core("0.11.0", engine_waits_for_workers("2026-04-14 13:46:59"))),
                    Run(engine_startup_failed("{'EngineCore_DP0': 1}"))),
             engine_version="0.19.0", engine=VLLM, install=Install("/home/ubuntu/miniconda3/envs/vllm-0.19/lib/python3.11/site-packages"),
             expect=Expect("nccl", "RuntimeError", NCCL_MESSAGE, frame="NCCL_CHECK"),
             facts="both workers' (Worker pid=N) records interleaved: WorkerProc failed to start, init_device -> ensure_model_parallel_initialized "
                   "-> GroupCoordinator -> CudaCommunicator -> PyNcclCommunicator -> ncclCommInitRank 'unhandled system error'; then the "
                   "engine core's 'WorkerProc initialization failed' and the API server's cascade; frames laid out as in 0.11.0",
             resolution="Not resolved in the thread (open); TP 1 works. Typical causes: peer-to-peer or shared-memory limits in the container, NCCL_P2P_DISABLE=1 as a test.",
             paste=(colour_dropped, paste.fenced)),
    # orchestration: the Ray cluster cannot place the workers -------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/aibrix/issues/927", kind="vllm-ray-placement-group", style="records-only",
             parts=(Run(PLACEMENT, primary=True),), engine_version="0.8.2", engine=VLLM,
             expect=Expect("orchestration"),
             facts="no exception: the warning that the required GPUs exceed the placement group's, then 'Waiting for creating a placement "
                   "group of specs for N seconds' at 10, 30, 70, 150 and 310 s with the specs (two GPU bundles, one pinned to the head "
                   "node); the copy lost the first characters",
             resolution="Open. The Ray cluster had fewer GPUs than TP x PP asks for (the worker pod had not joined); vLLM waits for the placement group until it times out.",
             paste=(lost_first_chars, paste.fenced)),
    # kv-cache-memory, V1 wordings ---------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/tpu-inference/pull/223", kind="vllm-max-model-len-exceeds-kv-cache", style="last-lines",
             parts=(Run(KV_TPU, primary=True, reformat=before_prefixes),), engine_version="0.9.2", engine=VLLM, install=Install("/workspace/vllm"),
             expect=Expect("kv-cache-memory", "ValueError", KV_TPU_MESSAGE, frame="check_enough_kv_cache_memory", fix=KV_FIX),
             facts="the last frames of the check (kv_cache_utils get_kv_cache_config -> check_enough_kv_cache_memory) and the V1 message with "
                   "'models's', 131072 tokens needing 16.00 GiB against 0.71 GiB available, from a source checkout; the estimate is our mirror's",
             resolution="The PR adds a max-model-len option to the TPU example and defaults it to 1024.",
             fixed_in="https://github.com/vllm-project/tpu-inference/pull/223",
             paste=(partial(paste.last_lines, count=6), paste.fenced)),
    WildCase(thread="https://github.com/SergiioB/intel-arc-pro-b70-inference-cookbook/issues/4", kind="vllm-max-model-len-exceeds-kv-cache", style="hard-wrap-100",
             parts=(Run(KV_ARC, primary=True),), engine_version="0.33.0", engine=VLLM,
             expect=Expect("kv-cache-memory", "ValueError", KV_ARC_MESSAGE, frame="_check_enough_kv_cache_memory", fix=KV_FIX),
             facts="the (EngineCore pid=N) prefix, the 0.33 wording ('model's', the docs link), 100000 tokens needing 4.26 GiB against 4.25 "
                   "available, the terminal's hard wrap at 100 columns cutting paths and the message",
             resolution="Closed: the KV cache fell 10 MiB short; a slightly higher --gpu-memory-utilization or --max-model-len below the estimate starts it.",
             paste=(colour_dropped, partial(paste.hard_wrap, width=100), paste.fenced)),
    # gpu-oom: free memory below the asked share -----------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/pytorch/pytorch/issues/175666", kind="vllm-free-memory-below-utilization", style="ci-timestamps",
             parts=(Run(FREE_CI, primary=True),), engine_version="0.16.0", engine=VLLM,
             expect=Expect("gpu-oom", "ValueError", FREE_CI_MESSAGE, frame="request_memory", fix=(("set --gpu-memory-utilization",),)),
             facts="vLLM's distributed tests in PyTorch's CI: a timestamp on every line, the engine core's prefix, 'Free memory on device cuda:1 "
                   "(19.77/22.05 GiB) on startup is less than desired GPU memory utilization (0.9, ...)'; frames of 0.33's request_memory",
             resolution="A torch 2.11 release-candidate regression (more memory held at start-up by the CUDA context in the test's other process); fixed in torch.",
             paste=(colour_dropped, partial(paste.ci_timestamps, start="2026-02-24 20:21:58.000"))),
    # model-path ---------------------------------------------------------------------------------------------------------------------------------
    WildCase(**HF_THREAD, style="inline-in-sentence", parts=(Run(HF_VALIDATION, primary=True),), expect=HF_EXPECT,
             facts="the exception line in one inline span, a path with two or more slashes under /models that the node did not have; frames not in the paste",
             paste=(partial(paste.exception_only, marker="huggingface_hub.errors.HFValidationError"),
                    partial(paste.inline_in_sentence, lead="Serving Llama 3.1 405B from a local copy fails with: ", tail=""))),
    WildCase(**HF_THREAD, style="full-log", parts=(Run(HF_VALIDATION, primary=True),), expect=replace(HF_EXPECT, frame="validate_repo_id"),
             facts="the same failure with the API server's traceback (ModelConfig -> get_config -> file_or_path_exists -> huggingface_hub's "
                   "validators): paste style ours", paste=(paste.fenced,)),
    # orchestration: no GPU in the container ----------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/12847", kind="vllm-cuda-not-available", style="docker-run",
             parts=(Run(NO_DEVICE, primary=True),), engine_version="0.8.4", engine=VLLM, install=DOCKER,
             expect=Expect("orchestration", "RuntimeError", NO_DEVICE_MESSAGE, frame="__init__", fix=((),)),
             facts="the vllm/vllm-openai image run with --gpus all but without the GPU reaching the container: 'No platform detected, vLLM is "
                   "running on UnspecifiedPlatform', the 0.8.4 API server records, DeviceConfig failing to infer the device; the frames above build_async_engine_client_from_engine_args left out",
             resolution="The container did not see the GPUs (NVIDIA container toolkit / runtime missing); with the runtime configured it starts.",
             paste=(partial(paste.shell_prompt, prompt="$ ", command="docker run --rm --runtime=nvidia --gpus all -p 8000:8000 --ipc=host "
                            "-v /srv/models/command-r7b:/mnt/model/ vllm/vllm-openai:latest --model /mnt/model/ --tensor-parallel-size 2"),
                    paste.fenced)),
    # gpu-oom: loading the weights ------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/15182", kind="vllm-oom-weight-load", style="worker-bootstrap",
             parts=(Run(LOAD_OOM, primary=True),), engine_version="0.8.1", engine=VLLM, install=Install("/opt/venv/lib/python3.11/site-packages"),
             expect=Expect("gpu-oom", LOAD_OOM_MESSAGE[0], LOAD_OOM_MESSAGE[1], frame="__torch_function__", fix=(("set --tensor-parallel-size",),)),
             facts="a V1 multiproc worker's own traceback after multiprocessing's header, every line prefixed `(VllmWorker rank=5 pid=N)`: "
                   "worker_main -> WorkerProc.__init__ -> load_model -> get_model, the model's layers allocating their weights under "
                   "torch's device context; the OOM numbers and the model's layer path ours",
             resolution="Not resolved in the thread (stale); the weights alone did not fit the GPUs at this TP size.",
             paste=(colour_dropped, paste.fenced)),
    # argparse -------------------------------------------------------------------------------------------------------------------------------
    WildCase(thread="https://github.com/vllm-project/vllm/issues/8273", kind="vllm-argparse-unrecognized-argument", style="usage-fenced",
             parts=(Run(argparse_case(VLLM_0_6_0_PARSER, ("serve", "/hpcwork/llm/Meta-Llama-3.1-8B-Instruct", "--config", "config.yaml")), primary=True),),
             engine_version="0.6.0", engine=VLLM,
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: --config config.yaml", fix=(("remove --config",), ())),
             facts="`vllm serve <model> --config config.yaml` on a release whose serve had no --config yet; the top-level usage line and "
                   "'vllm: error: unrecognized arguments'",
             resolution="--config (a YAML file of flags) arrived in a later release; upgrading, or passing the flags on the command line.",
             paste=(paste.fenced,)),
    WildCase(thread="https://github.com/vllm-project/vllm/issues/27389", kind="vllm-argparse-unrecognized-argument", style="last-lines",
             parts=(Run(argparse_case(API_SERVER_0_11_PARSER, ("serve", "/root/models/Qwen3-8B", "--tensor-parallel-size", "2", "--max-model-len",
                                                                "16000", "--gpu-memory-utilization", "0.9", "--served-model-name", "Qwen3-8B")), primary=True),),
             engine_version="0.11.0", engine=VLLM,
             expect=Expect("unknown-flag", "UsageError", "unrecognized arguments: /root/models/Qwen3-8B"),
             facts="`docker run <image> serve /root/models/Qwen3-8B ...` on an image whose entrypoint already runs the API server: 'serve' "
                   "taken as the model, the path left over, 'api_server.py: error: unrecognized arguments'; the usage block ours",
             resolution="Drop 'serve' (the image's entrypoint is the server) or pass the model with --model.",
             paste=(partial(paste.last_lines, count=2), paste.fenced)),
)
