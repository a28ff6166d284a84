"""The mirrored SGLang engine: the call paths, failing frames, error texts and log records the cases share.

Paths, function names, source lines and line numbers follow SGLang 0.4.10.post2, 0.5.9 and 0.5.23
(`VERSIONS`); exception texts follow the formats in SGLang's, torch's and CUDA's source.  A case
(cases/<family>.py) strings these together and adds the frame that fails; engine.py turns it into a log.
"""

from __future__ import annotations

import textwrap
from typing import Any

from .engine import Case, Frame

VERSIONS = ("0.4.10.post2", "0.5.9", "0.5.23")

SCHEDULER = "sglang/srt/managers/scheduler.py"
TP_WORKER = "sglang/srt/managers/tp_worker.py"
MODEL_RUNNER = "sglang/srt/model_executor/model_runner.py"
LOADER = "sglang/srt/model_loader/loader.py"
MEMORY_POOL = "sglang/srt/mem_cache/memory_pool.py"
LAUNCH_SERVER = "sglang/launch_server.py"
SERVER_ARGS = "sglang/srt/server_args.py"
VALIDATION_HOOK = "sglang/srt/arg_groups/validation_hook.py"
QWEN2 = "sglang/srt/models/qwen2.py"


# -- log records around a crash ----------------------------------------------------------

SIGQUIT = "Received sigquit from a child process. It usually means the child failed."
LOAD_BEGIN = "Load weight begin. avail mem=78.84 GB"
LOAD_END = "Load weight end. type=Qwen2ForCausalLM, dtype=torch.bfloat16, avail mem=64.37 GB, mem usage=14.47 GB."
KV_LINE = "KV Cache is allocated. #tokens: 1048576, K size: 28.00 GB, V size: 28.00 GB"
CAPTURE_BEGIN = "Capture cuda graph begin. This can take up to several minutes. avail mem=7.62 GB"
READY = "The server is fired up and ready to roll!"
DECODE = "Decode batch, #running-req: 212, #token: 401933, token usage: 0.38, cuda graph: False, gen throughput (token/s): 4127.55, #queue-req: 0,"
PREFILL = "Prefill batch, #new-seq: 3, #new-token: 8192, #cached-token: 0, token usage: 0.41, #running-req: 209, #queue-req: 14,"


# -- the two ways a process dies ------------------------------------------------------------


def scheduler_crash(pattern: str, name: str, frames: tuple[Frame, ...], **fields: Any) -> Case:
    """A scheduler process failing: run_scheduler_process logs the traceback, the parent its SIGQUIT notice."""
    return Case(pattern, name, frames, after=(SIGQUIT,), **fields)


def launch_crash(pattern: str, name: str, frames: tuple[Frame, ...], **fields: Any) -> Case:
    """`python -m sglang.launch_server` failing uncaught: sys.excepthook prints the traceback."""
    return Case(pattern, name, frames, mode="launch", **fields)


def raise_frame(path: str, function: str, body: str, env: tuple[tuple[str, str], ...] = (), lineno: int = 0) -> Frame:
    return Frame(path, function, body=body, env=env, lineno=lineno)


# -- torch and CUDA error texts -------------------------------------------------------------


def oom(size: str = "2.00 GiB", gpu: int = 0, total: str = "79.19 GiB", free: str = "1.38 GiB", used: str = "77.80 GiB") -> tuple[str, str]:
    return (
        "torch.OutOfMemoryError",
        f"CUDA out of memory. Tried to allocate {size}. GPU {gpu} has a total capacity of {total} of which {free} is free. "
        f"Process 183522 has {used} memory in use. Of the allocated memory 76.02 GiB is allocated by PyTorch, and "
        "412.33 MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
        "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
    )


CUDA_ASYNC_NOTE = (
    "\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."
    "\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1"
    "\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
)


def cuda_error(text: str) -> tuple[str, str]:
    return ("torch.AcceleratorError", f"CUDA error: {text}{CUDA_ASYNC_NOTE}")


ILLEGAL_ACCESS = cuda_error("an illegal memory access was encountered")


# -- the scheduler: start-up down to ModelRunner ----------------------------------------------

_RUN_SCHEDULER = """
    try:
        {call}
    except Exception:
        traceback = get_exception_traceback()
        logger.error(f"Scheduler hit an exception: {{traceback}}")
        parent_process.send_signal(signal.SIGQUIT)
    """
