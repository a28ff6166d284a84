"""Stop-after-validation hook for the SGLang oracle venvs (copied into each venv's site-packages).

Loaded by a .pth file only when LOGSLEUTH_ORACLE_STOP is set (not an SGL_/SGLANG_ name: SGLang warns about
unknown variables of its own prefix). It does two things:

1. Registers stub modules under the names ``sglang.launch_server`` imports *after* argument handling
   (the HTTP/gRPC/encoder entrypoints). Their function runs ``server_args.check_server_args()`` -- the next
   validation step the real launcher runs -- prints a marker and exits 0. Everything before it (argparse,
   ``prepare_server_args``, ``__post_init__`` / ``resolve_once``) is SGLang's own code, untouched.
2. Applies the minimal import shims a CPU-only machine needs (see SGLANG-ORACLE.md); they never change
   what the validation decides.
"""

from __future__ import annotations

import importlib.abc
import sys
import types
from typing import Any, NoReturn

MARKER = "LOGSLEUTH-ORACLE: validation passed"

# module name -> entrypoint function names that launch_server may import from it
STUB_ENTRYPOINTS: dict[str, tuple[str, ...]] = {
    "sglang.srt.entrypoints.http_server": ("launch_server",),
    "sglang.srt.entrypoints.grpc_server": ("serve_grpc",),
    "sglang.srt.disaggregation.encode_server": ("launch_server",),  # 0.5.9
    "sglang.srt.disaggregation.encoder.http_server": ("launch_server",),  # 0.5.23
    "sglang.srt.disaggregation.encoder.grpc_server": ("serve_grpc_encoder",),  # 0.5.23
    "sglang.srt.ray.http_server": ("launch_server",),  # 0.5.23 --use-ray
}


def _stop_after_validation(server_args: Any, *_args: Any, **_kwargs: Any) -> NoReturn:
    """Run the launcher's next validation step, then stop before anything needs a GPU."""
    server_args.check_server_args()
    sys.stdout.flush()
    print(MARKER, flush=True)
    sys.stderr.flush()
    raise SystemExit(0)


def _make_stub(name: str, functions: tuple[str, ...]) -> types.ModuleType:
    module = types.ModuleType(name, "logsleuth oracle stub: stops after argument validation")
    for func in functions:
        setattr(module, func, _stop_after_validation)
    return module


def _vllm_custom_ops_placeholder() -> None:
    """0.4.10.post2 imports ``vllm._custom_ops`` kernels at import time on CPUs without AMX.

    Kernels are never called during validation, so placeholders are enough. Only this submodule exists; any
    other ``vllm.*`` import still raises ImportError, so SGLang's own "is vllm available" checks stay false.
    """
    parent = types.ModuleType("vllm")
    parent.__path__ = []  # type: ignore[attr-defined]
    ops = types.ModuleType("vllm._custom_ops")

    def _kernel_placeholder(name: str) -> Any:
        if name.startswith("__"):  # inspect and pickle probe __file__, __spec__, ...: answer honestly
            raise AttributeError(name)

        def _not_available(*_a: Any, **_k: Any) -> NoReturn:
            raise RuntimeError(f"vllm kernel {name} is not available in the logsleuth oracle")

        return _not_available

    ops.__getattr__ = _kernel_placeholder  # type: ignore[attr-defined]
    parent._custom_ops = ops  # type: ignore[attr-defined]
    sys.modules["vllm"] = parent
    sys.modules["vllm._custom_ops"] = ops


class _TorchAmxShim(importlib.abc.MetaPathFinder):
    """0.4.10.post2 calls ``torch._C._cpu._is_amx_tile_supported()``, which torch 2.13 removed.

    Patched right after torch is imported (so plain ``python`` start-up stays fast); ``False`` is the true
    answer on a CPU without AMX.
    """

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> None:
        if fullname == "sglang":
            self._patch()
        return None

    @staticmethod
    def _patch() -> None:
        try:
            import torch
        except ImportError:
            return
        cpu = getattr(torch._C, "_cpu", None)
        if cpu is not None and not hasattr(cpu, "_is_amx_tile_supported"):
            cpu._is_amx_tile_supported = lambda: False


def _sglang_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("sglang")
    except PackageNotFoundError:
        return ""


def install() -> None:
    for name, functions in STUB_ENTRYPOINTS.items():
        sys.modules.setdefault(name, _make_stub(name, functions))
    if _sglang_version().startswith("0.4.") and "vllm" not in sys.modules:
        _vllm_custom_ops_placeholder()
    sys.meta_path.insert(0, _TorchAmxShim())
