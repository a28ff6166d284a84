"""What the container runtime knows and the log does not: the fact lines a runtime source appends after the log
(docker inspect, kubectl get pod and its events, systemctl show), behind a server log that ends without a
traceback, or with one.

Patterns: common-cgroup-oom-killed, common-cgroup-oom-killed-hicache, common-cgroup-oom-killed-cpu-offload,
common-liveness-probe-killed, common-k8s-insufficient-gpu, common-k8s-image-pull-failed.

The docker and systemd fact lines come from logsleuth's own builders (sources/runtime/docker.py, journal.py), so a
change of their wording makes these fixtures stale.  The Kubernetes lines follow the shared format
(`fact_line(subject, parts)`, notes/issue17/contract.md); their messages are composed from the Kubernetes
source's format strings, cited at each:
- kubelet pkg/kubelet/prober/prober.go: event Unhealthy, `"%s probe failed: %s", probeType, output` (probeType
  prints Liveness, Readiness, Startup); an HTTP probe's output for a refused connection is Go's net/http error
  `Get "URL": dial tcp ADDR: connect: connection refused`.
- kubelet pkg/kubelet/kuberuntime/kuberuntime_manager.go (computePodActions): event Killing,
  `"Container %s failed liveness probe"` + `", will be restarted"`.
- scheduler pkg/scheduler/framework/types.go: `NoNodeAvailableMsg = "0/%v nodes are available"`, then the
  sorted `"%v %v"` (count, reason) histogram and `.`; plugins/noderesources/fit.go: `"Insufficient %v"`; the
  DefaultPreemption PostFilter adds `preemption: 0/%v nodes are available: …`.
- kubelet pkg/kubelet/images/image_manager.go: event Failed, `"Failed to pull image %q: %v"`; the waiting reasons
  ErrImagePull / ImagePullBackOff (pkg/kubelet/images/types.go); containerd's `failed to resolve reference` /
  `not found` error text (containerd remotes/docker/resolver.go).
Nothing is copied from a user's log.
"""

from __future__ import annotations

from logsleuth.sources.runtime.command import fact_line
from logsleuth.sources.runtime.docker import ContainerFacts
from logsleuth.sources.runtime.journal import UnitFacts

from ..engine import Case
from ..mirror import KV_LINE, LOAD_BEGIN, LOAD_END, READY, SIGQUIT

FINISHED = "2026-03-14T09:27:02Z"
POD = "pod serving/sglang-0"
MODEL = "model_path='meta-llama/Llama-3.1-70B-Instruct', tp_size=8, port=30000"


def server_args(extra: str = "") -> str:
    """SGLang's `server_args=` record, as the launch logs it (the items that differ from the defaults)."""
    return f"server_args=ServerArgs({MODEL}{', ' + extra if extra else ''})"


def container(**facts: object) -> str:
    fields: dict[str, object] = {
        "container": "sglang", "status": "exited", "oom_killed": False, "exit_code": 0, "error": "", "restarts": 0,
        "finished_at": FINISHED,
    }
    line = ContainerFacts(**{**fields, **facts}).fact_line()  # type: ignore[arg-type]
    assert line is not None, facts
    return line


def unit(result: str, code: str, status: int, restarts: int = 0) -> str:
    line = UnitFacts("sglang.service", "loaded", "failed", result, code, status, restarts).fact_line()
    assert line is not None
    return line


def pod_container(*parts: str) -> str:
    return fact_line(f"{POD} container sglang", list(parts))


def event(kind: str, reason: str, count: int, message: str) -> str:
    return fact_line(f"{POD} event", [f"{kind} {reason} (x{count}", f"last {FINISHED}): {message}"])


def probe_refused(probe: str) -> str:
    return f'{probe} probe failed: Get "http://10.1.2.3:30000/health": dial tcp 10.1.2.3:30000: connect: connection refused'


def facts_case(pattern: str, name: str, facts: tuple[str, ...], before: tuple[str, ...] = (LOAD_BEGIN,)) -> Case:
    """A server log that stops (`before`), then the runtime's fact lines."""
    return Case(pattern, name, (), mode="lines", ranks="", before=before, raw_after=facts)


TERMINATED_137 = pod_container("terminated", "reason Error", "exit code 137 (SIGKILL)", "restarts 3", f"finished {FINISHED}")
INSUFFICIENT_GPU = ("0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: "
                    "4 No preemption victims found for incoming pod.")
INSUFFICIENT_MEMORY = ("0/4 nodes are available: 1 node(s) had untolerated taint {node-role.kubernetes.io/control-plane: }, "
                       "3 Insufficient memory. preemption: 0/4 nodes are available: 1 Preemption is not helpful for "
                       "scheduling, 3 No preemption victims found for incoming pod.")
NOT_FOUND = ('failed to pull and unpack image "docker.io/lmsysorg/sglang:v0.5.99-cu129": failed to resolve reference '
             '"docker.io/lmsysorg/sglang:v0.5.99-cu129": docker.io/lmsysorg/sglang:v0.5.99-cu129: not found')

