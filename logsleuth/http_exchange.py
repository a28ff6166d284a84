"""One HTTP request and its whole reply within one deadline: what `--explain` and the Slack webhook share.

http.client rather than urllib, for what urllib does on its own: it reads proxy variables (the webhook's URL is
a secret, and the case file goes only where the user said), follows redirects (as a GET, to any host), hands a
URL's `user:password@` to the resolver as part of the host name, and times out per socket read, so a server
dripping one byte at a time holds the report for ever.  Here the request goes to the URL's host and port and
nowhere else, a redirect is returned as the reply it is, the deadline covers the whole exchange (connect,
send, status line, headers, body), and whatever a broken server sends is one `MalformedReply` line.
"""

from __future__ import annotations

import http.client
import io
import socket
import ssl
import time
import urllib.parse
from dataclasses import dataclass
from email.message import Message


class ExchangeError(Exception):
    """The exchange failed; the message is one line that never quotes the server's bytes raw."""


class Unreachable(ExchangeError):
    """No connection, or it was reset before a reply: worth another try."""


class DeadlinePassed(ExchangeError):
    """The whole reply did not come within the deadline."""


class MalformedReply(ExchangeError):
    """What came back is not an HTTP reply logsleuth reads: asking again would get the same."""


@dataclass(frozen=True)
class Reply:
    """An HTTP reply, whole: status, reason, headers and body."""
    status: int
    reason: str
    headers: Message
    body: bytes


def _time_left(deadline: float) -> float:
    left = deadline - time.monotonic()
    if left <= 0:
        raise TimeoutError
    return left


class _DeadlineReader(io.RawIOBase):
    """The socket as http.client reads a reply from it, each read given only the time left."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        self._sock.settimeout(_time_left(self._deadline))
        return self._sock.recv_into(buffer)


class _DeadlineSocket:
    """What `http.client.HTTPResponse` takes: something with `makefile`."""

    def __init__(self, sock: socket.socket, deadline: float) -> None:
        self._sock = sock
        self._deadline = deadline

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self._sock, self._deadline))


def _malformed(error: http.client.HTTPException) -> MalformedReply:
    if isinstance(error, http.client.LineTooLong):
        return MalformedReply("the reply has a status or header line longer than 64 KiB")
    if isinstance(error, http.client.BadStatusLine):
        return MalformedReply("the reply does not start with an HTTP status line")
    if isinstance(error, http.client.IncompleteRead):
        return MalformedReply("the reply's body is cut short or its chunks are broken")
    if "headers" in str(error):
        return MalformedReply("the reply has more than 100 headers")
    return MalformedReply(f"the reply is not well-formed HTTP ({type(error).__name__})")


def _connection(url: urllib.parse.SplitResult, timeout: float) -> http.client.HTTPConnection:
    """To the URL's host and port only: its user information never reaches the resolver or the Host header."""
    host, port = url.hostname or "", url.port or (443 if url.scheme == "https" else 80)  # "::1" needs its port
    if url.scheme == "https":
        return http.client.HTTPSConnection(host, port, timeout=timeout, context=ssl.create_default_context())
    return http.client.HTTPConnection(host, port, timeout=timeout)


def _read_reply(connection: http.client.HTTPConnection, method: str, deadline: float, max_body: int) -> Reply:
    assert connection.sock is not None  # connected by request()
    response = http.client.HTTPResponse(_DeadlineSocket(connection.sock, deadline), method=method)  # type: ignore[arg-type]
    try:
        response.begin()
        body = response.read(max_body + 1)
        missing = response.length  # what Content-Length still promised: read(amount) does not raise for it
    finally:
        response.close()
    if missing and len(body) <= max_body:
        raise _malformed(http.client.IncompleteRead(body, missing))
    if len(body) > max_body:
        raise MalformedReply(f"the reply is larger than {max_body >> 10} KiB")
    return Reply(response.status, response.reason, response.msg, body)


def exchange(
    url: str,
    *,
    method: str = "POST",
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    deadline_seconds: float,
    max_body: int = 1 << 20,
) -> Reply:
    """`method` on `url` (http or https, no user information), and the whole reply within `deadline_seconds`.
    Any status is a Reply (a 3xx included: nothing is followed); anything else is an ExchangeError."""
    parts = urllib.parse.urlsplit(url)
    if parts.username is not None or parts.password is not None:
        raise ValueError("a URL with user information is the caller's to refuse")  # a bug, not an input
    deadline = time.monotonic() + deadline_seconds
    path = urllib.parse.urlunsplit(("", "", parts.path or "/", parts.query, ""))
    connection = _connection(parts, deadline_seconds)
    try:
        connection.connect()
        assert connection.sock is not None
        connection.sock.settimeout(_time_left(deadline))  # sendall: one timeout for all of the body
        connection.request(method, path, body=body, headers={**(headers or {}), "Connection": "close"})
        return _read_reply(connection, method, deadline, max_body)
    except TimeoutError:
        raise DeadlinePassed(f"no whole reply within {deadline_seconds:g} s") from None
    except socket.gaierror as error:
        raise Unreachable(f"cannot resolve {parts.hostname}: {error.strerror or error}") from None
    except http.client.RemoteDisconnected:  # before a status line: a restart, a proxy dropping it
        raise Unreachable("the server closed the connection without a reply") from None
    except http.client.HTTPException as error:
        raise _malformed(error) from None
    except ssl.SSLError as error:  # a certificate or TLS failure: asking again changes nothing
        raise ExchangeError(f"TLS failed: {error.reason or error}") from None
    except ConnectionRefusedError:
        raise Unreachable("cannot connect: connection refused") from None
    except OSError as error:  # reset, broken pipe, unreachable network
        raise Unreachable(f"the connection failed: {(error.strerror or str(error)).lower()}") from None
    finally:
        connection.close()
