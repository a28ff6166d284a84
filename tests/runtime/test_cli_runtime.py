"""`logsleuth diagnose docker:C | podman:C | journal:UNIT` through the console script, with the stand-in clients
first on PATH (conftest.py: no Docker daemon, journald or systemd-as-PID-1 can run on the test machines).

The container's log is a shipped example (examples/eagle3-incident.log, made by the project's own script from a
real SGLang run), so the report must name the same root cause and fix as for the file.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.runtime import k8s_fixtures
from tests.runtime.conftest import Runtime

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "eagle3-incident.log"
LOGSLEUTH = str(Path(sys.executable).with_name("logsleuth"))


def _diagnose(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([LOGSLEUTH, "diagnose", *args], capture_output=True, text=True, timeout=60)


def _json(*args: str) -> dict[str, Any]:
    done = _diagnose(*args, "--format", "json")
    assert done.returncode == 1, done.stderr
    report: dict[str, Any] = json.loads(done.stdout)
    return report


def _example_records() -> list[tuple[str, str]]:
    return [("stderr", line) for line in EXAMPLE.read_text().splitlines()]


def test_a_container_log_gets_the_same_diagnosis_as_the_file(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here).
    runtime.container("sglang", _example_records(), exit_code=1)
    from_file = _json(str(EXAMPLE))["failures"][0]["diagnosis"]
    report = _json("docker:sglang")
    diagnosis = report["failures"][0]["diagnosis"]
    assert diagnosis["pattern"] == from_file["pattern"] == "sglang-eagle-partial-spec-args"
    assert diagnosis["fix"]["flags"] == from_file["fix"]["flags"]
    assert report["sources"][0]["name"] == "docker:sglang"
    assert [call[1] for call in runtime.calls()] == ["inspect", "logs"]


def test_podman_and_all_failures(runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Stand-in podman (the docker stand-in under podman's name; podman's CLI takes the same flags).
    podman = tmp_path / "podman-bin" / "podman"
    podman.parent.mkdir()
    podman.symlink_to(Path(__file__).resolve().parent / "standins" / "docker")
    monkeypatch.setenv("PATH", f"{podman.parent}:{__import__('os').environ['PATH']}")
    runtime.container("sglang", _example_records(), exit_code=1)
    report = _json("podman:sglang", "--all")
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    # --all reads every line at once, not the growing windows: podman's --tail takes -1 for all (an integer only).
    assert [call[:4] for call in runtime.calls() if call[1] == "logs"] == [["podman", "logs", "--tail", "-1"]]


def test_a_unit_journal(runtime: Runtime) -> None:
    # Stand-in journalctl and systemctl (no journald or systemd as PID 1 here).
    stamp = "2026-11-30T22:10:31+0000 gpu7 python3[4187]: "
    runtime.unit("sglang.service", [stamp + line for line in EXAMPLE.read_text().splitlines()],
                 {"LoadState": "loaded", "ActiveState": "failed", "Result": "exit-code", "ExecMainCode": "1",
                  "ExecMainStatus": "1", "NRestarts": "0"})
    report = _json("journal:sglang.service")
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"


@pytest.mark.parametrize(
    ("spec", "setup", "message"),
    [
        ("docker:nope", None, "docker:nope: no such container (docker ps -a lists them)"),
        ("docker:sglang", "denied",
         "docker:sglang: permission denied on the docker socket: add the user to the docker group, or run as root"),
        ("journal:nope.service", None,
         "journal:nope.service: no such unit (nope.service; systemctl list-units --all lists them)"),
    ],
)
def test_errors_are_one_line_and_exit_3(runtime: Runtime, spec: str, setup: str | None, message: str) -> None:
    # Stand-in docker and journalctl (no daemon here); their error wording is checked in test_standins.py.
    if setup:
        runtime.socket(setup)
    runtime.container("sglang", _example_records())
    runtime.unit("nope.service", [], {"LoadState": "not-found"})
    done = _diagnose(spec)
    assert done.returncode == 3
    assert done.stdout == "No log could be read.\n"  # as for a missing file
    assert done.stderr.strip().splitlines() == [f"logsleuth: {message}"]


@pytest.mark.parametrize(("spec", "program"), [("docker:sglang", "docker"), ("podman:sglang", "podman"),
                                               ("k8s:serving/sglang-0", "kubectl")])
def test_a_missing_client_is_one_line_and_exit_3(nothing_on_path: None, spec: str, program: str) -> None:
    done = subprocess.run([sys.executable, "-m", "logsleuth", "diagnose", spec], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [f"logsleuth: {spec}: {program} is not installed (not found on PATH)"]


def test_a_missing_journalctl_is_one_line_and_exit_3(nothing_on_path: None) -> None:
    done = subprocess.run([sys.executable, "-m", "logsleuth", "diagnose", "journal:sglang"], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 3
    assert done.stderr.strip().splitlines() == [
        "logsleuth: journal:sglang: journalctl is not installed (not found on PATH)"
    ]


def test_an_oom_killed_container_with_no_traceback_is_named_as_such(runtime: Runtime) -> None:
    # Stand-in docker: the server was loading weights when its cgroup's OOM killer ended it; no traceback.
    runtime.container("sglang", [("stdout", "[2026-11-30 22:10:31] Load weight begin. avail mem=78.50 GB")],
                      oom_killed=True, exit_code=137)
    report = _json("docker:sglang")
    assert report["failures"][0]["diagnosis"]["pattern"] == "common-cgroup-oom-killed"
    text = _diagnose("docker:sglang").stdout
    assert "OOMKilled by its cgroup" in text


def test_a_malformed_runtime_spec_is_a_usage_error(runtime: Runtime) -> None:
    done = _diagnose("docker:-rm")
    assert done.returncode == 2
    assert len(done.stderr.strip().splitlines()) == 1
    assert "docker:-rm" in done.stderr


def test_a_local_file_named_like_a_runtime_spec_is_read_as_a_file(
    runtime: Runtime, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "docker:sglang").write_text(EXAMPLE.read_text())
    report = _json("docker:sglang")
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    assert runtime.calls() == []  # the file, as scp would: no docker asked


# -- Kubernetes, through the stand-in kubectl (no cluster can run here) -----------------------------------------

cluster = k8s_fixtures.cluster  # the fixture
LOADING = ["[2026-11-30 22:10:31] Load weight begin. avail mem=78.50 GB",
           "Loading safetensors checkpoint shards:  50% Completed | 2/4 [00:03<00:06,  3.01s/it]"]


def test_a_crashloop_pod_is_diagnosed_from_its_previous_container(cluster: k8s_fixtures.Cluster) -> None:
    # The current container waits in CrashLoopBackOff with an empty log; the crash is in --previous.
    status = k8s_fixtures.container_status(
        "sglang", k8s_fixtures.waiting("CrashLoopBackOff", "back-off 5m0s restarting failed container=sglang"),
        last=k8s_fixtures.terminated("Error", 1), restarts=4)
    cluster.add_pod(k8s_fixtures.pod("sglang-0", [status]), logs={"sglang": []},
                    previous={"sglang": EXAMPLE.read_text().splitlines()})
    report = _json("k8s:serving/sglang-0")
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"
    note = "read the previous container of sglang (restarted 4 times; last ended Error, exit code 1)"
    assert report["sources"][0]["note"] == note
    text = _diagnose("k8s:serving/sglang-0")
    assert text.returncode == 1
    assert f"k8s:serving/sglang-0: {note}" in " ".join(text.stdout.split())
    markdown = _diagnose("k8s:serving/sglang-0", "--format", "markdown")
    assert note in " ".join(markdown.stdout.split())


def test_an_oom_killed_pod_with_no_traceback_is_named_as_such(cluster: k8s_fixtures.Cluster) -> None:
    status = k8s_fixtures.container_status("sglang", k8s_fixtures.running("2026-11-30T23:59:02Z"),
                                           last=k8s_fixtures.terminated("OOMKilled", 137), restarts=1)
    cluster.add_pod(k8s_fixtures.pod("sglang-0", [status]), logs={"sglang": ["new container starting"]},
                    previous={"sglang": LOADING})
    report = _json("k8s:serving/sglang-0")
    assert report["failures"][0]["diagnosis"]["pattern"] == "common-cgroup-oom-killed"
    assert report["failures"][0]["diagnosis"]["category"] == "host-memory"


def test_a_liveness_probe_kill_during_weight_loading_is_named_as_such(cluster: k8s_fixtures.Cluster) -> None:
    status = k8s_fixtures.container_status("sglang", k8s_fixtures.running(),
                                           last=k8s_fixtures.terminated("Error", 137), restarts=2)
    cluster.add_pod(k8s_fixtures.pod("sglang-0", [status]), logs={"sglang": LOADING[:1]},
                    previous={"sglang": LOADING})
    probe = 'Liveness probe failed: Get "http://10.1.2.3:30000/health": dial tcp 10.1.2.3:30000: connect: connection refused'
    cluster.add_events([
        k8s_fixtures.event("sglang-0", "Warning", "Unhealthy", probe, count=6, last="2026-11-30T23:58:30Z"),
        k8s_fixtures.event("sglang-0", "Normal", "Killing", "Container sglang failed liveness probe, will be restarted",
                           count=2, last="2026-11-30T23:58:31Z"),
    ])
    report = _json("k8s:serving/sglang-0")
    assert report["failures"][0]["diagnosis"]["pattern"] == "common-liveness-probe-killed"
    assert report["failures"][0]["diagnosis"]["category"] == "orchestration"


def test_a_deployment_is_read_as_a_fleet(cluster: k8s_fixtures.Cluster) -> None:
    cluster.add_deployment(k8s_fixtures.deployment("sglang", {"app": "sglang"}))
    crashed = k8s_fixtures.container_status("sglang", k8s_fixtures.terminated("Error", 1))
    cluster.add_pod(k8s_fixtures.pod("sglang-a", [crashed], labels={"app": "sglang"}),
                    logs={"sglang": EXAMPLE.read_text().splitlines()})
    healthy = k8s_fixtures.container_status("sglang", k8s_fixtures.running())
    cluster.add_pod(k8s_fixtures.pod("sglang-b", [healthy], labels={"app": "sglang"}), logs={"sglang": LOADING})
    report = _json("k8s:serving/deploy/sglang")
    outcomes = {host["source"]: host["outcome"] for host in report["fleet"]["hosts"]}
    assert outcomes == {"k8s:serving/sglang-a": "root", "k8s:serving/sglang-b": "no-failure"}
    assert report["failures"][0]["diagnosis"]["pattern"] == "sglang-eagle-partial-spec-args"


@pytest.mark.parametrize(
    ("spec", "setup", "message"),
    [
        ("k8s:serving/ghost", None,
         "k8s:serving/ghost: no such pod ghost in namespace serving (kubectl get pods -n serving lists them)"),
        ("k8s:serving/deploy/ghost", None, "k8s:serving/deploy/ghost: "),
        ("k8s:nope:serving/sglang-0", None, "k8s:nope:serving/sglang-0: "),
        ("k8s:serving/sglang-0", "rbac", "k8s:serving/sglang-0: permission denied by RBAC"),
    ],
)
def test_kubernetes_errors_are_one_line_and_exit_3(
    cluster: k8s_fixtures.Cluster, spec: str, setup: str | None, message: str
) -> None:
    cluster.contexts("kind-gpu")
    cluster.add_pod(k8s_fixtures.pod("sglang-0", [k8s_fixtures.container_status("sglang", k8s_fixtures.running())]),
                    logs={"sglang": LOADING})
    if setup == "rbac":
        cluster.deny("get", "pods")
    done = _diagnose(spec)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(f"logsleuth: {message}"), lines
