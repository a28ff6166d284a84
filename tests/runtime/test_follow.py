"""Following a runtime's log (sources/runtime/follow.py): `stream_local`, `docker logs --follow` across a
container's restarts, `journalctl --follow`.

The commands followed are the stand-in `docker` and `journalctl` (conftest.py): no Docker daemon or journald can
run on the test machines.  The stand-ins follow as the real ones do (docker ends the stream when the run ends,
journalctl never ends); the real clients installed here check that they accept the follow arguments.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import suppress
from pathlib import Path
from typing import Any

import pytest

from logsleuth.sources.base import ALIVE, RESTART
from logsleuth.sources.runtime.command import IDLE_TICK, Command, stream_local
from logsleuth.sources.runtime.follow import (
    follow_command,
    follow_container,
    follow_unit,
    open_followed,
    unit_follow_command,
)
from logsleuth.sources.runtime.spec import RuntimeSpec, parse_runtime_spec
from tests.runtime.conftest import Runtime, container_inspect, text_of
from tests.runtime.test_standins import NO_DAEMON, _real, _run

RUN1_START = "2026-11-30T22:10:04.004513211Z"
RUN1_END = "2026-11-30T22:11:00.5Z"
RUN2_START = "2026-11-30T22:11:01.25Z"
UNIT_PREFIX = "2026-11-30T22:10:31+0000 gpu7 python3[4187]: "


def _spec(text: str) -> RuntimeSpec:
    parsed = parse_runtime_spec(text)
    assert parsed is not None
    return parsed


def replace_json(path: Path, data: Any) -> None:
    """Write as the daemon's state changes: at once (a follower reading it never sees half a file)."""
    part = path.with_name(path.name + ".part")
    part.write_text(json.dumps(data))
    os.replace(part, path)


def set_container(runtime: Runtime, name: str, records: list[list[str]], *, started_at: str = RUN1_START,
                  **inspect: Any) -> None:
    """The container's whole log so far and its state, as `docker inspect` would show it now.  A running
    container keeps the FinishedAt of its run before, as Docker's does."""
    state = container_inspect(name, **inspect)
    state["State"]["StartedAt"] = started_at
    if "finished_at" in inspect:
        state["State"]["FinishedAt"] = inspect["finished_at"]
    # The log first, then the state: a container's last lines are written before it exits, and a follow that
    # sees it exited reads the log once more.
    replace_json(runtime.state / "docker" / f"{name}.log.json", records)
    replace_json(runtime.state / "docker" / f"{name}.inspect.json", state)


def set_unit(runtime: Runtime, unit: str, lines: list[str]) -> None:
    path = runtime.state / "journal" / f"{unit}.lines"
    part = path.with_name(path.name + ".part")
    part.write_text("".join(line + "\n" for line in lines))
    os.replace(part, path)


def later(delay: float, *steps: Any) -> threading.Thread:
    """Run each step `delay` seconds after the one before, in a thread: the daemon's side of a test."""

    def run() -> None:
        for step in steps:
            time.sleep(delay)
            step()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def later_seen(runtime: Runtime, delay: float, *steps: Any) -> threading.Thread:
    """Run the first step `delay` seconds from now and each next one once the follower has seen the state the
    step before left: the `docker logs --follow` it was running then has ended (the stand-in ends it when the
    container stops) and it asked `docker inspect` since.  In a thread: a state that lasts a fixed time may
    come and go unseen on a loaded machine.  Only a follower that never looks waits 30 s."""

    def inspections() -> int:
        return sum(call[1] == "inspect" for call in runtime.calls())

    def following() -> set[int]:
        found = set()
        for pid in _children():
            with suppress(OSError):
                alive = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
                if alive and b"\0logs\0" in Path(f"/proc/{pid}/cmdline").read_bytes():
                    found.add(pid)
        return found

    def seen_the_last_step(inspected: int, followers: set[int]) -> bool:
        if not followers:  # before the first step: the follower is following
            return bool(following())
        return inspections() > inspected and not followers & following()

    def run() -> None:
        time.sleep(delay)
        inspected, followers = 0, set[int]()
        for step in steps:
            give_up = time.monotonic() + 30
            while not seen_the_last_step(inspected, followers) and time.monotonic() < give_up:
                time.sleep(0.02)
            step()
            inspected, followers = inspections(), following()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def collect(chunks: Iterator[bytes], until: bytes, limit: float = 20.0) -> list[bytes]:
    """The chunks (without idle ticks and ALIVE, which says the log has no more) until one holds `until`; fails
    after `limit` seconds."""
    seen: list[bytes] = []
    deadline = time.monotonic() + limit
    for chunk in chunks:
        if chunk and chunk != ALIVE:
            seen.append(chunk)
        if until in b"".join(seen[-3:]):
            return seen
        assert time.monotonic() < deadline, f"never saw {until!r}; saw {b''.join(seen)!r}"
    raise AssertionError(f"the stream ended before {until!r}; saw {b''.join(seen)!r}")


