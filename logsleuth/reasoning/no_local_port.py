"""A connection that could not be opened because this host had no local port left for it (issue 28, class 6).

connect(2) fails with EADDRNOTAVAIL, "Cannot assign requested address", when the socket was not bound and "all
port numbers in the ephemeral port range are currently in use" (man 2 connect, ERRORS).  The peer is never asked: the
failure is this host's, from many short-lived outgoing connections (each closed one keeps its local port in TIME_WAIT
for a while), not an address that is unreachable.  Read only where the error is a connect's: asio's `connect: <strerror>`
(Mooncake's TcpTransport::startTransfer logs "encountered an ASIO exception. … Exception: connect: Cannot assign
requested address", kvcache-ai/Mooncake mooncake-transfer-engine/src/transport/tcp_transport/tcp_transport.cpp), a
Rust `kind: Connect` error with `AddrNotAvailable`; a bind's EADDRNOTAVAIL (an address that is not this host's) is
another failure and is left alone.

The KV-cache transfer of a disaggregated deployment is where it shows under load: Mooncake's TCP transport opened a
new connection for every transfer unless its connection pool is on (tcp_transport.cpp: `MC_TCP_ENABLE_CONNECTION_POOL`,
off by default where it was added, on by default in later releases), so a sustained load of transfers runs the host out
of local ports (split 20's B-01, sgl-project/sglang#23272: a 2P2D deployment failing under load; NIXL as the transfer
backend ran stable).  The advice: the transport's connection reuse, the host's local port range, and the release's
other transfer backends as its catalog lists them."""

from __future__ import annotations

from logsleuth.fixes import catalog as catalogs
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix, LaunchInfo
from logsleuth.reasoning.evidence import Evidence
from logsleuth.versions import version_key

RULE_ID = "rule-network-no-local-port"
# The connect's own words before the error on the same line, bounded: asio's "connect: …", Rust's "kind: Connect, cause:
# Some(Os { code: 99, kind: AddrNotAvailable, … })", a "connect() failed" / "while connecting" wording.
_NO_LOCAL_PORT = compile_lazily_regex(
    r"(?i)\bconnect(?:ing|\(\))?\b[^\n]{0,100}?(?:Cannot assign requested address\]?|EADDRNOTAVAIL|AddrNotAvailable)"
)
# torch's TCPStore / c10d client connecting to the rendezvous: errno 99 there is most often a destination of an address
# family this host has no source address in (a name resolving to IPv6 on an IPv4-only host, pytorch/PiPPy#158), and
# the rendezvous advice covers it (network._unreachable), not port exhaustion.
_RENDEZVOUS_CONNECT = compile_lazily_regex(
    r"(?i)TCPStore|\bc10d\b|DistNetworkError|DistStoreError|client socket has failed to connect|socket\.cpp|"
    r"rendezvous|init_process_group")
# A failure that is the transfer's own (SGLang's disaggregation/prefill.py "Prefill transfer failed for request …",
# KVTransferError's str, disaggregation/common/conn.py): the error records printed right before it are its cause.
_TRANSFER_FAILURE = compile_lazily_regex(r"KVTransferError|Prefill transfer failed|Failed to send kv chunk")
# A warning-level record (glog's W, Python logging's WARNING) is never what ended the process.
_WARNING_RECORD = compile_lazily_regex(r"^\s*(?:\S+\s+\|\s+)?(?:W\d{4}\s|\[W\s|.{0,40}\bWARN(?:ING)?\b)")
# A destination this host may have no source address for: a name that resolves to IPv6 ::1 (localhost) or an IPv6
# literal, where the container or host has IPv6 off (moby/moby#37616).
_V6_DESTINATION = compile_lazily_regex(r"(?i)\blocalhost\b|\[[0-9a-f:]*:[0-9a-f:]*\]|::1\b")
_TRANSFER = compile_lazily_regex(
    r"(?i)KVTransfer|kv[ _-]?(?:cache )?transfer|send kv|Prefill transfer|TcpTransport|tcp_transport|mooncake|"
    r"\bnixl\b|disaggregat"
)
_MOONCAKE_TCP = compile_lazily_regex(r"TcpTransport|tcp_transport\.cpp")
_BACKEND_FLAG = "--disaggregation-transfer-backend"
_GIVEN_BACKEND = compile_lazily_regex(r"--disaggregation-transfer-backend[= ]['\"]?(?P<backend>[\w-]+)")
SOURCES = (
    "man 2 connect, ERRORS: EADDRNOTAVAIL (Internet domain sockets) the socket had not been bound and all port numbers "
    "in the ephemeral port range are in use",
    "kvcache-ai/Mooncake mooncake-transfer-engine/src/transport/tcp_transport/tcp_transport.cpp: TcpTransport::"
    "startTransfer's ASIO exception; getConnection's pool behind MC_TCP_ENABLE_CONNECTION_POOL",
    "sgl-project/sglang#23272 (Mooncake TCP transfers failing under load with connect: Cannot assign requested "
    "address; NIXL stable)",
)


