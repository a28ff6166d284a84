#!/usr/bin/env python3
"""`make bench`: one table of paired, interleaved runs of logsleuth against what users type instead.

Starts the private test sshd on 127.0.0.1 (tests/ssh/sshd_server.py: needs root and openssh-server), whose
account logs in with an empty ~/.bashrc, so the server-side shell start does not dominate.  Writes under its
temp dir a 1 GiB log (a real traceback every 4 MiB, the crash at the end), a 10 GiB one (sparse except its last
64 MiB) and 64 logs of 4 MiB, one per fleet host.  The fleet hosts are ssh-config aliases of that one sshd
(`Host node01` ... `Host node64`, `HostName 127.0.0.1`), read as several SOURCE arguments.  logsleuth runs as
a user has it after `pip install` (install_wheel).  Everything is removed afterwards.

Every row pairs two commands (bench/table.py: each round runs both, alternating which goes first; the ratio is
the median of the per-round ratios, with min and max).  The header records the machine's load before and
after, nproc, Python and the date; the table is printed and written to bench/results.md.

    python bench/bench_ssh.py [--rounds 9] [--output bench/results.md] [--only watch]

The watch rows (bench/bench_watch.py: crash to diagnosis, start to first stage; p50 and p95 over 20 runs) are a
second table in the same output.  `--only watch` runs those alone (no big logs) and writes only to --output.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import signal
import subprocess
import sys
import sysconfig
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(REPO / "tests" / "ssh"))

from bench_health import health_rows, remote_health_rows  # noqa: E402
from bench_local import (  # noqa: E402
    CRASH_END,
    GiB,
    MiB,
    all_rows,
    failure_found,
    many_groups_row,
    small_diagnose_row,
    startup_row,
    write_log,
    write_small_log,
)
from bench_merge import merge_rows  # noqa: E402
from bench_watch import render_watch_table, watch_notes, watch_rows  # noqa: E402
from measure import Check, Command, command, exit_status_in, measure_rounds  # noqa: E402
from sshd_server import SSHD, start_servers, stop_servers  # noqa: E402
from table import Goal, Row, Sample, pairs_of, render_table  # noqa: E402

Runs = list[dict[str, Sample]]

FLEET = 64
FLEET_SIZES = (1, 8, 32, 64)
FLEET_ALLOWANCE = {1: 15, 8: 30, 32: 45, 64: 70}  # seconds of rounds per fleet size (see table.run_rounds)


def install_wheel(root: Path, checkout: Path = REPO) -> list[str]:
    """logsleuth as `pip install` leaves it: built from this checkout (offline, no build isolation), installed
    with its bytecode into a venv of its own, and started by a console script.  A development checkout is
    installed in editable mode, whose import hook costs every start ~20 ms.  The dependencies are this
    interpreter's (a .pth line points at its site-packages): nothing is downloaded."""
    source = root / "src"
    source.mkdir(parents=True)
    for name in ("pyproject.toml", "README.md"):
        shutil.copy(checkout / name, source / name)
    for name in ("logsleuth", "patterns"):
        shutil.copytree(checkout / name, source / name, ignore=shutil.ignore_patterns("__pycache__"))
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


def node_name(number: int) -> str:
    return f"node{number:02d}"


def write_client_config(server: SSHD) -> Path:
    """`127.0.0.1:/path` spelled as in the issue, and the fleet: one `Host nodeNN` alias per node, as a rack's
    ssh config has them.  Port, user and keys come from `Host *`."""
    nodes = "".join(f"Host {node_name(n)}\n    HostName 127.0.0.1\n" for n in range(1, FLEET + 1))
    return server.write_config(
        "bench",
        f"{nodes}Host *\n    Port {server.port}\n    User logsleuth-test\n"
        f"    IdentityFile {server.client_key}\n    IdentitiesOnly yes\n"
        f"    UserKnownHostsFile {server.root}/client/known_hosts\n    BatchMode yes\n",
    )