def _children() -> set[int]:
    """Our live child processes, from /proc (zombies count: a child not waited for is not cleaned up)."""
    found = set()
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == os.getpid():
                found.add(int(entry))
    return found


# -- stream_local -------------------------------------------------------------------------------------------


def test_stream_local_yields_output_as_it_comes_and_ends_with_the_run(runtime: Runtime) -> None:
    # Stand-in docker: a running container whose run ends, as `docker logs --follow` ends with it.
    set_container(runtime, "web", [["stdout", "first", RUN1_START]], status="running")
    chunks = stream_local(follow_command("docker", "web", tail=5))
    assert collect(chunks, b"first\n") == [b"first\n"]
    later(0.2, lambda: set_container(runtime, "web", [["stdout", "first", RUN1_START], ["stderr", "second", RUN1_END]],
                                     status="exited", exit_code=1))
    rest = [chunk for chunk in chunks if chunk]  # ends: the iterator stops when the command exits
    assert b"".join(rest) == b"second\n"  # the container's stderr is merged, in order


def test_stream_local_ticks_while_the_command_is_silent(runtime: Runtime) -> None:
    # Stand-in docker: a running container that writes nothing.
    set_container(runtime, "web", [], status="running")
    chunks = stream_local(follow_command("docker", "web"))
    started = time.monotonic()
    ticks = [next(chunks) for _ in range(5)]
    elapsed = time.monotonic() - started
    chunks.close()
    assert ticks == [b""] * 5
    # Not a busy loop (a loaded machine only makes this longer); the ticks came at all while the command said
    # nothing, which a follower blocked on its output would never give (the upper bound only fails on a hang).
    assert 4 * IDLE_TICK <= elapsed < 60


def test_stream_local_kills_its_command_when_closed(runtime: Runtime) -> None:
    # Stand-in docker: `docker logs --follow` of a running container never ends by itself.
    set_container(runtime, "web", [["stdout", "loading", RUN1_START]], status="running")
    before = _children()
    chunks = stream_local(follow_command("docker", "web", tail=1))
    collect(chunks, b"loading\n")
    (child,) = _children() - before
    assert Path(f"/proc/{child}").exists()
    chunks.close()
    assert not Path(f"/proc/{child}").exists()  # killed and waited for: not even a zombie is left


def test_stream_local_kills_its_command_on_ctrl_c(runtime: Runtime) -> None:
    # Stand-in docker, as above; Ctrl-C arrives while the follower waits for output.
    set_container(runtime, "web", [], status="running")
    before = _children()
    chunks = stream_local(follow_command("docker", "web"))
    assert next(chunks) == b""
    (child,) = _children() - before
    with pytest.raises(KeyboardInterrupt):
        chunks.throw(KeyboardInterrupt)
    assert not Path(f"/proc/{child}").exists()


def test_stream_local_keeps_stderr_out_unless_merged(tmp_path: Path) -> None:
    # A real Python child (no runtime involved): one line to each stream.
    argv = (sys.executable, "-c", "import sys; print('out', flush=True); print('err', file=sys.stderr)")
    assert b"".join(stream_local(Command(argv))) == b"out\n"
    assert sorted(b"".join(stream_local(Command(argv, merge_errors=True))).split()) == [b"err", b"out"]


def test_stream_local_raises_when_the_program_is_missing(nothing_on_path: None) -> None:
    with pytest.raises(FileNotFoundError):
        next(stream_local(follow_command("docker", "web")))


# -- docker / podman -----------------------------------------------------------------------------------------


