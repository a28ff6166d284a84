"""`--all` finds its anchors in one read of a local file, on two cores, in one process (issue 14, item 5).

The offsets are those `LC_ALL=C grep -boaF -e A -e B …` prints, which is how a remote file is searched: they
are checked against the system's grep itself.  The C search (memmem, two threads) and the pure-Python one
(bytes.find, used where memmem cannot be loaded) must agree with it and with each other.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from logsleuth.reading.scan import ANCHORS, FALLBACK_ANCHORS
from logsleuth.sources import anchors as anchor_search
from logsleuth.sources.anchors import find_anchors
from logsleuth.sources.pread import FileShrank
from tests.helpers import real_traceback

GREP = shutil.which("grep")
needs_grep = pytest.mark.skipif(GREP is None, reason="compares with the system grep")

# Anchors that overlap themselves ("rrorror" holds "rror" at 0 and 3: grep -o reports only the first),
# overlap each other ("Error" and "rror"), NUL bytes (grep -a), lines that are not text.
TRICKY = (
    b"[2026-11-29 10:00:00 TP0] Decode batch. #running-req: 3\n"
    b"\x00\x01binary \x00 rrorror rrorrorrorr\x00Traceback\n"
    b"TracebackTraceback rror\nError: TypeError\nKilled sigquit xception Exception\n"
)


def grep_offsets(path: Path, anchors: tuple[bytes, ...]) -> list[int]:
    assert GREP is not None
    patterns = [argument for anchor in anchors for argument in (b"-e", anchor)]
    run = subprocess.run([GREP, "-boaF", *patterns, str(path)], capture_output=True, env={"LC_ALL": "C"}, check=False)
    assert run.returncode in (0, 1), run.stderr
    return [int(line.partition(b":")[0]) for line in run.stdout.splitlines()]


def search(path: Path, anchors: tuple[bytes, ...], limit: int | None = None) -> list[int] | None:
    fd = os.open(path, os.O_RDONLY)
    try:
        return find_anchors(fd, os.fstat(fd).st_size, anchors, limit=limit)
    finally:
        os.close(fd)


@pytest.fixture(params=["memmem", "bytes.find"])
def finder(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param == "bytes.find":
        monkeypatch.setattr(anchor_search, "_memmem_finder", lambda rare: None)
    else:
        assert anchor_search._memmem_finder({}) is not None, "memmem should load on this system"
    return str(request.param)


@pytest.fixture(params=["one window", "small windows, two threads"])
def windows(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    if request.param != "one window":
        # Anchors cross window edges and the middle of the file; the halves are searched at once.
        monkeypatch.setattr(anchor_search, "WINDOW", 4096)
        monkeypatch.setattr(anchor_search, "THREADS_MIN_BYTES", 1)
    return str(request.param)


@needs_grep
@pytest.mark.parametrize("anchors", [ANCHORS, FALLBACK_ANCHORS, (b"rror", b"Error", b"rr")], ids=str)
def test_offsets_are_those_grep_prints(tmp_path: Path, finder: str, windows: str, anchors: tuple[bytes, ...]) -> None:
    path = tmp_path / "tricky.log"
    path.write_bytes(b"".join(TRICKY[i % 60 :] for i in range(2000)))  # every alignment to the windows
    expected = grep_offsets(path, anchors)
    assert len(expected) >= 2000
    assert search(path, anchors) == expected


@needs_grep
def test_an_anchor_byte_rare_at_the_start_but_common_later_still_finds_grep_s_offsets(
    tmp_path: Path, windows: str
) -> None:
    # The start of the log has no `_`, so `server_args=` is searched by its `_`; later, `_` is everywhere
    # (false hits past MEMCHR_HITS hand the window to memmem) and the real anchors sit among them.
    steady = b"[2025-08-01 12:00:00 TP0] Decode batch. #running-req: 3, #queue-req: 0\n" * 2000
    noisy = b"".join(b"weight_%d loaded_ok server_arg %d\n" % (i, i) for i in range(3000))
    log = tmp_path / "log"
    log.write_bytes(steady + noisy + b"x server_args=ServerArgs(tp_size=1)\n" + noisy + b"server_args=\n" + steady)
    anchors = (b"server_args=", b"Retract requests")
    assert anchor_search.rare_bytes(steady[: anchor_search.SAMPLE_FOR_RARITY], anchors)[b"server_args="] is not None
    assert search(log, anchors) == grep_offsets(log, anchors)
    assert len(grep_offsets(log, anchors)) == 2


@needs_grep
def test_match_across_the_middle_hides_what_starts_under_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The first half's last match ends in the second half: grep skips the "rror" that starts under it."""
    monkeypatch.setattr(anchor_search, "THREADS_MIN_BYTES", 1)
    middle = 5000
    path = tmp_path / "middle.log"
    path.write_bytes(b"x" * (middle - 2) + b"rrorror" + b"y" * 100 + b"rror" + b"z" * (middle - 109))
    assert os.path.getsize(path) // 2 == middle
    assert search(path, ANCHORS) == grep_offsets(path, ANCHORS) == [middle - 2, middle + 105]


