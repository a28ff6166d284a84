"""Kubernetes pods as sources, through the user's own `kubectl` and kubeconfig: `kubectl get pod -o json` for what
the cluster knows and the log does not (the container's last state, the pod's phase, its events), then `kubectl
logs --tail N` for the log, the previous container's when the container restarted: a pod in CrashLoopBackOff shows
only the new container, and the crash is in the previous one.

The facts follow the log as marked lines (`fact_line`), one per fact, so that a pattern can name an OOM kill, a
liveness-probe kill or an unschedulable pod where the log holds no traceback (docs/sources.md):
  [logsleuth: pod serving/sglang-0 container sglang: terminated, reason OOMKilled, exit code 137 (SIGKILL), restarts 4, …]
  [logsleuth: pod serving/sglang-0: phase Pending, PodScheduled False (Unschedulable)]
  [logsleuth: pod serving/sglang-0 event: Warning Unhealthy (x3, last 2026-11-30T23:58:30Z): Liveness probe failed: …]

Only `get` and `logs` are run, every argument a list element (no shell); names were checked by spec.py.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from logsleuth.errors import SourceError
from logsleuth.sources.base import RESTART
from logsleuth.sources.runtime.command import (
    Command,
    CommandSource,
    Finished,
    Runner,
    StreamRunner,
    fact_line,
    last_line,
    run_checked,
    run_local,
    signal_name,
)
from logsleuth.sources.runtime.spec import PodTarget, RuntimeSpec

DEFAULT_CONTAINER = "kubectl.kubernetes.io/default-container"  # the annotation `kubectl logs` honours
LWS_RESOURCE = "leaderworkersets.leaderworkerset.x-k8s.io"  # fully qualified: no other CRD's `lws` can answer
LWS_NAME_LABEL = "leaderworkerset.sigs.k8s.io/name"  # the LWS controller puts it on every pod of the set
MAX_EVENTS = 50  # the newest ones; the API server keeps an hour of events, and a crash loop repeats itself
EVENT_POLL = 5.0  # seconds between reads of the events while a follower waits
TICK = 0.04  # seconds between the idle ticks a follower yields
_PLURAL = {"deployment": "deployments", "leaderworkerset": "leaderworkersets"}
# The conditions a pod passes on its way to ready; the first False one is what it waits for.
_CONDITIONS = ("PodScheduled", "PodReadyToStartContainers", "Initialized", "ContainersReady", "Ready")
_TERMINAL = ("Succeeded", "Failed")


# -- commands ------------------------------------------------------------------------------------------------


def _kubectl(target: PodTarget, *args: str) -> Command:
    context = ("--context", target.context) if target.context else ()
    return Command(("kubectl", *context, "-n", target.namespace, *args))


def get_pod_command(spec: RuntimeSpec) -> Command:
    target = _target(spec)
    assert target.pod is not None
    return _kubectl(target, "get", "pod", target.pod, "-o", "json")


def events_command(spec: RuntimeSpec, uid: str) -> Command:
    """The pod's events: this pod, not an earlier one of the same name (a StatefulSet's sglang-0 comes back)."""
    target = _target(spec)
    fields = [f"involvedObject.kind=Pod,involvedObject.name={target.pod}"] + ([f"involvedObject.uid={uid}"] if uid else [])
    return _kubectl(target, "get", "events", "--field-selector", ",".join(fields), "-o", "json")


def logs_command(spec: RuntimeSpec, container: str, lines: int | None, *, previous: bool = False,
                 follow: bool = False) -> Command:
    """`kubectl logs POD -c C --tail=N` (`--tail=-1`: every line); the container's stdout and stderr are already one
    stream there, so kubectl's own stderr stays apart."""
    target = _target(spec)
    assert target.pod is not None
    flags = (("--previous",) if previous else ()) + (("-f",) if follow else ())
    return _kubectl(target, "logs", target.pod, "-c", container, *flags, f"--tail={-1 if lines is None else lines}")


# -- what kubectl said -----------------------------------------------------------------------------------------


