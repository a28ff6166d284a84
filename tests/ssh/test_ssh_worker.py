"""The SSH helper process (internal/ssh_helper/process.py, internal/ssh_helper/parent.py) against the private sshd.

Each helper test runs in a fresh Python process (the helper is forked from it, as from the console entry
point), never from the pytest process itself.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from sshd_server import SSHD

from logsleuth.internal.ssh_helper.argv import (
    DIAGNOSE_VALUE_OPTIONS,
    HEALTH_VALUE_OPTIONS,
    WATCH_VALUE_OPTIONS,
    HelperArgv,
    may_name_a_remote_log,
)
from logsleuth.sources.options import SSHOptions
from tests.helpers import offsets_of

LOG = (
    b"[2025-11-06 02:09:59 TP0] Load weight end. type=Qwen2ForCausalLM, avail mem=60.12 GB\n" * 5000
    + b"[2025-11-06 02:10:01 TP0] Scheduler hit an exception: Traceback (most recent call last):\n"
    b'  File "/sgl-workspace/sglang/python/sglang/srt/managers/scheduler.py", line 690, in event_loop_overlap\n'
    b"    assert self.req_to_token_pool.available_size() > 0\n"
    b"AssertionError\n"
)

# Forks the helper for ARGV (as __main__._entry does), then opens SPEC with the options given and reports
# what it saw as JSON.  MODE: "kill" kills the helper first (the parent must fall back to in-process).
SCRIPT = r"""
import hashlib, json, os, signal, sys
from logsleuth.internal.ssh_helper import process as ssh_prefork
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.open import open_sources

argv, spec, config, mode = json.loads(sys.argv[1])
ssh_prefork.fork_if_remote(argv)
pid = ssh_prefork.started[0] if ssh_prefork.started else None
if mode == "kill" and pid:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
out = {"helper_pid": pid, "progress": []}
if spec:
    (source,) = open_sources(spec, SSHOptions(config_file=config, progress=out["progress"].append))
    size = source.size()
    data = b"".join(source.read_range(0, size))
    out.update(kind=type(source).__name__, size=size, sha=hashlib.sha256(data).hexdigest(),
               tail=b"".join(source.read_range(size - 100, size)).decode(),
               anchors=source.find_anchors((b"Traceback", b"rror")))
    source.close()
ssh_prefork.stop()
if pid:
    try:
        os.kill(pid, 0)
        out["helper_alive_after_stop"] = True
    except ProcessLookupError:
        out["helper_alive_after_stop"] = False
print(json.dumps(out))
"""


def helper_environment() -> dict[str, str]:
    """This process's environment without an ssh-agent, and with the helper on (its default)."""
    return {k: v for k, v in os.environ.items() if k not in ("SSH_AUTH_SOCK", "LOGSLEUTH_SSH_WORKER")}


