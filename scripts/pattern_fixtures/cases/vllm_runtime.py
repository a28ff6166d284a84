"""vLLM runtime failures: CUDA out of memory while profiling, loading the weights or capturing CUDA graphs, NCCL
errors, the engine process dying under a running client, Ray placement groups, attention heads that the
tensor-parallel size does not divide, the API server's port in use, and no usable GPU.

Patterns: vllm-oom-profiling, vllm-oom-sampler-warmup, vllm-oom-weight-load, vllm-oom-cuda-graph, vllm-nccl-error,
common-nccl-duplicate-gpu, vllm-engine-core-died,
vllm-ray-placement-group, vllm-tp-heads-divisible, vllm-port-in-use, vllm-cuda-not-available.

The wiring (vLLM's log records and process prefixes, the engine core process, the API server) is cases/vllm.py's;
its docstring says how it is mirrored.  Files, functions, source lines and line numbers here follow the vLLM
wheels 0.11.0 and 0.33.0 from PyPI.  Left out, as cases/vllm.py leaves out the asyncio frames: the
`torch.utils._contextlib.decorate_context` frames of functions vLLM wraps in `torch.inference_mode()`, the
model's own layers between its forward and the kernel that allocates (each is a torch.nn.Module call), vLLM's
torch.compile and CUDA-graph wrappers around the model (vllm/compilation), CustomOp's dispatch to forward_cuda
or forward_native, torch.nn.Module's frames under 0.33.0 (see _module_call), and the user's script above
`LLM.generate`.  Where the worker processes of 0.11.0 fail before they name themselves (init_device), their
records carry the engine core's prefix, which a forked worker inherits; that they print at all under the
engine's prefix is vLLM's `_add_prefix` on the inherited stdout.
"""

from __future__ import annotations

from ..engine import Case, Frame
from ..mirror import NCCL_ERROR_STRINGS, cuda_error, frame_at, oom
from .vllm import (
    _HELPER,
    _KV_INIT_CALL,
    API_PID,
    API_SERVER,
    CORE,
    ENGINE_PID,
    GPU_WORKER,
    NO_KERNEL_0110,
    _logger,
    _logging,
    api_server,
    engine_crash,
    engine_process,
    engine_startup_failed,
    init_device_0110,
    lines_at,
    placed,
    to_engine_core,
    to_worker,
)

GPU_RUNNER = "vllm/v1/worker/gpu_model_runner.py"
MODULE = "torch/nn/modules/module.py"
UNIPROC = "vllm/executor/uniproc_executor.py"
ABSTRACT = "vllm/v1/executor/abstract.py"
MULTIPROC = "vllm/v1/executor/multiproc_executor.py"

OOM_PROFILING = "vllm-oom-profiling"
OOM_WARMUP = "vllm-oom-sampler-warmup"
NCCL_DUPLICATE_GPU = "common-nccl-duplicate-gpu"
OOM_LOAD = "vllm-oom-weight-load"
OOM_GRAPH = "vllm-oom-cuda-graph"
NCCL = "vllm-nccl-error"
DIED = "vllm-engine-core-died"
RAY = "vllm-ray-placement-group"
HEADS = "vllm-tp-heads-divisible"
PORT = "vllm-port-in-use"
NO_GPU = "vllm-cuda-not-available"