_RUN_SCHEDULER_ENV = (
    ("server_args", "None"), ("port_args", "None"), ("gpu_id", "0"), ("tp_rank", "0"),
    ("moe_ep_rank", "0"), ("pp_rank", "0"), ("dp_rank", "None"),
    ("logger", "__import__('logging').getLogger('sglang')"),
    ("parent_process", "NS(send_signal=lambda signum: None)"),
)
_SCHEDULER_ARGS = {
    "0.4.10.post2": "server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank",
    "0.5.9": "server_args, port_args, gpu_id, tp_rank, moe_ep_rank, pp_rank, dp_rank",
    "0.5.23": "server_args, port_args",
}
_RUN_SCHEDULER_LINE = {"0.4.10.post2": 2532, "0.5.9": 3130, "0.5.23": 6360}

# run_scheduler_process building the Scheduler: the top of every start-up failure in a scheduler
SCHEDULER_TOP = {
    version: Frame(
        SCHEDULER,
        "run_scheduler_process",
        body=_RUN_SCHEDULER.format(call=f"scheduler = Scheduler({args})"),
        env=(("Scheduler", "NEXT"), *_RUN_SCHEDULER_ENV),
        lineno=_RUN_SCHEDULER_LINE[version],
    )
    for version, args in _SCHEDULER_ARGS.items()
}
# ... and running its event loop: the top of every failure while serving
_SERVING_TOP = {
    version: Frame(
        SCHEDULER,
        "run_scheduler_process",
        body=_RUN_SCHEDULER.format(call="scheduler.event_loop_overlap()"),
        env=(*_RUN_SCHEDULER_ENV, ("scheduler", "HOP:event_loop_overlap")),
        lineno=_RUN_SCHEDULER_LINE[version] + 30,
    )
    for version in VERSIONS
}

_INIT_MODEL_RUNNER = "self._model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=self.server_args.mem_fraction_static, gpu_id=self.gpu_id, tp_rank=self.tp_rank)"
# 0.5.9 / 0.5.23: the lines of Scheduler.__init__, init_model_worker, init_tp_model_worker,
# TpModelWorker.__init__, _init_model_runner and ModelRunner.__init__
_TO_MODEL_RUNNER_LINES = {"0.5.9": (367, 563, 521, 246, 329, 412), "0.5.23": (567, 1129, 1032, 318, 486, 498)}


def to_model_runner(version: str) -> tuple[Frame, ...]:
    """run_scheduler_process -> ... -> ModelRunner.__init__ -> initialize, as in each version."""
    if version == "0.4.10.post2":
        return (
            SCHEDULER_TOP[version],
            Frame(SCHEDULER, "__init__", "self.tp_worker = TpWorkerClass(server_args=server_args, gpu_id=gpu_id, tp_rank=tp_rank)", lineno=312),
            Frame(TP_WORKER, "__init__", "self.model_runner = ModelRunner(model_config=self.model_config, mem_fraction_static=server_args.mem_fraction_static, gpu_id=gpu_id, tp_rank=tp_rank)", lineno=83),
            Frame(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)", lineno=241),
        )
    scheduler, init_worker, init_tp_worker, tp_worker, init_runner, model_runner = _TO_MODEL_RUNNER_LINES[version]
    return (
        SCHEDULER_TOP[version],
        Frame(SCHEDULER, "__init__", "self.init_model_worker()", lineno=scheduler),
        Frame(SCHEDULER, "init_model_worker", "self.init_tp_model_worker()", lineno=init_worker),
        Frame(SCHEDULER, "init_tp_model_worker", "self.tp_worker = TpModelWorker(**worker_kwargs)", lineno=init_tp_worker),
        Frame(TP_WORKER, "__init__", "self._init_model_runner()", lineno=tp_worker),
        Frame(TP_WORKER, "_init_model_runner", _INIT_MODEL_RUNNER, lineno=init_runner),
        Frame(MODEL_RUNNER, "__init__", "self.initialize(min_per_gpu_memory)" if version == "0.5.9" else "self.initialize()", lineno=model_runner),
    )


def to_initialize(version: str, call: str, lineno: int) -> tuple[Frame, ...]:
    """Down to ModelRunner.initialize, at its line `call` (e.g. "self.load_model()")."""
    return (*to_model_runner(version), Frame(MODEL_RUNNER, "initialize", call, lineno=lineno))


# -- loading the weights ------------------------------------------------------------------

_LOAD_MODEL_LINES = {"0.4.10.post2": (284, 642), "0.5.9": (492, 979), "0.5.23": (714, 1300)}  # initialize, load_model
_LOADER_LINES = {"0.4.10.post2": (436, 444), "0.5.9": (676, 685), "0.5.23": (904, 1028)}  # load_model, load_weights_and_postprocess


def to_load_model(version: str) -> tuple[Frame, ...]:
    """Down to ModelRunner.load_model asking the loader for the model."""
    getter = "self.model = get_model(model_config=self.model_config, load_config=self.load_config, device_config=DeviceConfig(self.device))"
    if version != "0.4.10.post2":
        getter = "self.model = self.loader.load_model(model_config=self.model_config, device_config=DeviceConfig(self.device, self.gpu_id))"
    initialize, load_model = _LOAD_MODEL_LINES[version]
    return (*to_initialize(version, "self.load_model()", initialize), Frame(MODEL_RUNNER, "load_model", getter, lineno=load_model))