def run_script(argv: list[str], spec: str | None, config: str | None, mode: str = "") -> dict[str, object]:
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps([argv, spec, config, mode])],
        capture_output=True,
        text=True,
        env=helper_environment(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result: dict[str, object] = json.loads(proc.stdout)
    return result


@pytest.fixture
def log(sshd: SSHD) -> Path:
    path = sshd.logs / "worker.log"
    path.write_bytes(LOG)
    return path


def _expected(log: Path) -> dict[str, object]:
    import hashlib

    data = log.read_bytes()
    return {
        "size": len(data),
        "sha": hashlib.sha256(data).hexdigest(),
        "tail": data[-100:].decode(),
        "anchors": offsets_of(data, (b"Traceback", b"rror")),
    }


# -- the command line as the helper reads it ------------------------------------------------------------------


def _real_options(command_name: str) -> tuple[set[str], set[str]]:
    """(the options of the real command that take a value, all its options)."""
    import typer.main

    from logsleuth.cli.app import app

    command = typer.main.get_command(app).commands[command_name]  # type: ignore[attr-defined]
    options = [param for param in command.params if param.param_type_name == "option"]
    taking_values = {name for param in options if not param.is_flag for name in param.opts}
    return taking_values, {name for param in options for name in param.opts}


def test_value_options_match_the_real_diagnose_command() -> None:
    """The helper must skip option values exactly as click does, or it would take one for a host."""
    taking_values, _ = _real_options("diagnose")
    assert taking_values == DIAGNOSE_VALUE_OPTIONS


def test_value_options_match_the_real_health_command() -> None:
    taking_values, _ = _real_options("health")
    assert taking_values == HEALTH_VALUE_OPTIONS


# Announced for `watch` with issues 13 and 14 (cli/app.py, another change): --stall, --settle, --parallel and
# --hosts-file take values; --then-follow and --from-start do not.
_WATCH_OPTIONS_TO_COME = {"--stall", "--settle", "--parallel", "--hosts-file"}


def test_value_options_match_the_real_watch_command() -> None:
    taking_values, every_option = _real_options("watch")
    if "--then-follow" in every_option:  # the announced options have landed: exactly the same
        assert taking_values == WATCH_VALUE_OPTIONS
    else:  # every value option the command has is known; what is missing is what is announced
        assert taking_values <= WATCH_VALUE_OPTIONS
        assert WATCH_VALUE_OPTIONS - taking_values <= _WATCH_OPTIONS_TO_COME


@pytest.mark.parametrize(
    ("argv", "sources", "config"),
    [
        (["diagnose", "gpu7:/x.log"], ["gpu7:/x.log"], None),
        (["diagnose", "--cmd", "a:b", "gpu7:/x.log"], ["gpu7:/x.log"], None),
        (["diagnose", "-o", "out:file", "--all", "h:/y"], ["h:/y"], None),
        (["diagnose", "--format=json", "-Fcfg", "h:/y", "--", "-odd:name"], ["h:/y", "-odd:name"], "cfg"),
        (["diagnose", "--ssh-config", "c", "--ssh-config", "d", "h:/y"], ["h:/y"], "d"),  # click: last wins
        (["diagnose", "-", "h:/y"], ["-", "h:/y"], None),
        (["diagnose", "--parallel", "8", "--hosts-file", "hosts:txt", "h:/y"], ["h:/y"], None),
        (["watch", "--timeout", "600", "--stall", "60", "-Fcfg", "h:/y", "--then-follow"], ["h:/y"], "cfg"),
        (["watch", "--settle=2", "--from-start", "a:/x", "b:/x"], ["a:/x", "b:/x"], None),
        (["watch", "--max-bytes", "1", "h:/y"], ["1", "h:/y"], None),  # a diagnose option: watch has no such value
    ],
)
def test_command_line_is_sorted_like_click(argv: list[str], sources: list[str], config: str | None) -> None:
    line = HelperArgv(argv)
    assert line.command == argv[0]
    assert line.sources == sources
    assert line.value("--ssh-config", "-F") == config


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["diagnose", "gpu7:/x.log"], True),
        (["diagnose", "/var/log/x.log"], False),
        (["diagnose", "--cmd", "python -m x --model a:b", "/x.log"], False),  # a colon in a value only
        (["watch", "gpu7:/x.log"], True),  # watch's first stage waits for the connection too
        (["watch", "/var/log/x.log"], False),
        (["watch", "--cmd", "python -m x --model a:b", "/x.log"], False),
        (["watch", "--hosts-file", "hosts.txt"], True),
        (["diagnose", "--hosts-file", "hosts.txt"], True),  # the hosts are in the file
        (["diagnose", "--parallel", "4", "/x.log"], False),
        ([], False),
    ],
)
def test_which_command_lines_fork_a_helper(argv: list[str], expected: bool) -> None:
    assert may_name_a_remote_log(argv) is expected


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["diagnose"] + [f"n{i}:/x" for i in range(40)], [f"n{i}:/x" for i in range(32)]),  # 32 by default
        (["diagnose", "--parallel", "2", "a:/x", "b:/x", "c:/x"], ["a:/x", "b:/x"]),
        (["diagnose", "--parallel=64"] + [f"n{i}:/x" for i in range(40)], [f"n{i}:/x" for i in range(40)]),
        (["diagnose", "--parallel", "many", "a:/x"], []),  # the CLI rejects it: nothing is opened for nothing
        (["diagnose", "a:/x", "--help"], []),
    ],
)
def test_the_helper_opens_early_as_many_sources_as_diagnose_reads_at_once(
    argv: list[str], expected: list[str]
) -> None:
    from logsleuth.internal.ssh_helper.child import early_specs, remote_specs

    line = HelperArgv(argv)
    assert early_specs(line, remote_specs(line)) == expected


