"""Follow a runtime's log as it is written (`watch docker:C`, `watch journal:UNIT`, their `HOST:` forms, and
`watch k8s:NS/POD`): the command's `-f` output, across a container's restarts.

The backlog and the live log come from one command: the follower starts with the same newest N lines the source
holds (`docker logs --follow --tail N`, `journalctl -f -n N`), so no line written between reading the backlog and
starting to follow is lost, and none is repeated.  The source's fact line (OOMKilled, exit code, …) is not part
of the backlog: it describes the container's last run, which may be long over while a new one loads.  A fact
line enters the followed log only when the run being followed ends.

Docker and Podman end `logs --follow` when the container stops, and a restarted container's log goes on in a
new stream (moby/moby#37630, docker/cli#5305).  So when the stream ends, the container is inspected: its fact
line is told once while it is stopped, b"" keeps the watch's clock going while it stays stopped, and when a new
run starts the follower yields RESTART and follows it from the end of the run before (`--since FINISHED_AT`), so
no older line comes again.  `journalctl -f` never ends: a unit's restart is in its journal (systemd's own
"Started …" line, then the new launch's lines), and the watch starts over on the new launch it reads.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from logsleuth.errors import UsageError
from logsleuth.sources.base import ALIVE, RESTART, Source
from logsleuth.sources.memory import MemorySource
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.runtime.command import (
    IDLE_TICK,
    LINE_STEPS,
    Command,
    Runner,
    StreamRunner,
    run_local,
)
from logsleuth.sources.runtime.docker import ContainerFacts, read_facts
from logsleuth.sources.runtime.open import commands_for, open_log
from logsleuth.sources.runtime.spec import RuntimeSpec, parse_runtime_spec

INSPECT_EVERY = 1.0  # seconds between two looks at a stopped container (`docker inspect`)
# `docker stop`/`docker restart` (and podman's) end a container with SIGTERM: a run stopped so was stopped on
# purpose, and its fact line (which the watch reads as a failure) is told only if it stays stopped this long.
STOPPED_ON_PURPOSE_GRACE = 10.0
_SIGTERM_EXIT = 128 + 15
# After a lost SSH connection the follow starts again with this many of the newest lines, to find where it was in
# them (runtime/remote.py): lines written while it was away beyond this many are lost.
RESUME_LINES = LINE_STEPS[0]


# -- Docker and Podman ------------------------------------------------------------------------------------------


def follow_command(runtime: str, container: str, *, tail: int | None = None, since: str | None = None) -> Command:
    """`docker logs --follow --tail N -- C` (every line when `tail` is None), or `--since TIME` for the run that
    started after TIME.  The container's stderr is merged into stdout, as for `docker logs` (docker.py)."""
    window = (*(("--since", since) if since is not None else ()), *(("--tail", str(tail)) if tail is not None else ()))
    resume = (runtime, "logs", "--follow", *(("--since", since) if since is not None else ()), "--tail", str(RESUME_LINES),
              "--", container)
    return Command((runtime, "logs", "--follow", *window, "--", container), merge_errors=True,
                   resume=Command(resume, merge_errors=True))