def explain(verb: str, what: str, target: PodTarget, finished: Finished) -> str | None:
    """The one-line message for a failed kubectl run (`what`: "pod", "deployment", …); None when it succeeded."""
    if finished.returncode == 0:
        return None
    said = last_line(finished.errors or finished.output)
    if "(NotFound)" in said and what in ("pod", *_PLURAL):
        name = target.pod if what == "pod" else target.name
        plural = _PLURAL.get(what, "pods")
        return f"no such {what} {name} in namespace {target.namespace} (kubectl get {plural} -n {target.namespace} lists them)"
    if "(Forbidden)" in said:
        return f"permission denied by RBAC: {said.partition(' is forbidden: ')[2] or said}"
    # with -n (every command here has it): `error: context "x" does not exist`; without: `Error in configuration:
    # context was not found for specified context: x` (the real client's two wordings)
    if said.startswith('error: context "') and said.endswith('" does not exist') or "context was not found" in said:
        return f"no kubeconfig context {target.context} (kubectl config get-contexts lists them)"
    if "doesn't have a resource type" in said and what == "leaderworkerset":
        return f"LeaderWorkerSet is not installed in this cluster ({said.removeprefix('error: ')})"
    if said.startswith(("The connection to the server", "Unable to connect to the server")):
        return f"cannot reach the cluster: {said}"
    if "must be logged in" in said:
        return f"not logged in to the cluster ({said.removeprefix('error: ')}); renew the kubeconfig's credentials"
    return f"kubectl {verb} failed with exit status {finished.returncode}: {said or 'no message'}"


def _get_json(spec: RuntimeSpec, command: Command, what: str, runner: Runner) -> dict[str, Any]:
    target = _target(spec)
    finished = run_checked(runner, command, spec.spec, lambda done: explain("get", what, target, done))
    try:
        found = json.loads(finished.output)
    except ValueError:
        found = None
    if not isinstance(found, dict):
        raise SourceError(f"{spec.spec}: kubectl get printed something that is not its JSON")
    return found


def _target(spec: RuntimeSpec) -> PodTarget:
    assert spec.pod is not None, spec.spec
    return spec.pod


# -- the pod -------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ContainerState:
    """One ContainerState of the API (running, waiting or terminated)."""

    kind: str  # "running", "waiting", "terminated"
    reason: str = ""
    message: str = ""
    exit_code: int = 0
    signal: int = 0  # the kubelet rarely sets it; the exit code (128 + N) says it then
    finished_at: str = ""
    container_id: str = ""

    @property
    def signal_name(self) -> str | None:
        return signal_name(self.exit_code, self.signal)

    def facts(self, restarts: int) -> list[str]:
        """The parts of its fact line: `terminated, reason OOMKilled, exit code 137 (SIGKILL), restarts 4, …`."""
        parts = [self.kind]
        if self.reason:
            parts.append(f"reason {self.reason}")
        if self.kind == "terminated":
            killed = f" ({self.signal_name})" if self.signal_name else ""
            parts.append(f"exit code {self.exit_code}{killed}")
        parts.append(f"restarts {restarts}")
        if self.finished_at:
            parts.append(f"finished {self.finished_at}")
        if self.message:
            parts.append(f"message: {_one_line(self.message)}")
        return parts


@dataclass(frozen=True, slots=True)
class ContainerStatus:
    """A container of a pod, as `kubectl get pod -o json` gives it."""
    name: str
    state: ContainerState | None
    last: ContainerState | None  # lastState.terminated: how the previous container ended
    restarts: int
    container_id: str  # of the current container; "" before one was created

    @property
    def reads_previous(self) -> bool:
        """The newest death is the previous container's: it restarted, and the current one has not died (yet)."""
        return self.restarts > 0 and self.last is not None and (self.state is None or self.state.kind != "terminated")

    @property
    def has_log(self) -> bool:
        return self.reads_previous or self.state is not None and self.state.kind in ("running", "terminated")

    @property
    def ended(self) -> ContainerState | None:
        """The state the facts describe: the previous container's end when that is the log read, else the current
        state unless it is a plain running one."""
        if self.reads_previous:
            return self.last
        if self.state is None or self.state.kind == "running":
            return None
        return self.state


