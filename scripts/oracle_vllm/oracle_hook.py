"""Stop-after-validation hook for the vLLM oracle venvs (copied into each venv's site-packages).

Loaded by a .pth file only when LOGSLEUTH_ORACLE_STOP is set. It patches two vLLM modules right after they
are executed, and nothing else:

1. ``vllm.engine.arg_utils``: ``EngineArgs.create_engine_config`` runs unchanged (argparse has already run;
   this builds every ``*Config`` dataclass, whose pydantic validation and ``__post_init__`` checks are the
   engine-config validation), then prints a marker and exits 0 -- the point where ``vllm serve`` would next
   start the engine core and need a GPU.
2. ``vllm.platforms``: selects vLLM's own ``CpuPlatform``, as a CPU build of vLLM would. The PyPI wheel is a
   CUDA build; with no GPU it finds no platform and stops at "Failed to infer device type" before
   validating anything. 0.33 honours ``VLLM_TARGET_DEVICE=cpu`` itself; 0.11 only looks for "cpu" in the
   package version, so the CPU plugin is made to answer yes.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable
from types import ModuleType
from typing import Any, NoReturn

MARKER = "LOGSLEUTH-ORACLE: validation passed"
CPU_PLATFORM = "vllm.platforms.cpu.CpuPlatform"


def _stop_after_engine_config(module: ModuleType) -> None:
    real = module.EngineArgs.create_engine_config

    def create_engine_config(self: Any, *args: Any, **kwargs: Any) -> NoReturn:
        real(self, *args, **kwargs)
        sys.stdout.flush()
        print(MARKER, flush=True)
        sys.stderr.flush()
        raise SystemExit(0)

    module.EngineArgs.create_engine_config = create_engine_config


def _select_cpu_platform(module: ModuleType) -> None:
    plugins = getattr(module, "builtin_platform_plugins", None)
    if isinstance(plugins, dict) and "cpu" in plugins:
        plugins["cpu"] = lambda: CPU_PLATFORM


PATCHES: dict[str, Callable[[ModuleType], None]] = {
    "vllm.engine.arg_utils": _stop_after_engine_config,
    "vllm.platforms": _select_cpu_platform,
}


class _PatchAfterImport(importlib.abc.MetaPathFinder):
    """Finds the real module spec, then wraps its loader so the patch runs right after the module body."""

    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        patch = PATCHES.get(fullname)
        if patch is None:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(fullname)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return spec
        real_exec = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            real_exec(module)
            patch(module)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    sys.meta_path.insert(0, _PatchAfterImport())
