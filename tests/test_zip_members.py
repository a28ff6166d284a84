"""The raise site indexes read without zipfile's directory parse (facts/zip_members.py): the same names and bytes as
zipfile gives, and zipfile itself for any zip that reader does not read."""

from __future__ import annotations

import zipfile
from pathlib import Path

import pytest

from logsleuth.facts.zip_members import ZipMembers, open_zip

FACTS = Path(__file__).resolve().parents[1] / "logsleuth" / "facts"


@pytest.mark.parametrize("path", sorted(FACTS.glob("raise_sites-*.zip")), ids=lambda path: path.name)
def test_every_shipped_index_reads_as_zipfile_reads_it(path: Path) -> None:
    ours, theirs = open_zip(path), zipfile.ZipFile(path)
    assert isinstance(ours, ZipMembers)
    assert ours.namelist() == theirs.namelist()
    for name in theirs.namelist()[:: max(1, len(theirs.namelist()) // 200)]:  # ~200 members of each
        assert ours.read(name) == theirs.read(name)
    with pytest.raises(KeyError):
        ours.read("no/such/member.json")


def test_stored_and_deflated_members_and_a_damaged_one(tmp_path: Path) -> None:
    path = tmp_path / "index.zip"
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("stored.json", b'{"a": 1}', compress_type=zipfile.ZIP_STORED)
        out.writestr("deflated.json", b'{"b": 2}' * 100, compress_type=zipfile.ZIP_DEFLATED)
    members = ZipMembers(path)
    assert members.read("stored.json") == b'{"a": 1}'
    assert members.read("deflated.json") == b'{"b": 2}' * 100
    data = bytearray(path.read_bytes())
    data[data.index(b'{"a": 1}') + 6] = ord("9")  # the stored member's bytes changed: its CRC no longer holds
    path.write_bytes(bytes(data))
    with pytest.raises(OSError, match="damaged"):
        ZipMembers(path).read("stored.json")


def test_a_zip_with_a_comment_is_read_by_zipfile(tmp_path: Path) -> None:
    path = tmp_path / "commented.zip"
    with zipfile.ZipFile(path, "w") as out:
        out.writestr("a.json", b"[]")
        out.comment = b"written elsewhere"
    reader = open_zip(path)
    assert isinstance(reader, zipfile.ZipFile)
    assert reader.read("a.json") == b"[]"
