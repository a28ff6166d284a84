"""Follow a local file as it grows (`watch PATH`): from an offset, across truncation and rotation, and before it
exists.

On Linux the follower sleeps on inotify (through ctypes on the C library: no dependency), so a write is seen as
soon as it happens and an idle log costs no system calls; elsewhere, or when inotify cannot be had (its
per-user watch limit reached), it polls.  Either way it yields b"" at least every `poll` seconds so that the
caller keeps time (--timeout, --stall, settle), and RESTART when the file was truncated or replaced.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
import struct
import sys
import time
from collections.abc import Callable, Generator, Iterator

from logsleuth.sources.base import CHUNK_SIZE, RESTART

Follow = Callable[[int], Iterator[bytes]]

POLL_SECONDS = 0.1  # the longest sleep between two looks: the caller's clock ticks at least this often
# With inotify, look at the file anyway after this many quiet polls: a network file system (NFS, Lustre) written
# from another host sends no events, and a change found this way switches the follower to polling.
LOOK_ANYWAY_TICKS = 10

# <sys/inotify.h>
_IN_MODIFY = 0x002
_IN_ATTRIB = 0x004
_IN_CLOSE_WRITE = 0x008
_IN_MOVED_FROM = 0x040
_IN_MOVED_TO = 0x080
_IN_CREATE = 0x100
_IN_DELETE = 0x200
_IN_NONBLOCK = os.O_NONBLOCK
_IN_CLOEXEC = os.O_CLOEXEC
# Everything that can change what PATH names or holds, watched on its directory (a rotation replaces the file).
_DIRECTORY_EVENTS = _IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
_EVENT_HEADER = struct.Struct("iIII")  # wd, mask, cookie, len; then `len` bytes of NUL-padded name


class _Inotify:
    """One inotify descriptor watching directories; `wait(timeout)` returns True once one of the watched entries
    (a name in a directory) changed, False when the timeout passed first."""

    def __init__(self, libc: ctypes.CDLL, entries: set[tuple[str, str]]) -> None:
        self._fd = libc.inotify_init1(_IN_NONBLOCK | _IN_CLOEXEC)
        if self._fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self._names: dict[int, set[bytes]] = {}  # watch descriptor -> the names in its directory we follow
        for directory, name in entries:
            wd = libc.inotify_add_watch(self._fd, os.fsencode(directory), _DIRECTORY_EVENTS)
            if wd < 0:
                errno = ctypes.get_errno()
                os.close(self._fd)
                raise OSError(errno, "inotify_add_watch")
            self._names.setdefault(wd, set()).add(os.fsencode(name))

    def wait(self, timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while True:
            readable, _, _ = select.select([self._fd], [], [], max(0.0, deadline - time.monotonic()))
            if not readable:
                return False
            if self._names_ours(os.read(self._fd, 64 << 10)):
                return True

    def _names_ours(self, events: bytes) -> bool:
        position = 0
        while position + _EVENT_HEADER.size <= len(events):
            wd, _, _, length = _EVENT_HEADER.unpack_from(events, position)
            start = position + _EVENT_HEADER.size
            if events[start : start + length].rstrip(b"\0") in self._names.get(wd, ()):
                return True
            position = start + length
        return False

    def close(self) -> None:
        os.close(self._fd)


def _libc() -> ctypes.CDLL | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
        libc.inotify_init1  # noqa: B018 - present since glibc 2.9 / musl; absent: poll
    except (OSError, AttributeError):
        return None
    return libc


class Waiter:
    """Sleeps until PATH may have changed: on inotify when it can, else for `poll` seconds."""

    def __init__(self, path: str, poll: float, *, use_inotify: bool = True) -> None:
        self.poll = poll
        self._inotify: _Inotify | None = None
        libc = _libc() if use_inotify else None
        if libc is not None:
            # The name, and what it points to when it is a symbolic link (writes change the target, not the link).
            entries = {os.path.split(os.path.abspath(path)), os.path.split(os.path.realpath(path))}
            try:
                self._inotify = _Inotify(libc, entries)
            except OSError:
                self._inotify = None  # the directory does not exist yet, or the watch limit is reached: poll

    @property
    def uses_inotify(self) -> bool:
        return self._inotify is not None

    def missed(self) -> None:
        """Data was found on a look inotify did not prompt.  Unless its event is only now arriving (the write
        came just after the wait ended), inotify misses this file's changes (a network file system written from
        another host tells it nothing): poll from now on."""
        if self._inotify is not None and not self._inotify.wait(0):
            self.close()

    def wait(self) -> bool:
        """Sleep until PATH may have changed.  False: it did not (inotify said nothing for `poll` seconds), so
        there is no need to look at it; True: it changed, or (polling) it may have."""
        if self._inotify is not None:
            return self._inotify.wait(self.poll)
        time.sleep(self.poll)
        return True

    def close(self) -> None:
        if self._inotify is not None:
            self._inotify.close()
            self._inotify = None


def wait_for_file(path: str, *, poll: float = POLL_SECONDS, use_inotify: bool = True) -> Iterator[bool]:
    """Yield False on every look until PATH exists, then True once (the caller keeps time between looks)."""
    waiter = Waiter(path, poll, use_inotify=use_inotify)
    try:
        while not os.path.exists(path):
            yield False
            if not waiter.uses_inotify:
                waiter.close()
                waiter = Waiter(path, poll, use_inotify=use_inotify)  # its directory may exist by now
            waiter.wait()
        yield True
    finally:
        waiter.close()


def _sleep(waiter: Waiter) -> Generator[bytes, None, bool]:
    """Wait for the file to change, yielding b"" at every `poll` so the caller keeps time.  Returns True when it
    stopped waiting without being told of a change: every LOOK_ANYWAY_TICKS polls, in case inotify misses
    changes on this file system."""
    for _ in range(LOOK_ANYWAY_TICKS):
        if waiter.wait():
            return False
        yield b""
    return True


def follow_local(path: str, *, poll: float = POLL_SECONDS, use_inotify: bool = True) -> Follow:
    """Follow a local file from an offset; survives truncation and rotation (re-opens by name).

    Yields b"" on every idle wake-up (at least every `poll` seconds) so the caller can keep time."""

    def chunks(offset: int) -> Iterator[bytes]:
        waiter = Waiter(path, poll, use_inotify=use_inotify)
        # Unbuffered: one read is one system call, so what a write added is handed on before the next look (a
        # buffered read loops until its size or the end, and would join a write that lands meanwhile).
        handle = open(path, "rb", buffering=0)  # noqa: SIM115 - reopened on rotation
        inode = os.fstat(handle.fileno()).st_ino
        handle.seek(offset)
        unannounced = False  # this look was not prompted by inotify
        try:
            while True:
                data = handle.read(CHUNK_SIZE)
                if data:
                    if unannounced:
                        waiter.missed()
                        unannounced = False
                    yield data
                    continue
                try:
                    current = os.stat(path)
                except FileNotFoundError:
                    current = None  # rotated away, the new file not there yet
                if current is not None and (current.st_ino != inode or current.st_size < handle.tell()):
                    # Rotated (new file under the name) or truncated: start over at its beginning.
                    handle.close()
                    handle = open(path, "rb", buffering=0)  # noqa: SIM115
                    inode = os.fstat(handle.fileno()).st_ino
                    yield RESTART
                    continue
                yield b""
                unannounced = yield from _sleep(waiter)
        finally:
            handle.close()
            waiter.close()

    return chunks
