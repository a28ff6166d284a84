"""Write the `logsleuth diff` fixtures (tests/fixtures/diff/) from real SGLang runs.

Each launch of cases.py runs the real `sglang.launch_server` of its version on CPU (the oracle venvs,
scripts/oracle/) through driver.py, which prints `server_args=` as that version's engine logs it.  A launch the
engine accepts is written as its launch script and SGLang would log it: the exported variables and the version
(`bash -x` lines), the command, the real `server_args=` line, then the stage lines of stage_lines.py at the case's
times.  A launch the engine refuses is written with the engine's real output instead (its traceback), as
scripts/oracle/make_fixtures.py writes it.

Only what differs from machine to machine is rewritten: the oracle's directory (`/opt/sglang-oracle`), the
wall-clock times SGLang printed (the case's time) and process ids (the case's pid).

Usage: make_diff_fixtures.py [--check] [--jobs N]
  --check   regenerate in memory and compare with the committed files (exit 1 when one differs).
The tests read the committed files and never need the oracle.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
OUT = REPO / "tests" / "fixtures" / "diff"
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "oracle"))
from cases import FILES, LAUNCHES, STAGE_SECONDS, Launch  # noqa: E402
from run import check_ready, launch_argv, oracle_env, oracle_home, run_launch, venv_dir  # noqa: E402
from stage_lines import BY_VERSION  # noqa: E402

DUMP_MARKER = "LOGSLEUTH-DIFF-DUMP: "
ORACLE_STANDIN = "/opt/sglang-oracle"
TIMEOUT_S = 300
_SGLANG_TIME = re.compile(r"^\[\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
_PID = re.compile(r"\b(parent_pid|pid)=\d+")


def _time(launch: Launch, seconds: int) -> str:
    return (datetime.fromisoformat(launch.start) + timedelta(seconds=seconds)).strftime("%Y-%m-%d %H:%M:%S")


def _portable(text: str) -> str:
    return text.replace(str(oracle_home()), ORACLE_STANDIN)


def _env(launch: Launch) -> dict[str, str]:
    assigned = dict(word.split("=", 1) for word in (*launch.exports, *launch.env_prefix))
    return oracle_env(launch.version) | assigned


def _installed_version(version: str) -> str:
    """What `pip freeze` says of the venv's sglang (importlib.metadata: the same record pip reads)."""
    python = str(venv_dir(version) / "bin" / "python")
    code = "import importlib.metadata as m; print(m.version('sglang'))"
    return subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout.strip()


def _dump(launch: Launch) -> str | None:
    """The `server_args=` line the engine logs for these flags, or None when it refuses them."""
    python = str(venv_dir(launch.version) / "bin" / "python")
    argv = [python, str(HERE / "driver.py"), *launch_argv(list(launch.args))[3:]]
    proc = subprocess.run(argv, env=_env(launch), capture_output=True, text=True, timeout=TIMEOUT_S, check=False)
    found = [line for line in proc.stdout.splitlines() if line.startswith(DUMP_MARKER)]
    return found[0][len(DUMP_MARKER):] if proc.returncode == 0 and found else None


def _script_lines(launch: Launch, version: str) -> list[str]:
    """What the launch script prints before the server does (bash -x)."""
    command = shlex.join([*launch.env_prefix, *launch_argv(list(launch.args))])
    return [
        *(f"+ export {assignment}" for assignment in launch.exports),
        "+ python -m pip freeze",
        "+ grep -i '^sglang=='",
        f"sglang=={version}",
        f"+ {_portable(command)}",
    ]


def _served_lines(launch: Launch, dump: str) -> list[str]:
    seconds = STAGE_SECONDS | launch.stage_seconds
    running = re.search(r"max_running_requests'?[=:] ?(\w+)", dump)
    values = {"pid": str(launch.pid), "max_running_requests": running[1] if running else "None"}
    lines = [f"[{_time(launch, 0)}] {_portable(dump)}"]
    for stage, rank, message in BY_VERSION[launch.version]:
        tag = f" {rank}" if rank else ""
        lines.append(f"[{_time(launch, seconds[stage])}{tag}] {message.format(**values)}")
    return lines


def _refused_lines(launch: Launch) -> list[str]:
    """The engine's own output for flags it refuses, its times and pids the case's."""
    result = run_launch(launch.version, list(launch.args), timeout=TIMEOUT_S, warm=False)  # its traceback is committed
    if result.passed:
        raise SystemExit(f"{launch}: the driver saw no server_args but the launch passed")
    out = []
    for line in result.output.splitlines():
        line = _SGLANG_TIME.sub(f"[{_time(launch, 1)}", line)
        out.append(_PID.sub(lambda m: f"{m[1]}={launch.pid}", _portable(line)))
    return out


def launch_text(name: str) -> list[str]:
    launch = LAUNCHES[name]
    check_ready(launch.version)
    version = _installed_version(launch.version)
    dump = _dump(launch)
    body = _served_lines(launch, dump) if dump is not None else _refused_lines(launch)
    return [*_script_lines(launch, version), *body]


def generate(jobs: int) -> dict[str, str]:
    with ThreadPoolExecutor(jobs) as pool:
        texts = dict(zip(LAUNCHES, pool.map(launch_text, LAUNCHES), strict=True))
    return {file: "".join(line + "\n" for name in names for line in texts[name]) for file, names in FILES.items()}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed fixtures, write nothing")
    parser.add_argument("--jobs", type=int, default=2)
    ns = parser.parse_args(argv)
    try:
        files = generate(ns.jobs)
    except RuntimeError as exc:  # check_ready: an oracle venv is missing
        print(f"make_diff_fixtures: {exc}", file=sys.stderr)
        return 2
    if ns.check:
        stale = [name for name, text in files.items()
                 if not (OUT / name).exists() or (OUT / name).read_text(encoding="utf-8") != text]
        for name in stale:
            print(f"make_diff_fixtures: tests/fixtures/diff/{name} differs from a fresh run", file=sys.stderr)
        print(f"make_diff_fixtures: {len(files) - len(stale)} of {len(files)} fixtures as committed")
        return 1 if stale else 0
    OUT.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (OUT / name).write_text(text, encoding="utf-8")
        print(f"wrote tests/fixtures/diff/{name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