def test_the_helper_expands_ranges_and_hosts_files_as_the_cli_does(tmp_path: Path) -> None:
    pytest.importorskip("logsleuth.sources.fleet")  # written beside this change (issue 14, item 1)
    from logsleuth.internal.ssh_helper.child import remote_specs

    hosts = tmp_path / "hosts"
    hosts.write_text("# the rack\ngpu7:/var/log/a.log\n")
    line = HelperArgv(["diagnose", "node[01-03]:/x.log", "--hosts-file", str(hosts), "/local.log"])
    assert remote_specs(line) == ["node01:/x.log", "node02:/x.log", "node03:/x.log", "gpu7:/var/log/a.log"]
    assert remote_specs(HelperArgv(["diagnose", "node[5-1]:/x.log"])) == []  # the CLI says why, exit 2


# -- the helper against the private sshd ------------------------------------------------------------------


@pytest.mark.ssh
def test_helper_serves_the_same_bytes_as_the_file(sshd: SSHD, log: Path) -> None:
    spec = f"logsleuth-alias:{log}"
    argv = ["diagnose", "--format", "json", spec, "--ssh-config", str(sshd.config)]
    result = run_script(argv, spec, str(sshd.config))
    assert result["kind"] == "RemoteSourceProxy"  # served by the helper, opened before it was asked
    assert {key: result[key] for key in ("size", "sha", "tail", "anchors")} == _expected(log)
    assert result["helper_alive_after_stop"] is False
    # the same status lines as an in-process connection (the CLI shows them on a TTY)
    assert result["progress"] == ["connecting to logsleuth-alias…", f"reading logsleuth-alias:{log}…"]


@pytest.mark.ssh
def test_helper_opens_what_is_asked_when_it_guessed_another_source(sshd: SSHD, log: Path) -> None:
    other = sshd.logs / "other.log"
    other.write_bytes(b"nothing to see\n")
    try:
        argv = ["diagnose", f"logsleuth-alias:{other}", "-F", str(sshd.config)]
        result = run_script(argv, f"logsleuth-alias:{log}", str(sshd.config))
    finally:
        other.unlink()
    assert result["kind"] == "RemoteSourceProxy"
    assert {key: result[key] for key in ("size", "sha", "tail", "anchors")} == _expected(log)


@pytest.mark.ssh
def test_a_dead_helper_falls_back_to_an_in_process_connection(sshd: SSHD, log: Path) -> None:
    spec = f"logsleuth-alias:{log}"
    result = run_script(["diagnose", spec, "-F", str(sshd.config)], spec, str(sshd.config), mode="kill")
    assert result["kind"] == "SSHFileSource"
    assert {key: result[key] for key in ("size", "sha", "tail", "anchors")} == _expected(log)


