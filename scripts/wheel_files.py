"""Read chosen members of a released wheel straight from PyPI, without downloading the wheel (stdlib only).

A vLLM wheel is 200-500 MB, and the catalog scripts want a few hundred KB of Python sources from it.  A zip keeps
its index at the end, so three kinds of HTTP Range request are enough: the end-of-central-directory record, the
central directory (one read, usually well under 1 MB), then only the spans of the wanted members.  `zipfile`
reads them through `RangeFile`, a seekable file object, and checks each member's CRC as usual.

    wheel = release_wheel("vllm", "0.11.2")          # the file pip would pick, with its published sha256
    sources = read_members(wheel.url, lambda name: name.startswith("vllm/config"))

Every byte received is counted in `TRANSFER`, so a caller can say what a run cost.  A server that ignores Range
(answers 200 with the whole file) raises `RangesRefused` before the body is read; callers fall back to a full
download and say so.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import io
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Callable, Iterator
from http.client import HTTPException
from pathlib import Path
from typing import Any, TypeVar

INDEX = "https://pypi.org/pypi"
READ_AHEAD = 256 * 1024  # zipfile reads a member in 4 KiB steps; one request should serve many of them
TAIL = 64 * 1024  # the first read: the end-of-central-directory record, and a small wheel's whole directory
RETRIES = 3
RETRY_PAUSE = 1.0  # seconds before the first retry, doubled for each next one
TIMEOUT = 60
# The interpreter the catalogs' wheel choice is pinned to: pip on CPython 3.11 picked the wheels the shipped
# catalog records (cp311 builds where a release ships them, else the abi3 one), and pinning it keeps a rebuild
# on another Python byte-identical.
TARGET_PYTHON = (3, 11)
T = TypeVar("T")


class RangesRefused(RuntimeError):
    """The server sent the whole file to a Range request: reading a few members would download all of it."""


@dataclasses.dataclass
class Transfer:
    requests: int = 0
    bytes: int = 0


TRANSFER = Transfer()


@dataclasses.dataclass(frozen=True)
class Wheel:
    filename: str
    url: str
    sha256: str
    size: int


def _with_retries(action: Callable[[], T]) -> T:
    """`action()`, run again after a network error (a dropped connection, a short body, a timeout); an HTTP
    error status is final, a retry would get the same answer."""
    for attempt in range(RETRIES):
        try:
            return action()
        except urllib.error.HTTPError:
            raise
        except (OSError, HTTPException):
            time.sleep(RETRY_PAUSE * 2**attempt)
    return action()


def _open(url: str, headers: dict[str, str] | None = None) -> Any:
    request = urllib.request.Request(url, headers={"User-Agent": "logsleuth-wheel-files", **(headers or {})})
    return urllib.request.urlopen(request, timeout=TIMEOUT)


def _received(response: Any) -> bytes:
    body: bytes = response.read()
    TRANSFER.requests += 1
    TRANSFER.bytes += len(body)
    return body


_PROJECTS: dict[tuple[str, str], dict[str, Any]] = {}


def _project(name: str, index: str) -> dict[str, Any]:
    """The project's JSON document (all releases' files in one request), kept for the run."""
    if (index, name) not in _PROJECTS:
        def read() -> bytes:
            with _open(f"{index}/{name}/json") as response:
                return _received(response)

        _PROJECTS[index, name] = json.loads(_with_retries(read))
    return _PROJECTS[index, name]


def release_wheel(name: str, version: str, index: str = INDEX) -> Wheel:
    """The wheel of `name==version` pip would download on CPython 3.11 / Linux x86_64, from PyPI's JSON API.

    The project document is read rather than the per-release one: one request serves every release, and some
    PyPI mirrors serve only the project document.
    """
    document_url = f"{index}/{name}/json"
    files = _project(name, index)["releases"].get(version)
    if not files:
        raise LookupError(f"{name} {version}: no such release on {index}")
    chosen = pick_wheel([entry["filename"] for entry in files if entry["packagetype"] == "bdist_wheel"])
    if chosen is None:
        raise LookupError(f"{name} {version}: no wheel for CPython {TARGET_PYTHON[0]}.{TARGET_PYTHON[1]} on x86_64")
    entry = next(entry for entry in files if entry["filename"] == chosen)
    # Mirrors give relative URLs; resolving against the document's URL serves both.
    return Wheel(chosen, urllib.parse.urljoin(document_url, entry["url"]), entry["digests"]["sha256"], entry["size"])


def release_sdist(name: str, version: str, index: str = INDEX) -> Wheel:
    """The sdist of `name==version` (a `.tar.gz`), for a release that published no wheel pip would pick: some
    releases of flashinfer-python were sdists only.  Named `Wheel` for its fields (file name, URL, sha256, size)."""
    files = _project(name, index)["releases"].get(version) or []
    entry = next((entry for entry in files if entry["packagetype"] == "sdist" and entry["filename"].endswith(".tar.gz")), None)
    if entry is None:
        raise LookupError(f"{name} {version}: neither a wheel for CPython 3.11 on x86_64 nor an sdist on {index}")
    return Wheel(entry["filename"], urllib.parse.urljoin(f"{index}/{name}/json", entry["url"]), entry["digests"]["sha256"],
                 entry["size"])


def sdist_members(sdist: Wheel, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """The members of a downloaded sdist whose names, without the archive's top directory (`pkg-1.0/`), `wanted`
    accepts.  A tar has no index to read ranges by, so the whole file is read (a few MB) and checked against the
    sha256 PyPI publishes."""
    def read() -> bytes:
        with _open(sdist.url) as response:
            return _received(response)

    data = _with_retries(read)
    if hashlib.sha256(data).hexdigest() != sdist.sha256:
        raise OSError(f"{sdist.url}: the download does not match the sha256 PyPI publishes")
    found: dict[str, bytes] = {}
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:gz") as archive:
        for member in archive.getmembers():
            name = member.name.split("/", 1)[-1]
            if member.isfile() and wanted(name) and (handle := archive.extractfile(member)) is not None:
                found[name] = handle.read()
    return found


_WHEEL_NAME = re.compile(r"^(?P<rest>.+)-(?P<python>[^-]+)-(?P<abi>[^-]+)-(?P<platform>[^-]+)\.whl$")
_MANYLINUX = re.compile(r"^manylinux_(\d+)_(\d+)_x86_64$")
_LEGACY_MANYLINUX = {"manylinux1_x86_64": (2, 5), "manylinux2010_x86_64": (2, 12), "manylinux2014_x86_64": (2, 17)}


def _platform_rank(platform: str) -> tuple[int, ...] | None:
    """Higher ranks first, as pip orders them: the newest glibc a wheel needs, then plain linux, then any."""
    if platform == "any":
        return (0,)
    if platform == "linux_x86_64":
        return (1,)
    if platform in _LEGACY_MANYLINUX:
        return (2, *_LEGACY_MANYLINUX[platform])
    match = _MANYLINUX.match(platform)
    return (2, int(match[1]), int(match[2])) if match else None


def _tag_rank(python: str, abi: str, platform: str) -> tuple[int, ...] | None:
    """A sort key (higher is preferred) for one tag triple, or None when pip on the target would not install it.

    pip's order: the interpreter's own ABI, then abi3 from the newest minor down, then pure-Python builds for a
    platform, then any-platform ones; within each group the most specific platform first.
    """
    platform_rank = _platform_rank(platform)
    if platform_rank is None:
        return None
    major, minor = TARGET_PYTHON
    own = f"cp{major}{minor}"
    if abi == own and python == own and platform != "any":
        return (4, 0, *platform_rank)
    if abi == "abi3" and platform != "any":
        found = re.fullmatch(rf"cp{major}(\d+)", python)
        return (3, int(found[1]), *platform_rank) if found and int(found[1]) <= minor else None
    if abi == "none":
        found = re.fullmatch(rf"(?:py|cp){major}(\d*)", python)
        if found and (not found[1] or int(found[1]) <= minor):
            return (2 if platform != "any" else 1, int(found[1] or 0), *platform_rank)
    return None


def _build_tag(rest: str) -> tuple[int, str] | tuple[()]:
    """A re-upload's build number ("vllm-0.20.1-1-..."): pip prefers the highest among equally ranked tags."""
    parts = rest.split("-")
    if len(parts) < 3:
        return ()
    found = re.fullmatch(r"(\d+)(.*)", parts[2])
    return (int(found[1]), found[2]) if found else ()