def to_load_weights(version: str) -> tuple[Frame, ...]:
    """Down to the loader handing the checkpoint's weights to `model.load_weights`."""
    load_model, postprocess = _LOADER_LINES[version]
    get_model: tuple[Frame, ...] = ()
    if version == "0.4.10.post2":
        get_model = (Frame("sglang/srt/model_loader/__init__.py", "get_model", "return loader.load_model(model_config=model_config, device_config=device_config)", lineno=21),)
    return (
        *to_load_model(version),
        *get_model,
        Frame(LOADER, "load_model", "self.load_weights_and_postprocess(model, self._get_all_weights(model_config, model), target_device)", lineno=load_model),
        Frame(LOADER, "load_weights_and_postprocess", "model.load_weights(weights)", lineno=postprocess),
    )


def weight_key_error(model: str, key: str, version: str = "0.5.9") -> tuple[Frame, ...]:
    """`model`'s load_weights looking up a checkpoint tensor name it has no parameter for."""
    return (
        *to_load_weights(version),
        raise_frame(
            model, "load_weights",
            """
            for name, loaded_weight in weights:
                param = params_dict[name]
            """,
            env=(("weights", f"[({key!r}, None)]"), ("params_dict", "{'model.embed_tokens.weight': None}")),
            lineno=606,
        ),
    )


# -- allocating the KV cache -----------------------------------------------------------------

_MHA_POOL = "MHATokenToKVPool(self.max_total_num_tokens, page_size=self.page_size, dtype=self.kv_cache_dtype, head_num=self.model_config.get_num_kv_heads(get_attention_tp_size()), head_dim=self.model_config.head_dim, layer_num=self.num_effective_layers, device=self.device)"
# 0.4.10.post2 / 0.5.9: (initialize's call, its line, init_memory_pool's file and line, MHATokenToKVPool.__init__'s line)
_INIT_MEMORY_POOL = {
    "0.4.10.post2": ("self.init_memory_pool(min_per_gpu_memory, server_args.max_running_requests, server_args.max_total_tokens)", 330, MODEL_RUNNER, 1190, 410),
    "0.5.9": ("self.init_memory_pool(min_per_gpu_memory)", 589, "sglang/srt/model_executor/model_runner_kv_cache_mixin.py", 560, 640),
}
KV_ALLOC = Frame(
    MEMORY_POOL,
    "_create_buffers",
    "self.k_buffer = torch.zeros((self.size + self.page_size, self.head_num, self.head_dim), dtype=self.store_dtype, device=self.device)",
    lineno=2434,
)


def kv_pool_frames(version: str) -> tuple[Frame, ...]:
    """Down to MHATokenToKVPool.__init__ creating its buffers."""
    if version == "0.5.23":
        return (
            *to_initialize(version, "self.alloc_memory_pool(pre_model_load_memory)", 730),
            Frame(MODEL_RUNNER, "alloc_memory_pool", "self.token_to_kv_pool = self.kv_cache_configurator.build_kv_pool(result)", lineno=990),
            Frame("sglang/srt/model_executor/kv_cache_configurator.py", "build_kv_pool", "return MHATokenToKVPool(result.max_total_num_tokens, page_size=self.page_size, dtype=self.kv_cache_dtype, head_num=self.head_num, head_dim=self.head_dim, layer_num=self.layer_num, device=self.device)", lineno=402),
            Frame(MEMORY_POOL, "__init__", "self._create_buffers()", lineno=1620),
        )
    call, initialize, path, init_pool, pool = _INIT_MEMORY_POOL[version]
    return (
        *to_initialize(version, call, initialize),
        Frame(path, "init_memory_pool", f"self.token_to_kv_pool = {_MHA_POOL}", lineno=init_pool),
        Frame(MEMORY_POOL, "__init__", "self._create_buffers()", lineno=pool),
    )


def kv_alloc_frames(version: str) -> tuple[Frame, ...]:
    """The KV pool's first buffer allocation (where a KV-cache OOM is raised)."""
    return (*kv_pool_frames(version), KV_ALLOC)


# -- capturing CUDA graphs ---------------------------------------------------------------------

