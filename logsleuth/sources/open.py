"""Open the sources a command-line spec names: a local path, `-` for stdin, or a remote `HOST:PATH`."""

from __future__ import annotations

from collections.abc import Callable

from logsleuth.sources.base import Source
from logsleuth.sources.options import SSHOptions


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
    from logsleuth.sources.local import LocalFileSource, open_stdin

    if spec == "-":
        return open_stdin()
    return LocalFileSource(spec)
