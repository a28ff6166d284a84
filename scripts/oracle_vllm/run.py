"""Run the REAL ``vllm serve`` of one vLLM version up to the end of its engine-config validation.

Usage: ``run.py --version 0.33.0 [--trace] -- {tiny_llama} --max-model-len 8192 ...`` (the arguments after
``vllm serve``). ``{tiny_llama}`` becomes the oracle's model dir (config.json only, shared with the SGLang
oracle). "Passed" means exit 0 *and* the stop hook's marker: vLLM's argparse accepted the arguments and
``EngineArgs.create_engine_config`` built every config without raising (see oracle_hook.py).
Importable: ``run_serve(version, args) -> Result``, ``run_command_string(version, "vllm serve ...")``.
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
VERSIONS = ("0.11.2", "0.33.0")
DEFAULT_TIMEOUT_S = 180.0
SERVE_PREFIXES = (("vllm", "serve"), ("python", "-m", "vllm.entrypoints.cli.main", "serve"))


def oracle_home() -> Path:
    env = os.environ.get("LOGSLEUTH_ORACLE_HOME")
    return Path(env) if env else Path.home() / ".cache" / "logsleuth" / "oracle"


def venv_dir(version: str) -> Path:
    return oracle_home() / f"vllm-{version}"


def placeholders() -> dict[str, str]:
    return {"tiny_llama": str(oracle_home() / "models" / "tiny-llama")}


def expand(args: list[str]) -> list[str]:
    """Replace ``{tiny_llama}``; other braces (JSON values such as ``{"level": 0}``) are left alone."""
    out = []
    for arg in args:
        for key, value in placeholders().items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def serve_argv(args: list[str]) -> list[str]:
    """The command as a user types it: ``vllm serve ...`` (the venv's console script is first on PATH)."""
    return ["vllm", "serve", *expand(args)]


def oracle_env(version: str) -> dict[str, str]:
    """The version's venv first on PATH, offline HF, the stop hook armed, vLLM's usage stats off."""
    env = dict(os.environ)
    env["PATH"] = f"{venv_dir(version) / 'bin'}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(venv_dir(version))
    env.pop("PYTHONPATH", None)
    for name in [n for n in env if n.startswith("VLLM_")]:
        env.pop(name)  # a host's VLLM_* settings must not change what the oracle validates
    env.update(
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        LOGSLEUTH_ORACLE_STOP="1",
        VLLM_NO_USAGE_STATS="1",  # no usage report to vLLM's servers from a validation run
        DO_NOT_TRACK="1",
        PYTHONUNBUFFERED="1",  # keeps stdout/stderr interleaving in the order it happened
        PYTHONDONTWRITEBYTECODE="1",
        TOKENIZERS_PARALLELISM="false",
        COLUMNS="100",  # argparse wraps usage lines to the terminal width; fixed so fixtures are stable
    )
    return env


def _load_warm():  # type: ignore[no-untyped-def]
    """scripts/oracle/warm.py, by path (one module object shared with the SGLang oracle's run.py)."""
    name = "logsleuth_oracle_warm"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, Path(__file__).resolve().parents[1] / "oracle" / "warm.py")
        assert spec is not None and spec.loader is not None
        sys.modules[name] = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(sys.modules[name])
    return sys.modules[name]


# vLLM imported once per venv, up to the modules `vllm serve` runs before validating; each run is a fork of it.
WARM = _load_warm().WarmPool(
    "entry",
    "vllm.entrypoints.cli.main:main",
    ["vllm.entrypoints.cli.main", "vllm.entrypoints.cli.serve", "vllm.engine.arg_utils", "vllm.entrypoints.openai.api_server"],
)
atexit.register(WARM.close)


@dataclass(frozen=True)
class Result:
    passed: bool
    returncode: int
    output: str
    command: str  # the serve command line, shell-quoted


def check_ready(version: str) -> None:
    if not (venv_dir(version) / ".ready").exists():
        raise RuntimeError(f"oracle venv for vllm {version} missing: run scripts/oracle_vllm/setup.sh first")


def _run(version: str, argv: list[str], *, trace: bool, extra_env: dict[str, str] | None, timeout: float) -> Result:
    check_ready(version)
    command = shlex.join(argv)
    warm = None
    if not trace:  # argv is ["vllm", "serve", ...]: the console script, found first on the venv's PATH
        script = str(venv_dir(version) / "bin" / argv[0])
        warm = WARM.run(venv_dir(version), [script, *argv[1:]], oracle_env(version), extra_env, timeout)
    if warm is not None:
        returncode, output = warm
    else:
        cmd = ["bash", "-xc", command] if trace else argv
        # bash -x prints "+ " by default; PS4 is pinned so a user's PS4 cannot change the fixtures.
        env = oracle_env(version) | {"PS4": "+ "} | (extra_env or {})
        proc = subprocess.run(
            cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout, check=False
        )
        returncode, output = proc.returncode, proc.stdout
    passed = returncode == 0 and MARKER in output
    return Result(passed=passed, returncode=returncode, output=output, command=command)


def run_serve(version: str, args: list[str], *, trace: bool = False, timeout: float = DEFAULT_TIMEOUT_S) -> Result:
    """Run ``vllm serve ARGS``; with ``trace`` through ``bash -xc`` so the output starts with ``+ vllm serve``."""
    return _run(version, serve_argv(args), trace=trace, extra_env=None, timeout=timeout)


def serve_args_of(command: str) -> list[str]:
    """The arguments after ``vllm serve`` (or ``python -m vllm.entrypoints.cli.main serve``)."""
    argv = shlex.split(command)
    for prefix in SERVE_PREFIXES:
        if tuple(argv[: len(prefix)]) == prefix:
            return argv[len(prefix) :]
    raise ValueError(f"not a vllm serve command: {command!r}")


def run_command_string(
    version: str, command: str, *, extra_env: dict[str, str] | None = None, timeout: float = DEFAULT_TIMEOUT_S
) -> Result:
    """Run a full ``vllm serve ...`` string (as logsleuth prints a fix) on ``version``."""
    result = _run(version, serve_argv(serve_args_of(command)), trace=False, extra_env=extra_env, timeout=timeout)
    return Result(result.passed, result.returncode, result.output, command)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--version", required=True, choices=VERSIONS)
    parser.add_argument("--trace", action="store_true", help="run through bash -x (command line in the output)")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="vllm serve arguments after --")
    ns = parser.parse_args(argv)
    args = ns.args[1:] if ns.args[:1] == ["--"] else ns.args
    result = run_serve(ns.version, args, trace=ns.trace)
    sys.stdout.write(result.output)
    verdict = "PASSED" if result.passed else "FAILED"
    print(f"== vllm {ns.version}: {verdict} (exit {result.returncode})", file=sys.stderr)
    return 0 if result.passed else (result.returncode or 1)


if __name__ == "__main__":
    sys.exit(main())