def output_has(needle: bytes, count: int = 1) -> Check:
    """The manual baselines' check: exit 0 and `needle` in the output `count` times (a shell loop's `wait`
    exits 0 whatever its ssh did)."""

    def check(status: int, stdout: bytes) -> str | None:
        if status != 0:
            return f"exit status {status}, expected 0"
        found = stdout.count(needle)
        return None if found >= count else f"{needle!r} found {found} times in the output, expected {count}"

    return check


def fleet_report(hosts: int) -> Check:
    """logsleuth's check on N sources: the crash found, and every source read (when the report lists them)."""

    def check(status: int, stdout: bytes) -> str | None:
        problem = failure_found(status, stdout)
        if problem is not None:
            return problem
        try:
            sources = json.loads(stdout).get("sources")
        except ValueError:
            return "the report is not JSON"
        if sources is None:
            return None
        errors = [source["error"] for source in sources if source.get("error")]
        if len(sources) != hosts or errors:
            return f"{len(sources)} sources in the report, expected {hosts}; errors: {errors[:3]}"
        return None

    return check


class Bench:
    """The commands of the remote rows, spelled once."""

    def __init__(self, server: SSHD, logsleuth: list[str], rounds: int) -> None:
        self.config = write_client_config(server)
        self.env = {k: v for k, v in os.environ.items() if k != "SSH_AUTH_SOCK"}
        self.env.update(HOME=str(server.home), XDG_CONFIG_HOME=str(server.home / ".config"))
        self.logs = server.logs
        self.one = server.logs / "1GiB.log"
        self.ten = server.logs / "10GiB.log"
        self.small = server.logs / "1MiB.log"
        self.logsleuth = logsleuth
        self.ssh = ["ssh", "-F", str(self.config)]
        self.rounds = rounds

    def write_logs(self) -> None:
        write_log(self.one, GiB)
        write_log(self.ten, 10 * GiB, real_tail=64 * MiB)
        write_small_log(self.small)
        for number in range(1, FLEET + 1):
            write_log(self.node_log(node_name(number)), 4 * MiB)

    def node_log(self, host: str) -> Path:
        return self.logs / f"{host}.log"

    def diagnose(self, *sources: str, backend: str | None = None) -> list[str]:
        options = ["--ssh-backend", backend] if backend else []
        return [*self.logsleuth, "diagnose", "--format", "json", "--ssh-config", str(self.config), *options, *sources]

    def rounds_of(self, commands: dict[str, Command], allowance: float, *, sample: bool = False,
                  warm: bool = True) -> Runs:
        """Up to --rounds rounds, fewer past `allowance` seconds (at least 3): see table.run_rounds."""
        return measure_rounds(commands, self.rounds, env=self.env, sample=sample, warm=warm, allowance=allowance)

    def remote_rows(self) -> list[Row]:
        """Rows 1-3: a remote diagnose against `ssh tail`, against the manual grep, and 10 GiB against 1 GiB;
        and what the helper process gains it (for internal/ssh_helper/parent.py's claim)."""
        commands = {
            "diagnose 1 GiB": command(self.diagnose(f"127.0.0.1:{self.one}"), failure_found),
            "ssh tail": command(self.ssh_tail, output_has(CRASH_END)),
            "ssh grep": command([*self.ssh, "127.0.0.1", f"grep -B5 -A30 Traceback {self.one} | tail -80"],
                                output_has(b"Traceback")),
            "diagnose 10 GiB": command(self.diagnose(f"127.0.0.1:{self.ten}"), failure_found),
            "no helper": command(["env", "LOGSLEUTH_SSH_WORKER=0", *self.diagnose(f"127.0.0.1:{self.one}")],
                                 failure_found),
        }
        runs = self.rounds_of(commands, allowance=60)
        return [
            Row("remote diagnose 1 GiB vs `ssh host tail -c 1000000 LOG`", "wall", (Goal("ratio", 1.5),),
                pairs_of(runs, "diagnose 1 GiB", "ssh tail")),
            Row("`ssh host 'grep -B5 -A30 Traceback LOG | tail -80'` vs remote diagnose 1 GiB", "wall",
                (Goal("ratio", 3, at_most=False),), pairs_of(runs, "ssh grep", "diagnose 1 GiB")),
            Row("remote diagnose 10 GiB (sparse but its last 64 MiB) vs 1 GiB", "wall", (Goal("ratio", 1.1),),
                pairs_of(runs, "diagnose 10 GiB", "diagnose 1 GiB")),
            Row("remote diagnose 1 GiB without the SSH helper process (`LOGSLEUTH_SSH_WORKER=0`) vs with it", "wall",
                (), pairs_of(runs, "no helper", "diagnose 1 GiB")),
        ]

    def remote_health_rows(self) -> list[Row]:
        """Row 9: remote health against `ssh host grep -c` (bench_health.py)."""
        return remote_health_rows(self.logsleuth, self.ssh, self.config, self.logs,
                                  lambda commands, allowance: self.rounds_of(commands, allowance=allowance))

    @property
    def ssh_tail(self) -> list[str]:
        return [*self.ssh, "127.0.0.1", f"tail -c 1000000 {self.one}"]

    def fleet_rows(self) -> list[Row]:
        """Row 5: N hosts in one logsleuth against one host, and against a shell loop of `ssh … &` + `wait`."""
        rows = []
        one_host = command(self.diagnose(f"{node_name(1)}:{self.node_log(node_name(1))}"), fleet_report(1))
        for size in FLEET_SIZES:
            hosts = [node_name(n) for n in range(1, size + 1)]
            hosts_label = f"{size} host" if size == 1 else f"{size} hosts"
            loop = (
                f"for h in {' '.join(hosts)}; do {' '.join(self.ssh)} $h tail -c 1000000 {self.logs}/$h.log & done;"
                " wait"
            )
            commands = {
                hosts_label: command(self.diagnose(*(f"{host}:{self.node_log(host)}" for host in hosts)),
                                         fleet_report(size)),
                "one host": one_host,
                "shell loop": command(["sh", "-c", loop], output_has(CRASH_END, size)),
            }
            # no warm-up run for the large fleets: logsleuth, ssh, the logs and the sshd are warm by now
            runs = self.rounds_of(commands, allowance=FLEET_ALLOWANCE[size], warm=size <= 8)
            goals = {32: (Goal("ratio", 2.5),), FLEET: (Goal("works"),)}.get(size, ())
            rows.append(Row(f"{hosts_label} vs one host (4 MiB logs)", "wall", goals,
                            pairs_of(runs, hosts_label, "one host")))
            rows.append(Row(f"{hosts_label} vs the shell loop `ssh $h tail -c 1000000 LOG &` + `wait`", "wall", (),
                            pairs_of(runs, hosts_label, "shell loop")))
        return rows

    def cpu_rows(self, python: str) -> list[Row]:
        """Row 6: CPU seconds (user + sys, whole process tree) per remote diagnose, sampled to check reaping."""
        one = f"127.0.0.1:{self.one}"
        commands = {
            "paramiko": command(self.diagnose(one, backend="paramiko"), failure_found),
            "import paramiko": command([python, "-c", "import paramiko"], exit_status_in(0)),
            "openssh": command(self.diagnose(one, backend="openssh"), failure_found),
            "ssh tail": command(self.ssh_tail, output_has(CRASH_END)),
        }
        runs = self.rounds_of(commands, allowance=30, sample=True)
        return [
            Row("CPU: remote diagnose (paramiko) vs `python -c 'import paramiko'`", "cpu", (Goal("a", 0.20),),
                pairs_of(runs, "paramiko", "import paramiko"), show_rss=True),
            Row("CPU: remote diagnose (`--ssh-backend openssh`) vs `ssh host tail -c 1000000 LOG`", "cpu",
                (Goal("a", 0.14),), pairs_of(runs, "openssh", "ssh tail"), show_rss=True),
        ]


