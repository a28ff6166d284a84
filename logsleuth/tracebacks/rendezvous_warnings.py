"""torch's c10d warnings that a socket to the rendezvous store timed out, was refused or was closed (issue 28, stop 56):
what sits right above a traceback the paste cut before its exception line, when ranks of a multi-node launch never
reached the store on the first node (split 19's B-03, sgl-project/sglang#7478: a scheduler's traceback cut under
`[c10d] waitForInput: socket … remote=[node-0…]:20000 timed out after 1800000ms`).

Only the lines torch's own code prints, through C10D_WARNING/C10D_ERROR (which put `[c10d] ` before the message), never
any line with "timeout" in it:

- torch/csrc/distributed/c10d/socket.cpp SocketImpl::waitForInput: "waitForInput: poll for socket {} returned 0, likely
  a timeout" and "waitForInput: socket {} timed out after {}ms" (torch 2.4 and later);
- socket.cpp SocketConnectOp::tryConnect: "The client socket has failed to connect to {} (errno: {} - {})." and
  SocketConnectOp::throwTimeoutError: "The client socket has timed out after {} while trying to connect to {}.";
- TCPStore.cpp/Utils.hpp's socket reads and writes of the store: "recvValue failed on SocketImpl(…): Connection reset
  by peer", "sendBytes failed on SocketImpl(…): Broken pipe" (tests/fixtures/wild/tcpstore-connection-reset)."""

from __future__ import annotations

from logsleuth.lazyre import compile_lazily

RENDEZVOUS_WARNING_WORDS = "[c10d] "
RENDEZVOUS_WARNING = compile_lazily(
    r"\[c10d\] (?:waitForInput: (?:socket .{1,400}? timed out after \d{1,9}ms|poll for socket .{1,400}? returned 0, "
    r"likely a timeout)|The client socket has (?:failed to connect to|timed out after) .{1,400}"
    r"|(?:recvValue|recvBytes|sendBytes|recvVector) failed on SocketImpl.{0,400}?"
    r"(?:Connection reset by peer|Connection refused|Broken pipe|timed out))"
)


# errno 97 (EAFNOSUPPORT): torch tried the name's IPv6 address on a host without IPv6 and goes on to its IPv4 one, a
# warning runs that work print too (microsoft/vidur#49's reached 100%)
_FELL_BACK = "(errno: 97 "


def rendezvous_warning(text: str) -> bool:
    """Whether the line is torch's c10d warning of a store socket that timed out, was refused or was closed."""
    return (RENDEZVOUS_WARNING_WORDS in text and len(text) <= 3000 and _FELL_BACK not in text
            and RENDEZVOUS_WARNING.search(text) is not None)
