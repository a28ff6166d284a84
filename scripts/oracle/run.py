"""Run the REAL ``python -m sglang.launch_server`` of one SGLang version up to the end of argument validation.

Usage: ``run.py --version 0.5.9 -- --model-path {tiny_llama} --speculative-algorithm EAGLE3 ...``
Placeholders ``{tiny_llama}`` / ``{tiny_eagle3}`` / ``{tiny_lora}`` become the oracle's model and adapter dirs; ``--device cpu`` is appended
(without it 0.5.x stops at "No accelerator is available" before validating anything).
"Passed" means exit 0 *and* the stop hook's marker, i.e. SGLang's own validation accepted the arguments.
Importable: ``run_launch(version, args) -> Result``.
"""

from __future__ import annotations

import argparse
import atexit
import importlib.util
import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

MARKER = "LOGSLEUTH-ORACLE: validation passed"
VERSIONS = ("0.4.10.post2", "0.5.9", "0.5.23")
DEFAULT_TIMEOUT_S = 180.0


def oracle_home() -> Path:
    env = os.environ.get("LOGSLEUTH_ORACLE_HOME")
    return Path(env) if env else Path.home() / ".cache" / "logsleuth" / "oracle"


def venv_dir(version: str) -> Path:
    return oracle_home() / f"sglang-{version}"


def placeholders() -> dict[str, str]:
    models = oracle_home() / "models"
    return {"tiny_llama": str(models / "tiny-llama"), "tiny_eagle3": str(models / "tiny-eagle3"),
            "tiny_lora": str(models / "tiny-lora")}


def expand(args: list[str]) -> list[str]:
    """Replace ``{tiny_llama}``-style placeholders; other braces are left alone."""
    out = []
    for arg in args:
        for key, value in placeholders().items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def launch_argv(args: list[str]) -> list[str]:
    """The launch command as a user would type it (``python``, not the venv path), plus ``--device cpu``."""
    return ["python", "-m", "sglang.launch_server", *expand(args), "--device", "cpu"]


def oracle_env(version: str) -> dict[str, str]:
    """Environment with the version's venv first on PATH, offline HF, and the stop hook armed."""
    env = dict(os.environ)
    env["PATH"] = f"{venv_dir(version) / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv_dir(version))
    env.pop("PYTHONPATH", None)  # the lead's checkout must not shadow anything inside the venv
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LOGSLEUTH_ORACLE_STOP="1",
        PYTHONUNBUFFERED="1",  # keeps stdout/stderr interleaving in the order it happened
        PYTHONDONTWRITEBYTECODE="1",
        TOKENIZERS_PARALLELISM="false",
    )
    return env


def _load_warm():  # type: ignore[no-untyped-def]
    """scripts/oracle/warm.py, by path: this file is also loaded by path, and vLLM's run.py shares it."""
    name = "logsleuth_oracle_warm"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().with_name("warm.py"))
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


# SGLang imported once per venv; each run is a fork of it (warm.py says why and what keeps it equal to cold).
WARM = _load_warm().WarmPool("module", "sglang.launch_server", ["sglang.launch_server"])
atexit.register(WARM.close)


def _run_argv(  # type: ignore[no-untyped-def]
    version: str, argv: list[str], extra_env: dict[str, str], timeout: float, warm: bool = True
):
    """(exit status, output) of ``python -m sglang.launch_server ...`` (``argv``): warm where it can be, else cold."""
    env = oracle_env(version)
    forked = WARM.run(venv_dir(version), ["-m", *argv[3:]], env, extra_env, timeout) if warm else None
    if forked is not None:
        return forked
    proc = subprocess.run(
        argv, env=env | extra_env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout,
        check=False,
    )
    return proc.returncode, proc.stdout


@dataclass(frozen=True)
class Result:
    passed: bool
    returncode: int
    output: str
    command: str  # the launch command line, shell-quoted


def check_ready(version: str) -> None:
    if not (venv_dir(version) / ".ready").exists():
        raise RuntimeError(f"oracle venv for sglang {version} missing: run scripts/oracle/setup.sh first")


def run_launch(
    version: str, args: list[str], *, trace: bool = False, timeout: float = DEFAULT_TIMEOUT_S, warm: bool = True
) -> Result:
    """Run the launcher; with ``trace`` it goes through ``bash -xc`` so the output starts with ``+ python ...``.

    ``warm=False`` runs a fresh interpreter even where a warm fork would do: for output that becomes a fixture.
    """
    check_ready(version)
    argv = launch_argv(args)
    command = shlex.join(argv)
    if trace:
        # bash -x prints "+ " by default; PS4 is pinned so a user's PS4 cannot change the fixtures.
        returncode, output = _run_argv(version, ["bash", "-xc", command], {"PS4": "+ "}, timeout, warm=False)
    else:
        returncode, output = _run_argv(version, argv, {}, timeout, warm=warm)
    passed = returncode == 0 and MARKER in output
    return Result(passed=passed, returncode=returncode, output=output, command=command)


def run_command_string(
    version: str, command: str, *, extra_env: dict[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_S
) -> Result:
    """Run a full ``python -m sglang.launch_server ...`` string (as logsleuth prints a fix) on ``version``.

    ``extra_env`` is for fixes that are environment variables (e.g. SGLANG_ALLOW_OVERWRITE_LONGER_CONTEXT_LEN).
    """
    argv = shlex.split(command)
    prefix = ["python", "-m", "sglang.launch_server"]
    if argv[:3] != prefix:
        raise ValueError(f"not a launch_server command: {command!r}")
    rest = argv[3:]
    if "--device" not in rest:
        argv = launch_argv(rest)
    check_ready(version)
    returncode, output = _run_argv(version, expand(argv), extra_env or {}, timeout)
    return Result(returncode == 0 and MARKER in output, returncode, output, command)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, choices=VERSIONS)
    parser.add_argument(
        "--trace", action="store_true", help="run through bash -x (command line in the output)"
    )
    parser.add_argument("args", nargs=argparse.REMAINDER, help="launch_server arguments after --")
    ns = parser.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    result = run_launch(ns.version, args, trace=ns.trace)
    sys.stdout.write(result.output)
    verdict = "PASSED" if result.passed else "FAILED"
    print(f"== sglang {ns.version}: {verdict} (exit {result.returncode})", file=sys.stderr)
    return 0 if result.passed else (result.returncode or 1)


if __name__ == "__main__":
    sys.exit(main())
