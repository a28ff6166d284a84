"""Open the sources a command-line spec names: a local path, `-` for stdin, or a remote `HOST:PATH`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions

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

    remote = [index for index, spec in enumerate(specs) if is_remote(spec) or is_runtime(spec)]
    by_spec = {index: read(spec) for index, spec in enumerate(specs) if index not in remote}
    by_spec.update(zip(remote, fan_out([specs[index] for index in remote], read, parallel=parallel), strict=True))
    return [by_spec[index] for index in range(len(specs))]


def open_sources(
    spec: str, ssh_options: SSHOptions | None = None, *, while_waiting: Callable[[], bool] | None = None
) -> list[Source]:
    """Open every source a spec names (a remote glob may name several files).  `while_waiting`: work to do
    step by step (until it returns False) while a remote source connects in the SSH helper process."""
    if is_runtime(spec):  # before is_remote: `gpu7:docker:web` is a container on gpu7, not a file
        from logsleuth.sources.runtime.open import open_runtime

        return open_runtime(spec, ssh_options)
    if is_remote(spec):
        from logsleuth.internal.ssh_helper.parent import open_through_helper

        options = ssh_options or SSHOptions()
        opened = open_through_helper(spec, options, while_waiting=while_waiting)
        if opened is not None:
            return opened
        from logsleuth.sources.ssh.open import open_ssh_sources  # lazy: paramiko is slow to import

        return open_ssh_sources(spec, options)
    return [open_source(spec)]


def is_runtime(spec: str) -> bool:
    """Whether a spec names a container, pod or unit (`docker:web`, `gpu7:journal:sglang`, `k8s:ns/pod`)."""
    from logsleuth.sources.runtime.spec import looks_runtime  # lazy: a local diagnose need not load it

    return looks_runtime(spec)


def is_remote(spec: str) -> bool:
    """Whether a command-line spec names a remote log (`host:path`), not a local path or stdin (`-`)."""
    from logsleuth.sources.spec import looks_remote  # lazy: a local diagnose need not load it

    return looks_remote(spec)


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