def _module_call(version: str = "0.11.0") -> tuple[Frame, ...]:
    """torch.nn.Module.__call__ (torch 2.8, the torch of vLLM 0.11.0): the two frames every module call adds.  A
    traceback shows them once per module; the generated tree can place them once per log, so the modules
    below the first (the model's layers) are left out.  vLLM 0.33.0 pins torch 2.14, whose line numbers we
    could not check: its cases leave the two frames out."""
    if version != "0.11.0":
        return ()
    return (
        frame_at(MODULE, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)", 1773,
                 env=(("self", "HOP:_call_impl"), ("args", "()"), ("kwargs", "{}"))),
        frame_at(MODULE, "_call_impl", "return forward_call(*args, **kwargs)", 1784,
                 env=(("forward_call", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    )


# -- OOM: the memory profiling run (0.11.0: profile_run's dummy forward pass) -------------------------------


def _to_kv_init_0110() -> tuple[Frame, ...]:
    """EngineCore.__init__ -> _initialize_kv_caches asking the executor for the memory left after profiling."""
    return (
        *to_engine_core("0.11.0", _KV_INIT_CALL["0.11.0"], 92),
        placed(CORE, "_initialize_kv_caches", 189, "available_gpu_memory = (\n    self.model_executor.determine_available_memory())",
               env=(("self", "HOP:determine_available_memory"),)),
        frame_at(ABSTRACT, "determine_available_memory", 'return self.collective_rpc("determine_available_memory")', 85,
                 env=(("self", "HOP:collective_rpc"),)),
        *_collective_rpc_0110(),
    )


def _collective_rpc_0110() -> tuple[Frame, ...]:
    return (
        frame_at(UNIPROC, "collective_rpc", "return [run_method(self.driver_worker, method, args, kwargs)]", 83,
                 env=(("run_method", "NEXT"),)),
        frame_at("vllm/utils/__init__.py", "run_method", "return func(*args, **kwargs)", 3122,
                 env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    )


# An allocation in a forward pass is a torch op called with keywords (dtype=..., device=...), raised in C by torch:
# `'{dtype}'.format(*args, **kwargs)` is a C callable that takes any arguments and formats its `dtype`, whose
# __format__ is the engine's C-level raiser, so no Python frame is added below the caller's.
_RAISING_DTYPE = "type('dtype', (), {'__format__': __import__('torch').C_RAISER})()"

# SiluAndMul.forward_cuda (vllm/model_executor/layers/activation.py, 0.11.0): the MLP's activation output, the
# largest tensor of a forward pass over max_num_batched_tokens tokens
_ACTIVATION = placed("vllm/model_executor/layers/activation.py", "forward_cuda", 85, """
d = x.shape[-1] // 2
output_shape = (x.shape[:-1] + (d, ))
out = torch.empty(output_shape, dtype=x.dtype, device=x.device)
""", env=(("x", f"NS(shape=(16384, 37888), dtype={_RAISING_DTYPE}, device=None)"), ("torch", "NS(empty='{dtype}'.format)")))


def _dummy_forward_0110(first_line: int, call: str) -> tuple[Frame, ...]:
    """GPUModelRunner._dummy_run running the model over dummy tokens, down to the activation that allocates."""
    return (
        placed(GPU_RUNNER, "_dummy_run", first_line, call, env=(("self", "HOP:model"), ("input_ids", "None"), ("positions", "None"),
                                                                ("intermediate_tensors", "None"), ("inputs_embeds", "None"),
                                                                ("model_kwargs", "{}"))),
        *_module_call(),
        placed("vllm/model_executor/models/qwen2.py", "forward", 505, "hidden_states = self.model(input_ids, positions, intermediate_tensors,\n"
               "                           inputs_embeds)", env=(("self", "HOP:model"), ("input_ids", "None"), ("positions", "None"),
                                                               ("intermediate_tensors", "None"), ("inputs_embeds", "None"))),
        _ACTIVATION,
    )


_DUMMY_MODEL_CALL = """
outputs = self.model(
    input_ids=input_ids,
    positions=positions,
    intermediate_tensors=intermediate_tensors,
    inputs_embeds=inputs_embeds,
    **model_kwargs,
)
"""


def profiling_oom_0110() -> tuple[Frame, ...]:
    return (
        *_to_kv_init_0110(),
        frame_at(GPU_WORKER, "determine_available_memory", "self.model_runner.profile_run()", 263, env=(("self", "HOP:profile_run"),)),
        placed(GPU_RUNNER, "profile_run", 3391, "hidden_states, last_hidden_states \\\n    = self._dummy_run(self.max_num_tokens, is_profile=True)",
               env=(("self", "HOP:_dummy_run"),)),
        *_dummy_forward_0110(3152, _DUMMY_MODEL_CALL),
    )


# the worker's report of the profiling run (vllm/v1/worker/gpu_worker.py load_model, 0.11.0)
_LOADED_RECORDS = (("INFO", "vllm/v1/worker/gpu_model_runner.py", 2653, "Model loading took 14.25 GiB and 6.418734 seconds"),)
OOM_0110 = oom("3.62 GiB", total="23.57 GiB", free="2.81 GiB", used="20.75 GiB")


# -- OOM: the sampler's warm-up in the profiling run (0.33.0 wording, the same since 0.8.5.post1) -----------------

# GPUModelRunner._dummy_sampler_run (0.33.0): the sampler over max_num_seqs dummy requests, an OOM re-raised
_DUMMY_SAMPLER_RUN = lines_at({
    5906: "try:", 5907: "    sampler_output = self.sampler(", 5908: "        logits=logits, sampling_metadata=dummy_metadata",
    5909: "    )", 5927: "except RuntimeError as e:", 5928: '    if "out of memory" in str(e):', 5929: "        raise RuntimeError(",
    5930: '            "CUDA out of memory occurred when warming up sampler with "',
    5931: '            f"{num_reqs} dummy requests. Please try lowering "',
    5932: '            "`max_num_seqs` or `gpu_memory_utilization` when "', 5933: '            "initializing the engine."',
    5934: "        ) from e", 5935: "    else:", 5936: "        raise e",
})


def sampler_oom_0330(num_reqs: int) -> tuple[Frame, ...]:
    """EngineCore._initialize_kv_caches -> Worker.determine_available_memory -> profile_run -> the sampler warm-up."""
    sampler = "vllm/v1/sample/ops/topk_topp_sampler.py"
    return (
        *to_engine_core("0.33.0", _KV_INIT_CALL["0.33.0"], 163),
        frame_at(CORE, "_initialize_kv_caches", "available_gpu_memory = self.model_executor.determine_available_memory()", 310,
                 env=(("self", "HOP:determine_available_memory"),)),
        frame_at("vllm/v1/executor/abstract.py", "determine_available_memory", 'return self.collective_rpc("determine_available_memory")', 157,
                 env=(("self", "HOP:collective_rpc"),)),
        frame_at("vllm/v1/executor/uniproc_executor.py", "collective_rpc", "result = run_method(self.driver_worker, method, args, kwargs)", 103,
                 env=(("run_method", "NEXT"),)),
        frame_at("vllm/v1/serial_utils.py", "run_method", "return func(*args, **kwargs)", 508, env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
        frame_at(GPU_WORKER, "determine_available_memory", "self.model_runner.profile_run(randomize_inputs=self.randomize_dummy_inputs)", 700,
                 env=(("self", "HOP:profile_run"),)),
        frame_at(GPU_RUNNER, "profile_run", "output = self._dummy_sampler_run(last_hidden_states)", 6139,
                 env=(("self", "HOP:_dummy_sampler_run"), ("last_hidden_states", "None"))),
        placed(GPU_RUNNER, "_dummy_sampler_run", 5906, _DUMMY_SAMPLER_RUN, env=(
            ("self", "HOP:sampler"), ("logits", "None"), ("dummy_metadata", "None"), ("num_reqs", str(num_reqs)))),
        *_module_call("0.33.0"),
        frame_at("vllm/v1/sample/sampler.py", "forward", "sampled, processed_logprobs = self.sample(logits, sampling_metadata)", 164,
                 env=(("self", "HOP:sample"), ("logits", "None"), ("sampling_metadata", "None"))),
        placed("vllm/v1/sample/sampler.py", "sample", 350, "random_sampled, processed_logprobs = self.topk_topp_sampler(\n    logits,\n"
               "    sampling_metadata.generators,\n    sampling_metadata.top_k,\n    sampling_metadata.top_p,\n)",
               env=(("self", "HOP:topk_topp_sampler"), ("logits", "None"), ("sampling_metadata", "_Any()"))),
        frame_at(sampler, "forward_native", "probs = logits.softmax(dim=-1, dtype=torch.float32)", 309,
                 env=(("logits", "NS(softmax='{dtype}'.format)"), ("torch", f"NS(float32={_RAISING_DTYPE})"))),
    )


def sampler_warmup_oom_0330(num_reqs: int) -> tuple[Frame, ...]:
    """EngineCore._initialize_kv_caches -> (the KV cache allocated) Worker.compile_or_warm_up_model -> the sampler
    warm-up after CUDA graph capture (vllm/v1/worker/gpu_worker.py:1090 in 0.33.0): the same message as the
    profiling run's, raised at the other call site (vllm-project/vllm#27508, split 18 D-01)."""
    return (
        *to_engine_core("0.33.0", _KV_INIT_CALL["0.33.0"], 163),
        frame_at(CORE, "_initialize_kv_caches", "self.model_executor.compile_or_warm_up_model()", 389,
                 env=(("self", "HOP:compile_or_warm_up_model"),)),
        placed("vllm/v1/executor/abstract.py", "compile_or_warm_up_model", 135,
               'compilation_times: list[CompilationTimes] = self.collective_rpc(\n    "compile_or_warm_up_model"\n)',
               env=(("self", "HOP:collective_rpc"),)),
        frame_at("vllm/v1/executor/uniproc_executor.py", "collective_rpc", "result = run_method(self.driver_worker, method, args, kwargs)", 103,
                 env=(("run_method", "NEXT"),)),
        frame_at("vllm/v1/serial_utils.py", "run_method", "return func(*args, **kwargs)", 508, env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
        frame_at(GPU_WORKER, "compile_or_warm_up_model", "self.model_runner._dummy_sampler_run(hidden_states=last_hidden_states)", 1090,
                 env=(("self", "HOP:_dummy_sampler_run"), ("last_hidden_states", "None"))),
        *sampler_oom_0330(num_reqs)[-7:],
    )


# -- OOM: loading the weights (0.11.0: the model's layers created on the GPU) -----------------------------------


# UnquantizedLinearMethod.create_weights (vllm/model_executor/layers/linear.py, 0.11.0): the weight allocated on the
# GPU, an OOM logged and re-raised with vLLM's own words (0.11.0 only: not in 0.8.5.post1, 0.11.2 or 0.33.0)
_CREATE_WEIGHTS_0110 = """
try:
    weight_loader = extra_weight_attrs.pop("weight_loader")
    weight = ModelWeightParameter(data=torch.empty(
        sum(output_partition_sizes),
        input_size_per_partition,
        dtype=params_dtype),
                                  input_dim=1,
                                  output_dim=0,
                                  weight_loader=weight_loader)
except torch.cuda.OutOfMemoryError as e:
    logger.error("Failed to create unquantized linear weights: %s", e)
    if torch.cuda.is_available():
        logger.debug("CUDA device: %s", torch.cuda.current_device())
        logger.debug("Allocated: %.2f GiB",
                     torch.cuda.memory_allocated() / GiB_bytes)
        logger.debug("Reserved: %.2f GiB",
                     torch.cuda.memory_reserved() / GiB_bytes)
    raise RuntimeError(
        "Failed to create unquantized linear weights. "
        "This may be caused by insufficient memory to allocate "
        "the weight.") from e
"""
# ... and in 0.33.0, where the OOM is not caught
_CREATE_WEIGHTS_0330 = """
weight = ModelWeightParameter(
    data=torch.empty(
        sum(output_partition_sizes),
        input_size_per_partition,
        dtype=params_dtype,
    ),
    input_dim=1,
    output_dim=0,
    weight_loader=weight_loader,
)
"""
_TORCH_IN_LOADER = ("NS(empty=__import__('torch').empty, cuda=NS(OutOfMemoryError=__import__('torch').OutOfMemoryError, "
                    "is_available=lambda: False))")
# (gpu_model_runner.load_model's call, base_loader.load_model's, initialize_model's, Qwen2MLP.__init__'s,
# MergedColumnParallelLinear.__init__'s, ColumnParallelLinear.__init__'s, create_weights' first line)
_LOAD_LINES = {"0.11.0": (2635, 45, 63, 73, 624, 476, 200), "0.33.0": (4996, 76, 101, 91, 732, 536, 193)}


def weight_load_oom(version: str) -> tuple[Frame, ...]:
    """Worker.load_model -> the loader building the model on the GPU -> Qwen2's MLP allocating its weight."""
    loader, models, linear = "vllm/model_executor/model_loader", "vllm/model_executor/models", "vllm/model_executor/layers/linear.py"
    runner, base, init, mlp, merged, column, create = _LOAD_LINES[version]
    if version == "0.11.0":
        top = (
            frame_at(GPU_WORKER, "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)", 213,
                   env=(("self", "HOP:load_model"), ("eep_scale_up", "False"))),
            placed(GPU_RUNNER, "load_model", runner, "self.model = model_loader.load_model(\n    vllm_config=self.vllm_config, model_config=self.model_config)",
                   env=(("self", "_Any()"), ("model_loader", "HOP:load_model"))),
            placed(f"{loader}/base_loader.py", "load_model", base, "model = initialize_model(vllm_config=vllm_config,\n                         model_config=model_config)",
                   env=(("initialize_model", "NEXT"), ("vllm_config", "None"), ("model_config", "None"))),
            frame_at(f"{loader}/utils.py", "initialize_model", "return model_class(vllm_config=vllm_config, prefix=prefix)", init,
                     env=(("model_class", "NEXT"), ("vllm_config", "None"), ("prefix", "''"))),
        )
    else:
        top = (
            frame_at(GPU_WORKER, "load_model", "self.model_runner.load_model(load_dummy_weights=load_dummy_weights)", 601,
                     env=(("self", "HOP:load_model"), ("load_dummy_weights", "False"))),
            placed(GPU_RUNNER, "load_model", runner, "self.model = model or model_loader.load_model(\n    vllm_config=self.vllm_config,\n"
                   "    model_config=self.model_config,\n)", env=(("self", "_Any()"), ("model", "None"), ("model_loader", "HOP:load_model"))),
            placed(f"{loader}/base_loader.py", "load_model", base, "model = self.create_model(\n    vllm_config=vllm_config,\n"
                   "    model_config=model_config,\n    prefix=prefix,\n)",
                   env=(("self", "HOP:create_model"), ("vllm_config", "None"), ("model_config", "None"), ("prefix", "''"))),
            placed(f"{loader}/base_loader.py", "create_model", 53, "model = initialize_model(\n    vllm_config=vllm_config,\n"
                   "    model_config=model_config,\n    prefix=prefix,\n)",
                   env=(("initialize_model", "NEXT"), ("vllm_config", "None"), ("model_config", "None"), ("prefix", "''"))),
            frame_at(f"{loader}/utils.py", "initialize_model", "model = model_class(vllm_config=vllm_config, prefix=prefix)", init,
                     env=(("model_class", "NEXT"), ("vllm_config", "None"), ("prefix", "''"))),
        )
    return (
        *to_worker(version, "load_model"),
        *top,
        placed(f"{models}/qwen2.py", "__init__", mlp, "self.gate_up_proj = MergedColumnParallelLinear(\n    hidden_size,\n"
               "    [intermediate_size] * 2,\n    bias=False,\n    quant_config=quant_config,\n    prefix=f\"{prefix}.gate_up_proj\",\n)",
               env=(("MergedColumnParallelLinear", "NEXT"), ("self", "NS()"), ("hidden_size", "8192"), ("intermediate_size", "29568"),
                    ("quant_config", "None"), ("prefix", "'model.layers.61.mlp'"))),
        placed(linear, "__init__", merged, "super().__init__(input_size=input_size,\n                 output_size=sum(output_sizes))",
               env=(("super", "NEXT"), ("input_size", "8192"), ("output_sizes", "[29568, 29568]"))),
        placed(linear, "__init__", column, "self.quant_method.create_weights(\n    layer=self,\n"
               "    input_size_per_partition=self.input_size_per_partition,\n    output_partition_sizes=self.output_partition_sizes)",
               env=(("self", "HOP:create_weights"),)),
        placed(linear, "create_weights", create, _CREATE_WEIGHTS_0110 if version == "0.11.0" else _CREATE_WEIGHTS_0330, env=(
            ("ModelWeightParameter", "lambda **kwargs: None"), ("torch", _TORCH_IN_LOADER), ("output_partition_sizes", "[29568, 29568]"),
            ("input_size_per_partition", "8192"), ("params_dtype", "None"), ("weight_loader", "None"), ("GiB_bytes", str(1 << 30)),
            ("extra_weight_attrs", "{'weight_loader': None}"), ("logger", _logger("vllm.model_executor.layers.linear")))),
    )


# -- OOM: capturing the CUDA graphs (0.11.0) -----------------------------------------------------------------

_CAPTURE_CUDAGRAPHS = lines_at({
    3518: "for num_tokens in compilation_cases:",
    3530: "    self._dummy_run(num_tokens,", 3531: "                    cudagraph_runtime_mode=cudagraph_runtime_mode,",
    3532: "                    uniform_decode=uniform_decode,", 3533: "                    allow_microbatching=allow_microbatching,",
    3534: "                    skip_eplb=True,", 3535: "                    remove_lora=False)",
})


def cuda_graph_oom_0110() -> tuple[Frame, ...]:
    """EngineCore._initialize_kv_caches -> compile_or_warm_up_model -> capture_model -> a graph's dummy run."""
    return (
        *to_engine_core("0.11.0", _KV_INIT_CALL["0.11.0"], 92),
        frame_at(CORE, "_initialize_kv_caches", "self.model_executor.initialize_from_config(kv_cache_configs)", 207,
                 env=(("self", "HOP:initialize_from_config"), ("kv_cache_configs", "None"))),
        frame_at(ABSTRACT, "initialize_from_config", 'self.collective_rpc("compile_or_warm_up_model")', 75,
                 env=(("self", "HOP:collective_rpc"),)),
        *_collective_rpc_0110(),
        frame_at(GPU_WORKER, "compile_or_warm_up_model", "cuda_graph_memory_bytes = self.model_runner.capture_model()", 344,
                 env=(("self", "HOP:capture_model"),)),
        placed(GPU_RUNNER, "capture_model", 3446, "self._capture_cudagraphs(\n    compilation_cases,\n"
               "    cudagraph_runtime_mode=cudagraph_runtime_mode,\n    uniform_decode=False)",
               env=(("self", "HOP:_capture_cudagraphs"), ("compilation_cases", "None"), ("cudagraph_runtime_mode", "None"))),
        placed(GPU_RUNNER, "_capture_cudagraphs", 3518, _CAPTURE_CUDAGRAPHS, env=(
            ("compilation_cases", "[512]"), ("self", "HOP:_dummy_run"), ("cudagraph_runtime_mode", "None"), ("uniform_decode", "False"),
            ("allow_microbatching", "False"))),
        *_dummy_forward_0110(3152, _DUMMY_MODEL_CALL),
    )


def cuda_graph_profiling_oom_0330() -> tuple[Frame, ...]:
    """0.33.0 captures graphs already while profiling, to estimate their memory: Worker.determine_available_memory
    -> GPUModelRunner.profile_cudagraph_memory -> _warmup_and_capture -> a warm-up's dummy run."""
    return (
        *to_engine_core("0.33.0", _KV_INIT_CALL["0.33.0"], 163),
        frame_at(CORE, "_initialize_kv_caches", "available_gpu_memory = self.model_executor.determine_available_memory()", 310,
                 env=(("self", "HOP:determine_available_memory"),)),
        frame_at(ABSTRACT, "determine_available_memory", 'return self.collective_rpc("determine_available_memory")', 157,
                 env=(("self", "HOP:collective_rpc"),)),
        frame_at("vllm/v1/executor/uniproc_executor.py", "collective_rpc", "result = run_method(self.driver_worker, method, args, kwargs)", 103,
                 env=(("run_method", "NEXT"),)),
        frame_at("vllm/v1/serial_utils.py", "run_method", "return func(*args, **kwargs)", 508, env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
        frame_at(GPU_WORKER, "determine_available_memory", "cudagraph_memory_estimate = self.model_runner.profile_cudagraph_memory()", 717,
                 env=(("self", "HOP:profile_cudagraph_memory"),)),
        placed(GPU_RUNNER, "profile_cudagraph_memory", 6335, "self._warmup_and_capture(\n    desc,\n    cudagraph_runtime_mode=mode,\n"
               "    profile_seq_lens=(\n        min(\n            self.max_model_len,\n            self.max_num_tokens // desc.num_tokens,\n"
               "        )\n        if mode == CUDAGraphMode.FULL and i == 0\n        else None\n    ),\n)",
               env=(("self", "HOP:_warmup_and_capture"), ("desc", "NS(num_tokens=512)"), ("mode", "'PIECEWISE'"), ("i", "0"),
                    ("CUDAGraphMode", "NS(FULL='FULL')"))),
        placed(GPU_RUNNER, "_warmup_and_capture", 6537, """
for _ in range(num_warmups):
    self._dummy_run(
        desc.num_tokens,
        cudagraph_runtime_mode=CUDAGraphMode.NONE,
        force_attention=force_attention,
        uniform_decode=desc.uniform,
        allow_microbatching=allow_microbatching,
        skip_eplb=True,
        remove_lora=False,
        num_active_loras=desc.num_active_loras,
        profile_seq_lens=profile_seq_lens,
    )
""", env=(("num_warmups", "1"), ("self", "HOP:_dummy_run"), ("desc", "NS(num_tokens=512, uniform=False, num_active_loras=0)"),
          ("CUDAGraphMode", "NS(NONE='NONE')"), ("force_attention", "False"), ("allow_microbatching", "False"), ("profile_seq_lens", "None"))),
        placed(GPU_RUNNER, "_dummy_run", 5782, _DUMMY_MODEL_CALL, env=(
            ("self", "HOP:model"), ("input_ids", "None"), ("positions", "None"), ("intermediate_tensors", "None"), ("inputs_embeds", "None"),
            ("model_kwargs", "{}"))),
        placed("vllm/model_executor/models/qwen2.py", "forward", 507, "hidden_states = self.model(\n"
               "    input_ids, positions, intermediate_tensors, inputs_embeds\n)", env=(
                   ("self", "HOP:model"), ("input_ids", "None"), ("positions", "None"), ("intermediate_tensors", "None"), ("inputs_embeds", "None"))),
        placed("vllm/model_executor/layers/activation.py", "forward_cuda", 147, """
d = x.shape[-1] // 2
output_shape = x.shape[:-1] + (d,)
out = torch.empty(output_shape, dtype=x.dtype, device=x.device)
""", env=(("x", f"NS(shape=(512, 37888), dtype={_RAISING_DTYPE}, device=None)"), ("torch", "NS(empty='{dtype}'.format)"))),
    )


# the records before a capture (vllm/v1/worker/gpu_worker.py, gpu_model_runner.py, 0.11.0)
_CAPTURE_RECORDS = (
    ("INFO", "vllm/v1/core/kv_cache_utils.py", 1087, "GPU KV cache size: 98,304 tokens"),
    ("INFO", "vllm/v1/core/kv_cache_utils.py", 1091, "Maximum concurrency for 32,768 tokens per request: 3.00x"),
)


# -- NCCL: pynccl's ncclCommInitRank in a worker process (V1 multiprocessing executor, TP=2) -----------------------

PYNCCL = "vllm/distributed/device_communicators/pynccl.py"
PYNCCL_WRAPPER = "vllm/distributed/device_communicators/pynccl_wrapper.py"
PARALLEL_STATE = "vllm/distributed/parallel_state.py"
# (WorkerProc.__init__'s init_device, worker_base's init_device, Worker.init_device's call, the rest of the chain):
# the lines of each frame in the two releases
_NCCL_LINES = {
    "0.11.0": dict(worker_main=571, proc_init=430, base=259, init_device=169, init_dist=705, ensure=1228, initialize=1152,
                   group=924, coordinator=255, cuda_comm=57, pynccl=133, init_rank=324, check=291),
    "0.33.0": dict(worker_main=1023, proc_init=780, base=365, init_device=504, init_dist=1723, ensure=2418, initialize=2175,
                   group=1529, coordinator=554, cuda_comm=108, pynccl=180, init_rank=498, check=464),
}


def _nccl_check(version: str, result: int, last_error: str) -> Frame:
    """NCCLLibrary.NCCL_CHECK: 0.33.0 adds NCCL's last error (ncclGetLastError) on lines of its own."""
    body = ("if result != 0:\n    error_str = self.ncclGetErrorString(result)\n    raise RuntimeError(f\"NCCL error: {error_str}\")"
            if version == "0.11.0" else
            "if result != 0:\n    error_str = self.ncclGetErrorString(result)\n    last_error = self.ncclGetLastError()\n"
            "    if last_error:\n        error_str += f\"\\nLast error:\\n{last_error}\"\n    raise RuntimeError(f\"NCCL error: {error_str}\")")
    raise_line = _NCCL_LINES[version]["check"]
    first = raise_line - body.count("\n")
    return placed(PYNCCL_WRAPPER, "NCCL_CHECK", first, body, env=(
        ("result", str(result)),
        ("self", f"NS(ncclGetErrorString=lambda r: {NCCL_ERROR_STRINGS[result]!r}, ncclGetLastError=lambda: {last_error!r})")))


def worker_nccl_init(version: str, result: int, last_error: str = "") -> tuple[Frame, ...]:
    """A worker process's WorkerProc.__init__ -> init_device -> the tensor-parallel group's pynccl communicator."""
    lines = _NCCL_LINES[version]
    worker_main = lines_at({
        lines["worker_main"] - 1: "try:", lines["worker_main"]: "    worker = WorkerProc(*args, **kwargs)",
        lines["worker_main"] + 19: "except Exception:", lines["worker_main"] + 26: '    logger.exception("WorkerProc failed to start.")',
    })
    name = "EngineCore_DP0" if version == "0.11.0" else "Worker_TP1"
    return (
        placed(MULTIPROC, "worker_main", lines["worker_main"] - 1, worker_main, env=(
            ("_vllm_logging", _logging(version, name, ENGINE_PID if version == "0.11.0" else 2846)), ("WorkerProc", "NEXT"),
            ("args", "()"), ("kwargs", "{}"), ("logger", _logger("vllm.v1.executor.multiproc_executor")))),
        frame_at(MULTIPROC, "__init__", "self.worker.init_device()", lines["proc_init"], env=(("self", "HOP:init_device"),)),
        frame_at("vllm/worker/worker_base.py" if version == "0.11.0" else "vllm/v1/worker/worker_base.py", "init_device",
                 "self.worker.init_device()  # type: ignore", lines["base"], env=(("self", "HOP:init_device"),)),
        placed(GPU_WORKER, "init_device", lines["init_device"], "init_worker_distributed_environment(self.vllm_config, self.rank,\n"
               "                                    self.distributed_init_method,\n                                    self.local_rank,\n"
               "                                    current_platform.dist_backend)",
               env=(("init_worker_distributed_environment", "NEXT"), ("self", "_Any()"), ("current_platform", "_Any()"))),
        placed(GPU_WORKER, "init_worker_distributed_environment", lines["init_dist"], "ensure_model_parallel_initialized(\n"
               "    parallel_config.tensor_parallel_size,\n    parallel_config.pipeline_parallel_size,\n    parallel_config.decode_context_parallel_size)",
               env=(("ensure_model_parallel_initialized", "NEXT"), ("parallel_config", "_Any()"))),
        placed(PARALLEL_STATE, "ensure_model_parallel_initialized", lines["ensure"], "initialize_model_parallel(tensor_model_parallel_size,\n"
               "                          pipeline_model_parallel_size,\n                          decode_context_model_parallel_size, backend)",
               env=(("initialize_model_parallel", "NEXT"), ("tensor_model_parallel_size", "2"), ("pipeline_model_parallel_size", "1"),
                    ("decode_context_model_parallel_size", "1"), ("backend", "'nccl'"))),
        placed(PARALLEL_STATE, "initialize_model_parallel", lines["initialize"], "_TP = init_model_parallel_group(group_ranks,\n"
               "                                get_world_group().local_rank,\n                                backend,\n"
               "                                group_name=\"tp\")",
               env=(("init_model_parallel_group", "NEXT"), ("group_ranks", "[[0, 1]]"), ("get_world_group", "_Any()"), ("backend", "'nccl'"))),
        placed(PARALLEL_STATE, "init_model_parallel_group", lines["group"], "return GroupCoordinator(\n    group_ranks=group_ranks,\n"
               "    local_rank=local_rank,\n    torch_distributed_backend=backend,\n    use_device_communicator=use_device_communicator,\n"
               "    group_name=group_name,\n)",
               env=(("GroupCoordinator", "NEXT"), ("group_ranks", "None"), ("local_rank", "1"), ("backend", "'nccl'"),
                    ("use_device_communicator", "True"), ("group_name", "'tp'"))),
        placed(PARALLEL_STATE, "__init__", lines["coordinator"], "self.device_communicator = device_comm_cls(\n    cpu_group=self.cpu_group,\n"
               "    device=self.device,\n    device_group=self.device_group,\n    unique_name=self.unique_name,\n)",
               env=(("device_comm_cls", "NEXT"), ("self", "_Any()"))),
        placed("vllm/distributed/device_communicators/cuda_communicator.py", "__init__", lines["cuda_comm"],
               "self.pynccl_comm = PyNcclCommunicator(\n    group=self.cpu_group,\n    device=self.device,\n)",
               env=(("PyNcclCommunicator", "NEXT"), ("self", "_Any()"))),
        placed(PYNCCL, "__init__", lines["pynccl"], "self.comm: ncclComm_t = self.nccl.ncclCommInitRank(\n"
               "    self.world_size, self.unique_id, self.rank)",
               env=(("self", "HOP:ncclCommInitRank"), ("ncclComm_t", "None"))),
        placed(PYNCCL_WRAPPER, "ncclCommInitRank", lines["init_rank"], 'self.NCCL_CHECK(self._funcs["ncclCommInitRank"](ctypes.byref(comm),\n'
               "                                                world_size, unique_id,\n                                                rank))",
               env=(("self", "HOP:NCCL_CHECK"), ("ctypes", "NS(byref=lambda x: x)"),
                    ("comm", "None"), ("world_size", "2"), ("unique_id", "None"), ("rank", "1"))),
        _nccl_check(version, result, last_error),
    )


def _wait_for_workers(version: str) -> tuple[Frame, ...]:
    """EngineCore.__init__ -> MultiprocExecutor._init_executor waiting for its workers, one of which failed."""
    executor_line, wait_line, raise_line = (106, 478, 498) if version == "0.11.0" else (238, 887, 908)
    wait = lines_at({
        wait_line + 4: 'e = Exception("WorkerProc initialization failed due to "',
        wait_line + 5: '              "an exception in a background process. "',
        wait_line + 6: '              "See stack trace for root cause.")',
        raise_line - 1: 'if response["status"] != "READY":',
        raise_line: "    raise e",
    })
    return (
        *to_engine_core(version, "self.model_executor = executor_class(vllm_config)", 83 if version == "0.11.0" else 150),
        frame_at("vllm/executor/executor_base.py" if version == "0.11.0" else "vllm/v1/executor/abstract.py", "__init__",
                 "self._init_executor()", 54 if version == "0.11.0" else 120),
        frame_at(MULTIPROC, "_init_executor", "self.workers = WorkerProc.wait_for_ready(unready_workers)", executor_line,
                 env=(("WorkerProc", "HOP:wait_for_ready"), ("unready_workers", "None"))),
        placed(MULTIPROC, "wait_for_ready", wait_line + 4, wait, env=(("response", "{'status': 'FAILED'}"),)),
    )


def nccl_startup(version: str, result: int, last_error: str = "") -> Case:
    """A worker's NCCL error at start-up, then the engine core's report and (0.11.0) the API server's."""
    engine = Case("", "", engine_process(version, _wait_for_workers(version)), mode="plain", ranks="", extra_modules=(_HELPER,),
                  then=(engine_startup_failed(version),) if version == "0.11.0" else ())
    return Case("", "", worker_nccl_init(version, result, last_error), mode="plain", ranks="", extra_modules=(_HELPER,), then=(engine,))


# -- the engine process died under a running client (0.11.0, offline LLM.generate) --------------------------------

_EXCEPTIONS_0110 = ("vllm/v1/engine/exceptions.py", '''
class EngineGenerateError(Exception):
    """Raised when a AsyncLLM.generate() fails. Recoverable."""
    pass


class EngineDeadError(Exception):
    """Raised when the EngineCore dies. Unrecoverable."""

    def __init__(self, *args, suppress_context: bool = False, **kwargs):
        ENGINE_DEAD_MESSAGE = "EngineCore encountered an issue. See stack trace (above) for the root cause."  # noqa: E501

        super().__init__(ENGINE_DEAD_MESSAGE, *args, **kwargs)
        self.__suppress_context__ = suppress_context
''')
# vllm/v1/engine/core_client.py MPClient.monitor_engine_cores (0.11.0): the client's record when the engine exits
_DIED_RECORD = ("ERROR", "vllm/v1/engine/core_client.py", 564, "Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.")


def engine_dead_offline() -> Case:
    """`LLM.generate` (0.11.0) after the engine core process exited: the client's record, then EngineDeadError."""
    frames = (
        placed("vllm/entrypoints/llm.py", "generate", 401, "outputs = self._run_engine(use_tqdm=use_tqdm)", env=(
            ("_vllm_logging", _logging("0.11.0", None, API_PID, (_DIED_RECORD,), uncaught=True)), ("self", "HOP:_run_engine"),
            ("use_tqdm", "True"))),
        frame_at("vllm/entrypoints/llm.py", "_run_engine", "step_outputs = self.llm_engine.step()", 1600,
                 env=(("self", "HOP:step"),)),
        frame_at("vllm/v1/engine/llm_engine.py", "step", "outputs = self.engine_core.get_output()", 265,
                 env=(("self", "HOP:get_output"),)),
        placed("vllm/v1/engine/core_client.py", "get_output", 668, """
outputs = self.outputs_queue.get()
if isinstance(outputs, Exception):
    raise self._format_exception(outputs) from None
""", env=(("self", "NS(outputs_queue=NS(get=lambda: EngineDeadError(suppress_context=True)), _format_exception=lambda e: e)"),
          ("EngineDeadError", "__import__('vllm.v1.engine.exceptions', fromlist=['EngineDeadError']).EngineDeadError"))),
    )
    return Case(DIED, "", frames, mode="plain", ranks="", extra_modules=(_HELPER, _EXCEPTIONS_0110))


# -- the root in the log: a worker's NCCL error while serving (0.11.0, TP=2, offline LLM.generate) ------------------
#
# Three processes print: the worker (its error, logged by worker_busy_loop, which first adds the traceback as a
# note), the engine core (the executor's RuntimeError naming the worker's error, "EngineCore encountered a fatal
# error."), and the client (the engine died: EngineDeadError).  The root is the worker's.

# WorkerProc.worker_busy_loop (0.11.0), lines 657-671
_WORKER_BUSY_LOOP = lines_at({
    657: "try:", 658: "    if isinstance(method, str):", 659: "        func = getattr(self.worker, method)", 666: "    output = func(*args, **kwargs)",
    667: "except Exception as e:", 668: "    # Notes have been introduced in python 3.11", 669: '    if hasattr(e, "add_note"):',
    670: "        e.add_note(traceback.format_exc())", 671: '    logger.exception("WorkerProc hit an exception.")',
})


def worker_nccl_all_reduce() -> tuple[Frame, ...]:
    """A worker's execute_model -> the model's row-parallel linear layer -> the tensor-parallel all-reduce over
    pynccl (0.11.0; torch 2.8's custom-op call in torch/_ops.py)."""
    layers, comm = "vllm/model_executor/layers/linear.py", "vllm/distributed/device_communicators"
    return (
        placed(MULTIPROC, "worker_busy_loop", 657, _WORKER_BUSY_LOOP, env=(
            ("_vllm_logging", _logging("0.11.0", "Worker_TP1", 2851)), ("self", "HOP:execute_model"), ("method", "'execute_model'"),
            ("args", "()"), ("kwargs", "{}"), ("traceback", "__import__('traceback')"),
            ("logger", _logger("vllm.v1.executor.multiproc_executor")))),
        placed(GPU_WORKER, "execute_model", 447, "output = self.model_runner.execute_model(scheduler_output,\n"
               "                                         intermediate_tensors)",
               env=(("self", "HOP:execute_model"), ("scheduler_output", "None"), ("intermediate_tensors", "None"))),
        placed(GPU_RUNNER, "execute_model", 2298, _DUMMY_MODEL_CALL.replace("outputs =", "model_output ="),
               env=(("self", "HOP:model"), ("input_ids", "None"), ("positions", "None"), ("intermediate_tensors", "None"),
                    ("inputs_embeds", "None"), ("model_kwargs", "{}"))),
        *_module_call(),
        placed("vllm/model_executor/models/qwen2.py", "forward", 505, "hidden_states = self.model(input_ids, positions, intermediate_tensors,\n"
               "                           inputs_embeds)", env=(("self", "HOP:model"), ("input_ids", "None"), ("positions", "None"),
                                                               ("intermediate_tensors", "None"), ("inputs_embeds", "None"))),
        frame_at(layers, "forward", "output = tensor_model_parallel_all_reduce(output_parallel)", 1359,
                 env=(("tensor_model_parallel_all_reduce", "NEXT"), ("output_parallel", "None"))),
        frame_at("vllm/distributed/communication_op.py", "tensor_model_parallel_all_reduce", "return get_tp_group().all_reduce(input_)", 14,
                 env=(("get_tp_group", "HOP:all_reduce"), ("input_", "None"))),
        placed(PARALLEL_STATE, "all_reduce", 359, "return torch.ops.vllm.all_reduce(input_,\n                                 group_name=self.unique_name)",
               env=(("torch", "HOP:all_reduce"), ("input_", "None"), ("self", "NS(unique_name='tp:0')"))),
        frame_at("torch/_ops.py", "__call__", "return self._op(*args, **kwargs)", 1243, env=(("self", "HOP:_op"), ("args", "()"), ("kwargs", "{}"))),
        frame_at(PARALLEL_STATE, "all_reduce", "return group._all_reduce_out_place(tensor)", 112,
                 env=(("group", "HOP:_all_reduce_out_place"), ("tensor", "None"))),
        frame_at(PARALLEL_STATE, "_all_reduce_out_place", "return self.device_communicator.all_reduce(input_)", 367,
                 env=(("self", "HOP:all_reduce"), ("input_", "None"))),
        frame_at(f"{comm}/cuda_communicator.py", "all_reduce", "out = pynccl_comm.all_reduce(input_)", 151,
                 env=(("pynccl_comm", "HOP:all_reduce"), ("input_", "None"))),
        placed(PYNCCL, "all_reduce", 162, "self.nccl.ncclAllReduce(buffer_type(in_tensor.data_ptr()),\n"
               "                        buffer_type(out_tensor.data_ptr()),\n                        in_tensor.numel(),\n"
               "                        ncclDataTypeEnum.from_torch(in_tensor.dtype),\n"
               "                        ncclRedOpTypeEnum.from_torch(op), self.comm,\n                        cudaStream_t(stream.cuda_stream))",
               env=(("self", "HOP:ncclAllReduce"), ("buffer_type", "_Any()"), ("in_tensor", "_Any()"), ("out_tensor", "_Any()"),
                    ("ncclDataTypeEnum", "_Any()"), ("ncclRedOpTypeEnum", "_Any()"), ("op", "None"), ("cudaStream_t", "_Any()"),
                    ("stream", "_Any()"))),
        placed(PYNCCL_WRAPPER, "ncclAllReduce", 337, 'self.NCCL_CHECK(self._funcs["ncclAllReduce"](sendbuff, recvbuff, count,\n'
               "                                                     datatype, op, comm,\n                                                     stream))",
               env=(("self", "HOP:NCCL_CHECK"), ("sendbuff", "None"), ("recvbuff", "None"), ("count", "0"), ("datatype", "0"), ("op", "0"),
                    ("comm", "None"), ("stream", "None"))),
        _nccl_check("0.11.0", 1, ""),
    )


# vllm/v1/engine/core.py EngineCoreProc.run_engine_core (0.11.0): the engine is built, its busy loop fails
_RUN_ENGINE_CORE_SERVING = lines_at({
    686: "try:", 699: "    engine_core = EngineCoreProc(*args, **kwargs)", 701: "    engine_core.run_busy_loop()",
    703: "except SystemExit:", 704: '    logger.debug("EngineCore exiting.")', 705: "    raise",
    706: "except Exception as e:", 707: "    if engine_core is None:", 708: '        logger.exception("EngineCore failed to start.")',
    709: "    else:", 710: '        logger.exception("EngineCore encountered a fatal error.")', 712: "    raise e",
})


def engine_serving_failed() -> tuple[Frame, ...]:
    """The engine core's busy loop -> step -> the multiprocessing executor's reply from a failed worker (0.11.0)."""
    frames = engine_process("0.11.0", ())
    run_engine_core = placed(CORE, "run_engine_core", 686, _RUN_ENGINE_CORE_SERVING, env=(
        ("EngineCoreProc", "lambda *a, **k: _Hop('f3', 'run_busy_loop')"), ("args", "()"), ("kwargs", "{}"), ("engine_core", "None"),
        ("logger", _logger("vllm.v1.engine.core"))))
    return (
        *frames[:2], run_engine_core,
        frame_at(CORE, "run_busy_loop", "self._process_engine_step()", 728, env=(("self", "HOP:_process_engine_step"),)),
        frame_at(CORE, "_process_engine_step", "outputs, model_executed = self.step_fn()", 754, env=(("self", "HOP:step_fn"),)),
        placed(CORE, "step", 284, "model_output = self.execute_model_with_error_logging(\n    self.model_executor.execute_model,  # type: ignore\n"
               "    scheduler_output)", env=(("self", "HOP:execute_model_with_error_logging"), ("scheduler_output", "None"))),
        placed(CORE, "execute_model_with_error_logging", 260, lines_at({
            260: "try:", 261: "    return model_fn(scheduler_output)", 262: "except Exception as err:",
            268: "    dump_engine_exception(self.vllm_config, scheduler_output,", 269: "                          self.scheduler.make_stats())",
            270: "    raise err"}),
               env=(("model_fn", "NEXT"), ("scheduler_output", "None"), ("dump_engine_exception", "lambda *a: None"), ("self", "_Any()"))),
        placed(MULTIPROC, "execute_model", 181, "(output, ) = self.collective_rpc(\n    \"execute_model\",\n    args=(scheduler_output, ),\n"
               "    unique_reply_rank=self.output_rank,\n    non_block=non_block,\n    timeout=envs.VLLM_EXECUTE_MODEL_TIMEOUT_SECONDS)",
               env=(("self", "HOP:collective_rpc"), ("scheduler_output", "None"), ("non_block", "False"), ("envs", "_Any()"))),
        placed(MULTIPROC, "collective_rpc", 264, "result = get_response(w, dequeue_timeout,\n                      self.shutdown_event)",
               env=(("get_response", "NEXT"), ("w", "None"), ("dequeue_timeout", "None"), ("self", "_Any()"))),
        placed(MULTIPROC, "get_response", 247, lines_at({
            247: "if status != WorkerProc.ResponseStatus.SUCCESS:", 248: "    raise RuntimeError(",
            249: "        f\"Worker failed with error '{result}', please check the\"", 250: "        \" stack trace above for the root cause\")"}),
               env=(("status", "'FAILURE'"), ("WorkerProc", "NS(ResponseStatus=NS(SUCCESS='SUCCESS'))"),
                    ("result", repr(f"NCCL error: {NCCL_ERROR_STRINGS[1]}")))),
    )


def nccl_while_serving() -> Case:
    """The worker's NCCL error, the engine core's fatal error, and the offline client's EngineDeadError."""
    engine = Case("", "", engine_serving_failed(), mode="plain", ranks="", extra_modules=(_HELPER,), then=(engine_dead_offline(),))
    return Case("", "", worker_nccl_all_reduce(), mode="plain", ranks="", extra_modules=(_HELPER,), then=(engine,))


# -- 0.33.0: several API server processes, the engine core process gone (killed: no traceback of its own) ------------

# vllm/v1/utils.py wait_for_completion_or_failure (0.33.0), lines 550-600
_WAIT_FOR_COMPLETION = lines_at({
    550: "try:", 551: '    logger.info("Waiting for API servers to complete ...")', 576: "    while sentinel_to_proc:",
    581: "        for sentinel in ready_sentinels:",
    590: "            if engine_manager and engine_manager.failed_proc_name is not None:", 591: "                raise RuntimeError(",
    592: '                    f"Engine core process {engine_manager.failed_proc_name} "', 593: '                    "died unexpectedly."',
    594: "                )", 596: "except KeyboardInterrupt:", 597: '    logger.info("Received KeyboardInterrupt, shutting down API servers...")',
    598: "except Exception as e:", 599: '    logger.exception("Exception occurred while running API servers: %s", str(e))', 600: "    raise",
})


def engine_died_multi_api_0330() -> Case:
    """`vllm serve --api-server-count 2` (0.33.0): the parent process waits for its API servers and the engine
    core, and the engine core exits; the parent logs it and dies uncaught.  Its records carry the
    multiprocessing name (MainProcess): nothing in this path names the process for the log."""
    frames = (
        frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 117, env=(
            ("_vllm_logging", _logging("0.33.0", "MainProcess", API_PID, uncaught=True)), ("args", "HOP:dispatch_function"))),
        frame_at("vllm/entrypoints/cli/serve.py", "cmd", "run_multi_api_server(args)", 152, env=(("run_multi_api_server", "NEXT"), ("args", "None"))),
        placed("vllm/entrypoints/cli/serve.py", "run_multi_api_server", 386, "wait_for_completion_or_failure(\n"
               "    api_server_manager=api_server_manager,\n    engine_manager=local_engine_manager,\n    coordinator=coordinator,\n)",
               env=(("wait_for_completion_or_failure", "NEXT"), ("api_server_manager", "None"), ("local_engine_manager", "None"),
                    ("coordinator", "None"))),
        placed("vllm/v1/utils.py", "wait_for_completion_or_failure", 550, _WAIT_FOR_COMPLETION, env=(
            ("logger", _logger("vllm.v1.utils")), ("sentinel_to_proc", "[0]"), ("ready_sentinels", "[0]"),
            ("engine_manager", "NS(failed_proc_name='EngineCore_DP0')"))),
    )
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER,))


# -- Ray: the placement group for the workers (0.11.0, 0.33.0) -------------------------------------------------------

RAY_UTILS = {"0.11.0": "vllm/executor/ray_utils.py", "0.33.0": "vllm/v1/executor/ray_utils.py"}


def _ray_executor(version: str) -> tuple[Frame, ...]:
    """EngineCore.__init__ -> the Ray executor's _init_executor -> initialize_ray_cluster."""
    if version == "0.11.0":
        return (
            *to_engine_core(version, "self.model_executor = executor_class(vllm_config)", 83),
            frame_at("vllm/executor/executor_base.py", "__init__", "self._init_executor()", 54),
            frame_at("vllm/executor/ray_distributed_executor.py", "_init_executor", "initialize_ray_cluster(self.parallel_config)", 98,
                     env=(("initialize_ray_cluster", "NEXT"), ("self", "_Any()"))),
        )
    return (
        *to_engine_core(version, "self.model_executor = executor_class(vllm_config)", 150),
        frame_at("vllm/v1/executor/abstract.py", "__init__", "self._init_executor()", 120),
        frame_at("vllm/v1/executor/ray_executor_v2.py", "_init_executor", "initialize_ray_cluster(self.parallel_config)", 295,
                 env=(("initialize_ray_cluster", "NEXT"), ("self", "_Any()"))),
    )


def ray_existing_group(required: int, available: int) -> tuple[Frame, ...]:
    """initialize_ray_cluster inside a placement group with fewer GPU bundles than the world size (0.11.0)."""
    return (*_ray_executor("0.11.0"), placed(RAY_UTILS["0.11.0"], "initialize_ray_cluster", 338, """
if parallel_config.world_size > device_bundles:
    raise ValueError(
        f"The number of required {device_str}s exceeds the total "
        f"number of available {device_str}s in the placement group. "
        f"Required number of devices: {parallel_config.world_size}. "
        f"Total number of devices: {device_bundles}.")
""", env=(("parallel_config", f"NS(world_size={required})"), ("device_bundles", str(available)), ("device_str", "'GPU'"))))


def ray_no_gpu_on_node() -> tuple[Frame, ...]:
    """initialize_ray_cluster on a head node that has no GPU of its own (0.11.0)."""
    resources = {"CPU": 64.0, "memory": 412316860416.0, "node:10.0.3.17": 1.0, "node:__internal_head__": 1.0,
                 "object_store_memory": 176707225600.0}
    return (*_ray_executor("0.11.0"), placed(RAY_UTILS["0.11.0"], "initialize_ray_cluster", 366, """
current_node_resource = available_resources_per_node()[current_node_id]
if current_node_resource.get(device_str, 0) < 1:
    raise ValueError(
        f"Current node has no {device_str} available. "
        f"{current_node_resource=}. vLLM engine cannot start without "
        f"{device_str}. Make sure you have at least 1 {device_str} "
        f"available in a node {current_node_id=} {current_ip=}.")
""", env=(("available_resources_per_node", f"lambda: {{'6f0c1d2b9e8a': {resources!r}}}"), ("current_node_id", "'6f0c1d2b9e8a'"),
          ("current_ip", "'10.0.3.17'"), ("device_str", "'GPU'"))))


def ray_timeout_0330(specs: list[dict[str, float]]) -> tuple[Frame, ...]:
    """_wait_until_pg_ready giving up on a placement group of several GPUs (0.33.0; the wording since 0.11.2)."""
    utils = RAY_UTILS["0.33.0"]
    return (
        *_ray_executor("0.33.0"),
        frame_at(utils, "initialize_ray_cluster", "_wait_until_pg_ready(current_placement_group)", 392,
                 env=(("_wait_until_pg_ready", "NEXT"), ("current_placement_group", "None"))),
        placed(utils, "_wait_until_pg_ready", 235, """
try:
    ray.get(pg_ready_ref, timeout=0)
except ray.exceptions.GetTimeoutError:
    # Provide more helpful error message when GPU count is exceeded
    total_gpu_required = sum(spec.get("GPU", 0) for spec in placement_group_specs)
    # If more than one GPU is required for the placement group, provide a
    # more specific error message.
    # We use >1 here because multi-GPU (tensor parallel) jobs are more
    # likely to fail due to insufficient cluster resources, and users may
    # need to adjust tensor_parallel_size to fit available GPUs.
    if total_gpu_required > 1:
        raise ValueError(
            f"Cannot provide a placement group requiring "
            f"{total_gpu_required} GPUs "
            f"(placement_group_specs={placement_group_specs}) within "
            f"{PG_WAIT_TIMEOUT} seconds.\\n"
            f"Tensor parallel size may exceed available GPUs in your "
            f"cluster. Check resources with `ray status` and "
            f"`ray list nodes`.\\n"
            f"If running on K8s with limited GPUs, consider reducing "
            f"--tensor-parallel-size to match available GPU resources."
        ) from None
""", env=(("ray", "NS(get=lambda ref, timeout: (_ for _ in ()).throw(TimeoutError()), exceptions=NS(GetTimeoutError=TimeoutError))"),
          ("pg_ready_ref", "None"), ("placement_group_specs", repr(specs)), ("PG_WAIT_TIMEOUT", "1800"))),
    )


# vllm/executor/ray_utils.py initialize_ray_cluster (0.11.0): the warning when a new placement group is bigger
# than the cluster (vLLM waits for it, up to PG_WAIT_TIMEOUT)
_RAY_WARNING = ("WARNING", RAY_UTILS["0.11.0"], 352, "The number of required GPUs exceeds the total number of available GPUs in the placement group.")


# -- attention heads that the tensor-parallel size does not divide (0.11.0, API server) --------------------------------


_PYDANTIC_CORE = ("pydantic_core/_pydantic_core.py", '''
class ValidationError(ValueError):
    """pydantic_core's error type (a Rust class); only its name and module show in a traceback."""
''')
_CREATE_ENGINE_CONFIG = "vllm_config = engine_args.create_engine_config(usage_context=usage_context)"


def heads_not_divisible(heads: int, tp: int, model: str) -> Case:
    """`vllm serve` (0.11.0): VllmConfig.__post_init__ -> ModelConfig.verify_with_parallel_config raises a
    ValueError, which pydantic-core (VllmConfig is a pydantic dataclass) reports as its ValidationError."""
    message = f"Total number of attention heads ({heads}) must be divisible by tensor parallel size ({tp})."
    shown = f"ArgsKwargs((), {{'model_config': ModelConfig(model={model!r}, runner='generate'), 'parallel_config': None}})"
    text = ("1 validation error for VllmConfig\n"
            f"  Value error, {message} [type=value_error, input_value={shown[:25]}...{shown[-24:]}, input_type=ArgsKwargs]\n"
            "    For further information visit https://errors.pydantic.dev/2.11/v/value_error")
    error = f"__import__('pydantic_core._pydantic_core', fromlist=['ValidationError']).ValidationError({text!r})"
    frames = api_server("0.11.0", (
        frame_at(API_SERVER, "build_async_engine_client_from_engine_args", _CREATE_ENGINE_CONFIG, 206,
                 env=(("engine_args", "HOP:create_engine_config"), ("usage_context", "None"))),
        placed("vllm/engine/arg_utils.py", "create_engine_config", 1431, "config = VllmConfig(\n    model_config=model_config,\n"
               "    cache_config=cache_config)", env=(("VllmConfig", "NEXT"), ("model_config", "None"), ("cache_config", "None"))),
        # pydantic's dataclass __init__ runs __post_init__ from Rust and raises its ValidationError from there
        placed("pydantic/_internal/_dataclasses.py", "__init__", 121,
               "__tracebackhide__ = True\ns = __dataclass_self__\ns.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
               env=(("__dataclass_self__", "NS(__pydantic_validator__=NS(validate_python=dict))"),
                    ("ArgsKwargs", f"__import__('functools').partial(map, __import__('_lsfx').c_raiser({error}))"),
                    ("args", "(0,)"), ("kwargs", "(0,)"))),
    ))
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER, _PYDANTIC_CORE))


# -- no usable GPU (0.11.0) ----------------------------------------------------------------------------------------


def device_not_inferred() -> Case:
    """`vllm serve` (0.11.0) where vLLM's platform detection found no GPU: DeviceConfig.__post_init__ raises a
    RuntimeError, which pydantic-core lets through (only ValueError and AssertionError become ValidationErrors);
    pydantic-core calls __post_init__ from Rust, so its frame follows pydantic's __init__ directly."""
    frames = api_server("0.11.0", (
        frame_at(API_SERVER, "build_async_engine_client_from_engine_args", _CREATE_ENGINE_CONFIG, 206,
                 env=(("engine_args", "HOP:create_engine_config"), ("usage_context", "None"))),
        placed("vllm/engine/arg_utils.py", "create_engine_config", 1131, "device_config = DeviceConfig(\n"
               "    device=cast(Device, current_platform.device_type))",
               env=(("DeviceConfig", "NEXT"), ("cast", "lambda kind, value: value"), ("Device", "None"),
                    ("current_platform", "NS(device_type='')"))),
        placed("pydantic/_internal/_dataclasses.py", "__init__", 121,
               "__tracebackhide__ = True\ns = __dataclass_self__\ns.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
               env=(("__dataclass_self__", "NS(__pydantic_validator__=NS(validate_python=dict))"),
                    ("ArgsKwargs", "NEXT"), ("args", "(0,)"), ("kwargs", "(0,)"))),
        placed("vllm/config/device.py", "__post_init__", 52, """
if self.device == "auto":
    # Automated device type detection
    from vllm.platforms import current_platform
    self.device_type = current_platform.device_type
    if not self.device_type:
        raise RuntimeError(
            "Failed to infer device type, please set "
            "the environment variable `VLLM_LOGGING_LEVEL=DEBUG` "
            "to turn on verbose logging to help debug the issue.")
""", env=(("self", "NS(device='auto')"),)),
    ))
    platforms = ("vllm/platforms/__init__.py", "current_platform = __import__('types').SimpleNamespace(device_type='')\n")
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER, platforms))