@dataclass(frozen=True, slots=True)
class Pod:
    """A pod of a workload, as `kubectl get -o json` gives it."""
    namespace: str
    name: str
    uid: str
    phase: str
    reason: str
    message: str
    conditions: dict[str, tuple[str, str]]  # type -> (status, reason)
    containers: tuple[str, ...]
    init_containers: tuple[str, ...]
    default_container: str
    statuses: dict[str, ContainerStatus]

    @property
    def subject(self) -> str:
        return f"pod {self.namespace}/{self.name}"

    def phase_line(self) -> str | None:
        """`phase Pending, PodScheduled False (Unschedulable)`: what keeps it from running, when it is not."""
        if self.phase == "Running":
            return None
        parts = [f"phase {self.phase}"]
        if self.reason:
            parts.append(f"reason {self.reason}")
        if self.phase == "Pending":
            waiting_for = next((kind for kind in _CONDITIONS if self.conditions.get(kind, ("True",))[0] == "False"), None)
            if waiting_for is not None:
                reason = self.conditions[waiting_for][1]
                parts.append(f"{waiting_for} False" + (f" ({reason})" if reason else ""))
        if self.message:
            parts.append(f"message: {_one_line(self.message)}")
        return fact_line(self.subject, parts)

    def state_line(self, container: str) -> str | None:
        status = self.statuses.get(container)
        ended = status.ended if status is not None else None
        if status is None or ended is None:
            return None
        return fact_line(f"{self.subject} container {container}", ended.facts(status.restarts))


def parse_pod(data: dict[str, Any]) -> Pod:
    """The parts of a core/v1 Pod that matter here.  Raises KeyError/TypeError/ValueError on another shape."""
    metadata, spec, status = data["metadata"], data["spec"], data.get("status") or {}
    statuses = [*(status.get("containerStatuses") or []), *(status.get("initContainerStatuses") or [])]
    return Pod(
        namespace=str(metadata.get("namespace", "")),
        name=str(metadata["name"]),
        uid=str(metadata.get("uid", "")),
        phase=str(status.get("phase", "Unknown")),
        reason=str(status.get("reason", "")),
        message=str(status.get("message", "")),
        conditions={c["type"]: (c.get("status", ""), c.get("reason", "")) for c in status.get("conditions") or []},
        containers=tuple(c["name"] for c in spec["containers"]),
        init_containers=tuple(c["name"] for c in spec.get("initContainers") or []),
        default_container=str((metadata.get("annotations") or {}).get(DEFAULT_CONTAINER, "")),
        statuses={entry["name"]: _container_status(entry) for entry in statuses},
    )


def _container_status(entry: dict[str, Any]) -> ContainerStatus:
    last = (entry.get("lastState") or {}).get("terminated")
    return ContainerStatus(
        name=entry["name"],
        state=_state(entry.get("state") or {}),
        last=_state({"terminated": last}) if last else None,
        restarts=int(entry.get("restartCount", 0)),
        container_id=str(entry.get("containerID", "")),
    )


def _state(state: dict[str, Any]) -> ContainerState | None:
    for kind in ("terminated", "waiting", "running"):
        if kind in state and state[kind] is not None:
            found = state[kind]
            return ContainerState(
                kind=kind,
                reason=str(found.get("reason", "")),
                message=str(found.get("message", "")),
                exit_code=int(found.get("exitCode", 0)),
                signal=int(found.get("signal", 0)),
                finished_at=str(found.get("finishedAt", "")),
                container_id=str(found.get("containerID", "")),
            )
    return None


def read_pod(spec: RuntimeSpec, runner: Runner = run_local) -> Pod:
    """Ask the cluster about the pod.  Raises SourceError (one line) when it cannot answer."""
    data = _get_json(spec, get_pod_command(spec), "pod", runner)
    try:
        return parse_pod(data)
    except (KeyError, TypeError, ValueError):
        raise SourceError(f"{spec.spec}: kubectl get printed something that is not a pod's JSON") from None


