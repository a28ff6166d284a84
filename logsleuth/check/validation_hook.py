"""Run SGLang's own argument validation and stop there: no model load, no server, nothing written.

This file is not imported by logsleuth: its text is the program of `python -c`, run by the Python that has SGLang
(an oracle venv here, or the host's over SSH: `logsleuth check HOST`).  So it uses only the standard library and
runs on Python 3.8+.  It is a copy of the logic of scripts/oracle/oracle_hook.py (that hook is installed into the
oracle venvs; this one must travel): keep the two alike.

    python -c "$(cat validation_hook.py)" launch_server|serve ARGS...

It registers stub modules under the names `sglang.launch_server` imports after argument handling (the HTTP, gRPC
and encoder entrypoints); their function runs `server_args.check_server_args()`, the launcher's next validation
step, and stops.  Everything before (argparse, prepare_server_args, __post_init__ / resolve_once) is SGLang's own
code.  The last line it prints is `LOGSLEUTH-CHECK {json}`: the outcome, the SGLang version and the error.
"""

from __future__ import annotations

import argparse
import importlib.abc
import importlib.util
import json
import os
import runpy
import sys
import traceback
import types
from typing import Any, NoReturn

RESULT_TAG = "LOGSLEUTH-CHECK "

STUB_ENTRYPOINTS = {
    "sglang.srt.entrypoints.http_server": ("launch_server",),
    "sglang.srt.entrypoints.grpc_server": ("serve_grpc",),
    "sglang.srt.disaggregation.encode_server": ("launch_server",),  # 0.5.9
    "sglang.srt.disaggregation.encoder.http_server": ("launch_server",),  # 0.5.23
    "sglang.srt.disaggregation.encoder.grpc_server": ("serve_grpc_encoder",),  # 0.5.23
    "sglang.srt.ray.http_server": ("launch_server",),  # 0.5.23 --use-ray
}


class ValidationPassed(BaseException):
    """Raised by the stubs once validation passed: unwinds through SGLang's `finally` blocks to us."""


def _stop_after_validation(server_args: Any, *_args: Any, **_kwargs: Any) -> NoReturn:
    server_args.check_server_args()
    raise ValidationPassed()


def _make_stub(name: str, functions: tuple[str, ...]) -> types.ModuleType:
    module = types.ModuleType(name, "logsleuth check stub: stops after argument validation")
    for function in functions:
        setattr(module, function, _stop_after_validation)
    return module


def _vllm_custom_ops_placeholder() -> None:
    """0.4.10.post2 imports `vllm._custom_ops` kernels at import time on CPUs without AMX; validation never calls
    them.  Only where vLLM is not installed: a real vLLM is never shadowed."""
    parent = types.ModuleType("vllm")
    parent.__path__ = []
    ops = types.ModuleType("vllm._custom_ops")

    def kernel_placeholder(name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)

        def not_available(*_a: Any, **_k: Any) -> NoReturn:
            raise RuntimeError(f"vllm kernel {name} is not available in logsleuth check")

        return not_available

    ops.__getattr__ = kernel_placeholder  # type: ignore[method-assign]
    parent._custom_ops = ops  # type: ignore[attr-defined]
    sys.modules["vllm"] = parent
    sys.modules["vllm._custom_ops"] = ops


class TorchAmxShim(importlib.abc.MetaPathFinder):
    """0.4.10.post2 calls `torch._C._cpu._is_amx_tile_supported()`, which newer torch lacks: supplied as False
    (the true answer where it is missing) only when it is missing."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "sglang":
            try:
                import torch
            except ImportError:
                return None
            cpu = getattr(torch._C, "_cpu", None)
            if cpu is not None and not hasattr(cpu, "_is_amx_tile_supported"):
                cpu._is_amx_tile_supported = lambda: False
        return None


def sglang_version() -> str:
    try:
        from importlib.metadata import version

        return version("sglang")
    except Exception:
        return ""


_usage_errors: list[str] = []


def _remember_usage_error(original: Any) -> Any:
    def error(self: argparse.ArgumentParser, message: str) -> None:
        _usage_errors.append(message)
        original(self, message)

    return error


class ModelCodeRefused(Exception):
    """A model's config names Python files of its own (`auto_map`): validation never imports them."""


def _refuse_model_code(*_args: Any, **_kwargs: Any) -> NoReturn:
    raise ModelCodeRefused("the model names code of its own (trust_remote_code); logsleuth check never runs it")


def refuse_model_code() -> None:
    """Replace transformers' loaders of a model's own modules before anything binds them: a command can come from
    a log, and its model directory from whoever wrote that log."""
    try:
        import transformers.dynamic_module_utils as dynamic
    except Exception:  # no transformers (or a broken one): SGLang will say so itself
        return
    dynamic.get_class_from_dynamic_module = _refuse_model_code
    dynamic.get_class_in_module = _refuse_model_code


def install() -> None:
    for name, functions in STUB_ENTRYPOINTS.items():
        sys.modules.setdefault(name, _make_stub(name, functions))
    if sglang_version().startswith("0.4.") and importlib.util.find_spec("vllm") is None:
        _vllm_custom_ops_placeholder()
    sys.meta_path.insert(0, TorchAmxShim())
    refuse_model_code()
    argparse.ArgumentParser.error = _remember_usage_error(argparse.ArgumentParser.error)  # type: ignore[method-assign]


def _where(tb: Any) -> str:
    """The innermost SGLang frame: `sglang/srt/server_args.py:2425 in _handle_speculative_decoding`."""
    found = ""
    for frame in traceback.extract_tb(tb):
        path = frame.filename.replace(os.sep, "/")
        if "/sglang/" in path:
            found = f"sglang/{path.rsplit('/sglang/', 1)[1]}:{frame.lineno} in {frame.name}"
    return found


def _source_line(tb: Any) -> str:
    frames = traceback.extract_tb(tb)
    return (frames[-1].line or "").strip() if frames else ""


def report(outcome: str, **fields: str) -> None:
    fields.update(outcome=outcome, version=sglang_version())
    sys.stdout.flush()
    sys.stderr.flush()
    print(RESULT_TAG + json.dumps(fields), flush=True)


def run(mode: str, args: list[str]) -> None:
    if mode == "serve":
        sys.argv = ["sglang", "serve"] + args
        from sglang.cli.main import main as cli_main

        cli_main()
    else:
        sys.argv = ["launch_server"] + args
        runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=True)


def main() -> int:
    mode, args = sys.argv[1], sys.argv[2:]
    if importlib.util.find_spec("sglang") is None:
        report("no-sglang", python=sys.executable)
        return 3
    install()
    try:
        run(mode, args)
    except ValidationPassed:
        report("passed")
        return 0
    except SystemExit as exit:
        if _usage_errors:
            report("usage", type="SystemExit(2)", message=_usage_errors[-1])
            return 2
        report("exited", type=f"SystemExit({exit.code})", message="the launcher exited before validation ended")
        return 1
    except BaseException as exc:  # everything SGLang raises is the answer, even KeyboardInterrupt's kin
        traceback.print_exc()
        message = str(exc).strip().splitlines()
        report("error", type=type(exc).__name__, message=message[0] if message else "",
               where=_where(exc.__traceback__), source=_source_line(exc.__traceback__))
        return 1
    report("exited", message="the launcher returned without reaching the server")
    return 1


if __name__ == "__main__":
    sys.exit(main())
