"""The SSH helper's wire format: length-prefixed pickles between two processes of the same program.

A request one way; the other way, its answer ("ok", "error" for a SourceError, "usage" for a UsageError,
"bug"), after any number of ("progress", text), ("notice", text) and, for a read, ("chunk", bytes).
"""

from __future__ import annotations

import os
import pickle
from typing import Any

_HEADER = 8  # bytes of big-endian message length

def send_message(fd: int, message: tuple[Any, ...]) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    view = memoryview(len(data).to_bytes(_HEADER, "big") + data)
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
