"""A Kubernetes cluster for the stand-in `kubectl` (tests/runtime/standins/kubectl): no cluster can run on the test
machines.  JSON builders shaped as the Kubernetes API reference shows the objects (core/v1 Pod with its
PodStatus/ContainerStatus/ContainerState, core/v1 Event, apps/v1 Deployment, leaderworkerset.x-k8s.io/v1
LeaderWorkerSet), and the `cluster` fixture that writes them where the stand-in reads them.

Import the fixture into a test module: `from tests.runtime.k8s_fixtures import cluster`."""

from __future__ import annotations

import json
import os
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.runtime.conftest import Runtime

NAMESPACE = "serving"
NODE = "gpu-node-3"
IMAGE = "lmsysorg/sglang:v0.5.9-cu129"
STARTED = "2026-11-30T22:10:04Z"
FINISHED = "2026-11-30T23:58:41Z"
LWS_GROUP = "leaderworkerset.x-k8s.io"
LWS_LABEL = "leaderworkerset.sigs.k8s.io/name"


def running(started: str = STARTED) -> dict[str, Any]:
    return {"running": {"startedAt": started}}


def waiting(reason: str, message: str | None = None) -> dict[str, Any]:
    return {"waiting": {"reason": reason, **({"message": message} if message is not None else {})}}


def terminated(
    reason: str, exit_code: int, *, finished: str = FINISHED, message: str | None = None, container_id: str = "containerd://a1"
) -> dict[str, Any]:
    """A ContainerStateTerminated; the kubelet leaves `signal` unset, the exit code carries it (128 + N)."""
    state: dict[str, Any] = {
        "containerID": container_id, "exitCode": exit_code, "reason": reason,
        "startedAt": STARTED, "finishedAt": finished,
    }
    if message is not None:
        state["message"] = message
    return {"terminated": state}


def container_status(
    name: str, state: dict[str, Any], *, last: dict[str, Any] | None = None, restarts: int = 0,
    container_id: str | None = "containerd://b2",
) -> dict[str, Any]:
    """One ContainerStatus.  A waiting container has no containerID (none was created yet)."""
    status: dict[str, Any] = {
        "name": name, "state": state, "lastState": last or {}, "ready": "running" in state,
        "restartCount": restarts, "image": IMAGE, "imageID": "",
        "started": "running" in state,
    }
    if container_id is not None and "waiting" not in state:
        status["containerID"] = container_id
        status["imageID"] = f"docker.io/{IMAGE.split(':')[0]}@sha256:5e1b0c0e2f7d3a4b6c8d9e0f1a2b3c4d5e6f708192a3b4c5d6e7f8091a2b3c4d"
    return status


def condition(kind: str, status: bool, reason: str | None = None, message: str | None = None) -> dict[str, Any]:
    found: dict[str, Any] = {"type": kind, "status": "True" if status else "False", "lastProbeTime": None,
                             "lastTransitionTime": "2026-11-30T22:10:02Z"}
    if reason:
        found["reason"] = reason
    if message:
        found["message"] = message
    return found


