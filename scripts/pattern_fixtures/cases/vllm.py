"""vLLM start-up failures: the KV cache too small for max_model_len (V1 and V0), bf16 on a pre-Ampere GPU,
free GPU memory below --gpu-memory-utilization, no kernel image for the GPU, an architecture vLLM does not
implement, a model path that is neither a directory nor a repo id, and a checkpoint's quantization scale the
model has no parameter for.

Patterns: vllm-max-model-len-exceeds-kv-cache, vllm-max-model-len-exceeds-kv-cache-v0, vllm-bf16-unsupported-gpu,
vllm-free-memory-below-utilization, vllm-no-kernel-image, vllm-unsupported-architecture, vllm-model-path-invalid,
vllm-weight-key-quant-scale.

The mirrored files, functions, source lines and line numbers follow the vLLM wheels from PyPI: 0.6.6.post1 (the
V0 multiprocessing engine), 0.11.0 and 0.33.0 (V1).  vLLM's own logging is mirrored by `_lsfx_vllm.py` below: its
record format (vllm/logger.py `_FORMAT`), NewLineFormatter (the record header repeated on every line of a
message, vllm/logging_utils/formatter.py) and the process prefix, which 0.10-0.26 write on every line a process
prints (`(EngineCore_DP0 pid=N) `, vllm/utils/__init__.py `_add_prefix`, 0.11.0) and 0.33 only on its log records
(`(EngineCore pid=N) ` in `_FORMAT`, vllm/logger.py, 0.33.0).  A process dies the way vLLM's do: the engine core's
`run_engine_core` (V0: `run_mp_engine`) logs the failure with `logger.exception` and re-raises it, and
multiprocessing's `_bootstrap` prints it again after `Process <name>:`; the API server dies uncaught, printed by
sys.excepthook.  The generator writes plain functions, so the asyncio frames of the API server (uvloop.run, the
asyncio runners, run_server, run_server_worker, build_async_engine_client and contextlib's __aenter__) are left
out between `cmd` and `build_async_engine_client_from_engine_args`.
"""

from __future__ import annotations

from ..engine import Case, Frame
from ..mirror import ILLEGAL_ACCESS, cuda_error, frame_at

# -- vLLM's logging and process prefixes -------------------------------------------------------

_HELPER = ("_lsfx_vllm.py", '''
"""Wiring for vLLM fixtures: vLLM's log records and process prefixes (never on a failing stack)."""
import calendar
import logging
import os
import sys
import time
import traceback

CYAN, RESET = "\\033[1;36m", "\\033[0;0m"  # vllm/utils/__init__.py (0.11.0)
FORMATS = {
    "v0": "%(levelname)s %(asctime)s %(fileinfo)s:%(lineno)d] %(message)s",  # vllm/logger.py (0.6.6.post1)
    "v1": "%(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s",  # vllm/logger.py (0.8.5.post1, 0.11.0)
    "named": "({name} pid={pid}) %(levelname)s %(asctime)s [%(fileinfo)s:%(lineno)d] %(message)s",  # (0.33.0)
}


class Prefixed:
    """vllm/utils/__init__.py _add_prefix (0.11.0): every line the process writes starts with its name."""

    def __init__(self, stream, prefix):
        self.stream, self.prefix, self.start_new_line = stream, prefix, True

    def write(self, s):
        if not s:
            return
        if self.start_new_line:
            self.stream.write(self.prefix)
        idx = 0
        while (next_idx := s.find("\\n", idx)) != -1:
            next_idx += 1
            self.stream.write(s[idx:next_idx])
            if next_idx == len(s):
                self.start_new_line = True
                return
            self.stream.write(self.prefix)
            idx = next_idx
        self.stream.write(s[idx:])
        self.start_new_line = False

    def flush(self):
        self.stream.flush()


class NewLineFormatter(logging.Formatter):
    """vllm/logging_utils/formatter.py: the header repeated on every line; a clock ticking a second per record."""

    def __init__(self, fmt, datefmt, start):
        super().__init__(fmt, datefmt)
        self.clock = start

    def formatTime(self, record, datefmt=None):
        self.clock += 1
        return time.strftime(datefmt, time.gmtime(self.clock))

    def format(self, record):
        record.fileinfo = record.filename
        msg = super().format(record)
        if record.message != "":
            parts = msg.split(record.message)
            msg = msg.replace("\\n", "\\r\\n" + parts[0])
        return msg


def process(name, pid, style, stamp, records=(), uncaught=False):
    """Make this interpreter print like vLLM's process `name`: `records` (level, path, line, message) are
    logged first; `uncaught`: an exception that escapes is printed by sys.excepthook and the process ends."""
    out = sys.__stdout__
    if name and style == "v1":
        out = Prefixed(out, f"{CYAN}({name} pid={pid}){RESET} ")
    sys.stdout = sys.stderr = out
    handler = logging.StreamHandler(out)
    start = calendar.timegm(time.strptime(stamp, "%Y-%m-%d %H:%M:%S"))
    handler.setFormatter(NewLineFormatter(FORMATS[style].format(name=name, pid=pid), "%m-%d %H:%M:%S", start))
    root = logging.getLogger("vllm")
    root.handlers[:] = [handler]
    root.setLevel(logging.INFO)
    for level, path, line, message in records:
        root.handle(root.makeRecord("vllm", getattr(logging, level), path, line, message, (), None))
    if uncaught:
        sys.excepthook = _print_and_exit
    return root


def _print_and_exit(etype, value, tb):
    """The interpreter's own report of an uncaught exception, without the fixture driver's frame."""
    traceback.print_exception(etype, value, tb.tb_next)
    sys.stderr.flush()
    os._exit(0)
''')

_PYDANTIC_CORE = ("pydantic_core/_pydantic_core.py", '''
class ValidationError(ValueError):
    """pydantic_core's error type (a Rust class); only its name and module show in a traceback."""
''')

# vLLM <version>: (log style, the engine core process's name for multiprocessing, the name in its prefix)
_STYLE = {"0.6.6.post1": "v0", "0.11.0": "v1", "0.33.0": "named"}
_ENGINE_NAME = {"0.6.6.post1": "SpawnProcess-1", "0.11.0": "EngineCore_DP0", "0.33.0": "EngineCore"}
ENGINE_PID, API_PID = 2817, 2694
STAMP = "2026-03-14 09:26:53"


