"""Open the sources a command-line spec names: a local path, `-` for stdin, or a remote `HOST:PATH`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.source_spec import source_spec

T = TypeVar("T")


def with_workloads_expanded(specs: Sequence[str]) -> Sequence[str]:
    """The specs with each Kubernetes workload (`k8s:NS/deploy/NAME`) replaced by its pods, read as sources."""
    if not any(spec.startswith("k8s:") for spec in specs):
        return specs
    from logsleuth.sources.runtime.open import with_pods

    return with_pods(specs, keep_unlisted=True)


def read_specs(specs: Sequence[str], read: Callable[[str], T], *, parallel: int) -> list[T]:
    """`read(spec)` for each spec, in the specs' order.  Remote specs, and runtime ones (a command each:
    `docker logs`, `kubectl logs`), are read concurrently, `parallel` at a time on worker threads.  Local
    specs (and stdin) are read first, in the caller's thread: a large local file is searched by forked
    processes, and a fork is safest with no other thread running.  `diagnose` and `health` share it."""
    from logsleuth.sources.fanout import fan_out

    remote = [index for index, spec in enumerate(specs) if read_concurrently(spec)]
    by_spec = {index: read(spec) for index, spec in enumerate(specs) if index not in remote}
    by_spec.update(zip(remote, fan_out([specs[index] for index in remote], read, parallel=parallel), strict=True))
    return [by_spec[index] for index in range(len(specs))]


def open_sources(
    spec: str, ssh_options: SSHOptions | None = None, *, while_waiting: Callable[[], bool] | None = None
) -> list[Source]:
    """Open every source a spec names (a remote glob may name several files).  `while_waiting`: work to do
    step by step (until it returns False) while a remote source connects in the SSH helper process."""
    kind = source_spec(spec).kind  # decided once (sources/source_spec.py)
    if kind == "runtime":  # `gpu7:docker:web` is a container on gpu7, not a file
        from logsleuth.sources.runtime.open import open_runtime

        return open_runtime(spec, ssh_options)
    if kind == "remote":
        from logsleuth.internal.ssh_helper.parent import open_through_helper

        options = ssh_options or SSHOptions()
        opened = open_through_helper(spec, options, while_waiting=while_waiting)
        if opened is not None:
            return opened
        from logsleuth.sources.ssh.open import open_ssh_sources  # lazy: paramiko is slow to import

        return open_ssh_sources(spec, options)
    return [open_source(spec)]


def read_concurrently(spec: str) -> bool:
    """A remote log (SSH) or a runtime's (a command: `docker logs`, `kubectl logs`): what waits on a connection
    or a process more than on this machine, so many are read at once."""
    return source_spec(spec).kind in ("remote", "runtime")


def is_runtime(spec: str) -> bool:
    """Whether a spec names a container, pod or unit (`docker:web`, `gpu7:journal:sglang`, `k8s:ns/pod`)."""
    return source_spec(spec).kind == "runtime"


def is_remote(spec: str) -> bool:
    """Whether a command-line spec names a log on another host (`host:path`, or a runtime there:
    `gpu7:docker:web`), not a local path, a local runtime or stdin (`-`)."""
    kind = source_spec(spec).kind
    if kind == "runtime":
        from logsleuth.errors import UsageError
        from logsleuth.sources.runtime.spec import parse_runtime_spec

        try:
            runtime = parse_runtime_spec(spec)
        except UsageError:
            return False  # opening it says what is wrong with it
        return runtime is not None and runtime.remote is not None
    return kind == "remote"


def open_source(spec: str) -> Source:
    """Open a local source from its command-line spelling.

    `-` is stdin; anything else is a local path.
    """
    from logsleuth.errors import SourceError
    from logsleuth.models import EMPTY_NAME
    from logsleuth.sources.local import LocalFileSource, open_stdin

    if not spec:
        raise SourceError(EMPTY_NAME)
    if spec == "-":
        return open_stdin()
    return LocalFileSource(spec)
