"""Open a runtime source (`docker:C`, `podman:C`, `journal:UNIT`, their `HOST:` forms, and `k8s:` pods and
workloads): choose the runner (here, or on the host over SSH) and the runtime's module."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from logsleuth.errors import SourceError, UsageError
from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.runtime.command import CommandSource, Runner, StreamRunner, run_local, stream_local
from logsleuth.sources.runtime.spec import RuntimeSpec, looks_runtime, parse_runtime_spec


def open_runtime(spec: str, ssh_options: SSHOptions | None = None) -> list[Source]:
    """The sources `spec` names: one container, unit or pod, or every pod of a Kubernetes workload.  Raises
    UsageError for a malformed spelling and SourceError (one line) for one that cannot be read."""
    parsed = parse_runtime_spec(spec)
    if parsed is None:  # looks_runtime said yes: only a caller that skipped it gets here
        raise ValueError(f"not a runtime source: {spec!r}")
    if parsed.runtime == "k8s":
        return _open_k8s(parsed)
    runner, _, close = commands_for(parsed, ssh_options)
    try:
        source = open_log(parsed, runner)
    except BaseException:
        close()
        raise
    source.on_close = close
    return [source]


def pod_specs(spec: str) -> list[str]:
    """The specs of every pod a `k8s:NS/deploy/NAME` or `k8s:NS/lws/NAME` spec names (a fleet), or `[spec]`
    for any other spec.  Raises SourceError (one line) when the workload cannot be listed."""
    parsed = parse_runtime_spec(spec) if looks_runtime(spec) else None  # a local file of that name is a file
    if parsed is None or parsed.pod is None or parsed.pod.workload is None:
        return [spec]
    from logsleuth.sources.runtime.kubernetes import workload_pods

    return workload_pods(parsed)


def with_pods(specs: Sequence[str], *, keep_unlisted: bool) -> list[str]:
    """`specs` with each Kubernetes workload (`k8s:NS/deploy/NAME`, `k8s:NS/lws/NAME`) replaced by its pods: a
    fleet.  A workload whose pods cannot be listed raises SourceError (UsageError when misspelled), or with
    `keep_unlisted` stays as it is, so that reading it reports the error beside the other sources."""
    expanded: list[str] = []
    for spec in specs:
        if not spec.startswith("k8s:"):
            expanded.append(spec)
            continue
        try:
            expanded.extend(pod_specs(spec))
        except (SourceError, UsageError):
            if not keep_unlisted:
                raise
            expanded.append(spec)
    return expanded


def _open_k8s(parsed: RuntimeSpec) -> list[Source]:
    from logsleuth.sources.runtime.kubernetes import open_pod

    pods = [parsed] if parsed.pod is None or parsed.pod.workload is None else map(_parsed, pod_specs(parsed.spec))
    return [open_pod(pod) for pod in pods]


def _parsed(spec: str) -> RuntimeSpec:
    parsed = parse_runtime_spec(spec)
    assert parsed is not None, spec
    return parsed


def commands_for(
    parsed: RuntimeSpec, ssh_options: SSHOptions | None
) -> tuple[Runner, StreamRunner, Callable[[], None]]:
    """How to run and to follow the spec's commands: here, or on its host over one SSH connection (closed by the
    third element)."""
    if parsed.remote is None:
        return run_local, stream_local, _nothing
    from logsleuth.sources.runtime.remote import RemoteCommands

    commands = RemoteCommands(parsed.remote, ssh_options or SSHOptions(), parsed.spec)
    return commands, commands.stream, commands.close


def open_log(parsed: RuntimeSpec, runner: Runner) -> CommandSource:
    """A container's or a unit's log as a source, its fact line after it."""
    if parsed.runtime == "journal":
        from logsleuth.sources.runtime.journal import open_unit

        return open_unit(parsed, runner)
    from logsleuth.sources.runtime.docker import open_container

    return open_container(parsed, runner)


def _nothing() -> None:
    pass