def pod(
    name: str,
    statuses: list[dict[str, Any]] | None,
    *,
    namespace: str = NAMESPACE,
    containers: tuple[str, ...] = ("sglang",),
    phase: str = "Running",
    conditions: list[dict[str, Any]] | None = None,
    node: str | None = NODE,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    uid: str = "7c3f9a1e-2b4d-4e8f-9a6b-1c2d3e4f5a6b",
) -> dict[str, Any]:
    """A core/v1 Pod running SGLang, as `kubectl get pod NAME -o json` prints it.  `statuses` None: the pod was
    never scheduled, so it has no container statuses."""
    spec: dict[str, Any] = {
        "containers": [
            {
                "name": container, "image": IMAGE,
                "command": ["python3", "-m", "sglang.launch_server", "--model-path", "meta-llama/Llama-3.1-70B-Instruct",
                            "--tp", "8", "--port", "30000"] if container == "sglang" else ["/metrics-exporter"],
                "resources": {"limits": {"memory": "512Gi", "nvidia.com/gpu": "8"}} if container == "sglang" else {},
                "livenessProbe": {"httpGet": {"path": "/health", "port": 30000, "scheme": "HTTP"},
                                  "initialDelaySeconds": 60, "periodSeconds": 10, "failureThreshold": 3},
            }
            for container in containers
        ],
        "restartPolicy": "Always",
        "schedulerName": "default-scheduler",
    }
    if node is not None:
        spec["nodeName"] = node
    status: dict[str, Any] = {"phase": phase, "qosClass": "Burstable"}
    status["conditions"] = conditions if conditions is not None else [
        condition("PodScheduled", True), condition("Initialized", True),
        condition("ContainersReady", phase == "Running"), condition("Ready", phase == "Running"),
    ]
    if statuses is not None:
        status.update(hostIP="10.1.0.7", podIP="10.1.2.3", startTime="2026-11-30T22:10:02Z", containerStatuses=statuses)
    metadata: dict[str, Any] = {
        "name": name, "namespace": namespace, "uid": uid, "resourceVersion": "48213",
        "creationTimestamp": "2026-11-30T22:10:02Z", "labels": labels or {"app": "sglang"},
    }
    if annotations:
        metadata["annotations"] = annotations
    return {"apiVersion": "v1", "kind": "Pod", "metadata": metadata, "spec": spec, "status": status}


def event(
    pod_name: str,
    kind: str,
    reason: str,
    message: str,
    *,
    count: int = 1,
    first: str = "2026-11-30T23:50:00Z",
    last: str | None = None,
    namespace: str = NAMESPACE,
    uid: str = "7c3f9a1e-2b4d-4e8f-9a6b-1c2d3e4f5a6b",
    scheduler: bool = False,
) -> dict[str, Any]:
    """A core/v1 Event about a pod.  The kubelet's recorder fills count/firstTimestamp/lastTimestamp; the
    scheduler writes through events.k8s.io, which shows in core/v1 as eventTime plus `series`, with the
    deprecated timestamps null (`scheduler=True`)."""
    name = f"{pod_name}.{zlib.crc32(f'{reason}{message}{first}'.encode()):08x}"
    found: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "namespace": namespace, "uid": f"e-{name}", "resourceVersion": "51002",
                     "creationTimestamp": first},
        "involvedObject": {"kind": "Pod", "namespace": namespace, "name": pod_name, "uid": uid, "apiVersion": "v1",
                           "resourceVersion": "48213"},
        "reason": reason, "message": message, "type": kind,
    }
    if scheduler:
        found.update(source={}, firstTimestamp=None, lastTimestamp=None, eventTime=first.replace("Z", ".412553Z"),
                     action="Scheduling", reportingComponent="default-scheduler", reportingInstance="default-scheduler-cp-1")
        if count > 1:
            found["series"] = {"count": count, "lastObservedTime": (last or first).replace("Z", ".118042Z")}
        return found
    found["involvedObject"]["fieldPath"] = "spec.containers{sglang}"
    found.update(source={"component": "kubelet", "host": NODE}, firstTimestamp=first, lastTimestamp=last or first,
                 count=count, eventTime=None, reportingComponent="kubelet", reportingInstance=NODE)
    return found


def deployment(name: str, match_labels: dict[str, str], *, namespace: str = NAMESPACE,
               match_expressions: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    selector: dict[str, Any] = {"matchLabels": match_labels}
    if match_expressions:
        selector["matchExpressions"] = match_expressions
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace, "uid": "d1", "generation": 3},
        "spec": {"replicas": 2, "selector": selector,
                 "template": {"metadata": {"labels": match_labels}, "spec": {"containers": [{"name": "sglang", "image": IMAGE}]}}},
        "status": {"replicas": 2, "readyReplicas": 1},
    }


def leaderworkerset(name: str, *, size: int = 2, replicas: int = 1, namespace: str = NAMESPACE) -> dict[str, Any]:
    return {
        "apiVersion": f"{LWS_GROUP}/v1", "kind": "LeaderWorkerSet",
        "metadata": {"name": name, "namespace": namespace, "uid": "l1"},
        "spec": {"replicas": replicas, "leaderWorkerTemplate": {"size": size, "restartPolicy": "RecreateGroupOnPodRestart"},
                 "startupPolicy": "LeaderCreated"},
        "status": {"replicas": replicas, "readyReplicas": 0},
    }


