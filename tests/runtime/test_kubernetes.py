"""Kubernetes pods and workloads (sources/runtime/kubernetes.py) through the stand-in `kubectl`
(tests/runtime/standins/kubectl): no Kubernetes cluster can run on the test machines, so every test here that
reads a pod uses the stand-in, whose answers are the API server's and kubelet's as their sources word them.  The
stand-in's own argument handling is checked against the real kubectl client at the end of this file."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from logsleuth.errors import ExitStatus, SourceError
from logsleuth.reading.reader import read_latest
from logsleuth.sources.base import RESTART
from logsleuth.sources.runtime.command import CommandSource, Finished, run_local, stream_local
from logsleuth.sources.runtime.kubernetes import (
    events_command,
    follow_pod,
    get_pod_command,
    logs_command,
    open_pod,
    workload_pods,
)
from logsleuth.sources.runtime.spec import RuntimeSpec, parse_runtime_spec
from tests.helpers import real_traceback
from tests.runtime import k8s_fixtures
from tests.runtime.conftest import STANDINS, text_of
from tests.runtime.k8s_fixtures import (
    Cluster,
    condition,
    container_status,
    deployment,
    event,
    leaderworkerset,
    lws_pod,
    pod,
    running,
    terminated,
    waiting,
)
from tests.runtime.test_standins import _real, _run

cluster = k8s_fixtures.cluster  # the fixture, for the tests below
LOADING = ["[2026-11-30 22:10:31 TP0] Load weight begin. avail mem=78.50 GB",
           "Loading safetensors checkpoint shards:  50% Completed | 15/30 [04:03<04:06,  16.4s/it]"]


def _spec(text: str) -> RuntimeSpec:
    parsed = parse_runtime_spec(text)
    assert parsed is not None, text
    return parsed


def _open(text: str) -> CommandSource:
    return open_pod(_spec(text))


def _facts(source: CommandSource) -> list[str]:
    return [line for line in text_of(source).splitlines() if line.startswith("[logsleuth: ")]


# -- reading a pod -------------------------------------------------------------------------------------------


def test_a_crashloop_pod_is_diagnosed_from_its_previous_container(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).  In CrashLoopBackOff the current container has not started; the crash,
    # a real CPython traceback, is in the previous container's log.
    crash = real_traceback("import sglang_stub_missing_module\n").splitlines()
    status = container_status("sglang", waiting("CrashLoopBackOff", 'back-off 5m0s restarting failed container=sglang pod=sglang-0_serving(7c3f9a1e)'),
                              last=terminated("Error", 1), restarts=4)
    cluster.add_pod(pod("sglang-0", [status]), previous={"sglang": [*LOADING, *crash]})
    source = _open("k8s:serving/sglang-0")
    result = read_latest(source)
    assert "ModuleNotFoundError" in [failure.final.type for failure in result.failures]
    assert source.note == "read the previous container of sglang (restarted 4 times; last ended Error, exit code 1)"
    assert _facts(source) == [
        "[logsleuth: pod serving/sglang-0 container sglang: terminated, reason Error, exit code 1, restarts 4, "
        "finished 2026-11-30T23:58:41Z]"
    ]
    assert cluster.calls() == [
        ["kubectl", "-n", "serving", "get", "pod", "sglang-0", "-o", "json"],
        ["kubectl", "-n", "serving", "get", "events", "--field-selector",
         "involvedObject.kind=Pod,involvedObject.name=sglang-0,involvedObject.uid=7c3f9a1e-2b4d-4e8f-9a6b-1c2d3e4f5a6b",
         "-o", "json"],
        ["kubectl", "-n", "serving", "logs", "sglang-0", "-c", "sglang", "--previous", "--tail=2000"],
    ]


def test_an_oom_killed_container_is_named_by_its_fact_line(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).  The cgroup OOM kill leaves no traceback: only the state says it.
    status = container_status("sglang", running("2026-11-30T23:59:02Z"), last=terminated("OOMKilled", 137), restarts=1)
    cluster.add_pod(pod("sglang-0", [status]), logs={"sglang": ["new container starting"]},
                    previous={"sglang": LOADING})
    source = _open("k8s:serving/sglang-0")
    assert text_of(source).startswith("\n".join(LOADING) + "\n")
    assert _facts(source) == [
        "[logsleuth: pod serving/sglang-0 container sglang: terminated, reason OOMKilled, exit code 137 (SIGKILL), "
        "restarts 1, finished 2026-11-30T23:58:41Z]"
    ]
    assert source.note == ("read the previous container of sglang (restarted 1 time; last ended OOMKilled, "
                           "exit code 137)")


def test_a_liveness_probe_kill_during_weight_loading_puts_the_events_in_the_trailer(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here), with the kubelet's event wordings (pkg/kubelet/prober, kuberuntime).
    status = container_status("sglang", running(), last=terminated("Error", 137), restarts=2)
    cluster.add_pod(pod("sglang-0", [status]), logs={"sglang": LOADING[:1]}, previous={"sglang": LOADING})
    probe = 'Liveness probe failed: Get "http://10.1.2.3:30000/health": dial tcp 10.1.2.3:30000: connect: connection refused'
    cluster.add_events([
        event("sglang-0", "Normal", "Killing", "Container sglang failed liveness probe, will be restarted",
              count=2, first="2026-11-30T23:52:00Z", last="2026-11-30T23:58:31Z"),
        event("sglang-0", "Warning", "Unhealthy", probe, count=6, first="2026-11-30T23:51:40Z", last="2026-11-30T23:58:30Z"),
        event("sglang-0", "Normal", "Pulled", f'Container image "{"lmsysorg/sglang:v0.5.9-cu129"}" already present on machine'),
        event("other-pod", "Warning", "Unhealthy", probe),  # another pod's: the field selector leaves it out
    ])
    facts = _facts(_open("k8s:serving/sglang-0"))
    assert facts[1:] == [
        f"[logsleuth: pod serving/sglang-0 event: Warning Unhealthy (x6, last 2026-11-30T23:58:30Z): {probe}]",
        "[logsleuth: pod serving/sglang-0 event: Normal Killing (x2, last 2026-11-30T23:58:31Z): "
        "Container sglang failed liveness probe, will be restarted]",
    ]
    assert facts[0].startswith("[logsleuth: pod serving/sglang-0 container sglang: terminated, reason Error, exit code 137 (SIGKILL)")


def test_a_pending_pod_has_an_empty_log_and_says_why(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).  An unscheduled pod has no container yet: no log, not an error.  The
    # scheduler's events come through events.k8s.io (eventTime and series, no count).
    unscheduled = "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 No preemption victims found for incoming pod."
    cluster.add_pod(pod("sglang-0", None, phase="Pending", node=None,
                        conditions=[condition("PodScheduled", False, "Unschedulable", unscheduled)]))
    cluster.add_events([event("sglang-0", "Warning", "FailedScheduling", unscheduled, count=7, scheduler=True,
                              first="2026-11-30T23:40:01Z", last="2026-11-30T23:58:01Z")])
    source = _open("k8s:serving/sglang-0")
    assert _facts(source) == [
        "[logsleuth: pod serving/sglang-0: phase Pending, PodScheduled False (Unschedulable)]",
        f"[logsleuth: pod serving/sglang-0 event: Warning FailedScheduling (x7, last 2026-11-30T23:58:01.118042Z): {unscheduled}]",
    ]
    assert text_of(source).startswith("[logsleuth: ")  # the log itself is empty
    assert not any(call[3] == "logs" for call in cluster.calls())  # nothing to ask the kubelet for


def test_an_image_pull_backoff_has_an_empty_log_and_its_state_and_events(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here), kubelet wordings (pkg/kubelet/images).
    backoff = 'Back-off pulling image "lmsysorg/sglang:v9"'
    cluster.add_pod(pod("sglang-0", [container_status("sglang", waiting("ImagePullBackOff", backoff))], phase="Pending"))
    pulled = ('Failed to pull image "lmsysorg/sglang:v9": rpc error: code = NotFound desc = failed to pull and unpack image '
              '"docker.io/lmsysorg/sglang:v9": failed to resolve reference "docker.io/lmsysorg/sglang:v9": '
              "docker.io/lmsysorg/sglang:v9: not found")
    cluster.add_events([
        event("sglang-0", "Warning", "Failed", pulled, count=2, first="2026-11-30T23:56:00Z", last="2026-11-30T23:57:10Z"),
        event("sglang-0", "Normal", "BackOff", backoff, count=3, first="2026-11-30T23:56:05Z", last="2026-11-30T23:58:10Z"),
        event("sglang-0", "Warning", "Failed", "Error: ImagePullBackOff", count=3, first="2026-11-30T23:56:05Z",
              last="2026-11-30T23:58:10Z"),
    ])
    source = _open("k8s:serving/sglang-0")
    assert _facts(source) == [
        f"[logsleuth: pod serving/sglang-0 container sglang: waiting, reason ImagePullBackOff, restarts 0, message: {backoff}]",
        "[logsleuth: pod serving/sglang-0: phase Pending, ContainersReady False]",
        f"[logsleuth: pod serving/sglang-0 event: Warning Failed (x2, last 2026-11-30T23:57:10Z): {pulled}]",
        "[logsleuth: pod serving/sglang-0 event: Warning Failed (x3, last 2026-11-30T23:58:10Z): Error: ImagePullBackOff]",
    ]
    assert source.note is None


def test_a_healthy_running_pod_reads_its_current_log_and_adds_nothing(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LOADING})
    source = _open("k8s:serving/sglang-0/sglang")
    assert text_of(source) == "\n".join(LOADING) + "\n"
    assert source.note is None
    assert cluster.calls()[-1] == ["kubectl", "-n", "serving", "logs", "sglang-0", "-c", "sglang", "--tail=2000"]


def test_widening_reads_every_line_with_tail_minus_one(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here): --all, or a window that was not enough, asks for every line.
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LOADING})
    source = _open("k8s:serving/sglang-0")
    source.widen(to_all=True)
    assert text_of(source) == "\n".join(LOADING) + "\n"
    assert cluster.calls()[-1][-1] == "--tail=-1"


@pytest.mark.parametrize(
    ("containers", "annotations", "chosen", "note"),
    [
        (("sglang",), None, "sglang", None),
        (("metrics", "sglang"), {"kubectl.kubernetes.io/default-container": "sglang"}, "sglang",
         "read container sglang, the pod's default (kubectl.kubernetes.io/default-container); it also has metrics"),
        (("sglang", "metrics"), None, "sglang",
         "read container sglang, the first of sglang, metrics (name one: k8s:serving/sglang-0/CONTAINER)"),
    ],
)
def test_the_container_is_chosen_as_kubectl_chooses_it_and_the_choice_is_said(
    cluster: Cluster, containers: tuple[str, ...], annotations: dict[str, str] | None, chosen: str, note: str | None
) -> None:
    # Stand-in kubectl (no cluster here).
    statuses = [container_status(name, running()) for name in containers]
    cluster.add_pod(pod("sglang-0", statuses, containers=containers, annotations=annotations),
                    logs={name: [f"{name} says hello"] for name in containers})
    source = _open("k8s:serving/sglang-0")
    assert text_of(source) == f"{chosen} says hello\n"
    assert source.note == note


def test_the_context_is_passed_to_every_kubectl_call(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).  The context comes before the last colon (EKS ARNs hold colons).
    context = "arn:aws:eks:us-east-1:123456789012:cluster/gpu"
    cluster.contexts("kind-gpu", context)
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LOADING})
    _open(f"k8s:{context}:serving/sglang-0").size()
    assert {tuple(call[1:3]) for call in cluster.calls()} == {("--context", context)}


def test_forbidden_events_are_left_out_and_said(cluster: Cluster) -> None:
    # Stand-in kubectl answering as the API server does for RBAC (no cluster here): reading the log still works.
    cluster.deny("list", "events")
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LOADING})
    source = _open("k8s:serving/sglang-0")
    assert text_of(source) == "\n".join(LOADING) + "\n"
    assert source.note == "events not read: RBAC does not let alice@example.com list events in namespace serving"


# -- workloads -----------------------------------------------------------------------------------------------


def test_a_deployment_is_every_pod_its_selector_matches(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here), selecting by label as the API server does.
    cluster.contexts("kind-gpu", "prod")
    cluster.add_deployment(deployment("sglang", {"app": "sglang"},
                                      match_expressions=[{"key": "tier", "operator": "NotIn", "values": ["canary"]}]))
    for name, labels in (("sglang-7d9f-x2", {"app": "sglang"}), ("sglang-7d9f-a1", {"app": "sglang"}),
                         ("sglang-7d9f-c3", {"app": "sglang", "tier": "canary"}), ("router-1", {"app": "router"})):
        cluster.add_pod(pod(name, [container_status("sglang", running())], labels=labels))
    assert workload_pods(_spec("k8s:prod:serving/deploy/sglang")) == [
        "k8s:prod:serving/sglang-7d9f-a1", "k8s:prod:serving/sglang-7d9f-x2"]
    assert cluster.calls()[-1] == ["kubectl", "--context", "prod", "-n", "serving", "get", "pods", "-l",
                                   "app=sglang,tier notin (canary)", "-o", "json"]


def test_a_leaderworkerset_is_its_leaders_and_workers_in_group_order(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).  Names sort as numbers: each group's leader, then its workers.
    cluster.add_leaderworkerset(leaderworkerset("sglang", size=11, replicas=2))
    for group, worker in ((1, 0), (0, 10), (0, 0), (0, 2), (0, 1)):
        cluster.add_pod(lws_pod("sglang", group, worker, [container_status("sglang", running())]))
    cluster.add_pod(lws_pod("other", 0, 0, [container_status("sglang", running())]))
    assert workload_pods(_spec("k8s:serving/lws/sglang")) == [
        "k8s:serving/sglang-0", "k8s:serving/sglang-0-1", "k8s:serving/sglang-0-2", "k8s:serving/sglang-0-10",
        "k8s:serving/sglang-1"]
    assert cluster.calls()[0][3:] == ["get", "leaderworkersets.leaderworkerset.x-k8s.io", "sglang", "-o", "json"]


@pytest.mark.parametrize(
    ("setup", "spec", "message"),
    [
        (lambda cluster: cluster.add_deployment(deployment("sglang", {"app": "sglang"})), "k8s:serving/deploy/sglang",
         "k8s:serving/deploy/sglang: deployment sglang has no pods (selector app=sglang)"),
        (lambda cluster: None, "k8s:serving/deploy/ghost",
         "k8s:serving/deploy/ghost: no such deployment ghost in namespace serving (kubectl get deployments -n serving "
         "lists them)"),
        (lambda cluster: None, "k8s:serving/lws/ghost",
         "k8s:serving/lws/ghost: no such leaderworkerset ghost in namespace serving (kubectl get leaderworkersets -n "
         "serving lists them)"),
        (lambda cluster: cluster.without_lws_crd(), "k8s:serving/lws/sglang",
         "k8s:serving/lws/sglang: LeaderWorkerSet is not installed in this cluster (the server doesn't have a resource "
         "type \"leaderworkersets\")"),
    ],
)
def test_workload_errors_are_one_line_source_errors(
    cluster: Cluster, setup: Callable[[Cluster], None], spec: str, message: str
) -> None:
    # Stand-in kubectl with the API server's NotFound and discovery answers (no cluster here).
    setup(cluster)
    with pytest.raises(SourceError) as caught:
        workload_pods(_spec(spec))
    assert str(caught.value) == message
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


# -- errors --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("setup", "spec", "message"),
    [
        (lambda cluster: None, "k8s:serving/ghost",
         "k8s:serving/ghost: no such pod ghost in namespace serving (kubectl get pods -n serving lists them)"),
        (lambda cluster: cluster.deny("get", "pods"), "k8s:serving/sglang-0",
         'k8s:serving/sglang-0: permission denied by RBAC: User "alice@example.com" cannot get resource "pods" in '
         'API group "" in the namespace "serving"'),
        (lambda cluster: cluster.deny("get", "pods/log"), "k8s:serving/sglang-0",
         'k8s:serving/sglang-0: permission denied by RBAC: User "alice@example.com" cannot get resource "pods/log" in '
         'API group "" in the namespace "serving"'),
        (lambda cluster: None, "k8s:nope:serving/sglang-0",
         "k8s:nope:serving/sglang-0: no kubeconfig context nope (kubectl config get-contexts lists them)"),
        (lambda cluster: cluster.no_kubeconfig(), "k8s:nope:serving/sglang-0",
         "k8s:nope:serving/sglang-0: no kubeconfig context nope (kubectl config get-contexts lists them)"),
        (lambda cluster: cluster.server_down(), "k8s:serving/sglang-0",
         "k8s:serving/sglang-0: cannot reach the cluster: The connection to the server 127.0.0.1:6443 was refused - "
         "did you specify the right host or port?"),
        (lambda cluster: None, "k8s:serving/sglang-0/nope",
         "k8s:serving/sglang-0/nope: the pod has no container nope (it has sglang)"),
    ],
)
def test_pod_errors_are_one_line_source_errors(
    cluster: Cluster, setup: Callable[[Cluster], None], spec: str, message: str
) -> None:
    # Stand-in kubectl answering as the real client and API server do for each (no cluster here to produce them).
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LOADING})
    setup(cluster)
    with pytest.raises(SourceError) as caught:
        _open(spec).size()
    assert str(caught.value) == message
    assert caught.value.exit_status == ExitStatus.SOURCE_ERROR


def test_kubectl_missing_is_a_one_line_source_error(nothing_on_path: None) -> None:
    with pytest.raises(SourceError) as caught:
        _open("k8s:serving/sglang-0")
    assert str(caught.value) == "k8s:serving/sglang-0: kubectl is not installed (not found on PATH)"


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        (Finished(0, b"<html>proxy login</html>\n", b""),
         "k8s:serving/sglang-0: kubectl get printed something that is not its JSON"),
        (Finished(1, b"", b"error: You must be logged in to the server (Unauthorized)\n"),
         "k8s:serving/sglang-0: not logged in to the cluster (You must be logged in to the server (Unauthorized)); "
         "renew the kubeconfig's credentials"),
        (Finished(1, b"", b"Error from server (InternalError): an error on the server (\"\x1b]0;x\x07\") has prevented the request\n"),
         "k8s:serving/sglang-0: kubectl get failed with exit status 1: Error from server (InternalError): an error on "
         "the server (\"\\x1b]0;x\\x07\") has prevented the request"),
    ],
)
def test_odd_answers_are_one_line_source_errors(answer: Finished, message: str) -> None:
    # A runner that answers as given: answers the stand-in has no reason to produce.
    with pytest.raises(SourceError) as caught:
        open_pod(_spec("k8s:serving/sglang-0"), lambda command: answer)
    assert str(caught.value) == message


def test_a_workload_spec_is_not_a_pod() -> None:
    with pytest.raises(SourceError) as caught:
        open_pod(_spec("k8s:serving/deploy/sglang"), lambda command: Finished(0, b"{}", b""))
    assert str(caught.value) == "k8s:serving/deploy/sglang: names every pod of a deployment, not one pod"


# -- following -----------------------------------------------------------------------------------------------


def _until(follower: Iterator[bytes], wanted: Callable[[bytes], bool], seconds: float = 20.0) -> bytes:
    """Chunks from the follower until what came satisfies `wanted`."""
    seen = b""
    deadline = time.monotonic() + seconds
    while not wanted(seen):
        assert time.monotonic() < deadline, f"waited {seconds}s; got {seen!r}"
        seen += next(follower)
    return seen


def test_follow_pod_survives_a_container_restart(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here), its state changed by the test while `kubectl logs -f` runs: the
    # container starts, OOM-kills, restarts; the follower shows the death's facts, RESTART, then the new container.
    creating = pod("sglang-0", [container_status("sglang", waiting("ContainerCreating"))], phase="Pending")
    cluster.add_pod(creating)
    follower = follow_pod(_spec("k8s:serving/sglang-0"), stream_local, run_local, poll=0.05)
    waited = _until(follower, lambda seen: b"phase Pending" in seen)
    assert waited == (b"[logsleuth: pod serving/sglang-0 container sglang: waiting, reason ContainerCreating, restarts 0]\n"
                      b"[logsleuth: pod serving/sglang-0: phase Pending, ContainersReady False]\n")
    first = container_status("sglang", running(), container_id="containerd://first")
    cluster.add_pod(pod("sglang-0", [first]), logs={"sglang": LOADING[:1]})
    assert _until(follower, lambda seen: LOADING[0].encode() in seen) == LOADING[0].encode() + b"\n"
    cluster.write_log("serving", "sglang-0", "sglang.log", LOADING[1:], append=True)
    _until(follower, lambda seen: LOADING[1].encode() in seen)
    dead = container_status("sglang", terminated("OOMKilled", 137, container_id="containerd://first"),
                            container_id="containerd://first")
    cluster.add_pod(pod("sglang-0", [dead]))
    death = (b"[logsleuth: pod serving/sglang-0 container sglang: terminated, reason OOMKilled, exit code 137 (SIGKILL), "
             b"restarts 0, finished 2026-11-30T23:58:41Z]\n")
    assert _until(follower, lambda seen: death in seen).endswith(death)
    second = container_status("sglang", running("2026-11-30T23:59:10Z"), container_id="containerd://second",
                              last=terminated("OOMKilled", 137, container_id="containerd://first"), restarts=1)
    cluster.add_pod(pod("sglang-0", [second]), logs={"sglang": ["second container: server_args=ServerArgs(...)"]},
                    previous={"sglang": LOADING})
    after = _until(follower, lambda seen: b"second container" in seen)
    assert after == RESTART + b"second container: server_args=ServerArgs(...)\n"
    follower.close()
    follows = [call for call in cluster.calls() if "-f" in call]
    assert [call[-1] for call in follows] == ["--tail=-1", "--tail=-1"]  # each container from its first line


def test_follow_pod_starts_at_the_end_of_a_running_container_and_ends_with_a_finished_pod(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here).  The running container's earlier OOM kill and its old events are
    # history, not told again.  Then the pod fails for good: once it Failed nothing more will come.
    earlier = terminated("OOMKilled", 137, finished="2026-11-30T21:00:00Z")
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running(), last=earlier, restarts=1)]),
                    logs={"sglang": LOADING})
    cluster.add_events([event("sglang-0", "Warning", "Unhealthy", "Liveness probe failed: HTTP probe failed with statuscode: 503")])
    follower = follow_pod(_spec("k8s:serving/sglang-0"), stream_local, run_local, poll=0.05)
    assert _until(follower, lambda seen: any("-f" in call for call in cluster.calls())) == b""
    ended = terminated("Error", 1, message="CUDA out of memory")
    cluster.add_pod(pod("sglang-0", [container_status("sglang", ended, last=earlier, restarts=1)], phase="Failed"))
    rest = b"".join(follower)  # ends by itself
    assert rest.strip(b"\n") == (
        b"[logsleuth: pod serving/sglang-0 container sglang: terminated, reason Error, exit code 1, restarts 1, "
        b"finished 2026-11-30T23:58:41Z, message: CUDA out of memory]\n"
        b"[logsleuth: pod serving/sglang-0: phase Failed]"
    )  # and not LOADING: --tail=0, only what comes after the start
    assert [call[-2:] for call in cluster.calls() if "-f" in call] == [["-f", "--tail=0"]]


def test_follow_pod_names_a_log_it_may_not_read(cluster: Cluster) -> None:
    # Stand-in kubectl (no cluster here): `logs -f` fails at once and says why only on stderr.
    cluster.add_pod(pod("sglang-0", [container_status("sglang", running())]), logs={"sglang": LOADING})
    cluster.deny("get", "pods/log")
    with pytest.raises(SourceError) as caught:
        b"".join(follow_pod(_spec("k8s:serving/sglang-0"), stream_local, run_local, poll=0.05))
    assert "permission denied by RBAC" in str(caught.value) and '"pods/log"' in str(caught.value)


# -- the stand-in against the real kubectl client --------------------------------------------------------------


@pytest.fixture
def real_kubectl(tmp_path: Path) -> Callable[[list[str]], tuple[int, str, str]]:
    """The real kubectl client with a kubeconfig whose one context, "prod", points at a closed port on 127.0.0.1:
    it parses everything, then fails for want of a server."""
    real = _real("kubectl")
    config = tmp_path / "kubeconfig"
    config.write_text(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: 'https://127.0.0.1:1'}\n"
        "contexts:\n- name: prod\n  context: {cluster: c, user: u}\ncurrent-context: prod\n"
        "users:\n- name: u\n  user: {token: t}\n"
    )
    env = {"KUBECONFIG": str(config), "HOME": str(tmp_path)}
    return lambda args: _run([real, *args], env)


SPEC = _spec("k8s:prod:serving/sglang-0")


@pytest.mark.parametrize(
    "argv",
    [
        get_pod_command(SPEC).argv,
        events_command(SPEC, "7c3f9a1e").argv,
        logs_command(SPEC, "sglang", 2000).argv,
        logs_command(SPEC, "sglang", None, previous=True).argv,
        logs_command(SPEC, "sglang", 0, follow=True).argv,
    ],
)
def test_the_real_kubectl_accepts_our_arguments(real_kubectl: Callable[[list[str]], tuple[int, str, str]],
                                                argv: tuple[str, ...]) -> None:
    status, output, errors = real_kubectl(list(argv[1:]))
    assert (status, output) == (1, "")
    assert errors.splitlines()[-1] == "The connection to the server 127.0.0.1:1 was refused - did you specify the right host or port?"


@pytest.mark.parametrize(
    "args",
    [
        ["logs", "sglang-0", "--bogus"], ["logs", "sglang-0", "-x"], ["logs", "sglang-0", "--tail"],
        ["logs", "sglang-0", "-c"], ["logs", "sglang-0", "--tail=abc"], ["logs", "sglang-0", "--previous=maybe"],
        ["get", "pod", "x", "--bogus"], ["get", "pod", "x", "-o"], ["get", "pods", "-Z"], ["-n", "serving", "get"],
        ["logs"], ["frob"], ["--context", "nope", "get", "pod", "x", "-o", "json"],
        ["--context", "nope", "-n", "serving", "logs", "x", "-c", "sglang", "--tail=1"],
    ],
)
def test_stand_in_kubectl_rejects_arguments_as_the_real_client_does(
    cluster: Cluster, real_kubectl: Callable[[list[str]], tuple[int, str, str]], args: list[str]
) -> None:
    cluster.contexts("prod")
    real = real_kubectl(args)
    assert _run([str(STANDINS / "kubectl"), *args]) == real
    assert real[0] == 1


@pytest.mark.parametrize(
    ("namespace", "said"),
    [((), "Error in configuration: context was not found for specified context: nope\n"),
     (("-n", "serving"), 'error: context "nope" does not exist\n')],
)
def test_stand_in_kubectl_words_a_missing_kubeconfig_as_the_real_client_does(
    cluster: Cluster, tmp_path: Path, namespace: tuple[str, ...], said: str
) -> None:
    cluster.no_kubeconfig()
    args = ["--context", "nope", *namespace, "get", "pod", "x", "-o", "json"]
    real = _run([_real("kubectl"), *args], {"KUBECONFIG": str(tmp_path / "absent"), "HOME": str(tmp_path)})
    assert _run([str(STANDINS / "kubectl"), *args]) == real == (1, "", said)


def test_stand_in_kubectl_words_a_refused_connection_as_the_real_client_does(
    cluster: Cluster, real_kubectl: Callable[[list[str]], tuple[int, str, str]]
) -> None:
    cluster.contexts("prod")
    (cluster.root / "kubeconfig.json").write_text('{"current-context": "prod", "contexts": ["prod"], "server": "https://127.0.0.1:1"}')
    cluster.server_down()
    for args in (list(get_pod_command(SPEC).argv[1:]), list(logs_command(SPEC, "sglang", 10).argv[1:])):
        real, standin = real_kubectl(args), _run([str(STANDINS / "kubectl"), *args])
        assert standin[:2] == real[:2] == (1, "")
        assert standin[2].splitlines()[-1] == real[2].splitlines()[-1]
        assert [line.split("]", 1)[1] for line in standin[2].splitlines()[:-1]] == \
            [line.split("]", 1)[1] for line in real[2].splitlines()[:-1]]  # the discovery errors, after their klog header
