#!/usr/bin/env python3
"""Benchmark `logsleuth diagnose 127.0.0.1:LOG` against the manual OpenSSH ways, on 1 GiB and 10 GiB logs.

Starts the private test sshd (tests/ssh/sshd_server.py: needs root and openssh-server), writes the logs, and
prints side by side the median whole-process wall time of:
  - logsleuth diagnose 127.0.0.1:/path/1GiB.log --format json      (goal: <= 1.5x the tail below)
  - ssh 127.0.0.1 'tail -c 1000000 LOG'                             (the floor: one OpenSSH round trip)
  - ssh 127.0.0.1 'grep -B5 Assert LOG | tail -20'                  (the manual way; goal: >= 3x logsleuth)
  - logsleuth on the 10 GiB log                                     (goal: <= 1.1x the 1 GiB time)
and, for reference, `diagnose --all` (every failure: anchors found by a remote grep), a local diagnose, a remote
one without the SSH helper process, and the same from the editable development checkout.
logsleuth runs as a user has it after `pip install`: a wheel of this checkout in a venv of its own (see
install_wheel).  The OpenSSH client uses the same keys, known_hosts and server.  Everything is removed
afterwards.  Each command runs once before timing; that run also writes logsleuth's pattern cache.

The 1 GiB log is written in full (grep must really read it); the 10 GiB one is sparse except for its last
64 MiB of real log text, which is all logsleuth reads (pass --dense to write it in full: ~10 GiB of disk).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE.parent / "tests" / "ssh"))

from sshd_server import SSHD, start_servers, stop_servers  # noqa: E402

BLOCK = 64 << 20
CRASH = (
    b"[2025-11-06 02:10:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 2316, in run_scheduler_process\n'
    b"    scheduler.event_loop_overlap()\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 690, in event_loop_overlap\n'
    b"    batch = self.get_next_batch_to_run()\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 1421, in get_next_batch_to_run\n'
    b"    assert self.req_to_token_pool.available_size() > 0, 'req_to_token_pool is full'\n"
    b"AssertionError: req_to_token_pool is full\n"
    b"\n"
    b"[2025-11-06 02:10:01] Received sigquit from a child process. It usually means the child failed.\n"
)


def log_block() -> bytes:
    """64 MiB of varied, realistic SGLang serving lines (no 'Assert' in them)."""
    lines = []
    for i in range(4096):
        lines.append(
            f"[2025-11-06 01:{i // 60 % 60:02d}:{i % 60:02d} TP0] Decode batch. #running-req: {i % 64}, "
            f"#token: {40960 + i * 7}, token usage: 0.{i % 97:02d}, cuda graph: True, gen throughput (token/s): "
            f"{800 + i % 300}.{i % 10}, #queue-req: {i % 5}\n"
        )
        if i % 16 == 0:
            lines.append(
                f'[2025-11-06 01:00:00] INFO:     127.0.0.1:{40000 + i} - "POST /generate HTTP/1.1" 200 OK\n'
            )
    chunk = "".join(lines).encode()
    return (chunk * (BLOCK // len(chunk) + 1))[:BLOCK]


def _whole_lines(data: bytes) -> bytes:
    return data[: data.rindex(b"\n") + 1]


def write_log(path: Path, size: int, *, sparse: bool) -> None:
    block = log_block()
    with path.open("wb") as handle:
        if sparse:
            handle.truncate(size - BLOCK)
            handle.seek(size - BLOCK)
            handle.write(_whole_lines(block[: BLOCK - len(CRASH)]))
        else:
            remaining = size - len(CRASH)
            while remaining > 0:
                piece = block[: min(BLOCK, remaining)]
                if len(piece) < BLOCK:
                    piece = _whole_lines(piece)  # the crash starts on a line of its own
                    remaining = len(piece)
                handle.write(piece)
                remaining -= len(piece)
        handle.write(CRASH)


def timed_interleaved(
    commands: dict[str, list[str]], env: dict[str, str], runs: int
) -> tuple[dict[str, float], dict[str, subprocess.CompletedProcess[bytes]]]:
    """Median wall time of each command.  Runs go round-robin (A B C, A B C, ...) so that background load on
    the machine hits every command alike and the ratios stay meaningful."""
    for command in commands.values():
        subprocess.run(command, env=env, capture_output=True)  # warm-up: page cache, sshd
    times: dict[str, list[float]] = {name: [] for name in commands}
    results: dict[str, subprocess.CompletedProcess[bytes]] = {}
    for _ in range(runs):
        for name, command in commands.items():
            started = time.perf_counter()
            results[name] = subprocess.run(command, env=env, capture_output=True)
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) for name, values in times.items()}, results


def logsleuth_command() -> list[str]:
    script = shutil.which("logsleuth")
    return [script] if script else [sys.executable, "-m", "logsleuth"]


def install_wheel(root: Path) -> list[str]:
    """logsleuth as `pip install` leaves it: built from this checkout (offline, no build isolation), installed
    with its bytecode into a venv of its own, and started by a console script.  A development checkout is
    installed in editable mode, whose import hook costs every start ~20 ms.  The dependencies are this
    interpreter's (a .pth line points at its site-packages): nothing is downloaded."""
    source = root / "src"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(REPO / name, source / name)
    for name in ("logsleuth", "patterns"):
        shutil.copytree(REPO / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = venv / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "site-packages"
    (site / "logsleuth-bench-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-build-isolation", "--no-index",
         "--target", str(site), str(source)],
        check=True,
        capture_output=True,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": ""},
    )
    script = venv / "bin" / "logsleuth"
    script.write_text(f"#!{venv}/bin/python\nimport sys\nfrom logsleuth.__main__ import _entry\nsys.exit(_entry())\n")
    script.chmod(0o755)
    return [str(script)]


