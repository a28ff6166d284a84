"""Real code that fails in every shape the traceback parser must understand.

Each public `shape_*` function is run by `harness.py` in a fresh interpreter; the
interpreter itself formats what happens (uncaught exception, faulthandler dump,
argparse usage error).  Nothing here formats a traceback by hand.
"""

from __future__ import annotations

import argparse
import ctypes
import faulthandler
import importlib
import os
import runpy
import sys
import tempfile
import threading
import time
import traceback
from collections.abc import Callable

# -- helpers that make the frames look like an inference server's ---------------------------


class SchedulerError(RuntimeError):
    """A dotted type name (`shapes.SchedulerError`) as printed for non-builtin classes."""


def load_config(config: dict[str, object]) -> object:
    return config["speculative"]["eagle_topk"]  # type: ignore[index]


def check_server_args(topk: int | None, draft: int | None) -> None:
    assert topk is None and draft is None


def compute_ratio(total: int, used: int) -> float:
    free = total - used
    return total / free


def forward_batch(batch: list[int]) -> int:
    return sum(batch) // (len(batch) - len(batch))


def run_scheduler(step: Callable[[], object]) -> object:
    return step()


def recurse(n: int) -> int:
    return recurse(n + 1) + 1


# -- plain and chained exceptions ------------------------------------------------------------------


def shape_simple() -> None:
    run_scheduler(lambda: check_server_args(1, 16))


def shape_keyerror_carets() -> None:
    run_scheduler(lambda: load_config({"speculative": {}}))


def shape_zerodiv_carets() -> None:
    run_scheduler(lambda: compute_ratio(10, 10))


def shape_cause() -> None:
    try:
        forward_batch([1, 2])
    except ZeroDivisionError as exc:
        raise SchedulerError("forward failed") from exc


def shape_context() -> None:
    try:
        load_config({})
    except KeyError:
        compute_ratio(3, 3)


def shape_mixed_chain() -> None:
    try:
        try:
            check_server_args(2, None)
        except AssertionError as exc:
            raise ValueError("invalid speculative arguments") from exc
    except ValueError:
        forward_batch([])


def shape_cause_without_traceback() -> None:
    raise SchedulerError("Capture cuda graph failed") from ValueError("never raised itself")


def shape_suppressed_context() -> None:
    try:
        load_config({})
    except KeyError:
        raise SchedulerError("config broken") from None


def shape_multiline_message() -> None:
    def capture() -> None:
        raise RuntimeError(
            "Capture cuda graph failed: CUDA error: out of memory\n"
            "Possible solutions:\n"
            "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. set --cuda-graph-max-bs to a smaller value (e.g., 16)\n"
            "3. disable torch compile by not using --enable-torch-compile\n"
            "Open an issue on GitHub https://github.com/sgl-project/sglang/issues/new/choose \n"
        )

    run_scheduler(capture)


def shape_generic_exception() -> None:
    """`raise Exception(…)`: a bare line of it is the failure only of a log without another."""

    def assert_pkg_version() -> None:
        raise Exception(
            "flashinfer with minimum required version 0.1.6 is not installed. Please uninstall the old "
            "version and reinstall the latest version by following the instructions at "
            "https://docs.flashinfer.ai/installation.html."
        )

    run_scheduler(assert_pkg_version)


def shape_message_with_blank_line() -> None:
    """An engine wraps an error whose text ends with a newline, then adds hints (SGLang's graph capture)."""
    try:
        raise RuntimeError(
            "CUDA error: operation not permitted when stream is capturing\n"
            "CUDA kernel errors might be asynchronously reported at some other API call.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
        )
    except RuntimeError as error:
        raise Exception(
            f"Capture cuda graph failed: {error}\n"
            "Possible solutions:\n"
            "1. set --mem-fraction-static to a smaller value (e.g., 0.8 or 0.7)\n"
            "2. disable CUDA graph by --disable-cuda-graph. (Not recommended. Huge performance loss)\n"
        ) from None


def shape_empty_message() -> None:
    def fail() -> None:
        raise NotImplementedError

    run_scheduler(fail)


def shape_string_frames() -> None:
    source = "def worker(x):\n    return {}[x]\n\nworker('weights')\n"
    exec(compile(source, "<string>", "exec"), {})


def shape_frozen_runpy() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "launch_server.py")
        with open(path, "w") as handle:
            handle.write("import sys\n\ndef main():\n    raise SystemError('bad launch')\n\nmain()\n")
        runpy.run_path(path, run_name="__main__")


def shape_frozen_import() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        with open(os.path.join(tmp, "broken_model.py"), "w") as handle:
            handle.write("import os\n\nWEIGHTS = os.environ['MODEL_WEIGHTS_THAT_DO_NOT_EXIST']\n")
        sys.path.insert(0, tmp)
        importlib.import_module("broken_model")


def shape_syntax_error() -> None:
    compile("x = (1,\n", "cfg.py", "exec")


def shape_syntax_error_chained() -> None:
    try:
        compile("def f(:\n    pass\n", "model_config.py", "exec")
    except SyntaxError as exc:
        raise SchedulerError("could not load the model config") from exc


def shape_recursion() -> None:
    sys.setrecursionlimit(200)
    recurse(0)


def shape_recursion_chained() -> None:
    sys.setrecursionlimit(150)
    try:
        recurse(0)
    except RecursionError:
        check_server_args(0, 0)


# -- exception groups ------------------------------------------------------------------------------