def _git(*args: str) -> str:
    """A read-only git query (no optional locks: `status` would otherwise refresh the shared index); "" without
    git or outside a checkout."""
    try:
        done = subprocess.run(["git", "--no-optional-locks", "-C", str(REPO), *args], capture_output=True, text=True)
    except OSError:
        return ""
    return done.stdout.strip()


def built_from(checkout: Path) -> str:
    if checkout.resolve() != REPO:
        return f"built from {checkout}"
    dirty = " with uncommitted changes" if _git("status", "--porcelain", "--untracked-files=no") else ""
    return f"{_git('rev-parse', '--short', 'HEAD') or 'of unknown commit'}{dirty}"


def describe_sshd_limits(server: SSHD) -> str:
    """The test sshd's limits on concurrent logins, as its config has them: 64 hosts at once need an unauthenticated
    start-up limit above 64 (sshd's default `MaxStartups 10:30:100` refuses some of them)."""
    try:
        config = (server.root / f"sshd_config.{server.port}").read_text()  # as tests/ssh/sshd_server.py names it
    except OSError:
        return "its sshd_config was not found: limits unknown"
    start_ups = next((line.split()[1] for line in config.splitlines() if line.startswith("MaxStartups")), "10:30:100")
    if int(start_ups.split(":")[0]) < FLEET:
        return f"`MaxStartups {start_ups}`: {FLEET} logins at once will be refused, it needs `MaxStartups 200:30:400`"
    return f"`MaxStartups {start_ups}`: {FLEET} logins at once are let in"


