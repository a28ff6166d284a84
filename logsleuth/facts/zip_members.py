"""The members of one of logsleuth's own zips (the raise site indexes), read without zipfile's directory parse.

Why: `zipfile.ZipFile` builds a `ZipInfo` object per member when it opens a zip, in Python: ~9 ms for SGLang's index
(~2,000 members) and ~14 ms for vLLM's (~3,200), at every diagnose of a failure whose frames run through engine
code, which then reads one or two members.  This reads the central directory as bytes into a name -> place table
(a few ms less work per member) and a member with one seek and one inflate, checking its CRC as zipfile does.

Only the zips `make engine-index` writes: deflated or stored members, no encryption, no ZIP64.  Any other zip (or a
damaged one) is read by zipfile as before: `open_zip` says which reader it gives.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import Any, BinaryIO

_END = struct.Struct("<4s4H2LH")  # end of central directory record
_END_SIGNATURE = b"PK\x05\x06"
_ENTRY = struct.Struct("<4s6H3L5H2L")  # central directory file header
_ENTRY_SIGNATURE = b"PK\x01\x02"
_LOCAL = struct.Struct("<4s5H3L2H")  # local file header
_LOCAL_SIGNATURE = b"PK\x03\x04"
_STORED, _DEFLATED = 0, 8
_ENCRYPTED, _UTF8_NAME = 0x1, 0x800


class _NotPlain(Exception):
    """A zip this reader does not read (ZIP64, a comment, encryption, another compression): zipfile reads it."""


class ZipMembers:
    """A zip's members by name: `namelist()` and `read(name)`, as zipfile's (KeyError for a name it lacks)."""

    def __init__(self, path: Path) -> None:
        self._path = path
        with path.open("rb") as handle:
            self._places = _directory(handle)

    def namelist(self) -> list[str]:
        return list(self._places)

    def read(self, name: str) -> bytes:
        offset, method, size, stored_size, crc = self._places[name]
        with self._path.open("rb") as handle:
            handle.seek(offset)
            header = handle.read(_LOCAL.size)
            if len(header) != _LOCAL.size or header[:4] != _LOCAL_SIGNATURE:
                raise OSError(f"{self._path}: no local header for {name}")
            name_length, extra_length = _LOCAL.unpack(header)[-2:]
            handle.seek(name_length + extra_length, 1)
            stored = handle.read(stored_size)
        data = zlib.decompress(stored, -zlib.MAX_WBITS) if method == _DEFLATED else stored
        if len(data) != size or zlib.crc32(data) != crc:
            raise OSError(f"{self._path}: {name} is damaged (bad size or CRC)")
        return data


def _directory(handle: BinaryIO) -> dict[str, tuple[int, int, int, int, int]]:
    """name -> (local header offset, compression, size, compressed size, CRC) of every member, in the zip's order."""
    handle.seek(0, 2)
    length = handle.tell()
    if length < _END.size:
        raise _NotPlain
    handle.seek(length - _END.size)
    end = handle.read(_END.size)
    signature, disk, start_disk, _on_disk, count, directory_size, directory_offset, comment = _END.unpack(end)
    if signature != _END_SIGNATURE or disk or start_disk or comment or count == 0xFFFF or directory_offset == 0xFFFFFFFF:
        raise _NotPlain  # a comment, several disks or ZIP64
    handle.seek(directory_offset)
    directory = handle.read(directory_size)
    places: dict[str, tuple[int, int, int, int, int]] = {}
    at = 0
    unpack = _ENTRY.unpack_from
    for _ in range(count):
        (signature, _made, _needed, flags, method, _time, _date, crc, stored_size, size, name_length, extra_length,
         comment_length, _disk, _internal, _external, offset) = unpack(directory, at)
        if signature != _ENTRY_SIGNATURE or flags & _ENCRYPTED or method not in (_STORED, _DEFLATED):
            raise _NotPlain
        start = at + _ENTRY.size
        name = directory[start : start + name_length].decode("utf-8" if flags & _UTF8_NAME else "cp437")
        places[name] = (offset, method, size, stored_size, crc)
        at = start + name_length + extra_length + comment_length
    return places


def open_zip(path: Path) -> Any:
    """The zip's reader: ZipMembers, or zipfile.ZipFile for a zip it does not read (both: namelist, read)."""
    try:
        return ZipMembers(path)
    except (_NotPlain, struct.error, UnicodeDecodeError):
        import zipfile

        return zipfile.ZipFile(path)