def follow_container(
    spec: RuntimeSpec,
    stream: StreamRunner,
    runner: Runner = run_local,
    *,
    tail: int | None = 0,
    since: str | None = None,
    poll: float = INSPECT_EVERY,
    stopped_grace: float = STOPPED_ON_PURPOSE_GRACE,
    clock: Callable[[], float] = time.monotonic,
) -> Iterator[bytes]:
    """The container's log from its newest `tail` lines on, run after run: the fact line when a run ends (after
    `stopped_grace` seconds for a run stopped on purpose, which `docker restart` starts again), b"" while it
    stays stopped (inspected every `poll` seconds), RESTART before each new run.  Raises SourceError (one line)
    when the runtime can no longer be asked."""
    following = read_facts(spec, runner)  # the run followed (or, when stopped, the last one)
    command = follow_command(spec.runtime, spec.target, tail=tail, since=since)
    while True:
        yield from stream(command)  # until the run ends: at once when the container is not running
        ended = clock()
        told = False
        while True:
            facts = read_facts(spec, runner)
            yield ALIVE  # the run's log has ended, all of it delivered: silence now is the container's
            if _new_run(following, facts):
                yield RESTART
                command = follow_command(spec.runtime, spec.target, since=facts.finished_at)
                break
            if facts.status == "running" and clock() - ended >= poll:
                # The same run goes on, but its stream ended (the client died, a connection dropped): follow it
                # again from now.  Lines written in between are lost; none is repeated.
                command = follow_command(spec.runtime, spec.target, tail=0)
                break
            if facts.status != "running" and not told and (
                not _stopped_on_purpose(facts) or clock() - ended >= stopped_grace
            ):
                told = True
                line = facts.fact_line()
                if line is not None:
                    yield (line + "\n").encode()
            yield from _idle(poll, clock)
        following = facts


def _new_run(before: ContainerFacts, now: ContainerFacts) -> bool:
    """The container runs, and not the run `before` saw: it was stopped then, or a run has finished since (each
    stop sets FinishedAt; a restart by its policy also counts in RestartCount)."""
    if now.status != "running":
        return False
    return before.status != "running" or (now.finished_at, now.restarts) != (before.finished_at, before.restarts)


def _stopped_on_purpose(facts: ContainerFacts) -> bool:
    return facts.exit_code == _SIGTERM_EXIT and not facts.oom_killed and not facts.error


def _idle(seconds: float, clock: Callable[[], float]) -> Iterator[bytes]:
    """b"" every IDLE_TICK for `seconds`: time passes for the watch while nothing is written."""
    until = clock() + seconds
    while clock() < until:
        time.sleep(IDLE_TICK)
        yield b""


# -- systemd units -----------------------------------------------------------------------------------------------


def unit_follow_command(unit: str, tail: int | None = 0) -> Command:
    """`journalctl -u UNIT --follow -n N -o short-iso --no-pager` (`-n all` when `tail` is None: with --follow,
    journalctl shows 10 lines unless told)."""
    def lines(count: str) -> tuple[str, ...]:
        return ("journalctl", "-u", unit, "--follow", "-n", count, "--no-pager", "-o", "short-iso")

    return Command(lines("all" if tail is None else str(tail)), resume=Command(lines(str(RESUME_LINES))))


def follow_unit(spec: RuntimeSpec, stream: StreamRunner, *, tail: int | None = 0) -> Iterator[bytes]:
    """The unit's journal from its newest `tail` lines on.  journalctl -f outlives the unit's restarts, so there is
    no RESTART: the new launch's lines start a new launch in the watch."""
    return stream(unit_follow_command(spec.target, tail))


# -- opening a runtime source to watch -----------------------------------------------------------------------


class FollowedSource:
    """A runtime source to watch: `source`, its backlog (the newest lines the runtime holds, no fact line), and
    `follow(offset)`, the watch's Follow: the backlog again from `offset`, then the live log.  `close` stops the
    follow and ends the connection."""

    def __init__(
        self, source: Source, chunks: Callable[[], Iterator[bytes]], on_close: Callable[[], None], *,
        confirms_silence: bool = False,
    ) -> None:
        self.source = source
        self.confirms_silence = confirms_silence  # its follow yields ALIVE (a host's, over SSH: remote.py)
        self._chunks = chunks
        self._on_close = on_close
        self._following: list[Iterator[bytes]] = []

    def follow(self, offset: int) -> Iterator[bytes]:
        chunks = self._chunks()
        self._following.append(chunks)
        return _from_offset(chunks, offset)

    def close(self) -> None:
        try:
            for chunks in self._following:
                getattr(chunks, "close", _nothing)()  # a generator: stops the command it follows
            self.source.close()
        finally:
            self._on_close()