def test_a_container_restart_is_followed_without_repeating_a_line(runtime: Runtime) -> None:
    # Stand-in docker (no daemon here): run 1 exits with an error, its restart policy starts run 2.
    run1 = [["stdout", "run 1 loading", RUN1_START], ["stdout", "run 1 still loading", "2026-11-30T22:10:30Z"]]
    run2 = [["stdout", "run 2 loading", "2026-11-30T22:11:01.5Z"], ["stdout", "run 2 ready", "2026-11-30T22:11:09Z"]]
    set_container(runtime, "web", run1[:1], status="running")
    chunks = follow_container(_spec("docker:web"), stream_local, tail=1, poll=0.1)
    seen = collect(chunks, b"run 1 loading\n")
    set_container(runtime, "web", run1, status="running")
    later(0.2, lambda: set_container(runtime, "web", run1, status="restarting", exit_code=1, finished_at=RUN1_END))
    fact = b"[logsleuth: container web: restarting, exit code 1, restarts 0, finished 2026-11-30T22:11:00.5Z]\n"
    seen += collect(chunks, fact)
    set_container(runtime, "web", run1 + run2, status="running", started_at=RUN2_START, finished_at=RUN1_END,
                  restarts=1)
    seen += collect(chunks, b"run 2 ready\n")
    chunks.close()
    assert b"".join(seen) == b"run 1 loading\nrun 1 still loading\n" + fact + RESTART + b"run 2 loading\nrun 2 ready\n"
    assert RESTART in seen  # a chunk of its own, as the watch expects
    follows = [call for call in runtime.calls() if call[1] == "logs"]
    assert follows == [["docker", "logs", "--follow", "--tail", "1", "--", "web"],
                       ["docker", "logs", "--follow", "--since", RUN1_END, "--", "web"]]


def test_a_stopped_container_tells_its_facts_once_then_idles(runtime: Runtime) -> None:
    # Stand-in docker: an OOM-killed container that stays stopped; `docker logs --follow` ends at once.
    set_container(runtime, "web", [["stdout", "Load weight begin.", RUN1_START]], oom_killed=True, exit_code=137)
    chunks = follow_container(_spec("docker:web"), stream_local, tail=1, poll=0.1)
    seen = collect(chunks, b"]\n")
    assert b"".join(seen) == (
        b"Load weight begin.\n"
        b"[logsleuth: container web: exited, OOMKilled by its cgroup, exit code 137 (SIGKILL), restarts 0, "
        b"finished 2026-11-30T23:58:41.215470913Z]\n"
    )
    inspected = len(runtime.calls())
    started = time.monotonic()
    idle = [next(chunks) for _ in range(8)]
    elapsed = time.monotonic() - started
    chunks.close()
    # Told once; the watch's clock keeps ticking, and a look may say the log has no more (ALIVE).
    assert set(idle) <= {b"", ALIVE}
    # Inspected again while it idles, but at most once a 0.1 s poll, not in a busy loop: bounds on counts over
    # the time it really took, which a loaded machine stretches without breaking them.
    assert 1 <= len(runtime.calls()) - inspected <= elapsed / 0.1 + 1


def test_a_run_stopped_on_purpose_is_told_only_when_it_stays_stopped(runtime: Runtime) -> None:
    # Stand-in docker: `docker stop` ends the run with SIGTERM (exit 143); `docker restart` would start it again.
    set_container(runtime, "web", [["stdout", "loading", RUN1_START]], status="running")
    chunks = follow_container(_spec("docker:web"), stream_local, tail=1, poll=0.1, stopped_grace=1.0)
    seen = collect(chunks, b"loading\n")
    set_container(runtime, "web", [["stdout", "loading", RUN1_START]], exit_code=143, finished_at=RUN1_END)
    started = time.monotonic()
    seen += collect(chunks, b"]\n")
    chunks.close()
    assert time.monotonic() - started >= 1.0
    assert seen[-1] == b"[logsleuth: container web: exited, exit code 143 (SIGTERM), restarts 0, finished " \
                       b"2026-11-30T22:11:00.5Z]\n"


def test_a_container_started_again_after_a_stop_is_a_new_run(runtime: Runtime) -> None:
    # Stand-in docker: stopped when the watch starts, then `docker start`: same RestartCount, same FinishedAt.
    old = [["stdout", "old run", "2026-11-30T22:00:00Z"]]
    set_container(runtime, "web", old, exit_code=0, finished_at=RUN1_END)
    chunks = follow_container(_spec("docker:web"), stream_local, tail=1, poll=0.1)
    seen = collect(chunks, b"old run\n")
    set_container(runtime, "web", old + [["stdout", "new run", "2026-11-30T22:11:02Z"]],
                  status="running", started_at=RUN2_START, finished_at=RUN1_END)
    seen += collect(chunks, b"new run\n")
    chunks.close()
    assert b"".join(seen) == b"old run\n" + RESTART + b"new run\n"