def placed(path: str, function: str, first_line: int, source: str, env: tuple[tuple[str, str], ...] = ()) -> Frame:
    """A frame whose body is `source` (a block of the real function's lines, blank lines kept), its first
    line printed at `first_line`."""
    return Frame(path, function, body=source, env=env, lineno=first_line - 2)


def _logging(version: str, name: str | None, pid: int, records: tuple[tuple[str, str, int, str], ...] = (),
             uncaught: bool = False) -> str:
    return f"__import__('_lsfx_vllm').process({name!r}, {pid}, {_STYLE[version]!r}, {STAMP!r}, {records!r}, {uncaught})"


def _logger(module: str) -> str:
    return f"__import__('logging').getLogger({module!r})"


# -- the engine core process, down to the engine's constructor -----------------------------------

# multiprocessing/process.py (CPython 3.11): BaseProcess._bootstrap running the target (`self.run()` at line 314)
# and printing what escapes it after `Process <name>:`
_BOOTSTRAP_LINES = {
    311: "try:", 313: "    try:", 314: "        self.run()", 315: "        exitcode = 0", 316: "    finally:",
    317: "        util._exit_function()", 318: "except SystemExit as e:", 319: "    exitcode = 1", 326: "except:",
    327: "    exitcode = 1", 328: "    import traceback", 329: "    sys.stderr.write('Process %s:\\n' % self.name)",
    330: "    traceback.print_exc()",
}


def lines_at(lines: dict[int, str]) -> str:
    """Source whose lines sit at the given numbers (blank lines between them)."""
    return "\n".join(lines.get(number, "") for number in range(min(lines), max(lines) + 1))


CORE = "vllm/v1/engine/core.py"

# vllm/v1/engine/core.py EngineCoreProc.run_engine_core: (line of `try:`, the constructor call, its line,
# line of `except Exception as e:`, line of `raise e`)
_RUN_ENGINE_CORE = {
    "0.11.0": (686, "engine_core = EngineCoreProc(*args, **kwargs)", 699, 706, 712),
    "0.33.0": (1530, "engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)", 1555, 1582, 1588),
}


def _run_engine_core(version: str) -> Frame:
    start, call, call_line, handler, reraise = _RUN_ENGINE_CORE[version]
    lines = {start: "try:", call_line: f"    {call}", call_line + 1: "    engine_core.run_busy_loop()",
             handler - 3: "except SystemExit:", handler - 2: "    logger.debug(\"EngineCore exiting.\")", handler - 1: "    raise",
             handler: "except Exception as e:", handler + 1: "    if engine_core is None:",
             handler + 2: "        logger.exception(\"EngineCore failed to start.\")", handler + 3: "    else:",
             handler + 4: "        logger.exception(\"EngineCore encountered a fatal error.\")", reraise: "    raise e"}
    return placed(CORE, "run_engine_core", start, lines_at(lines), env=(
        ("EngineCoreProc", "NEXT"), ("args", "()"), ("kwargs", "{}"), ("dp_rank", "0"), ("engine_core", "None"),
        ("logger", _logger("vllm.v1.engine.core"))))


# vllm/engine/multiprocessing/engine.py run_mp_engine (0.6.6.post1): the V0 engine logs the exception itself
# (`logger.exception(e)`: its message, with no type, on the first line)
_RUN_MP_ENGINE = placed("vllm/engine/multiprocessing/engine.py", "run_mp_engine", 356, """
try:
    engine = MQLLMEngine.from_engine_args(engine_args=engine_args, usage_context=usage_context, ipc_path=ipc_path)



    signal.signal(signal.SIGTERM, signal_handler)

    engine.start()

except BaseException as e:
    logger.exception(e)
    engine_alive.value = False
    raise e
""", env=(("MQLLMEngine", "HOP:from_engine_args"), ("engine_args", "None"), ("usage_context", "None"), ("ipc_path", "None"),
          ("signal_handler", "None"), ("engine_alive", "NS(value=True)"), ("logger", _logger("vllm.engine.multiprocessing.engine"))))


def engine_process(version: str, below: tuple[Frame, ...], records: tuple[tuple[str, str, int, str], ...] = ()) -> tuple[Frame, ...]:
    """The engine core process (V0: the MQ engine process) failing at start-up, `below` its top frame."""
    name = _ENGINE_NAME[version]
    prefix = None if version == "0.6.6.post1" else name
    return (
        placed("stdlib:multiprocessing/process.py", "_bootstrap", 311, lines_at(_BOOTSTRAP_LINES), env=(
            ("_vllm_logging", _logging(version, prefix, ENGINE_PID, records)),
            ("self", f"NS(run=_target('f1'), name={name!r})"), ("util", "NS(_exit_function=lambda: None)"))),
        frame_at("stdlib:multiprocessing/process.py", "run", "self._target(*self._args, **self._kwargs)", 108),
        _RUN_MP_ENGINE if version == "0.6.6.post1" else _run_engine_core(version),
        *below,
    )


# -- V1: the engine core's constructor: the executor (worker) and the KV cache ---------------------------

# (EngineCoreProc.__init__ calling super().__init__, EngineCore.__init__ creating the executor, and calling
# _initialize_kv_caches): their lines
_ENGINE_CORE_INIT = {"0.11.0": (498, 83, 92), "0.33.0": (1232, 150, 163)}
_KV_INIT_CALL = {"0.11.0": "num_gpu_blocks, num_cpu_blocks, kv_cache_config = self._initialize_kv_caches(vllm_config)",
                 "0.33.0": "kv_cache_config = self._initialize_kv_caches(vllm_config)"}


def to_engine_core(version: str, call: str, line: int) -> tuple[Frame, ...]:
    """EngineCoreProc.__init__ -> EngineCore.__init__ at its line `call`."""
    proc_line = _ENGINE_CORE_INIT[version][0]
    return (
        frame_at(CORE, "__init__", "super().__init__(vllm_config, executor_class, log_stats, executor_fail_callback)", proc_line),
        frame_at(CORE, "__init__", call, line),
    )