def header(
    load_before: tuple[float, ...],
    load_after: tuple[float, ...],
    rounds: int,
    minutes: float,
    checkout: Path,
    sshd_limits: str,
) -> str:
    ssh_version = subprocess.run(["ssh", "-V"], capture_output=True, text=True).stderr.strip()
    load = ", ".join(f"{value:.2f}" for value in load_before)
    load_end = ", ".join(f"{value:.2f}" for value in load_after)
    return (
        "# logsleuth bench\n\n"
        f"- date: {datetime.datetime.now(datetime.UTC):%Y-%m-%d %H:%M UTC}; run took {minutes:.1f} min\n"
        f"- machine: nproc {len(os.sched_getaffinity(0))}, {platform.machine()}, load average (1, 5, 15 min) "
        f"before {load}, after {load_end}\n"
        f"- Python {platform.python_version()}, {ssh_version}; logsleuth {built_from(checkout)}, installed from "
        "a wheel\n"
        f"- rounds: at most {rounds} per row; a row's rounds stop once its time allowance is spent and 3 are done "
        "(1 for `--all` on 10 GiB): the n column says how many ran.  Each round runs A and B, alternating which "
        "goes first, after one untimed run of each command (none for the 10 GiB `--all` and the 32 and 64 host "
        "fleets)\n"
        "- ratio: the median of the per-round ratios A/B, with their min–max; medians of each side in seconds "
        "(wall, or user + sys CPU of the whole process tree for the CPU rows)\n"
        "- A tree RSS: the largest sum of resident sizes of A's process group seen at one moment "
        "(sampled every 10 ms)\n"
        "- only 127.0.0.1 is contacted: the fleet hosts are ssh-config aliases of one private sshd "
        f"({sshd_limits}), whose account has an empty ~/.bashrc\n"
    )


def reaping_note(rows: list[Row]) -> str:
    """What the sampled CPU rows saw of logsleuth's process tree: whether its SSH helper was forked, and reaped."""
    lines = []
    for row in rows:
        if row.metric != "cpu" or not row.pairs:
            continue
        seen = max(pair.a.processes for pair in row.pairs)
        outcome = "some were NOT (see the errors)" if row.errors else "all were reaped, so rusage counted their CPU"
        lines.append(f"- {row.label.split(' vs ')[0]}: up to {seen} processes in its tree; {outcome}.\n")
    return "".join(lines)


