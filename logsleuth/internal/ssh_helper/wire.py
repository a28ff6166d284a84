"""The SSH helper's wire format: length-prefixed pickles between two processes of the same program.

A request one way, `(request_id, operation, *arguments)`; the other way, messages `(request_id, kind,
payload)`: any number of "progress" and "notice" (text) and, for a stream ("read" a range, "follow" a growing
log), "chunk" (bytes), then one answer:
"ok", "error" (a SourceError), "usage" (a UsageError) or "bug".  Several requests may be in flight at once,
so the messages of different requests interleave; those of one request keep their order.

A stream is flow-controlled, so that one stream's unread chunks neither fill the parent's memory nor hold up
the other requests' messages in the pipe: the helper sends at most STREAM_WINDOW bytes beyond what the parent
has acknowledged with `(request_id, "credit", size)`; `(request_id, "cancel")` ends a stream the parent
stopped reading.  Neither gets an answer.
"""

from __future__ import annotations

import os
import pickle
import threading
from typing import Any

ANSWERS = frozenset({"ok", "error", "usage", "bug"})  # the kinds that end a request
STREAM_CONTROL = frozenset({"credit", "cancel"})  # messages about a read in flight, not requests
STREAM_WINDOW = 4 << 20  # bytes of a read the helper sends ahead of the parent's acknowledgements
CREDIT_EVERY = 1 << 20  # the parent acknowledges what it has taken in steps of about this many bytes


class Sender:
    """One end of a pipe that several threads write to: each message goes out whole."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()

    def send(self, message: tuple[Any, ...]) -> None:
        data = _encoded(message)  # outside the lock: a large chunk pickles while another message goes out
        with self._lock:
            _write_all(self.fd, data)

_HEADER = 8  # bytes of big-endian message length

def send_message(fd: int, message: tuple[Any, ...]) -> None:
    _write_all(fd, _encoded(message))


def _encoded(message: tuple[Any, ...]) -> bytes:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return len(data).to_bytes(_HEADER, "big") + data


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _receive_exact(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    while size > 0:
        part = os.read(fd, min(size, 1 << 20))
        if not part:
            raise EOFError
        parts.append(part)
        size -= len(part)
    return b"".join(parts)


def receive_message(fd: int) -> tuple[Any, ...]:
    size = int.from_bytes(_receive_exact(fd, _HEADER), "big")
    message = pickle.loads(_receive_exact(fd, size))
    if not isinstance(message, tuple):
        raise EOFError  # not our protocol
    return message