def choose_container(spec: RuntimeSpec, pod: Pod) -> tuple[str, str | None]:
    """The container to read, as `kubectl logs` chooses it, and what to say when it was a choice among several."""
    wanted = _target(spec).container
    if wanted is not None:
        if wanted not in pod.containers + pod.init_containers:
            raise SourceError(f"{spec.spec}: the pod has no container {wanted} (it has {', '.join(pod.containers)})")
        return wanted, None
    if len(pod.containers) == 1:
        return pod.containers[0], None
    if pod.default_container in pod.containers:
        others = ", ".join(name for name in pod.containers if name != pod.default_container)
        return pod.default_container, (f"read container {pod.default_container}, the pod's default ({DEFAULT_CONTAINER}); "
                                       f"it also has {others}")
    first = pod.containers[0]
    where = f"k8s:{_prefix(_target(spec))}{pod.name}/CONTAINER"
    return first, f"read container {first}, the first of {', '.join(pod.containers)} (name one: {where})"


# -- events --------------------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Event:
    """A Kubernetes event about a pod."""
    kind: str  # "Normal", "Warning"
    reason: str
    message: str
    count: int
    last: str  # RFC 3339; "" when the event has no time
    key: str  # which event, and how often it was seen: a new count is news

    def line(self, subject: str) -> str:
        when = f", last {self.last}" if self.last else ""
        return fact_line(f"{subject} event", [f"{self.kind} {self.reason} (x{self.count}{when}): {_one_line(self.message)}"])


def parse_events(data: dict[str, Any]) -> list[Event]:
    """The Warning events and the kubelet's Killing ones, oldest first.  A core/v1 Event written by the kubelet
    has count and lastTimestamp; one written through events.k8s.io (the scheduler) has eventTime and, when it
    repeated, series.count and series.lastObservedTime instead."""
    events = []
    for item in data.get("items") or []:
        kind, reason = str(item.get("type", "")), str(item.get("reason", ""))
        if kind != "Warning" and reason != "Killing":
            continue
        series = item.get("series") or {}
        count = int(series.get("count") or item.get("count") or 1)
        last = str(series.get("lastObservedTime") or item.get("lastTimestamp") or item.get("eventTime")
                   or item.get("firstTimestamp") or "")
        name = str((item.get("metadata") or {}).get("name", ""))
        events.append(Event(kind, reason, str(item.get("message", "")), count, last, f"{name}#{count}"))
    events.sort(key=lambda event: event.last)  # RFC 3339 in UTC sorts as text
    return events[-MAX_EVENTS:]


def read_events(spec: RuntimeSpec, pod: Pod, runner: Runner) -> tuple[list[Event], str | None]:
    """The pod's events, and what to say when they could not be read (RBAC often forbids listing events while
    allowing pods): the log is worth reading without them."""
    target = _target(spec)
    try:
        data = _get_json(spec, events_command(spec, pod.uid), "events", runner)
    except SourceError as error:
        said = str(error).removeprefix(f"{spec.spec}: ")
        if said.startswith("permission denied by RBAC"):
            user = re.search(r'User "([^"]*)"', said)
            who = user[1] if user else "this user"
            return [], f"events not read: RBAC does not let {who} list events in namespace {target.namespace}"
        return [], f"events not read: {said}"
    try:
        return parse_events(data), None
    except (TypeError, ValueError, AttributeError):
        return [], "events not read: kubectl printed events that are not their JSON"


# -- opening -------------------------------------------------------------------------------------------------


def open_pod(spec: RuntimeSpec, runner: Runner = run_local) -> CommandSource:
    """The pod's log as a source (the previous container's when it restarted), its facts after it.  Getting the
    pod first names a missing pod, kubectl, context or permission before any log is fetched."""
    target = _target(spec)
    if target.pod is None:
        raise SourceError(f"{spec.spec}: names every pod of a {target.workload}, not one pod")
    pod = read_pod(spec, runner)
    container, choice = choose_container(spec, pod)
    status = pod.statuses.get(container)
    previous = status is not None and status.reads_previous
    events, unread = read_events(spec, pod, runner)
    source = CommandSource(
        spec.spec,
        None,
        lambda lines: logs_command(spec, container, lines, previous=previous),
        lambda finished: explain("logs", "pod", target, finished),
        runner if status is not None and status.has_log else _no_log_yet,
    )
    lines = [pod.state_line(container), pod.phase_line(), *(event.line(pod.subject) for event in events)]
    source.set_trailer("".join(line + "\n" for line in lines if line is not None).encode())
    notes = [choice, _previous_note(container, status) if previous and status is not None else None, unread]
    source.note = "; ".join(note for note in notes if note) or None
    return source