OOM = "common-cgroup-oom-killed"
HICACHE = "common-cgroup-oom-killed-hicache"
OFFLOAD = "common-cgroup-oom-killed-cpu-offload"
LIVENESS = "common-liveness-probe-killed"
GPU = "common-k8s-insufficient-gpu"
PULL = "common-k8s-image-pull-failed"

CASES = (
    facts_case(OOM, "positive-docker-no-traceback", (container(oom_killed=True, exit_code=137),), (LOAD_BEGIN, LOAD_END)),
    facts_case(OOM, "positive-docker-after-killed-line", ("Killed", container(oom_killed=True, exit_code=137, restarts=2))),
    facts_case(OOM, "positive-k8s-oomkilled", (
        pod_container("terminated", "reason OOMKilled", "exit code 137 (SIGKILL)", "restarts 4", f"finished {FINISHED}"),
        event("Warning", "BackOff", 9, "Back-off restarting failed container sglang in pod sglang-0_serving(0c1f)"),
    )),
    facts_case(OOM, "positive-systemd-oom-kill", (unit("oom-kill", "2", 9, restarts=1),), (LOAD_BEGIN, LOAD_END, KV_LINE)),
    # a kill with no OOM: the generic kill pattern's, not this one
    facts_case(OOM, "negative-docker-sigkill-no-oom", (container(exit_code=137),)),
    facts_case(OOM, "negative-systemd-signal", (unit("signal", "2", 9),)),

    facts_case(HICACHE, "positive-hicache-size", (container(oom_killed=True, exit_code=137),),
               (server_args("enable_hierarchical_cache=True, hicache_size=200"), LOAD_BEGIN, LOAD_END, KV_LINE)),
    facts_case(HICACHE, "positive-hicache-ratio", (container(oom_killed=True, exit_code=137),),
               (server_args("enable_hierarchical_cache=True, hicache_ratio=4.0"), LOAD_BEGIN, LOAD_END, KV_LINE)),
    facts_case(HICACHE, "negative-no-hicache", (container(oom_killed=True, exit_code=137),),
               (server_args(), LOAD_BEGIN, LOAD_END, KV_LINE)),

    facts_case(OFFLOAD, "positive-cpu-offload", (container(oom_killed=True, exit_code=137),),
               (server_args("cpu_offload_gb=60"), LOAD_BEGIN)),
    facts_case(OFFLOAD, "negative-cpu-offload-zero", (container(oom_killed=True, exit_code=137),),
               (server_args("cpu_offload_gb=0"), LOAD_BEGIN)),

    facts_case(LIVENESS, "positive-killed-while-loading", (
        TERMINATED_137,
        event("Warning", "Unhealthy", 3, probe_refused("Liveness")),
        event("Normal", "Killing", 1, "Container sglang failed liveness probe, will be restarted"),
    )),
    facts_case(LIVENESS, "positive-startup-probe", (
        event("Warning", "Unhealthy", 30, probe_refused("Startup")),
        event("Normal", "Killing", 1, "Container sglang failed startup probe, will be restarted"),
    ), (LOAD_BEGIN, LOAD_END)),
    facts_case(LIVENESS, "negative-readiness-only", (event("Warning", "Unhealthy", 12, probe_refused("Readiness")),), (LOAD_BEGIN, READY)),
    facts_case(LIVENESS, "negative-deleted", (
        TERMINATED_137, event("Normal", "Killing", 1, "Stopping container sglang"),
    ), (READY, SIGQUIT)),

    facts_case(GPU, "positive-insufficient-gpu", (
        fact_line(POD, ["phase Pending", "PodScheduled False (Unschedulable)"]),
        event("Warning", "FailedScheduling", 2, INSUFFICIENT_GPU),
    ), ()),
    facts_case(GPU, "negative-insufficient-memory", (
        fact_line(POD, ["phase Pending", "PodScheduled False (Unschedulable)"]),
        event("Warning", "FailedScheduling", 2, INSUFFICIENT_MEMORY),
    ), ()),

    facts_case(PULL, "positive-image-not-found", (
        pod_container("waiting", "reason ImagePullBackOff", "restarts 0",
                      'message: Back-off pulling image "lmsysorg/sglang:v0.5.99-cu129"'),
        event("Warning", "Failed", 2, f'Failed to pull image "lmsysorg/sglang:v0.5.99-cu129": {NOT_FOUND}'),
        event("Warning", "Failed", 2, "Error: ErrImagePull"),
    ), ()),
    facts_case(PULL, "positive-failed-event-only", (
        event("Warning", "Failed", 1, f'Failed to pull image "lmsysorg/sglang:v0.5.99-cu129": {NOT_FOUND}'),
    ), ()),
    facts_case(PULL, "negative-config-error", (
        pod_container("waiting", "reason CreateContainerConfigError", "restarts 0",
                      'message: secret "hf-token" not found'),
        event("Warning", "Failed", 3, 'Error: secret "hf-token" not found'),
    ), ()),
)