_CAPTURE_SOLUTIONS = {
    "0.5.23": (
        '"Possible solutions:\\n"\n'
        '"1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\\n"\n'
        '"2. set --cuda-graph-max-bs-decode to a smaller value (e.g., 16)\\n"\n'
        '"3. disable decode CUDA graph by --cuda-graph-backend-decode=disabled. "\n'
        '"(Not recommended. Huge performance loss)\\n"\n'
        '"Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \\n"'
    ),
    "older": (
        '"Possible solutions:\\n"\n'
        '"1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\\n"\n'
        '"2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\\n"\n'
        '"3. disable torch compile by not using --enable-torch-compile\\n"\n'
        '"4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\\n"\n'
        '"Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \\n"'
    ),
}
# the graph runner's file; ModelRunner.initialize's call, its line; the call creating the runner
# (in init_cuda_graphs / init_device_graphs), its line; the runner's __init__ and capture lines
_GRAPH_RUNNER = {
    "0.4.10.post2": ("sglang/srt/model_executor/cuda_graph_runner.py", "init_cuda_graphs", 338,
                     "self.cuda_graph_runner = CudaGraphRunner(self)", 1496, 383, 445),
    "0.5.9": ("sglang/srt/model_executor/cuda_graph_runner.py", "init_device_graphs", 608,
              "self.graph_runner = graph_runners[self.device](self)", 2156, 366, 476),
    "0.5.23": ("sglang/srt/model_executor/runner/decode_cuda_graph_runner.py", "init_cuda_graphs", 738,
               "self.decode_cuda_graph_runner = DecodeCudaGraphRunner(self)", 1200, 597, 1249),
}


def cuda_graph_frames(version: str, forward_lineno: int) -> tuple[Frame, ...]:
    """ModelRunner.init_cuda_graphs -> CudaGraphRunner.__init__ (try: capture() except RuntimeError: raise
    Exception("Capture cuda graph failed: ...")) -> capture -> ... -> ModelRunner.forward_decode (at
    `forward_lineno`) calling the model."""
    runner, init_graphs, initialize, create, create_lineno, init_line, capture_line = _GRAPH_RUNNER[version]
    solutions = _CAPTURE_SOLUTIONS["0.5.23" if version == "0.5.23" else "older"]
    msg_const = f"CUDA_GRAPH_CAPTURE_FAILED_MSG = (\n{textwrap.indent(solutions, '    ')}\n)"
    graph_runner_init = Frame(
        runner,
        "__init__",
        body=f"""
        {msg_const.replace(chr(10), chr(10) + '        ')}
        try:
            with model_capture_mode():
                self.capture()
        except RuntimeError as e:
            raise Exception(
                f"Capture cuda graph failed: {{e}}\\n{{CUDA_GRAPH_CAPTURE_FAILED_MSG}}"
            )
        """,
        env=(("self", "HOP:capture"), ("model_capture_mode", "__import__('contextlib').nullcontext")),
        lineno=init_line,
    )
    return (
        *to_initialize(version, f"self.{init_graphs}()", initialize),
        Frame(MODEL_RUNNER, init_graphs, create, lineno=create_lineno),
        graph_runner_init,
        Frame(runner, "capture", "graph, output_buffers = self.capture_one_batch_size(bs, forward)", lineno=capture_line),
        Frame(runner, "capture_one_batch_size", "run_once()", lineno=capture_line + 180),
        Frame(runner, "run_once", "logits_output_or_pp_proxy_tensors = forward(input_ids, forward_batch.positions, forward_batch)", lineno=capture_line + 160),
        Frame(MODEL_RUNNER, "forward_decode", "return self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch)", lineno=forward_lineno),
    )


# -- serving: the event loop down to the model's forward ------------------------------------

# event_loop_overlap, run_batch, ModelRunner.forward, _forward_raw, forward_decode / forward_extend
_FORWARD_LINES = {
    "0.4.10.post2": (790, 1720, 1620, 1660, 1545),
    "0.5.9": (1120, 2310, 2390, 2430, 2290),
    "0.5.23": (2080, 4650, 2890, 2950, 2800),
}


def forward_frames(version: str, mode: str = "decode") -> tuple[Frame, ...]:
    """A request being served: event loop -> run_batch -> forward."""
    event_loop, run_batch, forward, forward_raw, forward_mode = _FORWARD_LINES[version]
    fn = "forward_decode" if mode == "decode" else "forward_extend"
    return (
        _SERVING_TOP[version],
        Frame(SCHEDULER, "event_loop_overlap", "batch_result = self.run_batch(batch)", lineno=event_loop),
        Frame(SCHEDULER, "run_batch", "batch_result = self.model_worker.forward_batch_generation(model_worker_batch)", lineno=run_batch),
        Frame(TP_WORKER, "forward_batch_generation", "logits_output, can_run_cuda_graph = self.model_runner.forward(forward_batch, pp_proxy_tensors=pp_proxy_tensors)", lineno=240),
        Frame(MODEL_RUNNER, "forward", "output = self._forward_raw(forward_batch, skip_attn_backend_init, pp_proxy_tensors)", lineno=forward),
        Frame(MODEL_RUNNER, "_forward_raw", f"ret = self.{fn}(forward_batch, skip_attn_backend_init=skip_attn_backend_init, pp_proxy_tensors=pp_proxy_tensors)", lineno=forward_raw),
        Frame(MODEL_RUNNER, fn, "return self.model.forward(forward_batch.input_ids, forward_batch.positions, forward_batch, **kwargs)", lineno=forward_mode),
    )