def no_cuda_gpus_0110() -> tuple[Frame, ...]:
    """Worker.init_device -> CudaPlatform.set_device -> torch.cuda.set_device, whose lazy CUDA init finds no GPU
    (torch 2.8: torch/cuda/__init__.py)."""
    cuda = "torch/cuda/__init__.py"
    return (
        *to_worker("0.11.0", "init_device"),
        init_device_0110("HOP:set_device"),
        frame_at("vllm/platforms/cuda.py", "set_device", "torch.cuda.set_device(device)", 79,
                 env=(("torch", "HOP:set_device"), ("device", "None"))),
        frame_at(cuda, "set_device", "torch._C._cuda_setDevice(device)", 567,
                 env=(("torch", "NS(_C=NS(_cuda_setDevice=lambda device: _lazy_init()))"), ("device", "0"), ("_lazy_init", "NEXT"))),
        frame_at(cuda, "_lazy_init", "torch._C._cuda_init()", 410, env=(("torch", "NS(_C=NS(_cuda_init=__import__('torch').C_RAISER))"),)),
    )


# -- the API server's port (0.11.0) ---------------------------------------------------------------------------------------

_SERVER_SOCKET = """
family = socket.AF_INET
if is_valid_ipv6_address(addr[0]):
    family = socket.AF_INET6

sock = socket.socket(family=family, type=socket.SOCK_STREAM)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
sock.bind(addr)
"""


