"""scripts/wheel_files.py: members of a remote zip read over HTTP Range requests, against a real HTTP server on
127.0.0.1 serving a real zip built here (python's http.server ignores Range, so the handler below implements it)."""

from __future__ import annotations

import contextlib
import http.server
import io
import random
import re
import sys
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import wheel_files  # noqa: E402


def _wheel_bytes() -> tuple[bytes, dict[str, bytes]]:
    """A wheel-shaped zip: a few small sources wanted, next to many large incompressible members that are not."""
    noise = random.Random(7)
    wanted = {f"pkg/config/part{number}.py": f"FLAG_{number} = {number}\n".encode() * 50 for number in range(5)}
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for number in range(40):
            archive.writestr(f"pkg/_kernels/lib{number}.so", noise.randbytes(100_000))
            if number % 8 == 0:
                name = f"pkg/config/part{number // 8}.py"
                archive.writestr(name, wanted[name])
    return buffer.getvalue(), wanted


class _Server:
    def __init__(self, body: bytes, ranges: bool, drops: int) -> None:
        self.body, self.ranges, self.sent, self.drops = body, ranges, 0, drops
        server = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
                if server.drops:  # a flaky network: hang up without an answer
                    server.drops -= 1
                    self.close_connection = True
                    return
                body = server.body
                asked = re.fullmatch(r"bytes=(\d*)-(\d*)", self.headers.get("Range", ""))
                if not server.ranges or asked is None:
                    status, first, last = 200, 0, len(body) - 1
                elif asked[1]:
                    status, first, last = 206, int(asked[1]), min(int(asked[2] or len(body) - 1), len(body) - 1)
                else:  # a suffix range: the last N bytes
                    status, first, last = 206, max(0, len(body) - int(asked[2])), len(body) - 1
                self.send_response(status)
                self.send_header("Content-Length", str(last - first + 1))
                if status == 206:
                    self.send_header("Content-Range", f"bytes {first}-{last}/{len(body)}")
                self.end_headers()
                server.sent += last - first + 1  # counted before the write, which the client may outrun
                # a client refused a whole-file answer hangs up without reading it
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.wfile.write(body[first:last + 1])

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/pkg-1.0-py3-none-any.whl"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.05,), daemon=True)


@pytest.fixture
def serve() -> Iterator[object]:
    started: list[_Server] = []

    def start(body: bytes, ranges: bool = True, drops: int = 0) -> _Server:
        server = _Server(body, ranges, drops)
        server.thread.start()
        started.append(server)
        return server

    yield start
    for server in started:
        server.httpd.shutdown()
        server.httpd.server_close()


def test_reads_only_the_wanted_members_and_few_bytes(serve) -> None:
    body, wanted = _wheel_bytes()
    server = serve(body)
    before = wheel_files.TRANSFER.bytes
    members = wheel_files.read_members(server.url, lambda name: name.startswith("pkg/config/"))
    assert members == wanted
    received = wheel_files.TRANSFER.bytes - before
    assert received == server.sent  # the counter counts what the server sent
    assert received < len(body) // 4, (received, len(body))


def test_dropped_connections_are_retried(serve, monkeypatch) -> None:
    monkeypatch.setattr(wheel_files, "RETRY_PAUSE", 0.0)
    body, wanted = _wheel_bytes()
    server = serve(body, drops=2)
    assert wheel_files.read_members(server.url, lambda name: name.startswith("pkg/config/")) == wanted
    assert server.drops == 0


def test_a_corrupt_member_fails_its_crc(serve) -> None:
    body, wanted = _wheel_bytes()
    source = wanted["pkg/config/part1.py"]
    # zipfile stored the member deflated; flip one byte inside its compressed data
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        info = archive.getinfo("pkg/config/part1.py")
    data_start = info.header_offset + 30 + len(info.filename.encode()) + len(info.extra)
    spoiled = bytearray(body)
    spoiled[data_start + info.compress_size // 2] ^= 0x55
    server = serve(bytes(spoiled))
    with pytest.raises((zipfile.BadZipFile, ValueError, OSError)):
        members = wheel_files.read_members(server.url, lambda name: name == "pkg/config/part1.py")
        assert members["pkg/config/part1.py"] == source


def test_a_server_without_ranges_is_refused_clearly(serve) -> None:
    body, _ = _wheel_bytes()
    server = serve(body, ranges=False)
    with pytest.raises(wheel_files.RangesRefused, match="not 206 Partial Content"):
        wheel_files.read_members(server.url, lambda name: True)


def test_the_wheel_pip_would_pick() -> None:
    pick = wheel_files.pick_wheel
    assert pick(["sglang-0.4.0-py3-none-any.whl"]) == "sglang-0.4.0-py3-none-any.whl"
    linux = "vllm-1.0-cp38-abi3-manylinux_2_31_x86_64.whl"
    assert pick(["vllm-1.0-cp38-abi3-manylinux_2_31_aarch64.whl", linux]) == linux
    own = "vllm-1.0-cp311-cp311-manylinux_2_34_x86_64.whl"
    assert pick([linux, own, "vllm-1.0-cp312-cp312-manylinux_2_34_x86_64.whl"]) == own
    rebuilt = "vllm-1.0-1-cp38-abi3-manylinux_2_31_x86_64.whl"
    assert pick([linux, rebuilt]) == rebuilt
    assert pick(["vllm-1.0-cp38-abi3-manylinux1_x86_64.whl", linux]) == linux
    assert pick(["vllm-1.0-cp38-abi3-macosx_11_0_arm64.whl"]) is None