QWEN_FORWARD = Frame(QWEN2, "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", lineno=470)
LOGITS_ALLOC = Frame(
    "sglang/srt/layers/logits_processor.py",
    "_get_logits",
    "logits = torch.empty((hidden_states.shape[0], lm_head.weight.shape[0]), dtype=hidden_states.dtype, device=hidden_states.device)",
    env=(("hidden_states", "NS(shape=(4096, 3584), dtype=None, device=None)"), ("lm_head", "NS(weight=NS(shape=(152064, 3584)))")),
    lineno=490,
)
ATTN_KERNEL = Frame(
    "sglang/srt/layers/attention/flashinfer_backend.py",
    "forward_decode",
    "o = decode_wrapper.forward(q.contiguous().view(-1, layer.tp_q_head_num, layer.head_dim), forward_batch.token_to_kv_pool.get_kv_buffer(layer.layer_id), sm_scale=layer.scaling)",
    lineno=560,
)


def attention_kernel_crash(pattern: str, name: str, version: str, error: tuple[str, str], before: tuple[str, ...] = (READY, DECODE)) -> Case:
    """The decode attention kernel failing on the device while serving."""
    return scheduler_crash(pattern, name, (*forward_frames(version), ATTN_KERNEL), before=before, torch_error=error)


# -- launching: python -m sglang.launch_server ----------------------------------------------

HTTP_LAUNCH = Frame("sglang/srt/entrypoints/http_server.py", "launch_server", "tokenizer_manager, template_manager, scheduler_info, port_args = _launch_subprocesses(server_args=server_args)", lineno=1330)


def from_launch_server(*chain: Frame) -> tuple[Frame, ...]:
    """launch_server.py's `launch_server(server_args)` calling down `chain`."""
    return (
        Frame(LAUNCH_SERVER, "<module>", "launch_server(server_args)", env=(("launch_server", "NEXT"), ("server_args", "None")), lineno=27),
        *chain,
    )


_PREPARE_LINES = {"0.4.10.post2": (2060, 1890, 400), "0.5.9": (5620, 5105, 830), "0.5.23": (9210, 9180, 1120)}  # prepare_server_args, from_cli_args, __post_init__


def to_server_args(version: str) -> tuple[Frame, ...]:
    """launch_server.py's `prepare_server_args(sys.argv[1:])` down to the ServerArgs dataclass calling __post_init__."""
    prepare, from_cli, _ = _PREPARE_LINES[version]
    return (
        Frame(LAUNCH_SERVER, "<module>", "server_args = prepare_server_args(sys.argv[1:])",
              env=(("prepare_server_args", "NEXT"), ("sys", "__import__('sys')")), lineno=11),
        Frame(SERVER_ARGS, "prepare_server_args", "return ServerArgs.from_cli_args(raw_args)", lineno=prepare),
        Frame(SERVER_ARGS, "from_cli_args", "return cls(**{attr: getattr(args, attr) for attr in attrs})", env=(("cls", "NEXT"), ("attrs", "[]"), ("args", "None")), lineno=from_cli),
        Frame("<string>", "__init__", "", body="__post_init__(self)", env=(("__post_init__", "NEXT"), ("self", "None"))),
    )


def server_args_chain(version: str, entry: str = "check_server_args") -> tuple[Frame, ...]:
    """Down to ServerArgs.__post_init__ calling `self.<entry>()`; in 0.5.23, down to the registered
    validation hooks being run (the next frame is a hook)."""
    post_init = _PREPARE_LINES[version][2]
    if version == "0.5.23":
        return (
            *to_server_args(version),
            Frame(SERVER_ARGS, "__post_init__", "self._validate_and_resolve()", lineno=post_init),
            Frame(SERVER_ARGS, "_validate_and_resolve", "run_validation_hooks(self)", lineno=1190),
            Frame("sglang/srt/arg_groups/registry.py", "run_validation_hooks", "hook(server_args)", env=(("hook", "NEXT"),), lineno=88),
        )
    return (*to_server_args(version), Frame(SERVER_ARGS, "__post_init__", f"self.{entry}()", lineno=post_init))


# -- a red herring: the multiprocessing resource tracker after a kill -------------------------