# Forks the helper, gives it time to connect on its own, then moves the remote log away before asking for
# it: only a source opened before the request can still answer (its size and tail came with the probe).
EARLY_SCRIPT = r"""
import json, os, sys, time
from logsleuth.internal.ssh_helper import process as ssh_prefork
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.open import open_sources

argv, spec, config, path, timeout, waits = json.loads(sys.argv[1])
ssh_prefork.fork_if_remote(argv)
time.sleep(5)  # the helper connects in ~0.2 s; a loaded CI machine gets 25 times that
os.rename(path, path + ".moved")
deadline = time.monotonic() + timeout if timeout else None  # as cli.watch_command sets it, after parsing
# as the command builds them: watch also waits for a log that does not exist yet (SSHOptions.wait_for_missing)
options = SSHOptions(config_file=config, deadline=deadline, deadline_seconds=timeout or None, wait_for_missing=waits)
(source,) = open_sources(spec, options)
size = source.size()
print(json.dumps({"size": size, "tail": b"".join(source.read_range(size - 100, size)).decode()}))
source.close()
ssh_prefork.stop()
"""


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.ssh
@pytest.mark.parametrize(
    ("command", "early"),
    [(["diagnose"], True), (["diagnose", "--help"], False), (["watch", "--timeout", "60"], True)],
    ids=["diagnose", "diagnose --help", "watch --timeout"],  # watch's deadline differs from the helper's guess
)
def test_helper_opens_the_named_source_before_it_is_asked(
    sshd: SSHD, log: Path, command: list[str], early: bool
) -> None:
    spec = f"logsleuth-alias:{log}"
    argv = [command[0], spec, "--ssh-config", str(sshd.config), *command[1:]]
    timeout = 60 if "--timeout" in command else None
    try:
        proc = subprocess.run(
            [sys.executable, "-c", EARLY_SCRIPT,
             json.dumps([argv, spec, str(sshd.config), str(log), timeout, command[0] == "watch"])],
            capture_output=True,
            text=True,
            env=helper_environment(),
            timeout=60,
        )
    finally:
        Path(f"{log}.moved").unlink(missing_ok=True)
    if not early:  # asking for help connects to nothing: the source is opened on request, after the move
        assert proc.returncode != 0 and "no such file" in proc.stderr, proc.stderr
        return
    assert proc.returncode == 0, proc.stderr  # opened after the move, it would fail with "no such file"
    assert json.loads(proc.stdout) == {"size": len(LOG), "tail": LOG[-100:].decode()}


def test_helper_leaves_at_once_when_the_colon_word_is_a_local_file(tmp_path: Path) -> None:
    local = tmp_path / "gpu7:x.log"  # exists locally, so it is a local path (as in scp)
    local.write_text("hello\n")
    proc = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps([["diagnose", local.name], None, None, ""])],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=30,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["helper_pid"] is not None  # forked on the cheap test (a colon) ...
    assert result["helper_alive_after_stop"] is False  # ... and gone without being asked anything


@pytest.mark.ssh
def test_cli_reports_the_same_with_and_without_the_helper(sshd: SSHD, log: Path) -> None:
    """Three remote sources (opened at once by the helper): one good, one missing, one good again."""
    second = sshd.logs / "worker-2.log"
    second.write_bytes(LOG.replace(b"AssertionError", b"RuntimeError: second host"))
    specs = [f"logsleuth-alias:{log}", f"logsleuth-alias:{sshd.logs}/missing.log", f"127.0.0.1:{second}"]
    config = sshd.write_config(
        "two-names",
        sshd.config.read_text() + f"\nHost 127.0.0.1\n    Port {sshd.port}\n    User logsleuth-test\n"
        f"    IdentityFile {sshd.client_key}\n    UserKnownHostsFile {sshd.root}/client/known_hosts\n",
    )
    reports, errors = [], []
    try:
        for helper in ("1", "0"):
            environment = {**helper_environment(), "LOGSLEUTH_SSH_WORKER": helper}
            proc = subprocess.run(
                [sys.executable, "-m", "logsleuth", "diagnose", *specs, "-F", str(config), "--format", "json"],
                capture_output=True,
                text=True,
                env=environment,
                timeout=60,
            )
            assert proc.returncode == 1, proc.stderr
            reports.append(json.loads(proc.stdout))
            errors.append(proc.stderr)
    finally:
        second.unlink()
    clocks = [_measured_clocks(report) for report in reports]  # measurements: they differ from run to run
    assert reports[0] == reports[1]
    for measured in clocks:  # three remote sources: a fleet, so each host read has its clock (the helper's too)
        assert [clock is not None for clock in measured] == [True, False, True]
    assert errors[0] == errors[1] == f"logsleuth: logsleuth-alias:{sshd.logs}/missing.log: no such file\n"
    assert [source["error"] for source in reports[0]["sources"]] == [None, "logsleuth-alias:"
                                                                     f"{sshd.logs}/missing.log: no such file", None]
    assert sorted(f["signature"] for f in reports[0]["failures"]) == ["AssertionError", "RuntimeError: second host"]


