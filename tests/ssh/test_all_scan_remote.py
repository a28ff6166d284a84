"""`--all` on a remote file finds the same anchors with the remote grep as the local search does on the same
file, and so gives the same report (issue 14, item 5), against the real test sshd."""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_runner import run_diagnose
from remote_logs import FAILURE, LINE
from sshd_server import SSHD

from logsleuth.reading.scan import ANCHORS, FALLBACK_ANCHORS
from logsleuth.sources.local import LocalFileSource
from logsleuth.sources.open import open_sources
from logsleuth.sources.options import SSHOptions

pytestmark = pytest.mark.ssh

# Self-overlapping anchors ("rrorror": grep -o reports "rror" once), NUL bytes, anchors glued together.
NOISE = b"\x00bin\x00 rrorror rrorrorrorr TracebackTraceback Killed sigquit xception\n"


@pytest.fixture
def tricky_log(sshd: SSHD) -> Iterator[Path]:
    path = sshd.logs / f"tricky-{os.getpid()}.log"
    path.write_bytes((LINE * 300 + NOISE * 20 + FAILURE) * 40)
    yield path
    path.unlink(missing_ok=True)


def _remote_and_local(sshd: SSHD, path: Path, anchors: tuple[bytes, ...], limit: int | None) -> tuple[Any, Any]:
    options = SSHOptions(config_file=str(sshd.config), connect_attempts=1)
    (remote,) = open_sources(f"logsleuth-alias:{path}", options)
    local = LocalFileSource(str(path))
    try:
        return remote.find_anchors(anchors, limit), local.find_anchors(anchors, limit)  # type: ignore[attr-defined]
    finally:
        remote.close()
        local.close()


@pytest.mark.parametrize("anchors", [ANCHORS, FALLBACK_ANCHORS], ids=["anchors", "fallback"])
def test_remote_grep_finds_the_anchors_the_local_search_finds(
    sshd: SSHD, tricky_log: Path, anchors: tuple[bytes, ...]
) -> None:
    remote, local = _remote_and_local(sshd, tricky_log, anchors, None)
    assert remote == local
    assert len(local) > 1000
    every_occurrence = sum(len(re.findall(b"(?=%s)" % re.escape(anchor), tricky_log.read_bytes())) for anchor in anchors)
    assert len(local) < every_occurrence if anchors == ANCHORS else len(local) == every_occurrence
    # The limit (more anchors than it: a traceback-dense log) is decided alike on both sides.
    assert _remote_and_local(sshd, tricky_log, anchors, len(local)) == (local, local)
    assert _remote_and_local(sshd, tricky_log, anchors, len(local) - 1) == (None, None)


def test_all_reports_the_same_failures_remotely_and_locally(sshd: SSHD, tricky_log: Path) -> None:
    remote = run_diagnose(sshd.config, "--all", "--no-user-patterns", f"logsleuth-alias:{tricky_log}")
    local = run_diagnose(None, "--all", "--no-user-patterns", str(tricky_log))
    assert remote.returncode == local.returncode == 1, remote.stderr + local.stderr
    remote_report, local_report = json.loads(remote.stdout), json.loads(local.stdout)

    def without_location(report: dict[str, Any]) -> list[dict[str, Any]]:
        # Where each failure was first seen: the same lines, a different source name and host.
        return [{**{k: v for k, v in f.items() if k not in ("hosts", "host_counts", "sources", "firsts")},
                 "firsts": [{k: v for k, v in first.items() if k not in ("source", "host")} for first in f.get("firsts", [])]}
                for f in report["failures"]]

    assert sum(failure["count"] for failure in local_report["failures"]) == 40
    assert without_location(remote_report) == without_location(local_report)
    assert remote_report["sources"][0]["bytes_read"] == local_report["sources"][0]["bytes_read"]


@pytest.fixture
def anchor_storm_log(sshd: SSHD) -> Iterator[Path]:
    """A million anchors in 11 MiB: the remote grep prints ~20 MiB of `OFFSET:Traceback` lines."""
    path = sshd.logs / f"storm-{os.getpid()}.log"
    path.write_bytes(b"Traceback\n" * 1_100_000)
    yield path
    path.unlink(missing_ok=True)


@pytest.mark.parametrize("backend", ["paramiko", "openssh"])
def test_remote_anchor_offsets_are_streamed_in_bounded_memory(sshd: SSHD, anchor_storm_log: Path, backend: str) -> None:
    """`--all` asks for at most DENSE_ANCHORS offsets (more: the log is read the dense way).  The remote grep's
    output is parsed as it arrives and dropped once there are more than that: collected whole, with a
    million offsets parsed, the client grew by hundreds of MB (319 MB for 900k tracebacks).  Measured with
    tracemalloc (every Python allocation of this process, paramiko's buffers included): 164 MiB at the peak
    before, 11 MiB streamed (a chunk of output in lines, paramiko's window); the bound is generous."""
    import tracemalloc

    from logsleuth.reading.reader import DENSE_ANCHORS

    options = SSHOptions(config_file=str(sshd.config), connect_attempts=1, backend=backend)  # type: ignore[arg-type]
    (remote,) = open_sources(f"logsleuth-alias:{anchor_storm_log}", options)
    try:
        tracemalloc.start()
        try:
            found = remote.find_anchors(ANCHORS, DENSE_ANCHORS)  # type: ignore[attr-defined]
            _, peak = tracemalloc.get_traced_memory()
        finally:
            tracemalloc.stop()
        assert found is None  # more than the limit
        assert peak < 32 << 20, f"peak {peak / (1 << 20):.0f} MiB while reading the remote anchor offsets"
        few = remote.find_anchors(ANCHORS, None)  # type: ignore[attr-defined]
        assert few == list(range(0, 11_000_000, 10))  # the same search, unbounded, still gives every offset
    finally:
        remote.close()


@pytest.mark.parametrize("cut", [1, 3, 7, 64])
def test_found_offsets_are_parsed_across_any_chunk_boundary(cut: int) -> None:
    """FIND_SCRIPT's output split anywhere (the size record, a line): the same result as whole."""
    from logsleuth.sources.ssh.scripts import FoundOffsets

    output = b"size\t4096\x00" + b"".join(b"%d:Traceback\n" % offset for offset in range(0, 4000, 40))
    for body, size in ((output, 4096), (output.split(b"\x00", 1)[1], None)):  # a .gz prints no size record
        found = FoundOffsets()
        for at in range(0, len(body), cut):
            found.feed(body[at : at + cut])
        found.finish()
        assert (found.size, found.offsets()) == (size, list(range(0, 4000, 40)))
    bounded = FoundOffsets(limit=10)
    bounded.feed(output)
    assert bounded.too_many
    broken = FoundOffsets()
    broken.feed(b"grep: invalid option\n")
    broken.finish()
    assert broken.offsets() is None