RESOURCE_TRACKER = raise_frame("stdlib:multiprocessing/resource_tracker.py", "main", """
    try:
        cache[rtype].remove(name)
    except Exception:
        sys.excepthook(*sys.exc_info())
    """, env=(("cache", "{'shared_memory': set(), 'semaphore': set()}"), ("rtype", "'shared_memory'"), ("name", "'/psm_3f2e9a1c'")), lineno=209)


# -- added for the wild corpus (scripts/wild_fixtures): frames placed at the lines a report showed --


def frame_at(path: str, function: str, statement: str, line: int, env: tuple[tuple[str, str], ...] = ()) -> Frame:
    """A one-statement frame whose statement is printed at `line` (its def sits two lines above)."""
    return Frame(path, function, statement, env=env, lineno=line - 2)


def failing_at(path: str, function: str, body: str, line: int, env: tuple[tuple[str, str], ...] = (), marker: str = "raise") -> Frame:
    """A frame running `body`, placed so that the first body line starting with `marker` (the
    statement that fails) is printed at `line`."""
    lines = textwrap.dedent(body).strip("\n").splitlines()
    index = next(i for i, text in enumerate(lines) if text.lstrip().startswith(marker))
    return Frame(path, function, body=body, env=env, lineno=line - 2 - index)


def scheduler_entry(call: str, line: int, wiring: tuple[tuple[str, str], ...]) -> Frame:
    """run_scheduler_process running `call` (printed at `line`) in the try/except that logs
    "Scheduler hit an exception: <traceback>" and signals the parent; `wiring` binds the names
    `call` uses, e.g. (("scheduler", "HOP:event_loop_overlap"),)."""
    return Frame(SCHEDULER, "run_scheduler_process", body=_RUN_SCHEDULER.format(call=call),
                 env=(*wiring, *_RUN_SCHEDULER_ENV), lineno=line - 3)


SCHEDULE_BATCH = "sglang/srt/managers/schedule_batch.py"


def alloc_req_slots(line: int, available: int, num_reqs: int) -> Frame:
    """ScheduleBatch.alloc_req_slots finding no free request slot (0.4.x-0.5.x wording)."""
    return failing_at(SCHEDULE_BATCH, "alloc_req_slots", """
        req_pool_indices = self.req_to_token_pool.alloc(num_reqs)
        if req_pool_indices is None:
            raise RuntimeError(
                "alloc_req_slots runs out of memory. "
                "Please set a smaller number for `--max-running-requests`. "
                f"{self.req_to_token_pool.available_size()=}, "
                f"{num_reqs=}, "
            )
        """, line, env=(("self", f"NS(req_to_token_pool=NS(alloc=lambda n: None, available_size=lambda: {available}))"),
                        ("num_reqs", str(num_reqs))))


def paged_decode_oom(line: int, wanted: int, available: int, evictable: int) -> Frame:
    """ScheduleBatch.alloc_paged_token_slots_decode out of KV slots (0.4.4: "Avaliable", as printed)."""
    return failing_at(SCHEDULE_BATCH, "alloc_paged_token_slots_decode", """
        out_cache_loc = self.token_to_kv_pool_allocator.alloc_decode(seq_lens, last_loc)
        if out_cache_loc is None:
            error_msg = (
                f"Decode out of memory. Try to lower your batch size.\\n"
                f"Try to allocate {len(seq_lens)} tokens.\\n"
                f"Avaliable tokens: {self.token_to_kv_pool_allocator.available_size() + self.tree_cache.evictable_size()}\\n"
                f"{self.token_to_kv_pool_allocator.available_size()=}\\n"
                f"{self.tree_cache.evictable_size()=}\\n"
            )
            logger.error(error_msg)
            raise RuntimeError(error_msg)
        """, line, env=(("self", f"NS(token_to_kv_pool_allocator=NS(alloc_decode=lambda *a: None, available_size=lambda: {available}), "
                                 f"tree_cache=NS(evictable_size=lambda: {evictable}))"),
                        ("seq_lens", f"[0] * {wanted}"), ("last_loc", "None"), ("logger", "__import__('logging').getLogger('sglang')")))


def hybrid_prefill_oom(line: int, wanted: int, full: tuple[int, int], mamba: tuple[int, int]) -> Frame:
    """alloc_paged_token_slots_extend out of KV slots with a hybrid (Mamba) cache (0.5.16 wording)."""
    return failing_at("sglang/srt/mem_cache/common.py", "alloc_paged_token_slots_extend", """
        out_cache_loc = allocator.alloc_extend(prefix_lens, seq_lens, last_loc, extend_num_tokens)
        if out_cache_loc is None:
            error_msg = (
                f"Prefill out of memory. Try to lower your batch size.\\n"
                f"Try to allocate {extend_num_tokens} tokens.\\n"
                f"{available_and_evictable_str(tree_cache)}"
            )
            raise RuntimeError(error_msg)
        """, line, env=(("allocator", "NS(alloc_extend=lambda *a: None)"), ("prefix_lens", "None"), ("seq_lens", "None"),
                        ("last_loc", "None"), ("extend_num_tokens", str(wanted)), ("tree_cache", "None"),
                        ("available_and_evictable_str", "lambda cache: "
                         f"'Available full tokens: {sum(full)} (full_available_size={full[0]} + full_evictable_size_={full[1]})\\n"
                         f"Available mamba: {sum(mamba)} (available_size={mamba[0]} + component_evictable_size_={mamba[1]})\\n'")))