def _measured_clocks(report: dict[str, Any]) -> list[dict[str, float] | None]:
    """Take the clock measurements out of a JSON report (each source's clock, the fleet's spread); return the
    sources' clocks."""
    if report.get("fleet"):
        report["fleet"].pop("clock_spread_seconds")
    return [source.pop("clock") for source in report["sources"]]


@pytest.mark.parametrize(
    "options",
    [
        [],
        ["-F", "cfg"],
        ["--ssh-config=./dir//cfg"],
        ["-Fcfg", "--accept-new-host-key"],
        ["--all-files", "--format", "json", "--cmd", "python -m sglang.launch_server --port 1"],
    ],
)
def test_helper_guesses_the_ssh_options_the_cli_builds(options: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The helper's early connections are used only when its guess equals what `diagnose` asks for."""
    from logsleuth.__main__ import main
    from logsleuth.cli import app as cli
    from logsleuth.internal.ssh_helper.child import _ssh_options

    asked: list[object] = []

    def record(specs: list[str], diagnose_options: object) -> object:
        asked.append(diagnose_options)
        raise SystemExit(0)

    monkeypatch.setattr(cli, "diagnose", record)
    argv = ["diagnose", "gpu7:/var/log/x.log", *options]
    assert main(argv) == 0
    (built,) = asked
    assert _ssh_options(HelperArgv(argv)) == built.ssh  # type: ignore[attr-defined]


@pytest.mark.parametrize("options", [[], ["-Fcfg", "--accept-new-host-key"], ["--ssh-backend", "openssh", "--parallel", "4"]])
def test_helper_guesses_the_ssh_options_health_builds(options: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """`health` forks the helper too (issue 30, finding 4): its early connection is used only if the guess is right."""
    from logsleuth.__main__ import main
    from logsleuth.health import run as health_run
    from logsleuth.internal.ssh_helper.child import _ssh_options

    asked: list[SSHOptions] = []

    def record(specs: list[str], health_options: Any, **_: object) -> object:
        asked.append(health_options.ssh)
        raise SystemExit(0)

    monkeypatch.setattr(health_run, "check_health", record)
    argv = ["health", "gpu7:/var/log/x.log", *options]
    assert main(argv) == 0
    (built,) = asked
    assert _ssh_options(HelperArgv(argv)) == built


@pytest.mark.parametrize("options", [[], ["-Fcfg", "--accept-new-host-key"], ["--ssh-backend", "openssh", "--timeout", "30"]])
def test_helper_guesses_the_ssh_options_watch_builds(options: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """As for diagnose, except the deadline (`--timeout`): the helper counts it from its own start, a moment
    before the CLI does, and EarlyOpen.matches does not compare it.  Compared with what the watch opens the log
    with (a log not there yet is waited for: SSHOptions.wait_for_missing)."""
    import time
    from dataclasses import replace

    from logsleuth.__main__ import main
    from logsleuth.internal.ssh_helper.child import _ssh_options
    from logsleuth.sources import open as sources_open

    asked: list[SSHOptions] = []

    def record(spec: str, ssh_options: SSHOptions, **_: object) -> object:
        asked.append(ssh_options)
        raise SystemExit(0)

    monkeypatch.setattr(sources_open, "open_sources", record)  # what watch_spec opens the log with
    argv = ["watch", "gpu7:/var/log/x.log", *options]
    guessed = _ssh_options(HelperArgv(argv))
    assert main(argv) == 0
    (built,) = asked
    assert replace(guessed, deadline=None) == replace(built, deadline=None)
    assert built.wait_for_missing
    if "--timeout" in options:
        assert guessed.deadline is not None and built.deadline is not None
        assert 0 <= built.deadline - guessed.deadline < 5
        assert guessed.deadline - time.monotonic() <= 30
    else:
        assert guessed.deadline is None


# -- host keys: nothing is stored before the command line has parsed ------------------------------------------

# Forks the helper for ARGV and gives it time to connect on its own (it meets an unknown host key and may
# accept it: the command line says --accept-new-host-key).  Then, with ASK, opens the source as the CLI would
# after parsing; without, stops as the CLI does when the parser rejects the command line.
HOST_KEY_SCRIPT = r"""
import json, os, sys, time
from logsleuth.internal.ssh_helper import process as ssh_prefork
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.open import open_sources

argv, spec, config, own, ask = json.loads(sys.argv[1])
ssh_prefork.fork_if_remote(argv)
time.sleep(3)  # the helper connects in ~0.2 s
out = {"stored_before_asking": os.path.exists(own), "notices": []}
if ask:
    options = SSHOptions(config_file=config, accept_new_host_key=True, notice=out["notices"].append)
    for source in open_sources(spec, options):
        source.close()
ssh_prefork.stop()
out["stored"] = open(own).read() if os.path.exists(own) else None
print(json.dumps(out))
"""


@pytest.mark.slow  # make test-slow (CI runs it): keeps make test under 10 minutes
@pytest.mark.ssh
@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
@pytest.mark.parametrize("ask", [False, True], ids=["command line rejected", "command line parsed"])
def test_helper_stores_a_new_host_key_only_when_the_parent_asks(
    sshd: SSHD, log: Path, ask: bool, backend: str
) -> None:
    """With the openssh backend ("auto" chooses it for this config), ssh accepts the key into a private file and
    the helper holds it the same way."""
    config, _ = sshd.unknown_key_config(f"helper-new-key-{backend}")
    if backend == "openssh":
        config.write_text(config.read_text() + sshd.choose_openssh)
    spec = f"logsleuth-test@127.0.0.1:{sshd.port}:{log}"
    own = Path(os.environ["XDG_CONFIG_HOME"]) / "logsleuth" / "known_hosts"
    argv = ["diagnose", spec, "-F", str(config), "--accept-new-host-key"]
    proc = subprocess.run(
        [sys.executable, "-c", HOST_KEY_SCRIPT, json.dumps([argv, spec, str(config), str(own), ask])],
        capture_output=True,
        text=True,
        env=helper_environment(),
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout)
    assert result["stored_before_asking"] is False
    if not ask:
        assert result["stored"] is None and result["notices"] == []
        return
    assert result["stored"] == sshd.known_hosts_line()
    assert result["notices"] == [
        f"Permanently added '[127.0.0.1]:{sshd.port}' (ED25519) to the list of known hosts in {own}"
    ]


@pytest.mark.ssh
def test_a_command_line_the_parser_rejects_stores_no_host_key(sshd: SSHD, log: Path) -> None:
    config, _ = sshd.unknown_key_config("rejected-new-key")
    spec = f"logsleuth-test@127.0.0.1:{sshd.port}:{log}"
    proc = subprocess.run(
        [sys.executable, "-m", "logsleuth", "diagnose", spec, "-F", str(config), "--accept-new-host-key=false"],
        capture_output=True,
        text=True,
        env=helper_environment(),
        timeout=60,
    )
    assert proc.returncode == 2, proc.stderr
    assert not (Path(os.environ["XDG_CONFIG_HOME"]) / "logsleuth" / "known_hosts").exists()