def to_worker(version: str, method: str) -> tuple[Frame, ...]:
    """The uniprocess executor (TP=1) calling the worker's `method` ("init_device" or "load_model")."""
    executor_line = _ENGINE_CORE_INIT[version][1]
    frames = (*to_engine_core(version, "self.model_executor = executor_class(vllm_config)", executor_line),)
    if version == "0.33.0":
        return (
            *frames,
            frame_at("vllm/v1/executor/abstract.py", "__init__", "self._init_executor()", 120),
            frame_at("vllm/v1/executor/uniproc_executor.py", "_init_executor", f"self.driver_worker.{method}()", 69),
            frame_at("vllm/v1/worker/worker_base.py", method, f"self.worker.{method}()  # type: ignore", 365),
        )
    executor = (
        *frames,
        frame_at("vllm/executor/executor_base.py", "__init__", "self._init_executor()", 54),
        frame_at("vllm/executor/uniproc_executor.py", "_init_executor", f"self.collective_rpc({method!r})".replace("'", '"'),
                 54 if method == "init_device" else 55),
        frame_at("vllm/executor/uniproc_executor.py", "collective_rpc", "return [run_method(self.driver_worker, method, args, kwargs)]", 83,
                 env=(("run_method", "NEXT"),)),
        frame_at("vllm/utils/__init__.py", "run_method", "return func(*args, **kwargs)", 3122,
                 env=(("func", "NEXT"), ("args", "()"), ("kwargs", "{}"))),
    )
    if method == "init_device":  # WorkerWrapperBase.init_device; load_model goes through its __getattr__
        return (*executor, frame_at("vllm/worker/worker_base.py", "init_device", "self.worker.init_device()  # type: ignore", 259))
    return executor


GPU_WORKER = "vllm/v1/worker/gpu_worker.py"
CUDA_PLATFORM = "vllm/platforms/cuda.py"

# vllm/v1/worker/gpu_worker.py Worker.init_device (0.11.0), lines 157-196
_INIT_DEVICE = """
if self.device_config.device.type == "cuda":
    # This env var set by Ray causes exceptions with graph building.
    os.environ.pop("NCCL_ASYNC_ERROR_HANDLING", None)
    self.device = torch.device(f"cuda:{self.local_rank}")
    current_platform.set_device(self.device)

    current_platform.check_if_supports_dtype(self.model_config.dtype)

    # Initialize the distributed environment BEFORE taking
    # memory snapshot
    # This ensures NCCL buffers are allocated before we measure
    # available memory
    init_worker_distributed_environment(self.vllm_config, self.rank,
                                        self.distributed_init_method,
                                        self.local_rank,
                                        current_platform.dist_backend)

    # Set random seed.
    set_random_seed(self.model_config.seed)

    # Now take memory snapshot after NCCL is initialized
    gc.collect()
    torch.cuda.empty_cache()

    # take current memory snapshot
    self.init_snapshot = MemorySnapshot()
    self.requested_memory = (self.init_snapshot.total_memory *
                             self.cache_config.gpu_memory_utilization)
    if self.init_snapshot.free_memory < self.requested_memory:
        GiB = lambda b: round(b / GiB_bytes, 2)
        raise ValueError(
            f"Free memory on device "
            f"({GiB(self.init_snapshot.free_memory)}/"
            f"{GiB(self.init_snapshot.total_memory)} GiB) on startup "
            f"is less than desired GPU memory utilization "
            f"({self.cache_config.gpu_memory_utilization}, "
            f"{GiB(self.requested_memory)} GiB). Decrease GPU memory "
            f"utilization or reduce GPU memory used by other processes."
        )
"""
GIB = 1 << 30


def init_device_0110(platform: str, free_gib: float = 70.0, total_gib: float = 79.19) -> Frame:
    """Worker.init_device (0.11.0): `platform` is what `current_platform` is (a HOP to the next frame, or
    a stand-in); `free_gib` of `total_gib` is free at the memory check (0.9 of it is asked for)."""
    snapshot = f"NS(free_memory={int(free_gib * GIB)}, total_memory={int(total_gib * GIB)})"
    return placed(GPU_WORKER, "init_device", 157, _INIT_DEVICE, env=(
        ("self", "NS(device_config=NS(device=NS(type='cuda')), local_rank=0, model_config=NS(dtype='bfloat16', seed=0), "
                 "vllm_config=None, rank=0, distributed_init_method=None, cache_config=NS(gpu_memory_utilization=0.9))"),
        ("torch", "_Any()"), ("current_platform", platform), ("init_worker_distributed_environment", "_Any()"),
        ("set_random_seed", "_Any()"), ("gc", "_Any()"), ("MemorySnapshot", f"lambda: {snapshot}"), ("GiB_bytes", str(GIB))))


# vllm/platforms/cuda.py CudaPlatform.check_if_supports_dtype (0.11.0), lines 498-514
_CHECK_DTYPE_0110 = """
if torch_dtype == torch.bfloat16:  # noqa: SIM102
    if not cls.has_device_capability(80):
        capability = cls.get_device_capability()
        gpu_name = cls.get_device_name()

        if capability is None:
            compute_str = "does not have a compute capability"
        else:
            version_str = capability.as_version_str()
            compute_str = f"has compute capability {version_str}"

        raise ValueError(
            "Bfloat16 is only supported on GPUs "
            "with compute capability of at least 8.0. "
            f"Your {gpu_name} GPU {compute_str}. "
            "You can use float16 instead by explicitly setting the "
            "`dtype` flag in CLI, for example: --dtype=half.")
"""
# vllm/worker/worker.py _check_if_gpu_supports_dtype (0.6.6.post1), lines 468-483: no space after "the"
_CHECK_DTYPE_066 = """
if torch_dtype == torch.bfloat16:  # noqa: SIM102
    if not current_platform.has_device_capability(80):
        capability = current_platform.get_device_capability()
        gpu_name = current_platform.get_device_name()

        if capability is None:
            compute_str = "does not have a compute capability"
        else:
            version_str = capability.as_version_str()
            compute_str = f"has compute capability {version_str}"

        raise ValueError(
            "Bfloat16 is only supported on GPUs with compute capability "
            f"of at least 8.0. Your {gpu_name} GPU {compute_str}. "
            "You can use float16 instead by explicitly setting the"
            "`dtype` flag in CLI, for example: --dtype=half.")
"""