def lws_pod(lws: str, group: int, worker: int, statuses: list[dict[str, Any]]) -> dict[str, Any]:
    """A pod of a LeaderWorkerSet: the leader is NAME-GROUP, its workers NAME-GROUP-INDEX (the LWS controller's
    naming), all labelled with the set's name and their indexes."""
    name = f"{lws}-{group}" if worker == 0 else f"{lws}-{group}-{worker}"
    labels = {LWS_LABEL: lws, "leaderworkerset.sigs.k8s.io/group-index": str(group),
              "leaderworkerset.sigs.k8s.io/worker-index": str(worker)}
    return pod(name, statuses, labels=labels)


@dataclass
class Cluster:
    """The stand-in kubectl's cluster: what the tests put in it."""

    root: Path  # $LOGSLEUTH_STANDIN_STATE/k8s
    runtime: Runtime

    def _write(self, relative: str, data: Any) -> None:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary = path.with_suffix(".tmp")
        temporary.write_text(json.dumps(data))
        os.replace(temporary, path)  # the stand-in may be reading it (`logs -f` polls the pod)

    def add_pod(self, found: dict[str, Any], logs: dict[str, list[str]] | None = None,
                previous: dict[str, list[str]] | None = None) -> None:
        """A pod, the current log of each container (`logs`) and the previous container's (`previous`)."""
        namespace, name = found["metadata"]["namespace"], found["metadata"]["name"]
        self._write(f"namespaces/{namespace}/pods/{name}.json", found)
        for suffix, written in ((".log", logs or {}), (".previous.log", previous or {})):
            for container, lines in written.items():
                self.write_log(namespace, name, container + suffix, lines)

    def write_log(self, namespace: str, pod_name: str, filename: str, lines: list[str], *, append: bool = False) -> None:
        path = self.root / "namespaces" / namespace / "logs" / pod_name / filename
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a" if append else "w") as handle:
            handle.write("".join(line + "\n" for line in lines))

    def add_events(self, events: list[dict[str, Any]], namespace: str = NAMESPACE) -> None:
        self._write(f"namespaces/{namespace}/events.json", events)

    def add_deployment(self, found: dict[str, Any]) -> None:
        self._write(f"namespaces/{found['metadata']['namespace']}/deployments/{found['metadata']['name']}.json", found)

    def add_leaderworkerset(self, found: dict[str, Any]) -> None:
        self._write(f"namespaces/{found['metadata']['namespace']}/leaderworkersets/{found['metadata']['name']}.json", found)

    def without_lws_crd(self) -> None:
        (self.root / "no-lws").write_text("yes")

    def deny(self, verb: str, resource: str, user: str = "alice@example.com") -> None:
        """RBAC: `user` may not `verb` the `resource` (e.g. "list", "events")."""
        path = self.root / "rbac.json"
        rules = json.loads(path.read_text()) if path.exists() else {"user": user, "deny": []}
        rules["deny"].append([verb, resource])
        path.write_text(json.dumps(rules))

    def contexts(self, current: str, *names: str) -> None:
        self._write("kubeconfig.json", {"current-context": current, "contexts": [current, *names],
                                        "server": "https://127.0.0.1:6443"})  # a state file of the stand-in: nothing connects

    def no_kubeconfig(self) -> None:
        self._write("kubeconfig.json", "none")

    def server_down(self) -> None:
        (self.root / "server").write_text("down")

    def calls(self) -> list[list[str]]:
        return [call for call in self.runtime.calls() if call[0] == "kubectl"]


@pytest.fixture
def cluster(runtime: Runtime) -> Cluster:
    """An empty cluster behind the stand-in kubectl (first on PATH through the `runtime` fixture)."""
    root = runtime.state / "k8s"
    root.mkdir()
    return Cluster(root, runtime)
