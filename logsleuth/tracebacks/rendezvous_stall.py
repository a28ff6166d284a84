"""A rendezvous that never completed (issue 28, split 20's H-04): the paste shows torch's c10d warning that a connect to
the rendezvous store's server socket timed out, again and again, and then the user's interrupt, nothing else.

torch's store client retries its connect until the store's timeout (torch/csrc/distributed/c10d/socket.cpp
SocketConnectOp::tryConnectCore: `C10D_WARNING("The server socket on {} has timed out, will retry.", addr, err)` on
ETIMEDOUT, then ConnectResult::Retry), so each line is a connect to the store's address that got no answer.  A start
whose store is reachable prints none, or one before the store comes up; a run of them with nothing between is a start
waiting on an address no socket answers on: an address of an interface the packets do not reach (a VPN or tunnel
interface an engine picked for the host, a stale RDMA address: vllm-project/vllm-metal#58, #625).  The user's Ctrl-C
ends it (`^C`, then TCPStore's `TCP client failed to connect/validate to host … - retrying (…): Interrupted system call`
and the c10::Error's backtrace, or CPython's KeyboardInterrupt).

Only as the failure of a paste that shows no other, only for a run the paste ends on, and only when the user's
interrupt ends it: a run the paste merely stops in is a start-up still waiting (the start-up notice says so), and any
other line after the run says the start went on."""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.lazyre import compile_lazily
from logsleuth.models import ExceptionBlock, Failure, LogLine

RENDEZVOUS_HANG = "rendezvous hang"  # the failure's type: no exception was raised, the store never answered
SERVER_SOCKET_WORDS = "[c10d] The server socket on "
SERVER_SOCKET_TIMEOUT = compile_lazily(r"\[c10d\] (?P<msg>The server socket on \S{1,300} has timed out, will retry\.?)")
# Two timed-out connects in a row, then the interrupt: one is a store that came up late.
MIN_TIMEOUTS = 2
# The user's interrupt: the terminal's echo, CPython's KeyboardInterrupt, the system call it interrupted (EINTR's
# strerror, which TCPStore's retry warning quotes).
_INTERRUPT = compile_lazily(r"^\s*\^C|KeyboardInterrupt|Interrupted system call")
# The c10d lines the same wait prints between its timeouts (another connect's warning of the same store).
_SAME_WAIT = "[c10d] "


@dataclass
class _Run:
    """The run of timed-out connects: its first and last lines and how many."""

    first: LogLine
    last: LogLine
    count: int = 1


class RendezvousStall:
    """Fed every line of a paste; holds the run of store timeouts the paste ends on, and whether the user's interrupt
    ended it."""

    def __init__(self) -> None:
        self.run: _Run | None = None
        self.interrupted = False

    def feed(self, line: LogLine) -> None:
        text = line.text
        if not text or text.isspace():
            return
        timed_out = SERVER_SOCKET_WORDS in text and SERVER_SOCKET_TIMEOUT.search(text) is not None
        if timed_out and not self.interrupted:
            if self.run is None:
                self.run = _Run(line, line)
            else:
                self.run.count += 1
                self.run.last = line
            return
        if self.run is None:
            return
        if self.interrupted or (len(text) <= 4096 and _INTERRUPT.search(text) is not None):
            self.interrupted = True  # whatever follows the interrupt is its trailer
            return
        if _SAME_WAIT in text:
            return
        self.run = None  # any other line: the start went on, or the paste says more than the wait

    def stalled(self, ready_offset: int) -> Failure | None:
        """The run as the paste's failure, when the user's interrupt ended it and no readiness line came after it."""
        run = self.run
        if run is None or not self.interrupted or run.count < MIN_TIMEOUTS or ready_offset > run.first.offset:
            return None
        m = SERVER_SOCKET_TIMEOUT.search(run.last.text)
        assert m is not None
        return Failure(
            kind="line",
            exceptions=(ExceptionBlock(type=RENDEZVOUS_HANG, message=m["msg"]),),
            line=run.first.number,
            offset=run.first.offset,
            end_offset=run.last.offset + len(run.last.text) + 1,
            meta=run.first.meta,
            context=(),
        )
