"""Open an authenticated paramiko Transport the way OpenSSH would, with one-line errors.

We drive `paramiko.Transport` directly instead of `SSHClient` so that we can tell an unknown host key from a
changed one, list the auth methods we tried, pass our own socket (TCP_NODELAY, ProxyCommand, ProxyJump
channels) and keep every failure to one sentence.
"""

from __future__ import annotations

import errno
import socket
import time
from dataclasses import dataclass, field

import paramiko

from logsleuth.sources.base import Progress
from logsleuth.sources.options import SSHOptions
from logsleuth.sources.spec import ConnectionLost, RemoteError
from logsleuth.sources.ssh.config import HostSettings, resolve_host, split_jump
from logsleuth.sources.ssh.hostkeys import check_host_key, preferred_key_types
from logsleuth.sources.ssh.keepalive import Watchdog, stall_limits
from logsleuth.sources.ssh.retry import TransientConnectError, seconds, time_left, with_retries

# paramiko rekeys every 512 MiB, and a rekey pending when the channel closes deadlocks the transport for
# ~30 s (paramiko #822).  Rekeying after 1 TiB instead never triggers it; the server may still rekey.
_REKEY_LIMIT = 2**40
# aes-gcm is ~40% faster than paramiko's default aes128-ctr on bulk reads (FIELD-NOTES §8).
_FAST_CIPHERS = ("aes128-gcm@openssh.com", "aes256-gcm@openssh.com")
_MAX_JUMP_DEPTH = 8


@dataclass
class SSHConnection:
    """An open paramiko connection to a host, through its jump hosts."""

    settings: HostSettings
    transport: paramiko.Transport
    outer: list[SSHConnection] = field(default_factory=list)  # jump hosts, closed after us
    watchdog: Watchdog | None = None

    def lost(self, host: str) -> ConnectionLost:
        """The error for a read that ended because the connection went away: stalled (a watchdog closed it,
        ours or a jump host's) or lost (the server or the network did)."""
        stalled = self._stalled()
        if stalled is not None:
            return ConnectionLost(f"{host}: connection stalled after {seconds(stalled.limit)} s")
        return ConnectionLost(f"{host}: connection lost while reading")

    def _stalled(self) -> Watchdog | None:
        if self.watchdog is not None and self.watchdog.stalled:
            return self.watchdog
        return next((found for hop in self.outer if (found := hop._stalled()) is not None), None)

    def close(self) -> None:
        if self.watchdog is not None:
            self.watchdog.stop()
        self.transport.close()
        for hop in self.outer:
            hop.close()


def connect(
    alias: str,
    options: SSHOptions,
    config: paramiko.SSHConfig,
    *,
    user: str | None = None,
    port: int | None = None,
    progress: Progress | None = None,
) -> SSHConnection:
    """Connect and authenticate, retrying transient failures with backoff (never auth or host-key ones).

    The config's ConnectionAttempts (else options.connect_attempts) bounds the attempts, and options.deadline
    the whole: an attempt gets at most the time left, and no attempt starts once it has passed."""
    settings = resolve_host(config, alias, user=user, port=port)
    attempts = settings.connection_attempts or options.connect_attempts
    return with_retries(
        alias,
        attempts,
        options.deadline,
        lambda: _open(settings, options, config, jumps=None, depth=0),
        progress=progress,
        deadline_seconds=options.deadline_seconds,
    )


def _open(
    settings: HostSettings,
    options: SSHOptions,
    config: paramiko.SSHConfig,
    jumps: tuple[str, ...] | None,
    depth: int,
) -> SSHConnection:
    """A connection to `settings`, through its jump hosts (like `ssh -J a,b`: b is reached through a)."""
    if depth > _MAX_JUMP_DEPTH:
        raise RemoteError(f"{settings.alias}: ProxyJump chain longer than {_MAX_JUMP_DEPTH} hops (a loop?)")
    hops = settings.proxy_jump if jumps is None else jumps
    timeout = _attempt_timeout(settings, options)
    if hops:
        hop_host, hop_user, hop_port = split_jump(hops[-1])
        hop = resolve_host(config, hop_host, user=hop_user, port=hop_port)
        outer = _open(hop, options, config, jumps=hops[:-1] if len(hops) > 1 else None, depth=depth + 1)
        try:
            channel = outer.transport.open_channel(
                "direct-tcpip", (settings.hostname, settings.port), ("127.0.0.1", 0), timeout=timeout
            )
        except paramiko.ChannelException as exc:
            outer.close()
            raise TransientConnectError(
                f"{settings.alias}: jump host {hop.alias} could not connect to {settings.hostname} port "
                f"{settings.port} ({exc.text})"
            ) from None
        except (paramiko.SSHException, OSError) as exc:
            outer.close()
            raise TransientConnectError(f"{settings.alias}: jump host {hop.alias} failed: {exc}") from None
        return _handshake(settings, options, channel, timeout, outer=[outer])
    if settings.proxy_command:
        try:
            proxy = paramiko.ProxyCommand(settings.proxy_command)
        except (OSError, paramiko.SSHException) as exc:
            raise RemoteError(f"{settings.alias}: ProxyCommand failed to start: {exc}") from None
        return _handshake(settings, options, proxy, timeout, outer=[])
    return _handshake(settings, options, _tcp_socket(settings, timeout), timeout, outer=[])