def write_client_config(server: SSHD) -> Path:
    """`127.0.0.1:/path` spelled exactly as in the issue: the port and user come from this config."""
    return server.write_config(
        "bench",
        f"Host 127.0.0.1\n    Port {server.port}\n    User logsleuth-test\n"
        f"    IdentityFile {server.client_key}\n    IdentitiesOnly yes\n"
        f"    UserKnownHostsFile {server.root}/client/known_hosts\n    BatchMode yes\n",
    )


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=11, help="timed runs per command (median reported)")
    parser.add_argument("--dense", action="store_true", help="write the 10 GiB log in full")
    parser.add_argument("--skip-10g", action="store_true")
    args = parser.parse_args()
    if os.geteuid() != 0 or not os.path.exists("/usr/sbin/sshd"):
        print("bench_ssh: needs root and openssh-server (/usr/sbin/sshd)", file=sys.stderr)
        return 2
    need = (11 << 30) if args.dense and not args.skip_10g else (2 << 30)
    if shutil.disk_usage("/tmp").free < need:
        print(f"bench_ssh: not enough space in /tmp (need {need >> 30} GiB)", file=sys.stderr)
        return 2

    server, processes = start_servers()
    try:
        config = write_client_config(server)
        env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
        env.update(HOME=str(server.home), XDG_CONFIG_HOME=str(server.home / ".config"))
        print("writing logs…", file=sys.stderr)
        one = server.logs / "1GiB.log"
        write_log(one, 1 << 30, sparse=False)
        ten = server.logs / "10GiB.log"
        if not args.skip_10g:
            write_log(ten, 10 << 30, sparse=not args.dense)

        ssh = ["ssh", "-F", str(config), "127.0.0.1"]
        print("installing a wheel of this checkout…", file=sys.stderr)
        logsleuth = [*install_wheel(server.root / "wheel"), "diagnose", "--format", "json"]
        remote = [*logsleuth, "--ssh-config", str(config)]
        dev_checkout = [*logsleuth_command(), "diagnose", "--format", "json", "--ssh-config", str(config)]
        commands = {
            "logsleuth diagnose 127.0.0.1:1GiB.log": [*remote, f"127.0.0.1:{one}"],
            "ssh 'tail -c 1000000 LOG' (1 GiB)": [*ssh, f"tail -c 1000000 {one}"],
            "ssh 'grep -B5 Assert LOG | tail -20' (1 GiB)": [*ssh, f"grep -B5 Assert {one} | tail -20"],
        }
        if not args.skip_10g:
            commands["logsleuth diagnose 127.0.0.1:10GiB.log"] = [*remote, f"127.0.0.1:{ten}"]
        commands["logsleuth diagnose --all 127.0.0.1:1GiB.log (remote grep)"] = [
            *remote,
            "--all",
            f"127.0.0.1:{one}",
        ]
        commands["logsleuth diagnose 1GiB.log (local file: the floor)"] = [*logsleuth, str(one)]
        commands["logsleuth diagnose 127.0.0.1:1GiB.log, no SSH helper process"] = [
            "env",
            "LOGSLEUTH_SSH_WORKER=0",
            *remote,
            f"127.0.0.1:{one}",
        ]
        nodes = []
        for number in range(1, 5):  # four "nodes" of a multi-node launch, each log ending in the crash
            node = server.logs / f"node{number}.log"
            write_log(node, 4 << 20, sparse=False)
            nodes.append(f"127.0.0.1:{node}")
        commands["logsleuth diagnose 4 sources on 127.0.0.1 (4 MiB logs)"] = [*remote, *nodes]
        commands["logsleuth diagnose 127.0.0.1:1GiB.log, editable dev checkout"] = [*dev_checkout, f"127.0.0.1:{one}"]
        commands["(python start + import paramiko: the helper's floor)"] = [sys.executable, "-c", "import paramiko"]
        times, results = timed_interleaved(commands, env, args.runs)
        rows = list(times.items())
        names = list(commands)
        result, grep = results[names[0]], results[names[2]]
        report = json.loads(result.stdout or b"{}")
        local = json.loads(results["logsleuth diagnose 1GiB.log (local file: the floor)"].stdout or b"{}")
        found = [f.get("signature", "?") for f in report.get("failures", [])]
        same = [f["fingerprint"] for f in report.get("failures", [])] == [
            f["fingerprint"] for f in local.get("failures", [])
        ]
        t_ls1, t_tail, t_grep = times[names[0]], times[names[1]], times[names[2]]
        t_local = times["logsleuth diagnose 1GiB.log (local file: the floor)"]
        t_ls10 = times.get("logsleuth diagnose 127.0.0.1:10GiB.log")

        print(
            f"\nmedian of {args.runs} interleaved runs, whole process, sshd on 127.0.0.1 ({os.cpu_count()} cores);"
            "\nlogsleuth as installed from a wheel unless marked otherwise"
        )
        for label, seconds in rows:
            print(f"  {label:<58} {seconds:7.3f} s")
        print(
            f"\n  logsleuth exit {result.returncode}, failures found: {found[:1]}, same as local diagnose: {same}"
        )
        print(f"  grep found {len(grep.stdout.splitlines())} lines")
        print(f"  logsleuth / ssh tail      = {t_ls1 / t_tail:5.2f}x   (goal <= 1.5x)")
        print(f"  ssh grep  / logsleuth     = {t_grep / t_ls1:5.2f}x   (goal >= 3x)")
        print(f"  remote overhead over local diagnose = {t_ls1 - t_local:+.3f} s")
        t_dev = times["logsleuth diagnose 127.0.0.1:1GiB.log, editable dev checkout"]
        print(f"  editable dev checkout: / ssh tail = {t_dev / t_tail:.2f}x, ssh grep / it = {t_grep / t_dev:.2f}x")
        if t_ls10 is not None:
            print(f"  10 GiB    / 1 GiB         = {t_ls10 / t_ls1:5.2f}x   (goal <= 1.1x)")
        return 0
    finally:
        stop_servers(server, processes)  # removes the logs with the temp dir


if __name__ == "__main__":
    sys.exit(main())