def no_local_port(evidence: Evidence) -> Diagnosis | None:
    """A connect that failed with EADDRNOTAVAIL in the failure or the error records printed with it."""
    failure = evidence.failure
    own = evidence.message_text
    # the failure's own message; the transfer's error records printed with it only when the failure is a transfer's
    # that they explain; never a warning, never an unrelated earlier failure's
    # (a transfer engine's own error record, Mooncake's glog E line, is read as a failure of its own just before)
    records = tuple(line for line in (*failure.error_context, *evidence.earlier)
                    if _TRANSFER.search(line) and not _WARNING_RECORD.search(line)) \
        if _TRANSFER_FAILURE.search(own) else ()
    texts = (own, *records)
    said = next((found for text in texts if (found := _NO_LOCAL_PORT.search(text))), None)
    if said is None or _RENDEZVOUS_CONNECT.search(own):
        return None
    v6 = any(_V6_DESTINATION.search(text) for text in texts)
    transfer = any(_TRANSFER.search(text) for text in texts)
    mooncake_tcp = any(_MOONCAKE_TCP.search(text) for text in texts)
    launch = evidence.launch
    facts = [f"the error: '{said.group(0)}', connect(2)'s EADDRNOTAVAIL"]
    if transfer:
        facts.append("the connection was the KV-cache transfer's" +
                     (" (Mooncake's TCP transport)" if mooncake_tcp else ""))
    steps = [
        "count this host's sockets by state (ss's summary) and read its local port range (the kernel setting "
        "net.ipv4.ip_local_port_range): many thousands of connections in TIME_WAIT against the range is port "
        "exhaustion; few of them, and the error at the first connection, point to the destination's address family "
        "instead: check what the destination resolves to (localhost can be IPv6 ::1) and whether this host has an "
        "address of that family (IPv6 turned off in a container); its IPv4 address then avoids it",
    ]
    if mooncake_tcp:
        steps.append(
            "Mooncake's TCP transport opens a new connection for each transfer unless its connection pool is on: the "
            "Mooncake releases that have the pool read MC_TCP_ENABLE_CONNECTION_POOL (off by default where it was "
            "added, on by default later); a newer Mooncake, or RDMA devices for the transfer, avoid the churn")
    elif transfer:
        steps.append("a transfer backend that reuses its connections (or RDMA) avoids the churn: check whether the "
                     "transfer engine's release keeps connections open between transfers")
    if transfer and (backends := _other_backends(launch, _failed_backends(launch, mooncake_tcp))):
        steps.append(backends)
    steps.append("general guidance: a wider local port range, or letting TIME_WAIT sockets be reused for new outgoing "
                 "connections (net.ipv4.tcp_tw_reuse), are the host administrator's settings; they raise the ceiling, "
                 "connection reuse removes the cause")
    what = "The KV-cache transfer" if transfer else "A connection"
    family = ("at a first connection, the same error comes from a destination of an address family this host has no "
              "address in (localhost or a name resolving to IPv6 ::1 where IPv6 is turned off)")
    if transfer and not v6:
        cause = (f"{what} failed in connect() with EADDRNOTAVAIL ('Cannot assign requested address'): most likely the "
                 "kernel had no free local (ephemeral) port left for a new outgoing connection, from many short-lived "
                 "connections under load, each closed one holding its port in TIME_WAIT for a while; the far side was "
                 "never asked, so checks of firewalls and handshakes do not apply. Less often, " + family + ".")
    elif v6:
        cause = (f"{what} failed in connect() with EADDRNOTAVAIL ('Cannot assign requested address'); the far side was "
                 "never asked. Its destination is localhost or an IPv6 address: the usual cause is that this host has "
                 "no address of that family (localhost resolving to IPv6 ::1 where IPv6 is turned off); under load it "
                 "can also be this host running out of free local (ephemeral) ports.")
    else:
        cause = (f"{what} failed in connect() with EADDRNOTAVAIL ('Cannot assign requested address'); the far side was "
                 "never asked. Most often this host ran out of free local (ephemeral) ports under load, each closed "
                 "connection holding its port in TIME_WAIT for a while; " + family + ".")
    return Diagnosis(
        pattern=RULE_ID,
        title=("The KV-cache transfer likely ran this host out of local ports (connect: Cannot assign requested "
               "address)" if transfer and not v6 else
               "A connection found no local address or port for itself (connect: Cannot assign requested address)"),
        category="network",
        root_cause=cause,
        fix=Fix(
            summary="Make the transfer reuse its connections, or switch to a transfer backend that does; the host's "
            "local port range only raises the ceiling." if transfer and not v6 else
            "Check which address family the destination resolves to (an IPv4 address instead of localhost rules it "
            "out); under load, make the program reuse its connections." if v6 else
            "Make the program reuse its connections; the host's local port range only raises the ceiling.",
            steps=tuple(steps),
        ),
        engine=launch.engine,
        engine_version=launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
        references=SOURCES,
    )