def _gpu(name: str, capability: str) -> str:
    return (f"NS(has_device_capability=lambda c: False, get_device_capability=lambda: NS(as_version_str=lambda: {capability!r}), "
            f"get_device_name=lambda: {name!r})")


def bf16_check_0110(gpu: str, capability: str) -> Frame:
    return placed(CUDA_PLATFORM, "check_if_supports_dtype", 498, _CHECK_DTYPE_0110, env=(
        ("torch_dtype", "'bfloat16'"), ("torch", "NS(bfloat16='bfloat16')"), ("cls", _gpu(gpu, capability))))


# -- V1: the KV cache check -----------------------------------------------------------------

KV_UTILS = "vllm/v1/core/kv_cache_utils.py"
# vllm/v1/core/kv_cache_utils.py check_enough_kv_cache_memory (0.11.0), lines 698-723
_CHECK_KV_0110 = """
if available_memory <= 0:
    raise ValueError("No available memory for the cache blocks. "
                     "Try increasing `gpu_memory_utilization` when "
                     "initializing the engine.")

max_model_len = vllm_config.model_config.max_model_len
needed_memory = max_memory_usage_bytes(vllm_config, kv_cache_spec.values())

if needed_memory > available_memory:
    # Estimate the maximum model length that can fit in the available memory
    estimated_max_len = estimate_max_model_len(vllm_config, kv_cache_spec,
                                               available_memory)
    estimated_msg = ""
    if estimated_max_len > 0:
        estimated_msg = (
            "Based on the available memory, "
            f"the estimated maximum model length is {estimated_max_len}.")

    raise ValueError(
        f"To serve at least one request with the models's max seq len "
        f"({max_model_len}), ({needed_memory/GiB_bytes:.2f} GiB KV "
        f"cache is needed, which is larger than the available KV cache "
        f"memory ({available_memory/GiB_bytes:.2f} GiB). "
        f"{estimated_msg} "
        f"Try increasing `gpu_memory_utilization` or decreasing "
        f"`max_model_len` when initializing the engine.")
"""
# vllm/v1/core/kv_cache_planning.py _check_enough_kv_cache_memory (0.33.0), lines 56-91
_CHECK_KV_0330 = """
if available_memory <= 0:
    raise ValueError(
        "No available memory for the cache blocks. "
        "Try increasing `gpu_memory_utilization` when initializing the engine "
        "(this flag also controls CPU memory reservation on the CPU "
        "backend, despite its name). "
        "See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ "
        "for more details."
    )

needed_memory = get_needed_memory()

if needed_memory > available_memory:
    estimated_max_len = estimate_max_model_len(available_memory)
    estimated_msg = ""
    if estimated_max_len > 0:
        estimated_msg = (
            "Based on the available memory, "
            f"the estimated maximum model length is {estimated_max_len}. "
        )

    raise ValueError(
        f"To serve at least one request with the model's max seq len "
        f"({max_model_len}), ({format_gib(needed_memory)} GiB KV "
        f"cache is needed, which is larger than the available KV cache "
        f"memory ({format_gib(available_memory)} GiB). {estimated_msg}"
        f"Try increasing `gpu_memory_utilization` (which also controls "
        f"CPU memory on the CPU backend) or decreasing `max_model_len` "
        f"when initializing the engine. "
        f"See https://docs.vllm.ai/en/latest/configuration/conserving_memory/ "
        f"for more details."
    )
"""
# Llama-3.1-8B in bf16: 128 KiB of KV per token; 131072 tokens need 16 GiB
KV_PER_TOKEN = 32 * 8 * 128 * 2 * 2
MAX_MODEL_LEN = 131072
# the engine's own report before the check (vllm/v1/worker/gpu_worker.py determine_available_memory, 0.11.0)
KV_RECORDS = (("INFO", GPU_WORKER, 276, "Available KV cache memory: 6.93 GiB"),)