def _raised(exc: BaseException) -> BaseException:
    try:
        raise exc
    except BaseException as caught:
        return caught


def shape_group_simple() -> None:
    raise ExceptionGroup("startup failed", [ValueError("bad rank 0"), TypeError("bad rank 1")])


def shape_group_raised_members() -> None:
    members = [_raised(KeyError("model")), _raised(ZeroDivisionError("division by zero"))]
    run_scheduler(lambda: _raise_group("workers failed", members))


def _raise_group(message: str, members: list[BaseException]) -> None:
    raise ExceptionGroup(message, members)  # type: ignore[type-var]


def shape_group_nested() -> None:
    inner = _raised(ExceptionGroup("rank 1 failed", [ValueError("a"), _raised(KeyError("b"))]))
    plain_inner = ExceptionGroup("rank 2 failed", [OSError("disk full")])
    raise ExceptionGroup("all ranks failed", [inner, TypeError("t"), plain_inner])


def shape_group_as_cause() -> None:
    try:
        _raise_group("tp workers", [_raised(RuntimeError("NCCL error")), ValueError("v")])
    except ExceptionGroup as group:
        raise SchedulerError("Scheduler could not start") from group


def shape_group_as_context() -> None:
    try:
        _raise_group("tp workers", [ValueError("v")])
    except ExceptionGroup:
        load_config({"speculative": {}})


def shape_group_member_chain() -> None:
    def member() -> BaseException:
        try:
            try:
                load_config({})
            except KeyError as exc:
                raise ValueError("no speculative section") from exc
        except ValueError as caught:
            return caught
        raise AssertionError("unreachable")

    raise ExceptionGroup("config errors", [member(), TypeError("x")])


def shape_group_many() -> None:
    raise ExceptionGroup("20 ranks failed", [ValueError(f"rank {i}") for i in range(20)])


def shape_group_multiline_member() -> None:
    raise ExceptionGroup("eg", [RuntimeError("line one\nline two"), ValueError("v")])


# -- the process dies: faulthandler ----------------------------------------------------------------


def _emit_fatal_expectation() -> None:
    """Record where the crash happens, then crash on the same line."""
    stack = traceback.extract_stack()[:-1]
    lines = [line for _, _, line in ctypes.string_at.__code__.co_lines() if line]
    frames = [[f.filename, f.lineno, f.name, 0] for f in stack]
    frames.append([ctypes.__file__, max(lines), "string_at", 0])
    from harness import emit  # the harness is the running script

    emit({"kind": "fatal", "exceptions": [_block("Fatal Python error", "Segmentation fault", frames)]})


def _block(type_name: str, message: str, frames: list[list[object]]) -> dict[str, object]:
    return {"type": type_name, "message": message, "relation": None, "frames": frames, "members": [], "more": 0}


def crash_here() -> None:
    _emit_fatal_expectation(); ctypes.string_at(0)  # noqa: E702  (same line: the expected frame line)


def shape_segfault() -> None:
    faulthandler.enable()
    run_scheduler(crash_here)


def shape_segfault_single_thread() -> None:
    faulthandler.enable(all_threads=False)
    run_scheduler(crash_here)


def shape_segfault_threads() -> None:
    faulthandler.enable()
    ready = threading.Event()

    def watchdog() -> None:
        ready.set()
        time.sleep(60)

    threading.Thread(target=watchdog, daemon=True).start()
    ready.wait()
    run_scheduler(crash_here)


# -- argparse ---------------------------------------------------------------------------------------


def _server_parser(prog: str) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--model-path", required=True)
    parser.add_argument("--speculative-algorithm", choices=["EAGLE", "EAGLE3", "NEXTN"])
    parser.add_argument("--speculative-eagle-topk", type=int)
    return parser


def _parse(parser: argparse.ArgumentParser, argv: list[str]) -> None:
    original = parser.error

    def error(message: str) -> None:  # record argparse's own message, then let it print and exit
        from harness import emit

        emit({"kind": "usage", "exceptions": [_block("UsageError", message, [])]})
        original(message)

    parser.error = error  # type: ignore[method-assign]
    parser.parse_args(argv)


def shape_usage_unrecognized() -> None:
    _parse(_server_parser("launch_server.py"), ["--model-path", "m", "--num-speculative-tokens", "3"])


def shape_usage_invalid_choice() -> None:
    _parse(_server_parser("launch_server.py"), ["--model-path", "m", "--speculative-algorithm", "MEDUSA"])


def shape_usage_subcommand() -> None:
    parser = argparse.ArgumentParser(prog="sglang")
    sub = parser.add_subparsers(dest="command")
    serve = sub.add_parser("serve")
    serve.add_argument("--tp-size", type=int)
    # argparse reports errors of the sub-parser through the sub-parser's own `error`.
    _parse_sub(parser, serve, ["serve", "--tp-size", "two"])


def _parse_sub(parser: argparse.ArgumentParser, sub: argparse.ArgumentParser, argv: list[str]) -> None:
    original = sub.error

    def error(message: str) -> None:
        from harness import emit

        emit({"kind": "usage", "exceptions": [_block("UsageError", message, [])]})
        original(message)

    sub.error = error  # type: ignore[method-assign]
    parser.parse_args(argv)


SHAPES: dict[str, Callable[[], None]] = {
    name[len("shape_") :]: value for name, value in sorted(globals().items()) if name.startswith("shape_")
}