# `fake` transfers no KV (SGLang's warm-up stub, disaggregation/fake/conn.py: "For warmup reqs, we don't kv transfer"):
# never an alternative.
_NOT_TRANSPORTS = ("fake",)


def _failed_backends(launch: LaunchInfo, mooncake_tcp: bool) -> tuple[str, ...]:
    """The backend that failed: the launch's --disaggregation-transfer-backend (mooncake by default), and Mooncake's
    TCP transport (0.5.23's mooncake_tcp) when its TcpTransport is the one that failed."""
    values = dict(launch.server_args)
    given = values.get("disaggregation_transfer_backend", "").strip("'\"")
    if not given and launch.command and (found := _GIVEN_BACKEND.search(launch.command)):
        given = found["backend"]
    return tuple(name for name in (given or "mooncake", "mooncake_tcp" if mooncake_tcp else "") if name)


def _other_backends(launch: LaunchInfo, failed: tuple[str, ...] = ()) -> str | None:
    """SGLang's transfer backends as the release's catalog lists them (every known release's when it is unknown),
    without the one that failed and without `fake`."""
    if launch.engine != "sglang":
        return None
    name = ENGINE_NAMES["sglang"]
    if launch.engine_version and (catalog := catalogs.load("sglang", launch.engine_version)) is not None:
        info = catalog.find(_BACKEND_FLAG)
        if info is None or not info.choices:
            return None
        choices = _alternatives(info.choices, failed)
        if not choices:
            return None
        listed = f"{name} {launch.engine_version}: {', '.join(choices)}"
    else:
        per_release = []
        releases = sorted((version for engine, version in catalogs.available() if engine == "sglang"),
                          key=lambda version: version_key(version) or ())
        for version in releases:
            catalog = catalogs.load("sglang", version)
            info = catalog.find(_BACKEND_FLAG) if catalog is not None else None
            if info is not None and (choices := _alternatives(info.choices, failed)):
                per_release.append(f"{version}: {', '.join(choices)}")
        if not per_release:
            return None
        listed = f"{name} " + "; ".join(per_release)
    return (f"or another transfer backend, the same on the prefill and the decode side: besides "
            f"{' and '.join(failed) or 'the one that failed'}, {_BACKEND_FLAG} takes {listed} (nixl was reported "
            "stable where Mooncake's TCP transfers ran out of ports)")


def _alternatives(choices: tuple[str, ...] | list[str], failed: tuple[str, ...]) -> list[str]:
    return [choice for choice in choices if choice not in failed and choice not in _NOT_TRANSPORTS]