def notes(rows: list[Row]) -> str:
    return (
        "\nNotes:\n"
        "- The remote diagnose rows, each fleet size's two rows, and the two CPU rows share their runs: a round "
        "runs the group's commands forward, the next one backward, so of any two each goes first in every other "
        "round.\n"
        "- A run counts only if it did its job: logsleuth exits 1 with the crash in its JSON report and, for N "
        "hosts, N sources read without an error; `ssh tail` and the shell loop print the crash's last line once "
        "per host; the manual grep prints a Traceback.  Otherwise the row says ERROR and why.\n"
        "- grep skips the hole of a sparse file (SEEK_HOLE), so on the 10 GiB log `grep -c` reads 64 MiB: "
        "its row's goal is the RSS only.\n"
        "- The CPU rows count the client side only (the sshd and the remote tail/grep are not ours to "
        "measure).  Each of their runs is sampled: a process of the tree still alive after the command, or "
        "more CPU seen in /proc than rusage counted (an unreaped child), marks the row ERROR.\n"
        + reaping_note(rows)
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=9, help="at most this many paired rounds per row (fewer once a row's time allowance is spent)")
    parser.add_argument("--output", type=Path, help="default: bench/results.md, and nowhere with --only")
    parser.add_argument("--only", choices=["watch", "remote-health"],
                        help="run these rows alone: a quick look, not results.md")
    parser.add_argument("--checkout", type=Path, default=REPO, help="the logsleuth tree to build the wheel from")
    args = parser.parse_args()
    if os.geteuid() != 0 or not os.path.exists("/usr/sbin/sshd"):
        print("bench_ssh: needs root and openssh-server (/usr/sbin/sshd)", file=sys.stderr)
        return 2
    if args.only is None and shutil.disk_usage("/tmp").free < (5 << 30):
        print("bench_ssh: not enough space in /tmp (need 5 GiB)", file=sys.stderr)
        return 2
    # A bench started in the background (`make bench &`, nohup) inherits SIGINT ignored, and an ignored signal stays
    # ignored across exec: the watch rows' Ctrl-C would then never reach a watch (it ran 30 s and was killed).  A
    # handler, unlike SIG_IGN, is reset to the default in each child, so a child Python again turns it into
    # KeyboardInterrupt, as under a terminal.
    signal.signal(signal.SIGINT, signal.default_int_handler)
    started = time.monotonic()
    load_before = os.getloadavg()
    server, processes = start_servers()
    try:
        print("installing a wheel of this checkout, writing the logs…", file=sys.stderr)
        logsleuth = install_wheel(server.root / "wheel", args.checkout)
        python = str(Path(logsleuth[0]).parent / "python")
        bench = Bench(server, logsleuth, args.rounds)
        sshd_limits = describe_sshd_limits(server)
        rows = []
        if args.only is None:
            bench.write_logs()
            rows = [
                *bench.remote_rows(),
                *all_rows(logsleuth, bench.one, bench.ten, args.rounds),
                *bench.fleet_rows(),
                *bench.cpu_rows(python),
                startup_row(logsleuth, python, args.rounds),
                small_diagnose_row(logsleuth, python, bench.small, args.rounds),
                many_groups_row(logsleuth, server.root / "groups", args.rounds),
                *health_rows(logsleuth, server.root, args.rounds),
                *merge_rows(logsleuth, python, server.root / "merge", args.rounds),
                *bench.remote_health_rows(),
            ]
        elif args.only == "remote-health":
            rows = bench.remote_health_rows()
        watch = watch_rows(bench) if args.only in (None, "watch") else []
    finally:
        stop_servers(server, processes)  # removes the logs with the temp dir
    minutes = (time.monotonic() - started) / 60
    text = header(load_before, os.getloadavg(), args.rounds, minutes, args.checkout, sshd_limits)
    if rows:
        text += "\n" + render_table(rows) + "\n"
    if watch:
        text += "\n" + render_watch_table(watch) + "\n"
    text += (notes(rows) if rows else "\nNotes:\n") + (watch_notes() if watch else "")
    output = args.output or (None if args.only else HERE / "results.md")
    if output is not None:
        output.write_text(text)
    print(text)
    return 0 if all(row.verdict() != "ERROR" for row in [*rows, *watch]) else 1


if __name__ == "__main__":
    sys.exit(main())