def _previous_note(container: str, status: ContainerStatus) -> str:
    last = status.last
    assert last is not None
    times = "time" if status.restarts == 1 else "times"
    ended = f"last ended {last.reason or 'with no reason given'}, exit code {last.exit_code}"
    return f"read the previous container of {container} (restarted {status.restarts} {times}; {ended})"


def _no_log_yet(command: Command) -> Finished:
    """A container that was never created (pending, pulling its image) has no log: an empty one, not an error
    (the kubelet would refuse with `is waiting to start`).  The facts say why."""
    return Finished(0, b"", b"")


# -- workloads -----------------------------------------------------------------------------------------------


def workload_pods(spec: RuntimeSpec, runner: Runner = run_local) -> list[str]:
    """The `k8s:` specs of every pod of a Deployment or LeaderWorkerSet (same context and namespace), by the
    workload's own label selector, sorted by name with numbers as numbers: an LWS's group leader (NAME-0) comes
    first, then its workers (NAME-0-1, NAME-0-2, … NAME-0-10)."""
    target = _target(spec)
    assert target.workload is not None and target.name is not None, spec.spec
    if target.workload == "deployment":
        found = _get_json(spec, _kubectl(target, "get", "deployment", target.name, "-o", "json"), "deployment", runner)
        selector = selector_text((found.get("spec") or {}).get("selector") or {})
    else:
        _get_json(spec, _kubectl(target, "get", LWS_RESOURCE, target.name, "-o", "json"), "leaderworkerset", runner)
        selector = f"{LWS_NAME_LABEL}={target.name}"
    if not selector:
        raise SourceError(f"{spec.spec}: {target.workload} {target.name} has an empty selector")
    listed = _get_json(spec, _kubectl(target, "get", "pods", "-l", selector, "-o", "json"), "pods", runner)
    names = sorted((str(item["metadata"]["name"]) for item in listed.get("items") or []), key=_natural)
    if not names:
        raise SourceError(f"{spec.spec}: {target.workload} {target.name} has no pods (selector {selector})")
    return [f"k8s:{_prefix(target)}{name}" for name in names]


def selector_text(selector: dict[str, Any]) -> str:
    """A metav1.LabelSelector as `kubectl -l` takes it: `k=v` for matchLabels, `k in (a,b)`, `k notin (a,b)`, `k`
    and `!k` for matchExpressions."""
    terms = [f"{key}={value}" for key, value in sorted((selector.get("matchLabels") or {}).items())]
    for expression in selector.get("matchExpressions") or []:
        key, operator, values = expression["key"], expression["operator"], ",".join(expression.get("values") or [])
        terms.append({"In": f"{key} in ({values})", "NotIn": f"{key} notin ({values})", "Exists": key,
                      "DoesNotExist": f"!{key}"}[operator])
    return ",".join(terms)


def _natural(name: str) -> list[Any]:
    return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", name)]


def _prefix(target: PodTarget) -> str:
    return f"{target.context}:{target.namespace}/" if target.context else f"{target.namespace}/"


# -- following -----------------------------------------------------------------------------------------------