def pick_wheel(filenames: list[str]) -> str | None:
    """The filename pip would choose among a release's wheels, or None when none installs on the target."""
    best: tuple[tuple[int, ...], tuple[int, str] | tuple[()], str] | None = None
    for filename in filenames:
        match = _WHEEL_NAME.match(filename)
        if match is None:
            continue
        ranks = [
            rank
            for python in match["python"].split(".")
            for abi in match["abi"].split(".")
            for platform in match["platform"].split(".")
            if (rank := _tag_rank(python, abi, platform)) is not None
        ]
        if ranks and (best is None or (max(ranks), _build_tag(match["rest"]), filename) > best):
            best = max(ranks), _build_tag(match["rest"]), filename
    return best[2] if best else None


class RangeFile(io.RawIOBase):
    """A read-only, seekable view of a remote file, each read served by an HTTP Range request.

    Fetched spans are kept (`prefetch` loads whole spans up front), and a read outside them fetches at least
    READ_AHEAD bytes, so zipfile's many small reads cost few requests.
    """

    def __init__(self, url: str) -> None:
        super().__init__()
        self.url = url
        self._position = 0
        # The first request is the file's tail: it holds the end-of-central-directory record (and, for a small
        # wheel, the whole central directory), and its Content-Range gives the size.
        tail = self._fetch(-TAIL, None)
        self._spans: list[tuple[int, bytes]] = [tail]
        self.size = tail[0] + len(tail[1])

    def _fetch(self, start: int, end: int | None) -> tuple[int, bytes]:
        """Bytes start..end inclusive (a negative start with end None: that many last bytes), checked against
        the answer's Content-Range."""
        wanted = f"bytes={start}" if end is None else f"bytes={start}-{end}"

        def read() -> tuple[int, bytes]:
            with _open(self.url, {"Range": wanted, "Accept-Encoding": "identity"}) as response:
                if response.status != 206:
                    raise RangesRefused(f"{self.url}: the server answered a Range request with "
                                        f"HTTP {response.status}, not 206 Partial Content")
                match = re.fullmatch(r"bytes (\d+)-(\d+)/(\d+|\*)", response.headers.get("Content-Range", ""))
                if match is None:
                    raise RangesRefused(f"{self.url}: a 206 answer without a usable Content-Range")
                body = _received(response)
            first, last = int(match[1]), int(match[2])
            if len(body) != last - first + 1 or (end is not None and first != start):
                raise OSError(f"{self.url}: asked {wanted}, got {len(body)} bytes at {first}")
            return first, body

        return _with_retries(read)

    def prefetch(self, spans: list[tuple[int, int]]) -> None:
        """Load [start, end) spans, merging neighbours so adjacent members come in one request."""
        merged: list[list[int]] = []
        for start, end in sorted(spans):
            if merged and start <= merged[-1][1] + READ_AHEAD // 4:
                merged[-1][1] = max(merged[-1][1], end)
            else:
                merged.append([start, end])
        for start, end in merged:
            if end > start:
                self._spans.append(self._fetch(start, min(end, self.size) - 1))

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self.size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        count = min(len(view), self.size - self._position)
        if count <= 0:
            return 0
        start, data = self._span_holding(self._position, count)
        offset = self._position - start
        view[:count] = data[offset:offset + count]
        self._position += count
        return count

    def _span_holding(self, position: int, count: int) -> tuple[int, bytes]:
        for start, data in self._spans:
            if start <= position and position + count <= start + len(data):
                return start, data
        span = self._fetch(position, min(self.size, position + max(count, READ_AHEAD)) - 1)
        self._spans.append(span)
        return span