def _attempt_timeout(settings: HostSettings, options: SSHOptions) -> float:
    """This hop's ConnectTimeout (else options.connect_timeout), cut to the time left before the deadline."""
    timeout = settings.connect_timeout or options.connect_timeout
    return time_left(settings.alias, _where(settings), timeout, options.deadline)


def _where(settings: HostSettings) -> str:
    return f"{settings.hostname} port {settings.port}"


def _tcp_socket(settings: HostSettings, timeout: float) -> socket.socket:
    try:
        addresses = socket.getaddrinfo(settings.hostname, settings.port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError):
        raise RemoteError(f"{settings.alias}: unknown host name '{settings.hostname}'") from None
    last_error: OSError | None = None
    for family, kind, proto, _, address in addresses:
        sock = socket.socket(family, kind, proto)
        sock.settimeout(timeout)
        try:
            sock.connect(address)
        except OSError as exc:
            sock.close()
            last_error = exc
            continue
        # Without TCP_NODELAY every small SSH request waits on delayed ACKs: 44 ms instead of 2 ms an exec.
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        return sock
    assert last_error is not None
    if isinstance(last_error, ConnectionRefusedError):
        raise TransientConnectError(f"{settings.alias}: connection refused by {_where(settings)}")
    if isinstance(last_error, TimeoutError):
        raise TransientConnectError(f"{settings.alias}: connection to {_where(settings)}", timeout=timeout)
    if last_error.errno in (errno.ECONNRESET, errno.EHOSTUNREACH, errno.ENETUNREACH):
        raise TransientConnectError(
            f"{settings.alias}: cannot reach {_where(settings)}: {last_error.strerror}"
        )
    raise RemoteError(f"{settings.alias}: cannot connect to {_where(settings)}: {last_error.strerror}")


def _still_waiting(transport: paramiko.Transport) -> bool:
    """The handshake thread is still reading the server's first words: the server has said nothing yet, and has not
    closed the connection either (that ends the thread at once).  The join lets a thread that is just exiting exit:
    on a loaded machine paramiko's start_client can give up on its own clock a moment before ours says the time
    is up, and the thread, not the clock, says which of the two happened."""
    transport.join(_EXITING_THREAD)
    return transport.is_alive()


_EXITING_THREAD = 0.05  # seconds a handshake thread that is ending takes at most (a closed socket, an EOF)


def _handshake(
    settings: HostSettings,
    options: SSHOptions,
    sock: socket.socket | paramiko.Channel | paramiko.ProxyCommand,
    timeout: float,
    outer: list[SSHConnection],
) -> SSHConnection:
    transport = paramiko.Transport(sock)
    try:
        transport.banner_timeout = timeout
        transport.handshake_timeout = timeout
        transport.auth_timeout = timeout
        transport.packetizer.REKEY_BYTES = _REKEY_LIMIT
        transport.packetizer.REKEY_PACKETS = _REKEY_LIMIT
        security = transport.get_security_options()
        ciphers = tuple(security.ciphers)
        security.ciphers = tuple(c for c in _FAST_CIPHERS if c in ciphers) + tuple(
            c for c in ciphers if c not in _FAST_CIPHERS
        )
        security.key_types = preferred_key_types(settings, options, tuple(security.key_types))
        started = time.monotonic()
        try:
            transport.start_client(timeout=timeout)
            server_key = transport.get_remote_server_key()  # raises too when the handshake thread died
        except (paramiko.SSHException, EOFError, OSError) as exc:
            if time.monotonic() - started >= timeout * 0.9 or _still_waiting(transport):
                raise TransientConnectError(
                    f"{settings.alias}: connection to {_where(settings)}", timeout=timeout, detail=" (no SSH handshake)"
                ) from None
            raise TransientConnectError(
                f"{settings.alias}: {_where(settings)} closed the connection during the SSH handshake ({exc})"
            ) from None
        check_host_key(settings, options, server_key)
        from logsleuth.sources.ssh.auth import authenticate

        authenticate(settings, transport)
        interval, limit = stall_limits(
            settings.server_alive_interval, settings.server_alive_count_max, options.read_timeout
        )
        return SSHConnection(settings, transport, outer, Watchdog(transport, interval, limit))
    except BaseException:
        transport.close()
        for hop in outer:
            hop.close()
        raise
