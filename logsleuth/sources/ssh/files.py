"""Remote log files read with remote scripts, over either backend (a `run.Runner`: paramiko or OpenSSH's ssh):
the source, glob expansion and prefetch.  No paramiko here.

One runner per spec, shared by every file a glob names.  The first run (the "probe") expands the glob, checks
each match and returns the size plus the last `prefetch_bytes` of the newest file, so the common diagnose costs
one connection and one round trip.  Wider windows are one `tail -c +K | head -c N` run each.  The probe raises
run.NoShell for an account without a usable shell: the paramiko backend falls back to SFTP (sftp.py).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import TYPE_CHECKING

from logsleuth.sources.base import GrepMatches, Progress, Source, anchors_in_chunks, matches_in_chunks
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import RemoteError, RemoteSpec
from logsleuth.sources.ssh.follow import reconnecting_follow
from logsleuth.sources.ssh.run import NoShell, Runner, classify_remote_error
from logsleuth.sources.ssh.scripts import (
    FIND_SCRIPT,
    PROBE_SCRIPT,
    RANGES_PERL,
    RANGES_SCRIPT,
    READ_SCRIPT,
    SIZE_SCRIPT,
    FoundOffsets,
    ProbeResult,
    parse_probe,
    parse_ranges,
    parse_records,
)

if TYPE_CHECKING:
    from logsleuth.models import ClockOffset

_GLOB_CHARS = frozenset("*?[")
_PROBLEM_WORDS = {
    "missing": "no such file",
    "denied": "permission denied",
    "dir": "is a directory",
    "special": "not a regular file",  # a FIFO or device would block `wc` and `tail` forever
}
_PROGRESS_STEP = 4 << 20


def open_files(remote: RemoteSpec, runner: Runner, options: SSHOptions) -> list[Source]:
    """The sources for every file the spec names (a glob: the newest, or all with `all_files`), after one probe.
    Raises run.NoShell when the account runs no shell."""
    want = options.prefetch_bytes
    run = runner.run(PROBE_SCRIPT, remote.path, int(options.all_files), want)
    body = run.collect()
    probe = parse_probe(body, run.marker, run.stderr)
    if probe.missing_command:
        raise RemoteError(
            f"{remote.name_for(remote.path)}: remote command '{probe.missing_command}' not found on "
            f"{remote.host} (logsleuth needs tail, head and wc; gzip for .gz)"
        )
    gzip_errors = [line for line in run.stderr.splitlines() if line.startswith(b"gzip:")]
    if probe.newest and probe.newest.endswith(".gz") and gzip_errors:
        reason = classify_remote_error(gzip_errors[0].decode("utf-8", "replace"))
        raise RemoteError(f"{remote.name_for(probe.newest)}: {reason}")
    is_glob = bool(_GLOB_CHARS & set(remote.path))
    if not probe.files and options.wait_for_missing and not is_glob and _only_missing(probe):
        # `watch` started before the launch: its follow (a `tail -F`) waits for the file to appear.
        return [SSHFileSource(runner, remote, remote.path, size=0, progress=options.progress, options=options,
                              missing_at_open=True)]
    if not probe.files:
        raise RemoteError(_no_file_message(remote, probe, is_glob))
    if options.all_files:
        chosen = probe.files
    else:
        chosen = [entry for entry in probe.files if entry[0] == probe.newest] or probe.files[:1]
    sources: list[Source] = []
    for path, size in chosen:
        prefetch = None
        if path == probe.newest and probe.prefetch is not None and probe.prefetch_size is not None:
            size = probe.prefetch_size
            prefetch = (probe.prefetch_start, probe.prefetch)
        sources.append(
            SSHFileSource(
                runner, remote, path, size=size, prefetch=prefetch, progress=options.progress, options=options
            )
        )
    if options.all_files:  # unreadable matches become sources that fail alone, so the others still run
        sources.extend(
            FailedSource(remote, path, _PROBLEM_WORDS.get(kind, kind))
            for kind, path in probe.problems
            if kind == "denied"
        )
    return sources


def _only_missing(probe: ProbeResult) -> bool:
    """The probe found no file by that name, and nothing else wrong (a directory, no permission)."""
    return bool(probe.problems) and all(kind == "missing" for kind, _ in probe.problems)


def _no_file_message(remote: RemoteSpec, probe: ProbeResult, is_glob: bool) -> str:
    name = remote.name_for(remote.path)
    kinds = [kind for kind, _ in probe.problems]
    if is_glob and (not kinds or set(kinds) == {"missing"}):
        return f"{name}: no file matches"
    if "denied" in kinds:
        return f"{name}: permission denied"
    if kinds:
        return f"{name}: {_PROBLEM_WORDS.get(kinds[0], kinds[0])}"
    return f"{name}: no file matches" if is_glob else f"{name}: no such file"


class SSHFileSource:
    """One remote file read with `tail -c +K | head -c N` runs; `.gz` files are decompressed remotely."""

    # How to open it again (ssh/open.py's open_ssh_sources, set by it: that module imports this one).
    opener: Callable[[str, SSHOptions], list[Source]] | None = None

    def __init__(
        self,
        runner: Runner,
        remote: RemoteSpec,
        path: str,
        *,
        size: int | None,
        prefetch: tuple[int, bytes] | None = None,
        progress: Progress | None = None,
        options: SSHOptions | None = None,  # how it was opened: a follow opens it again with them
        missing_at_open: bool = False,  # no file by that name yet (SSHOptions.wait_for_missing): size 0
    ) -> None:
        self.name = remote.name_for(path)
        self.host: str | None = remote.host
        self.path = path
        self.progress = progress
        self.gz = path.endswith(".gz")
        self.backend = runner.backend  # "paramiko" or "openssh"
        self._runner = runner.acquire()
        self._size = size
        self._cache_start, self._cache = prefetch if prefetch else (0, b"")
        self._closed = False
        self._options = options
        self.notice = options.notice if options else None  # a follow's "reconnecting (attempt n)…"
        self.confirms_silence = True  # its follow yields ALIVE (FOLLOW_SCRIPT's heartbeat)
        self.missing_at_open = missing_at_open

    def size(self) -> int:
        if self._size is None:  # opened without prefetch (all_files .gz, or prefetch_bytes=0): ask
            run = self._runner.run(SIZE_SCRIPT, self.path, int(self.gz))
            records = parse_records(run.collect())
            if "nocmd" in records:
                raise RemoteError(f"{self.name}: remote command 'gzip' not found on {self.host}")
            text = records.get("size", "").strip()
            if not text.isdigit() or (text == "0" and run.stderr.strip()):
                raise RemoteError(f"{self.name}: {classify_remote_error(run.error_text())}")
            self._size = int(text)
        return self._size

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        start, end = max(0, start), min(end, self.size())
        if start >= end:
            return
        cache_end = self._cache_start + len(self._cache)
        if self._cache and self._cache_start <= end <= cache_end:
            # Serve the cached tail; fetch only what lies before it.
            if start < self._cache_start:
                yield from self._fetch(start, self._cache_start)
            offset = max(start, self._cache_start) - self._cache_start
            yield self._cache[offset : end - self._cache_start]
            return
        yield from self._fetch(start, end)

    def _fetch(self, start: int, end: int) -> Iterator[bytes]:
        wanted = end - start
        to_end = end >= self.size()  # then no `head` remotely: we stop reading at `end` ourselves
        run = self._runner.run(READ_SCRIPT, self.path, start, "-" if to_end else wanted, int(self.gz))
        received = 0
        reported = 0
        chunks = iter(run)
        try:
            for chunk in chunks:
                if received + len(chunk) >= wanted:
                    yield chunk[: wanted - received]
                    received = wanted
                    break
                received += len(chunk)
                yield chunk
                if self.progress and received - reported >= _PROGRESS_STEP:
                    reported = received
                    self.progress(f"reading {self.name}: {received / (1 << 20):.0f} MiB")
        except NoShell:
            raise RemoteError(f"{self.name}: the remote shell stopped accepting commands") from None
        finally:
            close = getattr(chunks, "close", None)
            if close:
                close()  # a file that grew: stop the remote tail instead of draining it
        if received < wanted:
            if run.stderr.strip():
                raise RemoteError(f"{self.name}: {classify_remote_error(run.error_text())}")
            raise RemoteError(f"{self.name}: changed while being read")  # shorter than its size said

    def find_anchors(self, anchors: tuple[bytes, ...], limit: int | None = None) -> list[int] | None:
        """Offsets of every anchor, searched on the remote host with `grep -boaF` (the reader's fast path for
        reading a whole file); streamed and searched here when grep is unusable there.  None when there are
        more than `limit`."""
        found = self._grep_anchors(anchors, limit)
        if found is None:
            return anchors_in_chunks(self.read_range(0, self.size()), 0, anchors, limit)
        return None if found.too_many else found.offsets()

    def find_matches(
        self, anchors: tuple[bytes, ...], limit: int | None = None, start: int = 0, end: int | None = None
    ) -> GrepMatches | None:
        """find_anchors, with each match's length: which anchor it is (`health`), from the same one `grep -boaF` on
        the host; None when there are more than `limit`.  In [start, end) when given."""
        found = self._grep_anchors(anchors, limit)
        if found is None:
            matches = matches_in_chunks(self.read_range(start, end or self.size()), start, anchors, limit)
        else:
            matches = None if found.too_many else found.matches()
        if matches is None or (start == 0 and end is None):
            return matches
        return matches.between(start, end)

    def read_ranges(self, ranges: list[tuple[int, int]]) -> list[bytes]:
        """The bytes of each [start, end) range, in one run on the host however many there are (RANGES_SCRIPT:
        `health` reads hundreds of windows).  A compressed log is read range by range."""
        clipped = [(max(0, start), min(end, self.size())) for start, end in ranges]
        if self.gz:
            return [b"".join(self.read_range(start, end)) for start, end in clipped]
        wanted = [(start, end) for start, end in clipped if end > start]
        pairs = [number for start, end in wanted for number in (start, end - start)]
        try:
            run = self._runner.run(RANGES_SCRIPT, RANGES_PERL, self.path, *pairs)
            body = run.collect()
        except NoShell:
            raise RemoteError(f"{self.name}: the remote shell stopped accepting commands") from None
        got = parse_ranges(body)
        if got is None and body.startswith(b"unreadable"):
            raise RemoteError(f"{self.name}: no longer readable")
        if got is None:
            raise RemoteError(f"{self.name}: {classify_remote_error(run.error_text())}")
        if [(start, start + len(data)) for start, data in got] != wanted:
            raise RemoteError(f"{self.name}: changed while being read")  # shorter than its size said
        read = iter(data for _, data in got)
        return [next(read) if end > start else b"" for start, end in clipped]

    def _grep_anchors(self, anchors: tuple[bytes, ...], limit: int | None) -> FoundOffsets | None:
        """The offsets `grep -boaF` finds on the remote host (base.GrepMatches: what the local search finds in the
        same bytes), parsed as they arrive and the run stopped past `limit`; None when grep is unusable there."""
        literals = [anchor.decode("utf-8", "surrogateescape") for anchor in anchors]
        run = self._runner.run(FIND_SCRIPT, self.path, int(self.gz), *literals)
        found = FoundOffsets(limit)
        chunks = iter(run)
        try:
            for chunk in chunks:
                found.feed(chunk)
                if found.too_many or not found.valid:
                    break
            else:
                found.finish()
        except NoShell:
            return None
        finally:
            close = getattr(chunks, "close", None)
            if close:
                close()  # stopped early: end the remote grep instead of draining its output
        size = self.size()
        if found.size is not None and found.size < size:
            raise RemoteError(f"{self.name}: changed while being read")  # truncated since the size was taken
        if found.too_many:
            return found
        if run.exit_status not in (0, 1) or not found.valid:  # 1: no match; else grep failed or is missing
            return None
        found.drop_from(size)
        return found

    def follow(self, offset: int) -> Iterator[bytes]:
        """New bytes from `offset` on, as the remote file grows (`tail -F`); b"" on idle polls.

        When the file is truncated or replaced this yields RESTART, and what follows is the new file from its first
        byte, exactly where it starts (FOLLOW_SCRIPT).  A lost connection or a killed remote tail is not the end:
        the file is opened again and followed on from the last byte yielded (follow.py)."""
        if self.gz:
            raise RemoteError(f"{self.name}: a compressed log cannot be followed")
        yield from reconnecting_follow(self, offset)

    @property
    def runner(self) -> Runner:
        return self._runner

    def remote_clock(self) -> ClockOffset:
        """This host's clock against ours (clock.py), over the connection this file is read on."""
        from logsleuth.sources.ssh.clock import measure_clock  # only a fleet report asks

        return measure_clock(self._runner, self.host or self.name)

    def reopen(self) -> SSHFileSource:
        """This file over a new connection, for a follow whose connection was lost: the same backend and settings,
        one connect attempt (the follow retries), no prefetch, no progress lines; a host key accepted now is
        written at once (the command line was accepted long ago)."""
        if self._options is None or self.opener is None:
            raise RemoteError(f"{self.name}: cannot reconnect")
        again = replace(
            self._options,
            all_files=False,
            prefetch_bytes=0,
            connect_attempts=1,
            deadline=None,
            progress=None,
            hold_new_host_key=None,
        )
        opened = self.opener(self.name, again)
        same = next((s for s in opened if isinstance(s, SSHFileSource) and s.path == self.path), None)
        for other in opened:
            if other is not same:
                other.close()
        if same is None:
            raise RemoteError(f"{self.name}: no longer readable")
        return same

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._runner.release()


class FailedSource:
    """A glob match that cannot be read: fails on use, so that one bad file does not stop the others."""

    def __init__(self, remote: RemoteSpec, path: str, reason: str) -> None:
        self.name = remote.name_for(path)
        self.host: str | None = remote.host
        self._message = f"{self.name}: {reason}"

    def size(self) -> int:
        raise RemoteError(self._message)

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        raise RemoteError(self._message)

    def close(self) -> None:
        pass
