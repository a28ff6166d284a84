"""`logsleuth watch docker:C | podman:C | journal:UNIT` (watch/follow.py's runtime branch, sources/runtime/follow.py).

The runtime is the stand-in `docker`/`journalctl` first on PATH (conftest.py): no Docker daemon or journald can
run on the test machines.  The test plays the daemon: it changes the container's log and state while the real
console script watches it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from logsleuth.api import DiagnoseOptions
from logsleuth.watch.follow import RUNTIME_RESTARTED, WatchEvent, WatchTimeout, watch_spec
from tests.logs import crash_record, scheduler_traceback
from tests.runtime import k8s_fixtures
from tests.runtime.conftest import Runtime
from tests.runtime.k8s_fixtures import (
    Cluster,
    container_status,
    pod,
    running,
    terminated,
)
from tests.runtime.test_follow import (
    RUN1_END,
    RUN1_START,
    RUN2_START,
    UNIT_PREFIX,
    later,
    later_seen,
    set_container,
    set_unit,
)

LOGSLEUTH = str(Path(sys.executable).with_name("logsleuth"))
cluster = k8s_fixtures.cluster  # the fixture, for the pod tests below
LAUNCH = [
    "[2026-11-30 22:10:05] server_args=ServerArgs(model_path='/m', tp_size=1)",
    "[2026-11-30 22:10:06] Init torch distributed begin.",
    "[2026-11-30 22:10:07] Load weight begin. avail mem=78.84 GB",
]
READY = [
    "[2026-11-30 22:10:14] Load weight end. type=LlamaForCausalLM, dtype=torch.bfloat16, avail mem=60.1 GB",
    "[2026-11-30 22:10:15] KV Cache is allocated. #tokens: 400000, K size: 20.00 GB, V size: 20.00 GB",
    "INFO:     Uvicorn running on http://127.0.0.1:30000 (Press CTRL+C to quit)",
    "[2026-11-30 22:10:27] The server is fired up and ready to roll!",
]


def _records(lines: list[str], second: int = 5, stream: str = "stdout") -> list[list[str]]:
    """Container log records, stamped one second apart as the daemon would."""
    return [[stream, line, f"2026-11-30T22:{10 + (second + index) // 60:02d}:{(second + index) % 60:02d}Z"]
            for index, line in enumerate(lines)]


def _watch(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([LOGSLEUTH, "watch", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _first_stage(watcher: subprocess.Popen[str], *, json_lines: bool = False) -> str:
    """The first line the watch prints (on stdout with --format json): a stage of the backlog, so it is
    following now."""
    printed = watcher.stdout if json_lines else watcher.stderr
    assert printed is not None
    return printed.readline()


def _events(spec: str, **settings: float) -> list[WatchEvent]:
    events: list[WatchEvent] = []
    try:
        for event in watch_spec(spec, DiagnoseOptions(), details=True, **settings):  # type: ignore[arg-type]
            events.append(event)
    except WatchTimeout:
        pass
    return events


def test_watch_a_container_until_ready(runtime: Runtime) -> None:
    # Stand-in docker: a running container loading; the test writes its later lines.
    set_container(runtime, "web", _records(LAUNCH), status="running")
    watcher = _watch("docker:web", "--timeout", "120")
    assert "loading weights" in _first_stage(watcher) + _first_stage(watcher) + _first_stage(watcher)
    set_container(runtime, "web", _records(LAUNCH + READY), status="running")
    stdout, stderr = watcher.communicate(timeout=180)
    assert watcher.returncode == 0, stderr
    assert stdout.strip() == "docker:web: the server is ready"
    # The latest run's newest lines and the live log, from one command.
    assert ["docker", "logs", "--follow", "--since", RUN1_START, "--tail", "2000", "--", "web"] in runtime.calls()


def test_watch_a_container_that_crashes(runtime: Runtime) -> None:
    # Stand-in docker; the crash is a real CPython traceback, on the container's stderr.
    set_container(runtime, "web", _records(LAUNCH), status="running")
    watcher = _watch("docker:web", "--timeout", "120", "--format", "json")
    assert '"stage"' in _first_stage(watcher, json_lines=True)
    crash = crash_record("2026-11-30 22:10:09", "TP0", scheduler_traceback()).splitlines()
    set_container(runtime, "web", _records(LAUNCH) + _records(crash, 9, "stderr"), status="running")
    stdout, stderr = watcher.communicate(timeout=180)
    assert watcher.returncode == 1, stderr
    failure = json.loads(stdout.strip().splitlines()[-1])
    assert '"AssertionError"' in json.dumps(failure)


def test_an_oom_kill_reaches_the_watch(runtime: Runtime) -> None:
    # Stand-in docker: the cgroup OOM-kills the server while it loads, without a word in its log.  The fact
    # line docker inspect gives is the only trace; it must reach the watch when the run ends.
    set_container(runtime, "web", _records(LAUNCH), status="running")
    later(1.0, lambda: set_container(runtime, "web", _records(LAUNCH), oom_killed=True, exit_code=137))
    events = _events("docker:web", timeout=120)  # ends when the container does; only a hang meets it
    lines = [event.text for event in events if event.kind == "line"]
    assert ("[logsleuth: container web: exited, OOMKilled by its cgroup, exit code 137 (SIGKILL), restarts 0, "
            "finished 2026-11-30T23:58:41.215470913Z]") in lines


def test_an_oom_killed_container_ends_the_watch_with_its_diagnosis(runtime: Runtime) -> None:
    # Stand-in docker, as above, through the console script.
    set_container(runtime, "web", _records(LAUNCH), status="running")
    watcher = _watch("docker:web", "--timeout", "120", "--format", "json")
    assert '"stage"' in _first_stage(watcher, json_lines=True)
    set_container(runtime, "web", _records(LAUNCH), oom_killed=True, exit_code=137)
    stdout, stderr = watcher.communicate(timeout=180)
    assert watcher.returncode == 1, stderr
    assert "OOMKilled" in stdout
    assert '"common-cgroup-oom-killed"' in stdout  # named by its pattern, not only as a killed process


def test_a_restarted_container_is_followed_to_ready(runtime: Runtime) -> None:
    # Stand-in docker: run 1 is stopped while loading (`docker restart`: SIGTERM), run 2 loads to ready.
    run1 = _records(LAUNCH)
    run2 = _records(LAUNCH + READY, 62)  # stamped after RUN2_START
    set_container(runtime, "web", run1, status="running", started_at=RUN1_START)
    later_seen(runtime, 1.0,  # run 2 starts once the watch has seen run 1 stopped
          lambda: set_container(runtime, "web", run1, status="exited", exit_code=143, finished_at=RUN1_END),
          lambda: set_container(runtime, "web", run1 + run2, status="running", started_at=RUN2_START,
                                finished_at=RUN1_END))
    events = _events("docker:web", timeout=120)
    shown = [event.stage.key if event.stage else event.kind for event in events if event.kind != "line"]
    assert shown == ["args", "distributed", "weights", "restarted",  # run 1, stopped while loading weights
                     "args", "distributed", "weights", "weights-loaded", "kv-cache", "http", "ready"]
    assert [event.text for event in events if event.kind == "restarted"] == [RUNTIME_RESTARTED]


def test_the_fact_of_a_run_before_does_not_end_the_watch(runtime: Runtime) -> None:
    # Stand-in docker: restarted by its policy after an OOM kill and loading again; inspect says a process in
    # it was OOM-killed.  That fact is old news for the watch: it goes on to ready.
    set_container(runtime, "web", _records(LAUNCH), status="running", oom_killed=True, restarts=3)
    later(1.0, lambda: set_container(runtime, "web", _records(LAUNCH + READY), status="running", oom_killed=True,
                                     restarts=3))
    events = _events("docker:web", timeout=120)
    assert events[-1].kind == "ready"
    assert not any(event.text and "OOMKilled" in event.text for event in events)


def test_watch_a_unit_until_ready_and_until_it_crashes(runtime: Runtime) -> None:
    # Stand-in journalctl and systemctl (no journald, systemd is not PID 1 here).
    runtime.unit("sglang.service", [UNIT_PREFIX + line for line in LAUNCH],
                 {"LoadState": "loaded", "ActiveState": "active", "Result": "success", "NRestarts": "0"})
    watcher = _watch("journal:sglang.service", "--timeout", "120")
    _first_stage(watcher)
    set_unit(runtime, "sglang.service", [UNIT_PREFIX + line for line in LAUNCH + READY])
    stdout, stderr = watcher.communicate(timeout=180)
    assert watcher.returncode == 0, stderr
    assert stdout.strip() == "journal:sglang.service: the server is ready"

    runtime.unit("crash.service", [UNIT_PREFIX + line for line in LAUNCH])
    watcher = _watch("journal:crash.service", "--timeout", "120", "--format", "json")
    _first_stage(watcher, json_lines=True)
    crash = crash_record("2026-11-30 22:10:09", "TP0", scheduler_traceback()).splitlines()
    set_unit(runtime, "crash.service", [UNIT_PREFIX + line for line in LAUNCH + crash])
    stdout, stderr = watcher.communicate(timeout=180)
    assert watcher.returncode == 1, stderr
    assert '"AssertionError"' in stdout


def test_watch_a_container_that_does_not_exist(runtime: Runtime) -> None:
    # Stand-in docker: the daemon knows no such container.
    done = subprocess.run([LOGSLEUTH, "watch", "docker:nosuch", "--timeout", "20"], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 3
    assert done.stderr == "logsleuth: docker:nosuch: no such container (docker ps -a lists them)\n"


def test_watch_a_pod_until_ready(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here): a running pod loading; the test writes its later lines.
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LAUNCH})
    watcher = _watch("k8s:serving/sglang-0", "--timeout", "120")
    assert "loading weights" in _first_stage(watcher) + _first_stage(watcher) + _first_stage(watcher)
    cluster.write_log("serving", "sglang-0", "sglang.log", READY, append=True)
    stdout, stderr = watcher.communicate(timeout=180)
    assert watcher.returncode == 0, stderr
    assert stdout.strip() == "k8s:serving/sglang-0: the server is ready"


def test_a_restarted_pod_is_watched_in_its_current_container(cluster: Cluster) -> None:
    # Stand-in kubectl: the previous container crashed (what `diagnose` reads), the current one loads again.
    # The watch follows the current container: the old crash and its OOM fact do not end it.
    crash = crash_record("2026-11-30 22:00:09", "TP0", scheduler_traceback()).splitlines()
    restarted = container_status("sglang", running(), last=terminated("OOMKilled", 137), restarts=1)
    cluster.add_pod(pod("sglang-0", [restarted]), logs={"sglang": LAUNCH}, previous={"sglang": LAUNCH + crash})
    later(1.0, lambda: cluster.write_log("serving", "sglang-0", "sglang.log", READY, append=True))
    events = _events("k8s:serving/sglang-0", timeout=120)
    assert events[-1].kind == "ready"
    assert not any(event.kind == "failure" for event in events)


def test_watch_a_deployment_is_a_fleet_of_its_pods(cluster: Cluster) -> None:
    # Stand-in kubectl: a Deployment of two pods; the watch is ready when both are, and says so for each.
    from tests.runtime.k8s_fixtures import deployment

    cluster.add_deployment(deployment("sglang", {"app": "sglang"}))
    for name in ("sglang-a", "sglang-b"):
        cluster.add_pod(pod(name, [container_status("sglang", running())], labels={"app": "sglang"}),
                        logs={"sglang": LAUNCH + READY})
    done = subprocess.run([LOGSLEUTH, "watch", "k8s:serving/deploy/sglang", "--timeout", "30"],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "all 2 servers are ready"
    assert "k8s:serving/sglang-a" in done.stderr and "k8s:serving/sglang-b" in done.stderr  # one line per event


def test_watch_a_deployment_that_does_not_exist(cluster: Cluster) -> None:
    done = subprocess.run([LOGSLEUTH, "watch", "k8s:serving/deploy/ghost", "--timeout", "30"],
                          capture_output=True, text=True, timeout=90)
    assert done.returncode == 3
    assert len(done.stderr.strip().splitlines()) == 1 and "k8s:serving/deploy/ghost" in done.stderr