PYNCCL = "sglang/srt/distributed/device_communicators/pynccl.py"
PYNCCL_WRAPPER = "sglang/srt/distributed/device_communicators/pynccl_wrapper.py"
# ncclGetErrorString for the ncclResult_t codes
NCCL_ERROR_STRINGS = {
    1: "unhandled cuda error (run with NCCL_DEBUG=INFO for details)",
    2: "unhandled system error (run with NCCL_DEBUG=INFO for details)",
    3: "internal error - please report this issue to the NCCL developers",
    5: "invalid usage (run with NCCL_DEBUG=WARN for details)",  # ncclInvalidUsage (nccl src/init.cc ncclGetErrorString)
}


def pynccl_init_rank(init_line: int, check_line: int, result: int) -> tuple[Frame, ...]:
    """NCCLLibrary.ncclCommInitRank handing a failing ncclResult_t to NCCL_CHECK, which raises."""
    return (
        frame_at(PYNCCL_WRAPPER, "ncclCommInitRank", "self.NCCL_CHECK(self._funcs[\"ncclCommInitRank\"](ctypes.byref(comm), world_size, unique_id, rank))",
                 init_line, env=(("self", "HOP:NCCL_CHECK"), ("ctypes", "NS(byref=lambda x: x)"), ("comm", "None"), ("world_size", "8"),
                                 ("unique_id", "None"), ("rank", "1"))),
        failing_at(PYNCCL_WRAPPER, "NCCL_CHECK", """
            if result != 0:
                error_str = self.ncclGetErrorString(result)
                raise RuntimeError(f"NCCL error: {error_str}")
            """, check_line, env=(("result", str(result)), ("self", f"NS(ncclGetErrorString=lambda r: {NCCL_ERROR_STRINGS[result]!r})"))),
    )


SGL_KERNEL_INIT = "sgl_kernel/__init__.py"


def sgl_kernel_common_ops(line: int) -> Frame:
    """sgl_kernel/__init__.py importing its compiled ops (the import fails as the case arranges)."""
    return frame_at(SGL_KERNEL_INIT, "<module>", "from sgl_kernel import common_ops", line)


# CudaGraphRunner's "Possible solutions" after "Capture cuda graph failed:", as the versions printed it
CAPTURE_HINTS = {
    "0.4.5": ("1. disable cuda graph by --disable-cuda-graph", "2. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)",
              "3. disable torch compile by not using --enable-torch-compile", "4. set --cuda-graph-max-bs to a smaller value (e.g., 32)"),
    "0.4.9": ("1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)", "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)",
              "3. disable torch compile by not using --enable-torch-compile",
              "4. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)"),
}


def capture_failed_at(path: str, line: int, hints: str) -> Frame:
    """CudaGraphRunner.__init__ re-raising a capture failure as `Exception("Capture cuda graph failed: ...")`,
    the raise printed at `line`; the next frame is `capture`."""
    message = "".join(f'"{hint}\\n"\n' for hint in ("Possible solutions:", *CAPTURE_HINTS[hints]))
    message += '"Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \\n"'
    return failing_at(path, "__init__", f"""
        try:
            with model_capture_mode():
                self.capture()
        except RuntimeError as e:
            raise Exception(
                f"Capture cuda graph failed: {{e}}\\n"
{textwrap.indent(message, ' ' * 16)}
            )
        """, line, env=(("self", "HOP:capture"), ("model_capture_mode", "__import__('contextlib').nullcontext")))


# -- added for the GPU-fault patterns (cases/gpu_faults.py): a kernel's own prints, native crashes ----------


def printing_then(path: str, function: str, printed: str, statement: str, line: int,
                  env: tuple[tuple[str, str], ...] = ()) -> Frame:
    """A frame whose `statement` (printed at `line`) fails after the lines a kernel or library wrote
    itself (a CUDA device assert's printf, flashinfer's `CUDA Error: ...`): they reach the log just
    before the traceback, as they do from a real process.  `printed` ends with a newline."""
    body = f"sys.stdout.write({printed!r}); sys.stdout.flush()\n{statement}"
    return failing_at(path, function, body, line, env=env, marker=statement)