def open_followed(spec: str, ssh_options: SSHOptions | None = None, *, whole: bool = False) -> FollowedSource:
    """Open the runtime source `spec` to watch it: a container, a unit or a pod, here or on `HOST:`.  `whole`:
    every line it holds, not only the newest (watch --from-start).  Raises UsageError for a malformed spelling
    or a Kubernetes workload (a fleet of pods), SourceError (one line) when it cannot be read."""
    parsed = parse_runtime_spec(spec)
    if parsed is None:
        raise ValueError(f"not a runtime source: {spec!r}")
    if parsed.pod is not None and parsed.pod.workload is not None:
        raise UsageError(f"{spec}: watch follows one pod; name it (k8s:NAMESPACE/POD), or watch each pod of the "
                         f"{parsed.pod.workload} as a fleet")
    runner, stream, close = commands_for(parsed, ssh_options)
    if parsed.remote is not None:
        from logsleuth.sources.runtime.remote import RemoteCommands

        assert isinstance(runner, RemoteCommands)
        runner = runner.call_reconnecting  # a follow's inspects outlive a lost connection too
    try:
        followed = _open(parsed, runner, stream, close, whole=whole)
        followed.confirms_silence = parsed.remote is not None  # its heartbeat (remote.py); here nothing can freeze
        return followed
    except BaseException:
        close()
        raise


def _open(parsed: RuntimeSpec, runner: Runner, stream: StreamRunner, close: Callable[[], None], *,
          whole: bool) -> FollowedSource:
    """The backlog and the live log come from one command (`logs --follow --tail N`): read apart, the lines written
    between the read and the start of the follow would be lost (the crash a watch exists for).  So the watch gets
    no backlog of its own and sees the newest lines first, as they come, and a fact line only when a followed run
    ends: the fact of a run before may be over."""
    if parsed.runtime == "k8s":
        return _open_pod(parsed, runner, stream, close, whole=whole)
    empty = MemorySource(b"", parsed.spec)
    newest = None if whole else LINE_STEPS[0]
    if parsed.runtime == "journal":
        open_log(parsed, runner).close()  # a unit systemd does not know, or no permission: one line, exit 3
        return FollowedSource(empty, lambda: follow_unit(parsed, stream, tail=newest), close)
    # Only the latest run's lines: `docker logs` holds every run of the container, and a crash of a run before
    # must not end the watch of this one.
    started = read_facts(parsed, runner).started_at
    return FollowedSource(empty, lambda: follow_container(parsed, stream, runner, tail=newest, since=started), close)


def _open_pod(parsed: RuntimeSpec, runner: Runner, stream: StreamRunner, close: Callable[[], None], *,
              whole: bool) -> FollowedSource:
    """A pod is watched with no backlog of its own: the source `diagnose` reads holds the previous container's log
    after a restart, while the watch follows the current one (its newest lines first).  One container is one
    launch, so its lines shown as they come say what a replayed backlog would.  A missing pod, kubectl, context or
    permission is the follower's first SourceError."""
    from logsleuth.sources.runtime.kubernetes import follow_pod

    newest = -1 if whole else LINE_STEPS[0] or -1  # -1: every line (kubectl logs --tail=-1)
    return FollowedSource(MemorySource(b"", parsed.spec), lambda: follow_pod(parsed, stream, runner, backlog=newest),
                          close)


def _from_offset(chunks: Iterator[bytes], offset: int) -> Iterator[bytes]:
    """The chunks without their first `offset` bytes (the part of the backlog the watch does not replay)."""
    for chunk in chunks:
        if offset and chunk not in (RESTART, ALIVE):
            dropped = min(offset, len(chunk))
            offset -= dropped
            chunk = chunk[dropped:]
        elif chunk == RESTART:
            offset = 0
        yield chunk


def _nothing() -> None:
    pass