def kv_check(version: str, available_bytes: int) -> tuple[Frame, ...]:
    """EngineCore._initialize_kv_caches -> get_kv_cache_configs -> the KV check, with `available_bytes` left."""
    needed, estimate = MAX_MODEL_LEN * KV_PER_TOKEN, (available_bytes // KV_PER_TOKEN) // 16 * 16
    if version == "0.11.0":
        return (
            *to_engine_core(version, _KV_INIT_CALL[version], _ENGINE_CORE_INIT[version][2]),
            frame_at(CORE, "_initialize_kv_caches", "kv_cache_configs = get_kv_cache_configs(vllm_config, kv_cache_specs, available_gpu_memory)", 199),
            frame_at(KV_UTILS, "get_kv_cache_configs",
                     "check_enough_kv_cache_memory(vllm_config, kv_cache_spec_one_worker, available_memory_one_worker)", 1243),
            placed(KV_UTILS, "check_enough_kv_cache_memory", 698, _CHECK_KV_0110, env=(
                ("available_memory", str(available_bytes)), ("vllm_config", f"NS(model_config=NS(max_model_len={MAX_MODEL_LEN}))"),
                ("kv_cache_spec", "{}"), ("max_memory_usage_bytes", f"lambda config, specs: {needed}"),
                ("estimate_max_model_len", f"lambda config, spec, memory: {estimate}"), ("GiB_bytes", str(GIB)))),
        )
    planning = "vllm/v1/core/kv_cache_planning.py"
    return (
        *to_engine_core(version, _KV_INIT_CALL[version], _ENGINE_CORE_INIT[version][2]),
        placed(CORE, "_initialize_kv_caches", 321, """
kv_cache_configs = get_kv_cache_configs(
    vllm_config, kv_cache_specs, available_gpu_memory, global_kv_cache_groups
)
""", env=(("get_kv_cache_configs", "NEXT"), ("vllm_config", "None"), ("kv_cache_specs", "None"), ("available_gpu_memory", "None"),
          ("global_kv_cache_groups", "None"))),
        placed(planning, "get_kv_cache_configs", 1554, """
_check_enough_kv_cache_memory(
    avail_mem,
    partial(_max_memory_usage_bytes_from_groups, builder, vllm_config, groups),
    vllm_config.model_config.max_model_len,
    partial(_estimate_max_model_len_from_groups, builder, vllm_config, groups),
)
""", env=(("_check_enough_kv_cache_memory", "NEXT"), ("avail_mem", "None"), ("partial", "_Any()"), ("builder", "None"),
          ("vllm_config", "_Any()"), ("groups", "None"), ("_max_memory_usage_bytes_from_groups", "None"),
          ("_estimate_max_model_len_from_groups", "None"))),
        placed(planning, "_check_enough_kv_cache_memory", 56, _CHECK_KV_0330, env=(
            ("available_memory", str(available_bytes)), ("get_needed_memory", f"lambda: {needed}"), ("max_model_len", str(MAX_MODEL_LEN)),
            ("estimate_max_model_len", f"lambda memory: {estimate}"), ("format_gib", f"lambda b: f'{{b / {GIB}:.2f}}'"))),
    )


# -- V1: loading the weights (0.11.0) ------------------------------------------------------------


def qwen2_key_error(key: str) -> tuple[Frame, ...]:
    """Worker.load_model -> ... -> Qwen2Model.load_weights looking up a checkpoint name it has no parameter for."""
    models = "vllm/model_executor/models"
    return (
        *to_worker("0.11.0", "load_model"),
        frame_at(GPU_WORKER, "load_model", "self.model_runner.load_model(eep_scale_up=eep_scale_up)", 213),
        placed("vllm/v1/worker/gpu_model_runner.py", "load_model", 2635, """
self.model = model_loader.load_model(
    vllm_config=self.vllm_config, model_config=self.model_config)
""", env=(("self", "_Any()"), ("model_loader", "HOP:load_model"))),
        frame_at("vllm/model_executor/model_loader/base_loader.py", "load_model", "self.load_weights(model, model_config)", 50),
        placed("vllm/model_executor/model_loader/default_loader.py", "load_weights", 264, """
loaded_weights = model.load_weights(
    self.get_all_weights(model_config, model))
""", env=(("self", "_Any()"), ("model", "HOP:load_weights"), ("model_config", "None"))),
        frame_at(f"{models}/qwen2.py", "load_weights", "return loader.load_weights(weights)", 523),
        frame_at(f"{models}/utils.py", "load_weights", 'autoloaded_weights = set(self._load_module("", self.module, weights))', 294),
        frame_at(f"{models}/utils.py", "_load_module", "loaded_params = module_load_weights(weights)", 225, env=(("module_load_weights", "NEXT"),)),
        placed(f"{models}/qwen2.py", "load_weights", 419, "param = params_dict[name]", env=(
            ("name", repr(key)), ("params_dict", "{'layers.0.mlp.down_proj.weight': None}"))),
    )


# -- the API server ----------------------------------------------------------------------------

API_SERVER = "vllm/entrypoints/openai/api_server.py"


def api_server(version: str, below: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """`vllm serve` (0.11.0) dying uncaught in build_async_engine_client_from_engine_args, `below` it."""
    return (
        frame_at("vllm/entrypoints/cli/main.py", "main", "args.dispatch_function(args)", 54, env=(
            ("_vllm_logging", _logging(version, "APIServer", API_PID, uncaught=True)), ("args", "HOP:dispatch_function"))),
        frame_at("vllm/entrypoints/cli/serve.py", "cmd", "uvloop.run(run_server(args))", 57,
                 env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
        *below,
    )


def engine_startup_failed(version: str) -> Case:
    """The API server's report that the engine core process exited during start-up (0.11.0)."""
    utils = "vllm/v1/engine/utils.py"
    exit_index = 8  # the frame of contextlib's __exit__: main, cmd and six frames down to MPClient.__init__ come first
    frames = api_server(version, (
        placed(API_SERVER, "build_async_engine_client_from_engine_args", 225, "async_llm = AsyncLLM.from_vllm_config(\n    vllm_config=vllm_config)",
               env=(("AsyncLLM", "HOP:from_vllm_config"), ("vllm_config", "None"))),
        placed("vllm/v1/engine/async_llm.py", "from_vllm_config", 207, "return cls(\n    vllm_config=vllm_config)", env=(("cls", "NEXT"), ("vllm_config", "None"))),
        placed("vllm/v1/engine/async_llm.py", "__init__", 134, "self.engine_core = EngineCoreClient.make_async_mp_client(\n    vllm_config=vllm_config)",
               env=(("self", "NS()"), ("EngineCoreClient", "HOP:make_async_mp_client"), ("vllm_config", "None"))),
        frame_at("vllm/v1/engine/core_client.py", "make_async_mp_client", "return AsyncMPClient(*client_args)", 102,
                 env=(("client_args", "()"),)),
        placed("vllm/v1/engine/core_client.py", "__init__", 769, "super().__init__(\n    asyncio_mode=True)", env=(("super", "NEXT"),)),
        placed("vllm/v1/engine/core_client.py", "__init__", 448, """
with launch_core_engines(vllm_config, executor_class,
                         log_stats) as (engine_manager,
                                        coordinator,
                                        addresses):
    self.resources.coordinator = coordinator
""", env=(("launch_core_engines", f"lambda *a: type('_CM', (), {{'__enter__': lambda cm: (None, None, None), '__exit__': _target('f{exit_index}')}})()"),
          ("vllm_config", "None"), ("executor_class", "None"), ("log_stats", "None"), ("self", "_Any()"))),
        # contextlib's _GeneratorContextManager.__exit__ resuming launch_core_engines after its yield
        placed("stdlib:contextlib.py", "__exit__", 144, "next(self.gen)",
               env=(("self", f"NS(gen=(lambda gen: (next(gen), gen)[1])(_target('f{exit_index + 1}')()))"),)),
        placed(utils, "launch_core_engines", 729, """
yield local_engine_manager, coordinator, addresses

# Now wait for engines to start.
wait_for_engine_startup(
    handshake_socket,
    addresses,
    engines_to_handshake,
    parallel_config,
)
""", env=(("local_engine_manager", "None"), ("coordinator", "None"), ("addresses", "None"), ("wait_for_engine_startup", "NEXT"),
          ("handshake_socket", "None"), ("engines_to_handshake", "None"), ("parallel_config", "None"))),
        placed(utils, "wait_for_engine_startup", 785, """
raise RuntimeError("Engine core initialization failed. "
                   "See root cause above. "
                   f"Failed core proc(s): {finished}")
""", env=(("finished", "{'EngineCore_DP0': 1}"),)),
    ))
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER,))


# -- the API server: config validation, wrapped by pydantic (0.11.0) ----------------------------------

# vllm/transformers_utils/config.py get_config (0.11.0): the message for a model that is neither
_INVALID_MODEL = (
    "Invalid repository ID or local directory specified:"
    " '{model}'.\nPlease verify the following requirements:\n"
    "1. Provide a valid Hugging Face repository ID.\n"
    "2. Specify a local directory that contains a recognized "
    "configuration file.\n"
    "   - For Hugging Face models: ensure the presence of a "
    "'config.json'.\n"
    "   - For Mistral models: ensure the presence of a "
    "'params.json'.\n"
    "3. For GGUF: pass the local path of the GGUF checkpoint.\n"
    "   Loading GGUF from a remote repo directly is not yet "
    "supported.\n"
)
SUPPORTED_ARCHS = {name: None for name in (
    "AquilaModel", "ArcticForCausalLM", "BaiChuanForCausalLM", "BloomForCausalLM", "DeepseekV3ForCausalLM",
    "Gemma3ForCausalLM", "LlamaForCausalLM", "MistralForCausalLM", "Qwen2ForCausalLM", "Qwen3ForCausalLM",
    "Qwen3MoeForCausalLM", "EagleLlamaForCausalLM", "Eagle3LlamaForCausalLM")}


def unsupported(architectures: list[str]) -> str:
    """vllm/model_executor/models/registry.py _ModelRegistry._raise_for_unsupported (0.11.0), the last raise."""
    return (f"Model architectures {architectures} are not supported for now. "
            f"Supported architectures: {SUPPORTED_ARCHS.keys()}")


def inspect_failed(architectures: list[str]) -> str:
    """The first raise of the same function: the architecture is known, its module failed to import."""
    return (f"Model architectures {architectures} failed "
            "to be inspected. Please check the logs for more details.")


def validation_error(message: str, model: str) -> str:
    """pydantic-core's text for a ValueError raised in ModelConfig.__post_init__ (a pydantic dataclass):
    the input's repr is cut to its first and last 25 characters."""
    arguments = repr({"model": model, "runner": "auto", "convert": "auto", "tokenizer": model, "logits_processors": None})
    shown = f"ArgsKwargs((), {arguments})"
    return ("1 validation error for ModelConfig\n"
            f"  Value error, {message} [type=value_error, input_value={shown[:25]}...{shown[-24:]}, input_type=ArgsKwargs]\n"
            "    For further information visit https://errors.pydantic.dev/2.11/v/value_error")


def model_config_rejected(message: str, model: str) -> Case:
    """`vllm serve MODEL` (0.11.0) stopped by ModelConfig's validation in the API server, before any engine runs."""
    error = f"__import__('pydantic_core._pydantic_core', fromlist=['ValidationError']).ValidationError({validation_error(message, model)!r})"
    frames = api_server("0.11.0", (
        frame_at(API_SERVER, "build_async_engine_client_from_engine_args", "vllm_config = engine_args.create_engine_config(usage_context=usage_context)", 206),
        frame_at("vllm/engine/arg_utils.py", "create_engine_config", "model_config = self.create_model_config()", 1142),
        placed("vllm/engine/arg_utils.py", "create_model_config", 994, "return ModelConfig(\n    model=self.model,\n    hf_config_path=self.hf_config_path)",
               env=(("ModelConfig", "NEXT"), ("self", "_Any()"))),
        # pydantic's dataclass __init__ hands the arguments to pydantic-core, which runs __post_init__ and raises
        # its ValidationError from Rust: no frame of __post_init__ is printed
        placed("pydantic/_internal/_dataclasses.py", "__init__", 121,
               "__tracebackhide__ = True\ns = __dataclass_self__\ns.__pydantic_validator__.validate_python(ArgsKwargs(args, kwargs), self_instance=s)",
               env=(("__dataclass_self__", "NS(__pydantic_validator__=NS(validate_python=dict))"),
                    ("ArgsKwargs", f"__import__('functools').partial(map, __import__('_lsfx').c_raiser({error}))"),
                    ("args", "(0,)"), ("kwargs", "(0,)"))),
    ))
    return Case("", "", frames, mode="plain", ranks="", extra_modules=(_HELPER, _PYDANTIC_CORE))


# -- V0 (0.6.6.post1): the MQ engine process down to LLMEngine -----------------------------------------

LLM_ENGINE = "vllm/engine/llm_engine.py"
GPU_EXECUTOR = "vllm/executor/gpu_executor.py"
V0_WORKER = "vllm/worker/worker.py"


def to_llm_engine(call: str, line: int) -> tuple[Frame, ...]:
    """MQLLMEngine.from_engine_args -> MQLLMEngine.__init__ -> LLMEngine.__init__ at its line `call` (0.6.6.post1)."""
    mq = "vllm/engine/multiprocessing/engine.py"
    return (
        placed(mq, "from_engine_args", 119, "return cls(ipc_path=ipc_path,\n           use_async_sockets=use_async_sockets,\n"
               "           vllm_config=engine_config,\n           executor_class=executor_class)",
               env=(("cls", "NEXT"), ("ipc_path", "None"), ("use_async_sockets", "False"), ("engine_config", "None"), ("executor_class", "None"))),
        frame_at(mq, "__init__", "self.engine = LLMEngine(*args, **kwargs)", 71, env=(("args", "()"), ("kwargs", "{}"))),
        frame_at(LLM_ENGINE, "__init__", call, line),
    )


def to_v0_worker(method: str) -> tuple[Frame, ...]:
    """The V0 GPU executor calling its worker's `method` ("init_device" or "load_model")."""
    return (
        *to_llm_engine("self.model_executor = executor_class(vllm_config=vllm_config, )", 273),
        frame_at("vllm/executor/executor_base.py", "__init__", "self._init_executor()", 36),
        frame_at(GPU_EXECUTOR, "_init_executor", f"self.driver_worker.{method}()", 34 if method == "init_device" else 35),
    )


# vllm/worker/worker.py raise_if_cache_size_invalid (0.6.6.post1), lines 488-503
_RAISE_IF_CACHE_SIZE_INVALID = """
if is_attention_free and num_gpu_blocks != 0:
    raise ValueError("No memory should be allocated for the cache blocks "
                     f"for an attention-free model, but {num_gpu_blocks}"
                     "blocks are allocated.")
if not is_attention_free and num_gpu_blocks <= 0:
    raise ValueError("No available memory for the cache blocks. "
                     "Try increasing `gpu_memory_utilization` when "
                     "initializing the engine.")
max_seq_len = block_size * num_gpu_blocks
if not is_attention_free and max_model_len > max_seq_len:
    raise ValueError(
        f"The model's max seq len ({max_model_len}) "
        "is larger than the maximum number of tokens that can be "
        f"stored in KV cache ({max_seq_len}). Try increasing "
        "`gpu_memory_utilization` or decreasing `max_model_len` when "
        "initializing the engine.")
"""
V0_MAX_MODEL_LEN = 32768


def v0_kv_check(num_gpu_blocks: int) -> tuple[Frame, ...]:
    """LLMEngine._initialize_kv_caches -> the worker's cache size check, with `num_gpu_blocks` of 16 tokens."""
    return (
        *to_llm_engine("self._initialize_kv_caches()", 276),
        frame_at(LLM_ENGINE, "_initialize_kv_caches", "self.model_executor.initialize_cache(num_gpu_blocks, num_cpu_blocks)", 429,
                 env=(("num_gpu_blocks", str(num_gpu_blocks)), ("num_cpu_blocks", "2048"))),
        frame_at(GPU_EXECUTOR, "initialize_cache", "self.driver_worker.initialize_cache(num_gpu_blocks, num_cpu_blocks)", 83,
                 env=(("num_gpu_blocks", str(num_gpu_blocks)), ("num_cpu_blocks", "2048"))),
        placed(V0_WORKER, "initialize_cache", 266, "raise_if_cache_size_invalid(num_gpu_blocks,\n"
               "                            self.cache_config.block_size,\n                            self.cache_config.is_attention_free,\n"
               "                            self.model_config.max_model_len)",
               env=(("raise_if_cache_size_invalid", "NEXT"), ("num_gpu_blocks", str(num_gpu_blocks)), ("self", "_Any()"))),
        placed(V0_WORKER, "raise_if_cache_size_invalid", 488, _RAISE_IF_CACHE_SIZE_INVALID, env=(
            ("is_attention_free", "False"), ("num_gpu_blocks", str(num_gpu_blocks)), ("block_size", "16"),
            ("max_model_len", str(V0_MAX_MODEL_LEN)))),
    )


def v0_kv_records(num_gpu_blocks: int) -> tuple[tuple[str, str, int, str], ...]:
    """vllm/executor/gpu_executor.py GPUExecutor.initialize_cache's two records (0.6.6.post1)."""
    return (("INFO", GPU_EXECUTOR, 76, f"# GPU blocks: {num_gpu_blocks}, # CPU blocks: 2048"),
            ("INFO", GPU_EXECUTOR, 80, f"Maximum concurrency for {V0_MAX_MODEL_LEN} tokens per request: {num_gpu_blocks * 16 / V0_MAX_MODEL_LEN:.2f}x"))


def v0_bf16(gpu: str, capability: str) -> tuple[Frame, ...]:
    return (
        *to_v0_worker("init_device"),
        frame_at(V0_WORKER, "init_device", "_check_if_gpu_supports_dtype(self.model_config.dtype)", 140),
        placed(V0_WORKER, "_check_if_gpu_supports_dtype", 468, _CHECK_DTYPE_066, env=(
            ("torch_dtype", "'bfloat16'"), ("torch", "NS(bfloat16='bfloat16')"), ("current_platform", _gpu(gpu, capability)))),
    )


def v0_key_error(key: str) -> tuple[Frame, ...]:
    """The V0 loader handing a checkpoint to Qwen2's load_weights, which has no parameter for `key`."""
    models = "vllm/model_executor/models"
    return (
        *to_v0_worker("load_model"),
        frame_at(V0_WORKER, "load_model", "self.model_runner.load_model()", 155),
        frame_at("vllm/worker/model_runner.py", "load_model", "self.model = get_model(vllm_config=self.vllm_config)", 1096),
        frame_at("vllm/model_executor/model_loader/__init__.py", "get_model", "return loader.load_model(vllm_config=vllm_config)", 12),
        placed("vllm/model_executor/model_loader/loader.py", "load_model", 366, "loaded_weights = model.load_weights(\n"
               "    self._get_all_weights(model_config, model))", env=(("model", "HOP:load_weights"), ("self", "_Any()"), ("model_config", "None"))),
        frame_at(f"{models}/qwen2.py", "load_weights", "return loader.load_weights(weights)", 506),
        frame_at(f"{models}/utils.py", "load_weights", 'autoloaded_weights = set(self._load_module("", self.module, weights))', 237),
        frame_at(f"{models}/utils.py", "_load_module", "loaded_params = module_load_weights(weights)", 175, env=(("module_load_weights", "NEXT"),)),
        placed(f"{models}/qwen2.py", "load_weights", 379, "param = params_dict[name]", env=(
            ("name", repr(key)), ("params_dict", "{'layers.0.mlp.down_proj.weight': None}"))),
    )


# -- the cases ---------------------------------------------------------------------------------------

def engine_crash(pattern: str, name: str, version: str, below: tuple[Frame, ...], api_cascade: bool = False,
                 records: tuple[tuple[str, str, int, str], ...] = (), torch_error: tuple[str, str] | None = None) -> Case:
    """The engine core process failing at start-up; with `api_cascade`, the API server's report follows."""
    then = (engine_startup_failed(version),) if api_cascade else ()
    return Case(pattern, name, engine_process(version, below, records), mode="plain", ranks="", extra_modules=(_HELPER,),
                then=then, torch_error=torch_error)


FREE_MEMORY_0110 = (*to_worker("0.11.0", "init_device"), init_device_0110("_Any()", free_gib=59.32))
BF16_0110 = (*to_worker("0.11.0", "init_device"), init_device_0110("HOP:check_if_supports_dtype"), bf16_check_0110("Tesla V100-SXM2-32GB", "7.0"))
NO_KERNEL_0110 = (*to_worker("0.11.0", "init_device"), init_device_0110("HOP:set_device"),
                  frame_at(CUDA_PLATFORM, "set_device", "_ = torch.zeros(1, device=device)", 83))


def free_memory_0330() -> tuple[Frame, ...]:
    """Worker.init_device -> request_memory (0.33.0): 18.42 of 23.53 GiB free, 0.9 asked for."""
    snapshot = f"NS(device_='cuda:0', free_memory={int(18.42 * GIB)}, total_memory={int(23.53 * GIB)})"
    return (
        *to_worker("0.33.0", "init_device"),
        placed(GPU_WORKER, "init_device", 542, "self.requested_memory = request_memory(\n    init_snapshot, self.cache_config, external_weight_memory\n)",
               env=(("request_memory", "NEXT"), ("init_snapshot", "None"), ("self", "NS(cache_config=None)"), ("external_weight_memory", "0"))),
        placed("vllm/v1/worker/utils.py", "request_memory", 724, """
requested_memory = math.ceil(
    init_snapshot.total_memory * cache_config.gpu_memory_utilization
)
""" + "\n" * 34 + """
if init_snapshot.free_memory < requested_memory:
    raise ValueError(
        f"Free memory on device {init_snapshot.device_} "
        f"({format_gib(init_snapshot.free_memory)}/"
        f"{format_gib(init_snapshot.total_memory)} GiB) on startup "
        f"is less than desired GPU memory utilization "
        f"({cache_config.gpu_memory_utilization}, "
        f"{format_gib(requested_memory)} GiB). Decrease GPU memory "
        f"utilization or reduce GPU memory used by other processes."
    )
""".lstrip("\n"), env=(("math", "__import__('math')"), ("init_snapshot", snapshot), ("cache_config", "NS(gpu_memory_utilization=0.9)"),
                       ("format_gib", f"lambda b: f'{{b / {GIB}:.2f}}'"))),
    )


KV = "vllm-max-model-len-exceeds-kv-cache"
KV_V0 = "vllm-max-model-len-exceeds-kv-cache-v0"
BF16 = "vllm-bf16-unsupported-gpu"
FREE = "vllm-free-memory-below-utilization"
KERNEL = "vllm-no-kernel-image"
ARCH = "vllm-unsupported-architecture"
PATH = "vllm-model-path-invalid"
SCALE = "vllm-weight-key-quant-scale"
ENGINE_DIED = "vllm-engine-core-init-failed"

KV_0110 = engine_crash(KV, "positive-0.11.0", "0.11.0", kv_check("0.11.0", int(6.93 * GIB)), api_cascade=True, records=KV_RECORDS)
V0_KV = engine_crash(KV_V0, "positive-0.6.6.post1", "0.6.6.post1", v0_kv_check(1478), records=v0_kv_records(1478))
BF16_CASE = engine_crash(BF16, "positive-0.11.0", "0.11.0", BF16_0110, api_cascade=True)
FREE_CASE = engine_crash(FREE, "positive-0.11.0", "0.11.0", FREE_MEMORY_0110, api_cascade=True)
ARCH_CASE = model_config_rejected(unsupported(["Eagle2_5_VLForConditionalGeneration"]), "nvidia/Eagle2.5-8B")
PATH_CASE = model_config_rejected(_INVALID_MODEL.format(model="/models/Qwen3-8B"), "/models/Qwen3-8B")

CASES = (
    KV_0110,
    engine_crash(KV, "positive-0.33.0", "0.33.0", kv_check("0.33.0", int(4.25 * GIB))),
    engine_crash(KV, "negative-0.11.0-no-available-memory", "0.11.0", kv_check("0.11.0", 0)),
    V0_KV.named(KV, "negative-v0-wording"),

    V0_KV,
    engine_crash(KV_V0, "negative-0.6.6.post1-no-available-memory", "0.6.6.post1", v0_kv_check(0), records=v0_kv_records(0)),
    KV_0110.named(KV_V0, "negative-v1-wording"),

    BF16_CASE,
    engine_crash(BF16, "positive-0.6.6.post1-no-space", "0.6.6.post1", v0_bf16("Tesla T4", "7.5")),
    FREE_CASE.named(BF16, "negative-0.11.0-free-memory"),

    FREE_CASE,
    engine_crash(FREE, "positive-0.33.0", "0.33.0", free_memory_0330()),
    BF16_CASE.named(FREE, "negative-0.11.0-bf16"),

    engine_crash(KERNEL, "positive-0.11.0", "0.11.0", NO_KERNEL_0110, api_cascade=True,
                 torch_error=cuda_error("no kernel image is available for execution on the device")),
    engine_crash(KERNEL, "negative-0.11.0-illegal-memory-access", "0.11.0", NO_KERNEL_0110, torch_error=ILLEGAL_ACCESS),

    ARCH_CASE.named(ARCH, "positive-0.11.0-apiserver"),
    model_config_rejected(inspect_failed(["Qwen3ForCausalLM"]), "Qwen/Qwen3-8B").named(ARCH, "negative-0.11.0-inspect-failed"),

    PATH_CASE.named(PATH, "positive-0.11.0-apiserver"),
    ARCH_CASE.named(PATH, "negative-0.11.0-unsupported-architecture"),

    engine_crash(SCALE, "positive-0.11.0", "0.11.0", qwen2_key_error("layers.0.mlp.down_proj.weight_scale"), api_cascade=True),
    engine_crash(SCALE, "positive-0.6.6.post1", "0.6.6.post1", v0_key_error("layers.0.mlp.down_proj.weight_scale")),
    engine_crash(SCALE, "negative-0.11.0-rotary-inv-freq", "0.11.0", qwen2_key_error("model.layers.0.self_attn.rotary_emb.inv_freq")),

    # The cascade alone: a log cut above the API server's report (vllm-project/vllm#21882, #26898).  With its root
    # above it, it is the report's second group (the KV, bf16, free-memory and kernel positives show that).
    engine_startup_failed("0.11.0").named(ENGINE_DIED, "positive-0.11.0-root-not-in-log"),
    ARCH_CASE.named(ENGINE_DIED, "negative-0.11.0-apiserver-config-error"),
)