def device_asserts(kernel: str, line: int, function: str, condition: str, threads: range) -> str:
    """A CUDA device-side assert as the device's printf writes it, once per failing thread."""
    return "".join(f"{kernel}:{line}: {function}: block: [0,0,0], thread: [{thread},0,0] Assertion `{condition}` failed.\n"
                   for thread in threads)


# faulthandler dumps thread ids (pthread addresses) and the interpreter's own stdlib path, which differ per
# run and machine: the scheduler child writes its dump to a file and the parent prints it with fixed ones.
_NATIVE_HELPER = ("_lsfx_native.py", '''
"""Wiring for native-crash fixtures (never on a crashing stack)."""
import os
import re
import sys
import sysconfig

_ENV = "LSFX_FAULT_DUMP"


def dump_file():
    """Where the spawned scheduler's faulthandler, and its stderr (Py_FatalError writes there), go: the
    file the parent chose before spawning."""
    dump = open(os.environ[_ENV], "w")
    os.dup2(dump.fileno(), 2)
    return dump


def prepare():
    os.environ[_ENV] = os.path.join(os.getcwd(), "faulthandler.txt")


def print_dump():
    text = open(os.environ[_ENV]).read().replace(sysconfig.get_paths()["stdlib"], "/usr/lib/python3.11")
    fixed = {}

    def stable(found):
        return fixed.setdefault(found.group(0), f"0x00007f{0x3a1c7ff640 + 0x1f3000 * len(fixed):010x}")

    sys.stdout.write(re.sub(r"(?<=[Tt]hread )0x[0-9a-f]{16}", stable, text))
    sys.stdout.flush()
''')
_NATIVE = "__import__('_lsfx_native')"


def fatal_signal(path: str, function: str, line: int, signal_name: str = "SIGSEGV") -> Frame:
    """The innermost frame of a native crash: its call into native code (at `line`) kills the process
    with a real `signal_name` on this thread (faulthandler shows no source line, only the line number)."""
    return failing_at(path, function, f"signal.pthread_kill(__import__('threading').get_ident(), signal.{signal_name})",
                      line, marker="signal.")


def native_crash(pattern: str, name: str, scheduler_call: str, call_line: int, wiring: tuple[tuple[str, str], ...],
                 below: tuple[Frame, ...], **fields: Any) -> Case:
    """`python -m sglang.launch_server` spawning its scheduler with multiprocessing (as SGLang does); the child
    enables faulthandler and runs `scheduler_call` (printed at `call_line`, its names bound by `wiring`) down
    `below` to a `fatal_signal` frame.  The log shows faulthandler's real dump of that child."""
    body = f"faulthandler.enable(file=fault_file)\n{scheduler_call}"
    entry = failing_at(SCHEDULER, "run_scheduler_process", body, call_line, marker=scheduler_call,
                       env=(("faulthandler", "__import__('faulthandler')"), ("fault_file", f"{_NATIVE}.dump_file()"), *wiring))
    frames = (
        Frame(LAUNCH_SERVER, "<module>", body='if __name__ == "__main__":\n    launch_server(server_args)',
              env=(("launch_server", "NEXT"), ("server_args", "None")), lineno=26),
        HTTP_LAUNCH,
        Frame("sglang/srt/entrypoints/engine.py", "_launch_subprocesses", body=f"""
            {_NATIVE}.prepare()
            mp.set_start_method("spawn", force=True)
            proc = mp.Process(target=run_scheduler_process, args=(server_args, port_args))
            proc.start()
            proc.join()
            {_NATIVE}.print_dump()
            return None, None, None, None
            """, env=(("mp", "__import__('multiprocessing')"), ("run_scheduler_process", "NEXT"), ("server_args", "None"),
                      ("port_args", "None")), lineno=880),
        entry,
        *below,
    )
    modules = (_NATIVE_HELPER, *fields.pop("extra_modules", ()))
    return Case(pattern, name, frames, mode="launch", extra_modules=modules, **fields)


def decoder_to_mlp(model: str, lines: tuple[int, int, int], mlp_call: str = "hidden_states = self.mlp(hidden_states)") -> tuple[Frame, ...]:
    """A decoder model's forward (in `model`) down to one layer calling its MLP: the CausalLM calling the model,
    the model calling a layer, the layer running `mlp_call`, printed at `lines`."""
    model_line, layer_line, mlp_line = lines
    return (
        frame_at(model, "forward", "hidden_states = self.model(input_ids, positions, forward_batch, input_embeds, pp_proxy_tensors=pp_proxy_tensors)", model_line),
        frame_at(model, "forward", "hidden_states, residual = layer(positions, hidden_states, forward_batch, residual)", layer_line, env=(("layer", "NEXT"),)),
        frame_at(model, "forward", mlp_call, mlp_line),
    )
