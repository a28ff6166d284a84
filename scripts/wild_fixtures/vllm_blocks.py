"""Building blocks for the vLLM part of the wild corpus: vLLM processes that fail, as real CPython prints them.

vLLM's logging (record format, NewLineFormatter, the `(EngineCore_DP0 pid=N)` process prefix) and its dying
processes are mirrored by pattern_fixtures/cases/vllm.py (read-only here); this module adds what the wild
threads showed beyond that: the V0 API server's own cascade, processes that only log records (a Ray placement
group that never forms), multiproc workers (V1 `Worker_TP<n>`, V0 `VllmWorkerProcess`), the older headers
(no process prefix before 0.10.2, `EngineCore_0` before 0.10.1) and the paste transforms that are vLLM's own
(the colour codes of the prefix as a terminal copy drops them or a log file keeps them).
"""

from __future__ import annotations

import re
from dataclasses import replace

from pattern_fixtures.cases import vllm as mirror
from pattern_fixtures.engine import Case, Frame
from pattern_fixtures.mirror import failing_at, frame_at

HELPER = mirror._HELPER  # the _lsfx_vllm logging module the pattern fixtures use (vllm/logger.py format)
ENGINE_PID, API_PID = mirror.ENGINE_PID, mirror.API_PID
Record = tuple[str, str, int, str]  # (level, path of the logging module, line, message)


def logging_expr(style: str, name: str | None, pid: int, stamp: str, records: tuple[Record, ...] = (),
                 uncaught: bool = False) -> str:
    """An env expression making the process print like vLLM's process `name` (style "v0": no bracket around the
    place, "v1": `[file.py:N]` and, with a name, the `(name pid=N) ` prefix on every line), clock from `stamp`."""
    return f"__import__('_lsfx_vllm').process({name!r}, {pid}, {style!r}, {stamp!r}, {records!r}, {uncaught})"


def log_only(style: str, name: str | None, pid: int, stamp: str, records: tuple[Record, ...]) -> Case:
    """A process that only logs `records` (no failure of its own in the paste)."""
    frame = Frame("vllm/entrypoints/cli/main.py", "main", body="return None",
                  env=(("_vllm_logging", logging_expr(style, name, pid, stamp, records)),))
    return Case("", "", (frame,), mode="plain", ranks="", extra_modules=(HELPER,))


def uncaught(frames: tuple[Frame, ...], style: str, name: str | None, pid: int, stamp: str, records: tuple[Record, ...] = (),
             torch_error: tuple[str, str] | None = None, modules: tuple[tuple[str, str], ...] = ()) -> Case:
    """A process (the API server, an offline script) dying uncaught: its records, then sys.excepthook's report.
    The first frame gets the logging wiring."""
    first = replace(frames[0], env=(("_vllm_logging", logging_expr(style, name, pid, stamp, records, uncaught=True)), *frames[0].env))
    return Case("", "", (first, *frames[1:]), mode="plain", ranks="", extra_modules=(HELPER, *modules), torch_error=torch_error)


# -- V0 (0.4-0.6): the API server in front of the MQ engine process ----------------------------------------------

def v0_api_server_failed(stamp: str) -> Case:
    """`vllm serve` (0.6.x) after its engine process died: vllm/entrypoints/openai/api_server.py
    build_async_engine_client_from_engine_args raising "Engine process failed to start" (asyncio frames left out)."""
    api = "vllm/entrypoints/openai/api_server.py"
    frames = (
        frame_at("vllm/scripts.py", "main", "args.dispatch_function(args)", 201, env=(("args", "HOP:dispatch_function"),)),
        frame_at("vllm/scripts.py", "serve", "uvloop.run(run_server(args))", 42,
                 env=(("uvloop", "NS(run=lambda coroutine: coroutine)"), ("run_server", "NEXT"), ("args", "None"))),
        # run_server and the asyncio frames between are left out, as in pattern_fixtures/cases/vllm.py
        frame_at(api, "build_async_engine_client", "return build_async_engine_client_from_engine_args(engine_args, args.disable_frontend_multiprocessing)", 107,
                 env=(("build_async_engine_client_from_engine_args", "NEXT"), ("engine_args", "None"), ("args", "NS(disable_frontend_multiprocessing=False)"))),
        failing_at(api, "build_async_engine_client_from_engine_args", """
            if not engine_process.is_alive():
                raise RuntimeError(
                    "Engine process failed to start. See stack trace for the root cause.")
            """, 192, env=(("engine_process", "NS(is_alive=lambda: False)"),)),
    )
    return uncaught(frames, "v0", None, API_PID, stamp)