def follow_pod(spec: RuntimeSpec, stream: StreamRunner, runner: Runner, *, poll: float = 1.0,
               clock: Callable[[], float] = time.monotonic, backlog: int = 0) -> Iterator[bytes]:
    """The pod's log as it is written, for `watch`: b"" on idle ticks, the fact lines (state, phase, new events)
    when something changed, RESTART when the container was restarted, then the new container from its first line.

    A container that exists when the follow starts is followed from its end (its last `backlog` lines: the caller
    has read the rest), and its past (an earlier restart, old events) is not told again; one created later is
    followed from its first line.  Ends when the pod has finished for good (Succeeded
    or Failed).  While it waits for a container the pod is read every `poll` seconds, its events every EVENT_POLL
    seconds, and after each stream that ended."""
    target = _target(spec)
    pod = read_pod(spec, runner)
    container, _ = choose_container(spec, pod)
    facts = _Facts(spec, container, runner)
    told = facts.news(pod, with_events=True)
    if not _running(pod.statuses.get(container)):
        yield told  # why it is not running (pending, pulling, crash-looping); a running one's past is history
    followed = ""  # the container whose log was followed last
    tail = backlog
    events_read = clock()
    while True:
        status = pod.statuses.get(container)
        current = _live(status)
        streamed = bool(current)
        if current and current != followed:
            if followed:
                yield RESTART
            yield from _streamed(stream, logs_command(spec, container, tail, follow=True), spec.spec)
            followed = current
        elif current and _running(status):
            # The stream of a running container ended: cut (an API server restart), or refused (RBAC, which only
            # kubectl's stderr says).  A plain read says why; then follow on from where it is now.
            run_checked(runner, logs_command(spec, container, 1), spec.spec,
                        lambda finished: explain("logs", "pod", target, finished))
            yield from _idle(poll, clock)
            yield from _streamed(stream, logs_command(spec, container, 0, follow=True), spec.spec)
        elif pod.phase in _TERMINAL:
            return
        else:
            streamed = False
            yield from _idle(poll, clock)
        tail = -1  # a container created from now on is new: all of it
        pod = read_pod(spec, runner)
        with_events = streamed or clock() - events_read >= EVENT_POLL
        if with_events:
            events_read = clock()
        yield facts.news(pod, with_events=with_events)
        if pod.phase in _TERMINAL and _live(pod.statuses.get(container)) in ("", followed):
            return


def _running(status: ContainerStatus | None) -> bool:
    return status is not None and status.state is not None and status.state.kind == "running"


def _live(status: ContainerStatus | None) -> str:
    """The ID of the container instance whose log `kubectl logs -f` would follow now, or "" when there is none
    (not created yet, or waiting to be restarted)."""
    if status is None or status.state is None or status.state.kind not in ("running", "terminated"):
        return ""
    return status.container_id or status.state.container_id


class _Facts:
    """The fact lines a follower has not yielded yet: a state, a phase or an event (at its new count) once."""

    def __init__(self, spec: RuntimeSpec, container: str, runner: Runner) -> None:
        self._spec, self._container, self._runner = spec, container, runner
        self._said: set[str] = set()

    def news(self, pod: Pod, *, with_events: bool) -> bytes:
        lines: list[tuple[str, str]] = []
        status = pod.statuses.get(self._container)
        state = status.ended if status is not None else None
        line = pod.state_line(self._container)
        if line is not None and state is not None:
            # One line per container death, however its restart count moves on afterwards.
            lines.append((f"state {state.kind} {state.reason} {state.container_id} {state.finished_at} {state.message}", line))
        phase = pod.phase_line()
        if phase is not None:
            lines.append((phase, phase))
        if with_events:
            events, _ = read_events(self._spec, pod, self._runner)
            lines.extend((f"event {event.key}", event.line(pod.subject)) for event in events)
        fresh = [text for key, text in lines if key not in self._said]
        self._said.update(key for key, _ in lines)
        return "".join(text + "\n" for text in fresh).encode()


def _idle(seconds: float, clock: Callable[[], float]) -> Iterator[bytes]:
    """b"" every TICK until `seconds` have passed."""
    until = clock() + seconds
    while (left := until - clock()) > 0:
        time.sleep(min(TICK, left))
        yield b""


def _streamed(stream: StreamRunner, command: Command, name: str) -> Iterator[bytes]:
    """The followed command's output; a program that cannot be started is the same one-line SourceError as for a
    command that is run (run_checked words it)."""
    try:
        yield from stream(command)
    except OSError as error:
        run_checked(_raising(error), command, name, lambda finished: None)
        raise


def _raising(error: OSError) -> Runner:
    def run(command: Command) -> Finished:
        raise error

    return run


def _one_line(text: str) -> str:
    """A message as one line: the kubelet's and the scheduler's messages can hold newlines."""
    return " ".join(text.split())
