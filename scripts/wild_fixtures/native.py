"""Native crashes under real CPython: a scheduler process spawned the way SGLang spawns it, with
faulthandler enabled, killed by a real SIGSEGV or SIGABRT inside the mirrored frames.

`python -m sglang.launch_server` (its `if __name__ == "__main__":` guard keeps the spawned child
from launching again) reaches `_launch_subprocesses`, which starts `run_scheduler_process` with
multiprocessing's spawn method.  The child enables faulthandler, starts the background threads
the report listed (tqdm's monitor, inductor's compile-worker reader) and runs down the case's
frames to the call that signals the process; faulthandler's dump is the interpreter's own.
"""

from __future__ import annotations

import signal

from pattern_fixtures.engine import Case, Frame
from pattern_fixtures.mirror import HTTP_LAUNCH, LAUNCH_SERVER, SCHEDULER, failing_at

ENGINE = "sglang/srt/entrypoints/engine.py"


def signal_call(signum: int) -> str:
    """An env expression: a C callable that takes any positional arguments and sends `signum` to the
    thread evaluating the expression (max() calls its key, pthread_kill, on the first item), so the
    faulting call adds no Python frame and faulthandler reports this thread as the current one."""
    return (f"__import__('functools').partial(max, {signum}, {signum}, key=__import__('functools').partial("
            f"__import__('signal').pthread_kill, __import__('threading').get_ident()))")


SEGV = signal_call(signal.SIGSEGV)
ABRT = signal_call(signal.SIGABRT)

# a background thread's module: `function` blocks at `line`; start() returns once it runs there
_THREAD_MODULE = """import _thread, time
_ready = _thread.allocate_lock()
_ready.acquire()
{padding}def {function}(*_args):
    _ready.release(); time.sleep(3600)


def start():
    _thread.start_new_thread({function}, ())
    _ready.acquire()
"""


def thread_module(path: str, function: str, line: int) -> tuple[str, str]:
    """(path, source) of a module whose `function` a background thread sits in at `line`."""
    return path, _THREAD_MODULE.format(padding="#\n" * (line - 5), function=function)


TQDM_MONITOR = thread_module("tqdm/_monitor.py", "run", 60)
INDUCTOR_READER = thread_module("torch/_inductor/compile_worker/subproc_pool.py", "_recv_msg", 61)


def spawned(line: int, call: str, wiring: tuple[tuple[str, str], ...], below: tuple[Frame, ...],
            threads: tuple[tuple[str, str], ...] = (), **fields: object) -> Case:
    """A launch whose scheduler child enables faulthandler, starts `threads` (thread_module) and runs
    `call` (printed at `line`, its names bound by `wiring`) into the frames `below`."""
    starts = [f"__import__({path.removesuffix('.py').replace('/', '.')!r}, fromlist=['x']).start()" for path, _ in threads]
    body = "\n".join(("faulthandler.enable()", *starts, call))
    entry = failing_at(SCHEDULER, "run_scheduler_process", body, line, env=(("faulthandler", "__import__('faulthandler')"), *wiring),
                       marker=call)
    frames = (
        Frame(LAUNCH_SERVER, "<module>", body='if __name__ == "__main__":\n    launch_server(server_args)',
              env=(("launch_server", "NEXT"), ("server_args", "None")), lineno=26),
        HTTP_LAUNCH,
        Frame(ENGINE, "_launch_subprocesses", body="""
            mp.set_start_method("spawn", force=True)
            proc = mp.Process(target=run_scheduler_process, args=(server_args, port_args, gpu_id, tp_rank, dp_rank, writer))
            proc.start()
            proc.join()
            return None, None, None, None
            """, env=(("mp", "__import__('multiprocessing')"), ("run_scheduler_process", "NEXT"), ("server_args", "None"),
                      ("port_args", "None"), ("gpu_id", "0"), ("tp_rank", "0"), ("dp_rank", "None"), ("writer", "None")), lineno=880),
        entry,
        *below,
    )
    return Case("wild", "native", frames, mode="launch", extra_modules=threads, **fields)  # type: ignore[arg-type]
