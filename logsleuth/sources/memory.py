"""Bytes held in memory as a source (tests, pasted text)."""

from __future__ import annotations

from collections.abc import Iterator

from logsleuth.sources.base import CHUNK_SIZE


class MemorySource:
    host: str | None = None
    note: str | None = None  # what the report must say of where these bytes came from (SourceInfo.note)

    def __init__(self, data: bytes, name: str = "<text>") -> None:
        self.name = name
        self._data = data

    def size(self) -> int:
        return len(self._data)

    def read_range(self, start: int, end: int) -> Iterator[bytes]:
        end = min(end, len(self._data))
        for position in range(max(0, start), end, CHUNK_SIZE):
            yield self._data[position : min(end, position + CHUNK_SIZE)]

    def close(self) -> None:
        pass
