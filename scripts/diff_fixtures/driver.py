"""Run inside an SGLang oracle venv: the real `sglang.launch_server` up to the end of its argument handling, then
print `server_args=` exactly as that version's engine logs it, and stop before anything needs a GPU.

Usage (the oracle environment from scripts/oracle/run.py, LOGSLEUTH_ORACLE_STOP=1):
    python driver.py --model-path … --device cpu

The oracle hook (scripts/oracle/oracle_hook.py, loaded by a .pth) has put stub modules where `launch_server`
imports its entrypoints; this driver points those stubs at `_print_server_args`, which runs the same validation
the hook runs (`check_server_args()`), then formats the dump with the engine's own code:
  - 0.5.9 `entrypoints/engine.py` `_launch_subprocesses`: `logger.info(f"{server_args=}")` (the dataclass repr);
  - 0.5.23 `entrypoints/engine.py`: `logger.info(f"server_args={_server_args_for_logging(server_args)}")` (a dict;
    that function is `redact_watermark_secrets(server_args.resolved_dict())`, called here directly).
"""

from __future__ import annotations

import runpy
import sys
from typing import Any, NoReturn

DUMP_MARKER = "LOGSLEUTH-DIFF-DUMP: "


def _print_server_args(server_args: Any, *_args: Any, **_kwargs: Any) -> NoReturn:
    server_args.check_server_args()
    if hasattr(server_args, "resolved_dict"):  # 0.5.23 and later
        # engine.py's `_server_args_for_logging`, whose module needs uvloop (not in the oracle venv): its body.
        from sglang.srt.sampling.watermarking.core import redact_watermark_secrets

        line = f"server_args={redact_watermark_secrets(server_args.resolved_dict())}"
    else:
        line = f"{server_args=}"
    sys.stdout.flush()
    print(DUMP_MARKER + line, flush=True)
    raise SystemExit(0)


# SGLang sizes mem_fraction_static, cuda_graph_max_bs and chunked_prefill_size from the device's memory; on CPU that
# is the host's (its smallest NUMA node), which differs from machine to machine.  The fixtures pin it, so a fresh run
# prints the same dump anywhere: 24 GiB, the memory of the machines the fixtures are made and checked on.
PINNED_HOST_MEMORY_MB = 24 * 1024.0


def _pin_host_memory() -> None:
    import sglang.srt.utils.common as common

    common.get_cpu_memory_capacity = lambda: PINNED_HOST_MEMORY_MB  # read by get_device_memory_capacity("cpu")


def main() -> None:
    _pin_host_memory()
    hook = sys.modules.get("logsleuth_oracle_hook")
    if hook is None:
        raise SystemExit("the oracle hook is not loaded: run with LOGSLEUTH_ORACLE_STOP=1 in an oracle venv")
    for name, functions in hook.STUB_ENTRYPOINTS.items():
        for function in functions:
            setattr(sys.modules[name], function, _print_server_args)
    sys.argv = ["launch_server.py", *sys.argv[1:]]
    runpy.run_module("sglang.launch_server", run_name="__main__", alter_sys=True)


if __name__ == "__main__":
    main()