@needs_grep
def test_the_limit_counts_matches_not_overlapping_occurrences(tmp_path: Path, finder: str, windows: str) -> None:
    path = tmp_path / "overlapping.log"
    path.write_bytes(b"rrorror\n" * 100)  # 200 occurrences of "rror", 100 matches
    assert len(grep_offsets(path, ANCHORS)) == 100
    assert search(path, ANCHORS, limit=100) == grep_offsets(path, ANCHORS)
    assert search(path, ANCHORS, limit=99) is None


def test_a_file_that_shrank_is_reported_from_the_second_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(anchor_search, "THREADS_MIN_BYTES", 1)
    monkeypatch.setattr(anchor_search, "WINDOW", 4096)
    path = tmp_path / "shrunk.log"
    path.write_bytes(b"Traceback\n" * 6000)
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(FileShrank):  # the first half is all there; the second ends early
            find_anchors(fd, 60_000 + 1000, ANCHORS)
    finally:
        os.close(fd)


# -- the whole process, on a log above the two-core threshold ------------------------------------------------


def _tree(pid: int) -> list[int]:
    found, pending = [], [pid]
    while pending:
        current = pending.pop()
        found.append(current)
        try:
            for task in Path(f"/proc/{current}/task").iterdir():
                pending.extend(int(child) for child in (task / "children").read_text().split())
        except OSError:
            continue
    return found


def _rss_kib(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return 0


def _sample_tree(pid: int, stop: threading.Event, seen: dict[str, int]) -> None:
    """Largest process count and largest sum of the tree's resident sizes seen at one time."""
    while not stop.is_set():
        pids = _tree(pid)
        seen["processes"] = max(seen["processes"], len(pids))
        seen["rss_kib"] = max(seen["rss_kib"], sum(_rss_kib(each) for each in pids))
        time.sleep(0.005)


@pytest.fixture(scope="module")
def large_log(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, int]]:
    """An SGLang log above PARALLEL_MIN_BYTES (where the search used to fork two helpers): decode lines, a real
    traceback every ~4 MiB."""
    traceback = real_traceback("def serve(batch):\n    assert batch, 'empty batch'\n\nserve([])\n", "scheduler.py")
    block = b"".join(
        b"[2026-11-29 10:00:%02d TP%d] Decode batch. #running-req: %d, #token: %d, gen throughput (token/s): 51.2\n"
        % (i % 60, i % 8, i % 64, i * 7)
        for i in range(40_000)
    )
    path = tmp_path_factory.mktemp("large") / "server.log"
    failures = 0
    with path.open("wb") as handle:
        while handle.tell() < anchor_search.PARALLEL_MIN_BYTES + (8 << 20):
            handle.write(block)
            handle.write(f"[2026-11-29 10:01:{failures % 60:02d} TP0] Scheduler hit an exception: {traceback}".encode())
            failures += 1
    yield path, failures
    path.unlink()


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="samples the process tree in /proc")
def test_all_on_a_large_log_forks_nothing_and_stays_small(large_log: tuple[Path, int]) -> None:
    path, failures = large_log
    command = [sys.executable, "-m", "logsleuth", "diagnose", "--all", "--format", "json", "--no-user-patterns"]
    proc = subprocess.Popen([*command, str(path)], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    seen = {"processes": 0, "rss_kib": 0}
    stop = threading.Event()
    sampler = threading.Thread(target=_sample_tree, args=(proc.pid, stop, seen), daemon=True)
    sampler.start()
    stdout, stderr = proc.communicate(timeout=120)
    stop.set()
    sampler.join()
    assert proc.returncode == 1, stderr
    report = json.loads(stdout)
    assert sum(failure["count"] for failure in report["failures"]) == failures
    assert seen["processes"] == 1  # the halves are searched by threads, not forked helpers
    assert 0 < seen["rss_kib"] <= 100_000


@needs_grep
def test_the_holes_of_a_sparse_file_are_skipped_and_the_offsets_stay_grep_s(tmp_path: Path) -> None:
    """A sparse log (a preallocated file, a 10 GiB bench log): its holes hold no anchor, so they are not read."""
    log = tmp_path / "sparse.log"
    with log.open("wb") as handle:
        handle.write(TRICKY)
        for hole in (40 << 20, 24 << 20):  # big enough for the two-thread search, windows fall in the holes
            handle.seek(hole, os.SEEK_CUR)
            handle.write(TRICKY)
        handle.truncate(handle.tell() + (8 << 20))  # and a hole at the end
    if os.stat(log).st_blocks * 512 >= os.stat(log).st_size:
        pytest.skip("this file system does not keep holes")
    calls: list[int] = []
    real_preadv = os.preadv

    def counting_preadv(fd: int, buffers: list[memoryview], offset: int) -> int:
        calls.append(sum(len(buffer) for buffer in buffers))
        return real_preadv(fd, buffers, offset)

    anchors = (*ANCHORS, *FALLBACK_ANCHORS)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(anchor_search.os, "preadv", counting_preadv)
        found = search(log, anchors)
    assert found == grep_offsets(log, anchors) and len(found) > 3
    assert sum(calls) < 8 << 20  # three small pieces of data, not the 72 MiB of zeros around them
