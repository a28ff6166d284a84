"""Docker and Podman containers as sources: `docker logs --tail N` for the log, `docker inspect` for what the
runtime knows and the log does not (OOMKilled by the cgroup, exit code, restarts).

The facts are added after the log as one clearly marked line (`fact_line`), so that a pattern can name the
failure when the process died without a word, as an OOM-killed server does (docs/sources.md).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from logsleuth.errors import SourceError
from logsleuth.sources.runtime.command import (
    Command,
    CommandSource,
    Finished,
    Runner,
    fact_line,
    last_line,
    run_checked,
    run_local,
    signal_name,
)
from logsleuth.sources.runtime.spec import RuntimeSpec

_NEVER = "0001-01-01T00:00:00Z"  # Go's zero time: what Docker reports for a container that never finished


def logs_command(runtime: str, container: str, lines: int | None) -> Command:
    """`docker logs --tail N -- CONTAINER` (`--tail all` for every line).  The container's stderr is merged
    into stdout in the order the client writes them."""
    # Every line: docker spells it `all`; podman's --tail takes only an integer, -1 for all (podman-logs(1)).
    tail = str(lines) if lines is not None else "all" if runtime == "docker" else "-1"
    return Command((runtime, "logs", "--tail", tail, "--", container), merge_errors=True)


def inspect_command(runtime: str, container: str) -> Command:
    return Command((runtime, "inspect", "--type", "container", "--", container))


def explain_failure(runtime: str, verb: str, finished: Finished) -> str | None:
    """The one-line message for a failed `docker logs`/`docker inspect`; None when it succeeded."""
    if finished.returncode == 0:
        return None
    said = last_line(finished.errors or finished.output)
    lowered = said.lower()
    if "no such container" in lowered or "no such object" in lowered:
        return f"no such container ({runtime} ps -a lists them)"
    if "permission denied" in lowered and "socket" in lowered:
        return f"permission denied on the {runtime} socket: add the user to the docker group, or run as root"
    if "cannot connect to the docker daemon" in lowered:
        return f"cannot connect to the Docker daemon ({said})"
    return f"{runtime} {verb} failed with exit status {finished.returncode}: {said or 'no message'}"


@dataclass(frozen=True, slots=True)
class ContainerFacts:
    """What `docker inspect` says about a container's last run."""

    container: str
    status: str  # "running", "exited", "restarting", …
    oom_killed: bool  # a process in it was killed by its cgroup's OOM killer since it last started
    exit_code: int
    error: str  # the runtime's own error (e.g. the entrypoint could not start)
    restarts: int
    finished_at: str | None  # RFC 3339; None when it never finished
    started_at: str | None = None  # when the latest run started (RFC 3339); None when it never started

    @property
    def signal_name(self) -> str | None:
        """The signal that killed the main process (exit code 128 + N)."""
        return signal_name(self.exit_code)

    def fact_line(self) -> str | None:
        """One marked line naming what went wrong, or None for a container with nothing to report."""
        parts = []
        if self.oom_killed:
            parts.append("OOMKilled by its cgroup" if self.status != "running" else "a process in it was OOMKilled by its cgroup")
        if self.status != "running" and self.exit_code != 0:
            killed = f" ({self.signal_name})" if self.signal_name else ""
            parts.append(f"exit code {self.exit_code}{killed}")
        if self.error:
            parts.append(f"error: {self.error}")
        if not parts and not self.restarts:
            return None
        parts.insert(0, f"{self.status}")
        parts.append(f"restarts {self.restarts}")
        if self.finished_at:
            parts.append(f"finished {self.finished_at}")
        return fact_line(f"container {self.container}", parts)


def parse_inspect(container: str, text: bytes) -> ContainerFacts:
    """The facts in `docker inspect` output (a JSON array of one object).  Raises ValueError when it is not
    that shape."""
    data = json.loads(text)
    if not isinstance(data, list) or not data or not isinstance(data[0], dict):
        raise ValueError("expected a JSON array of containers")
    found: dict[str, Any] = data[0]
    state = found.get("State") or {}
    finished = state.get("FinishedAt") or None
    started = state.get("StartedAt") or None
    return ContainerFacts(
        container=container,
        status=str(state.get("Status", "unknown")),
        oom_killed=bool(state.get("OOMKilled", False)),
        exit_code=int(state.get("ExitCode", 0)),
        error=str(state.get("Error") or ""),
        restarts=int(found.get("RestartCount", 0)),
        finished_at=None if finished == _NEVER else finished,
        started_at=None if started == _NEVER else started,
    )


def read_facts(spec: RuntimeSpec, runner: Runner = run_local) -> ContainerFacts:
    """Ask the runtime about the container.  Raises SourceError (one line) when it cannot answer."""
    command = inspect_command(spec.runtime, spec.target)
    finished = run_checked(runner, command, spec.spec, lambda done: explain_failure(spec.runtime, "inspect", done))
    try:
        return parse_inspect(spec.target, finished.output)
    except (ValueError, TypeError):
        raise SourceError(f"{spec.spec}: {spec.runtime} inspect printed something that is not its JSON") from None


def open_container(spec: RuntimeSpec, runner: Runner = run_local) -> CommandSource:
    """The container's log as a source, its facts line after it.  Inspecting first names a missing container
    (or a missing docker, or the socket's permission) before any log is fetched."""
    facts = read_facts(spec, runner)
    source = CommandSource(
        spec.spec,
        spec.remote.host if spec.remote else None,
        lambda lines: logs_command(spec.runtime, spec.target, lines),
        lambda finished: explain_failure(spec.runtime, "logs", finished),
        runner,
    )
    line = facts.fact_line()
    if line is not None:
        source.set_trailer(line.encode())
    return source