def bind_failed(address: str) -> Case:
    """`vllm serve` (0.11.0) binding its HTTP port before it starts the engine (setup_server): the kernel's own
    error for `address`, an expression evaluated in the generated tree (`_listen()` holds a port)."""
    records = (("INFO", API_SERVER, 1839, "vLLM API server version 0.11.0"),)
    frames = (
        frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 54, env=(
            ("_vllm_logging", _logging("0.11.0", "APIServer", API_PID, records, uncaught=True)), ("args", "HOP:dispatch_function"))),
        frame_at("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))", 57,
                 env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
        frame_at(API_SERVER, "run_server", "listen_address, sock = setup_server(args)", 1883, env=(("setup_server", "NEXT"), ("args", "None"))),
        frame_at(API_SERVER, "setup_server", "sock = create_server_socket(sock_addr)", 1854,
                 env=(("create_server_socket", "NEXT"), ("sock_addr", "None"))),
        placed(API_SERVER, "create_server_socket", 1802, _SERVER_SOCKET, env=(
            ("socket", "__import__('socket')"), ("is_valid_ipv6_address", "lambda host: False"), ("addr", address))),
    )
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER,))


# -- the cases ---------------------------------------------------------------------------------------------------------

PROFILING_0110 = engine_crash(OOM_PROFILING, "positive-0.11.0", "0.11.0", profiling_oom_0110(), api_cascade=True,
                              records=_LOADED_RECORDS, torch_error=OOM_0110)
