"""A raw-socket HTTP server on 127.0.0.1 that answers whatever bytes a test gives it: a malformed reply no
real HTTP server library would send (a bad status line, too many headers, a broken chunk), or a reply dripped
one byte at a time.  It records each request it read, so a test can see what was sent and where."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field


@dataclass
class RawReply:
    """What the server sends to every request: `head` at once, then `drip` one byte per `drip_every` seconds
    (forever when `drip_forever`), then it closes the connection."""

    head: bytes = b""
    drip: bytes = b""
    drip_every: float = 0.1
    drip_forever: bool = False
    requests: list[bytes] = field(default_factory=list)  # each request's head and body, as received


def _read_request(connection: socket.socket) -> bytes:
    """The request's head and, after it, as many body bytes as its Content-Length says."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = connection.recv(65536)
        if not chunk:
            return data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next(
        (int(line.split(b":", 1)[1]) for line in head.split(b"\r\n") if line.lower().startswith(b"content-length:")),
        0,
    )
    while len(body) < length:
        chunk = connection.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body


def _answer(connection: socket.socket, reply: RawReply, stop: threading.Event) -> None:
    with connection:
        connection.settimeout(30)
        try:
            reply.requests.append(_read_request(connection))
            connection.sendall(reply.head)
            position = 0
            while not stop.is_set() and (reply.drip_forever or position < len(reply.drip)):
                time.sleep(reply.drip_every)
                connection.sendall(reply.drip[position % max(1, len(reply.drip)) :][:1] or b" ")
                position += 1
        except OSError:  # the client gave up (its deadline) or closed early: what the tests want of it
            pass


@contextmanager
def raw_http_server(reply: RawReply) -> Iterator[str]:
    """The server in a thread; yields `http://127.0.0.1:PORT`.  One thread per connection, so a client that
    retries is answered again."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.settimeout(0.05)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                connection, _ = listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            threading.Thread(target=_answer, args=(connection, reply, stop), daemon=True).start()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


def http_reply(status_line: bytes, headers: list[bytes], body: bytes) -> bytes:
    """A reply as bytes, with the Content-Length of `body` unless the headers frame it otherwise."""
    framed = any(h.lower().startswith((b"content-length:", b"transfer-encoding:")) for h in headers)
    lines = [status_line, *headers, *([] if framed else [b"Content-Length: %d" % len(body)]), b"Connection: close"]
    return b"\r\n".join(lines) + b"\r\n\r\n" + body