def read_members(url: str, wanted: Callable[[str], bool]) -> dict[str, bytes]:
    """The contents of the archive members whose names `wanted` accepts, read over HTTP Range requests."""
    return read_chosen(url, lambda entries: [entry for entry in entries if wanted(entry.filename)])


def read_chosen(url: str, choose: Callable[[list[zipfile.ZipInfo]], list[zipfile.ZipInfo]]) -> dict[str, bytes]:
    """The contents of the members `choose` picks from the archive's directory (their names, sizes and CRCs: a
    caller that keeps contents by CRC reads only those it lacks), read over HTTP Range requests."""
    with RangeFile(url) as remote, zipfile.ZipFile(remote) as archive:
        entries = sorted(archive.infolist(), key=lambda info: info.header_offset)
        chosen = {entry.filename for entry in choose(entries)}
        # A member's local header and data end where the next member (or the central directory) begins.
        ends = [entry.header_offset for entry in entries[1:]] + [archive.start_dir]
        remote.prefetch([(entry.header_offset, end) for entry, end in zip(entries, ends, strict=True) if entry.filename in chosen])
        return {entry.filename: archive.read(entry) for entry in entries if entry.filename in chosen}


@contextlib.contextmanager
def downloaded_wheel(name: str, version: str) -> Iterator[Path]:
    """The whole wheel of `name==version`, downloaded with `pip download --no-deps` into a temporary directory and
    deleted on leaving: the fallback when a server refuses Range requests."""
    with tempfile.TemporaryDirectory(prefix="logsleuth-wheel-") as tmp:
        subprocess.run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "--quiet",
             f"{name}=={version}", "-d", tmp],
            check=True,
        )
        (wheel,) = Path(tmp).glob("*.whl")
        yield wheel