def v0_kv_check(num_gpu_blocks: int, max_model_len: int) -> tuple[Frame, ...]:
    """The V0 engine's cache-size check (0.6.6.post1 frames) for a `max_model_len` of the reporter's choosing."""
    frames = mirror.v0_kv_check(num_gpu_blocks)
    check = frames[-1]
    env = tuple((name, str(max_model_len) if name == "max_model_len" else value) for name, value in check.env)
    return (*frames[:-1], replace(check, env=env))


# -- V1 multiproc workers (0.11.0 frames) -------------------------------------------------------------------------

EXECUTOR = "vllm/v1/executor/multiproc_executor.py"


def worker_process(name: str, pid: int, stamp: str, below: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """A V1 worker process (WorkerProc.worker_main) whose constructor fails: `logger.exception("WorkerProc failed to
    start.")`, the traceback on the logged record (vllm/v1/executor/multiproc_executor.py, 0.11.0)."""
    return (
        failing_at(EXECUTOR, "worker_main", """
            try:
                worker = WorkerProc(*args, **kwargs)
                ready_writer.send({"status": WorkerProc.READY_STR})
            except Exception:
                logger.exception("WorkerProc failed to start.")
            """, 571, marker="worker =", env=(
                ("_vllm_logging", logging_expr("v1", name, pid, stamp)), ("WorkerProc", "NEXT"), ("args", "()"), ("kwargs", "{}"),
                ("ready_writer", "None"), ("logger", "__import__('logging').getLogger('vllm.v1.executor.multiproc_executor')"))),
        frame_at(EXECUTOR, "__init__", "self.worker.init_device()", 429, env=(("self", "HOP:init_device"),)),
        frame_at("vllm/worker/worker_base.py", "init_device", "self.worker.init_device()  # type: ignore", 259, env=(("self", "HOP:init_device"),)),
        *below,
    )


def engine_waits_for_workers(stamp: str) -> tuple[Frame, ...]:
    """The engine core (0.11.0) creating a MultiprocExecutor whose workers did not come up."""
    return (
        *mirror.to_engine_core("0.11.0", "self.model_executor = executor_class(vllm_config)", 83),
        frame_at("vllm/executor/executor_base.py", "__init__", "self._init_executor()", 54),
        frame_at(EXECUTOR, "_init_executor", "self.workers = WorkerProc.wait_for_ready(unready_workers)", 106,
                 env=(("WorkerProc", "HOP:wait_for_ready"), ("unready_workers", "None"))),
        failing_at(EXECUTOR, "wait_for_ready", """
            if isinstance(e, Exception):
                raise e from None
            """, 509, env=(("e", "Exception('WorkerProc initialization failed due to an exception in a background process. "
                                 "See stack trace for root cause.')"),)),
    )


def engine_core(version: str, below: tuple[Frame, ...], records: tuple[Record, ...] = ()) -> Case:
    """The engine core process failing at start-up (run_engine_core logs it, _bootstrap prints it again)."""
    return Case("", "", mirror.engine_process(version, below, records), mode="plain", ranks="", extra_modules=(HELPER,))


def engine_startup_failed(failed: str) -> Case:
    """The API server's cascade (0.11.0) with `failed` as the dict of failed core processes the thread showed."""
    case = mirror.engine_startup_failed("0.11.0")
    last = case.frames[-1]
    return replace(case, frames=(*case.frames[:-1], replace(last, env=(("finished", failed),))))


# -- older record headers, as a Run's reformat -----------------------------------------------------------------------

ANSI = re.compile(r"\x1b\[[0-9;]*m")


def before_prefixes(text: str) -> str:
    """vLLM 0.8-0.10.1: no `(EngineCore_DP0 pid=N)` prefix on the engine's lines, the process named `EngineCore_0`."""
    text = re.sub(r"^\x1b\[1;36m\((?:EngineCore_DP0|APIServer) pid=\d+\)\x1b\[0;0m ", "", text, flags=re.M)
    return text.replace("EngineCore_DP0", "EngineCore_0")


def v0_worker_prefix(text: str, pid: int = 232) -> str:
    """V0's multiproc worker: `(VllmWorkerProcess pid=N) ` before every line (vllm/executor/multiproc_worker_utils.py
    _add_prefix, 0.5-0.6), its colour codes included."""
    return "".join(f"\x1b[1;36m(VllmWorkerProcess pid={pid})\x1b[0;0m {line}" for line in text.splitlines(keepends=True))


# -- paste transforms of vLLM's colour codes ---------------------------------------------------------------------------

def colour_dropped(text: str) -> str:
    """A terminal copy: the prefix's colour codes are gone, `(EngineCore_DP0 pid=585) ` stays (vllm#14040, #44411)."""
    return ANSI.sub("", text)


def colour_codes_visible(text: str) -> str:
    """A log file or `docker logs` copied into the issue: the escape byte is lost, its code stays visible
    (`[1;36m(APIServer pid=1)[0;0m `), as in vllm#26898's paste."""
    return text.replace("\x1b", "")