LOAD_0110 = engine_crash(OOM_LOAD, "positive-0.11.0-linear-weights", "0.11.0", weight_load_oom("0.11.0"), api_cascade=True,
                         torch_error=oom("896.00 MiB", total="23.57 GiB", free="412.81 MiB", used="23.16 GiB"))
GRAPH_0330 = engine_crash(OOM_GRAPH, "positive-0.33.0-profiling-graph-memory", "0.33.0", cuda_graph_profiling_oom_0330(),
                          torch_error=oom("1.12 GiB", total="79.19 GiB", free="853.62 MiB", used="78.35 GiB"))
GRAPH_0110 = engine_crash(OOM_GRAPH, "positive-0.11.0", "0.11.0", cuda_graph_oom_0110(), api_cascade=True,
                          records=_CAPTURE_RECORDS, torch_error=oom("512.00 MiB", total="23.57 GiB", free="301.62 MiB", used="23.27 GiB"))
NCCL_0110 = nccl_startup("0.11.0", 2).named(NCCL, "positive-0.11.0-worker-startup")
PG_EXISTING = engine_crash(RAY, "positive-0.11.0-existing-group", "0.11.0", ray_existing_group(8, 4), api_cascade=True)
HEADS_0110 = heads_not_divisible(28, 8, "deepseek-ai/DeepSeek-R1-Distill-Qwen-7B")
NO_GPU_0110 = engine_crash(NO_GPU, "positive-0.11.0-no-cuda-gpus", "0.11.0", no_cuda_gpus_0110(), api_cascade=True,
                           torch_error=("RuntimeError", "No CUDA GPUs are available"))