def test_the_real_docker_client_accepts_the_follow_arguments() -> None:
    for command in (follow_command("docker", "web", tail=2000), follow_command("docker", "web", since=RUN1_END),
                    follow_command("docker", "web", tail=None)):
        status, _, said = _run([_real("docker"), *command.argv[1:]], {"DOCKER_HOST": NO_DAEMON})
        assert status == 1, said
        assert "Cannot connect to the Docker daemon" in said


# -- journald ------------------------------------------------------------------------------------------------


def test_a_unit_journal_is_followed_from_its_newest_lines(runtime: Runtime) -> None:
    # Stand-in journalctl (no journald here): `journalctl -f` never ends; lines come as they are written.
    lines = [UNIT_PREFIX + f"line {number}" for number in range(5)]
    set_unit(runtime, "sglang.service", lines)
    chunks = follow_unit(_spec("journal:sglang.service"), stream_local, tail=2)
    seen = collect(chunks, b"line 4\n")
    set_unit(runtime, "sglang.service", [*lines, UNIT_PREFIX + "ready"])
    seen += collect(chunks, b"ready\n")
    chunks.close()
    assert b"".join(seen).decode().splitlines() == [lines[3], lines[4], UNIT_PREFIX + "ready"]
    assert runtime.calls()[-1] == ["journalctl", "-u", "sglang.service", "--follow", "-n", "2", "--no-pager",
                                   "-o", "short-iso"]


def test_the_real_journalctl_accepts_the_follow_arguments() -> None:
    # The real journalctl (no journal files here) parses the arguments, then follows until killed; a bad flag
    # would make it exit at once with status 1.
    for command in (unit_follow_command("sglang.service", 2000), unit_follow_command("sglang.service", None)):
        real = subprocess.Popen([_real("journalctl"), *command.argv[1:]], stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        try:
            with pytest.raises(subprocess.TimeoutExpired):
                real.wait(timeout=1.0)
        finally:
            real.kill()
            real.wait()


# -- the watch's backlog --------------------------------------------------------------------------------------


def test_the_watch_backlog_holds_no_fact_line(runtime: Runtime) -> None:
    # Stand-in docker: a container restarted by its policy and loading again; inspect still reports a process
    # OOM-killed in it.  A fact is news only when the run followed ends: it must not be in the backlog.
    loading = [["stdout", "Load weight begin.", RUN1_START]]
    set_container(runtime, "web", loading, status="running", oom_killed=True, restarts=2)
    followed = open_followed("docker:web")
    try:
        # No backlog of its own: the newest lines come through the follow, and no fact line with them.
        assert text_of(followed.source) == ""
        assert b"".join(collect(followed.follow(0), b"begin.\n")) == b"Load weight begin.\n"
    finally:
        followed.close()


def test_lines_written_between_opening_and_following_are_not_lost(runtime: Runtime) -> None:
    # Stand-in docker: the container crashes after the watch opened it and before its follow starts (over SSH
    # that gap is a connection's worth).  Every line of the crash must reach the watch.
    loading = [["stdout", "Load weight begin.", RUN1_START]]
    set_container(runtime, "web", loading, status="running")
    followed = open_followed("docker:web")
    crash = [*loading, *[["stderr", f"crash line {n}", RUN1_START] for n in range(5)]]
    set_container(runtime, "web", crash, exit_code=1)
    try:
        seen = b"".join(collect(followed.follow(0), b"restarts 0"))
        assert seen.startswith(b"Load weight begin.\n" + b"".join(b"crash line %d\n" % n for n in range(5)))
    finally:
        followed.close()


def test_closing_a_followed_source_stops_its_command(runtime: Runtime) -> None:
    # Stand-in docker: a running container followed; the watch ends (ready elsewhere, Ctrl-C).
    set_container(runtime, "web", [["stdout", "loading", RUN1_START]], status="running")
    followed = open_followed("docker:web")
    before = _children()
    collect(followed.follow(0), b"loading\n")
    (child,) = _children() - before
    followed.close()
    assert not Path(f"/proc/{child}").exists()