SAMPLER_WARMUP_0330 = engine_crash(OOM_WARMUP, "positive-0.33.0-after-kv-cache", "0.33.0", sampler_warmup_oom_0330(512),
                                   torch_error=oom("2.31 GiB", total="79.19 GiB", free="1.02 GiB", used="78.16 GiB"))
PORT_0110 = bind_failed("('127.0.0.1', _listen().getsockname()[1])")

CASES = (
    PROFILING_0110,
    engine_crash(OOM_PROFILING, "positive-0.33.0-sampler-warmup", "0.33.0", sampler_oom_0330(256),
                 torch_error=oom("1.74 GiB", total="23.57 GiB", free="605.88 MiB", used="22.97 GiB")),
    LOAD_0110.named(OOM_PROFILING, "negative-0.11.0-weight-load"),
    GRAPH_0110.named(OOM_PROFILING, "negative-0.11.0-cuda-graph-capture"),
    # profiling's graph estimate (0.33.0) runs inside determine_available_memory: the graph pattern wins
    GRAPH_0330.named(OOM_PROFILING, "negative-0.33.0-profiling-graph-memory"),
    # the same sampler message raised after the KV cache is allocated: the warm-up pattern wins
    SAMPLER_WARMUP_0330.named(OOM_PROFILING, "negative-0.33.0-sampler-warmup-after-kv-cache"),
    SAMPLER_WARMUP_0330,
    engine_crash(OOM_PROFILING, "positive-0.33.0-sampler-warmup", "0.33.0", sampler_oom_0330(256),
                 torch_error=oom("1.74 GiB", total="23.57 GiB", free="605.88 MiB", used="22.97 GiB")).named(
                     OOM_WARMUP, "negative-0.33.0-profiling-run"),

    LOAD_0110,
    engine_crash(OOM_LOAD, "positive-0.33.0", "0.33.0", weight_load_oom("0.33.0"),
                 torch_error=oom("462.00 MiB", total="79.19 GiB", free="301.62 MiB", used="78.88 GiB")),
    PROFILING_0110.named(OOM_LOAD, "negative-0.11.0-profiling"),

    GRAPH_0110,
    GRAPH_0330,
    PROFILING_0110.named(OOM_GRAPH, "negative-0.11.0-profiling-dummy-run"),

    NCCL_0110,
    nccl_startup("0.33.0", 1, "Cuda failure 'peer access is not supported between these two devices'").named(NCCL, "positive-0.33.0-last-error"),
    # NCCL's own check that two ranks share a GPU (nccl src/init.cc, ncclInvalidUsage = 5), as vLLM 0.33's last error
    nccl_startup("0.33.0", 5, "Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1000").named(
        NCCL_DUPLICATE_GPU, "positive-0.33.0-last-error"),
    NCCL_0110.named(NCCL_DUPLICATE_GPU, "negative-0.11.0-unhandled-cuda-error"),
    nccl_while_serving().named(NCCL, "positive-0.11.0-serving-engine-dead"),
    NO_GPU_0110.named(NCCL, "negative-0.11.0-init-device-no-gpu"),

    engine_dead_offline().named(DIED, "positive-0.11.0-offline-root-not-in-log"),
    # with its root in the log, the cascade is the report's last group (the root: vllm-nccl-error's serving positive)
    engine_died_multi_api_0330().named(DIED, "positive-0.33.0-multi-api-server"),
    engine_startup_failed("0.11.0").named(DIED, "negative-0.11.0-startup-cascade"),

    PG_EXISTING,
    engine_crash(RAY, "positive-0.11.0-no-gpu-on-node", "0.11.0", ray_no_gpu_on_node()),
    engine_crash(RAY, "positive-0.33.0-timeout", "0.33.0", ray_timeout_0330([{"GPU": 1.0, "node:10.0.3.17": 0.001}] + [{"GPU": 1.0}] * 7)),
    # the same words as a warning (a new placement group larger than the cluster: vLLM waits), then another failure
    engine_crash(RAY, "negative-0.11.0-warning-only", "0.11.0", NO_KERNEL_0110, records=(_RAY_WARNING,),
                 torch_error=cuda_error("no kernel image is available for execution on the device")),

    HEADS_0110.named(HEADS, "positive-0.11.0-apiserver"),
    PG_EXISTING.named(HEADS, "negative-0.11.0-placement-group"),

    PORT_0110.named(PORT, "positive-0.11.0-apiserver"),
    bind_failed("('192.0.2.1', 8000)").named(PORT, "negative-0.11.0-cannot-assign-address"),

    NO_GPU_0110,
    device_not_inferred().named(NO_GPU, "positive-0.11.0-device-not-inferred"),
    engine_crash(NO_GPU, "negative-0.11.0-no-kernel-image", "0.11.0", NO_KERNEL_0110,
                 torch_error=cuda_error("no kernel image is available for execution on the device")),
)
