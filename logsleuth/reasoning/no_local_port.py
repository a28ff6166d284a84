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
    r"(?i)\bconnect(?:ing|\(\))?\b[^\n]{0,100}?(?:Cannot assign requested address|EADDRNOTAVAIL|AddrNotAvailable)"
)
_TRANSFER = compile_lazily_regex(
    r"(?i)KVTransfer|kv[ _-]?(?:cache )?transfer|send kv|Prefill transfer|TcpTransport|tcp_transport|mooncake|"
    r"\bnixl\b|disaggregat"
)
_MOONCAKE_TCP = compile_lazily_regex(r"TcpTransport|tcp_transport\.cpp")
_BACKEND_FLAG = "--disaggregation-transfer-backend"
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
    texts = (evidence.message_text, *failure.context, *failure.error_context, *evidence.earlier)
    said = next((found for text in texts if (found := _NO_LOCAL_PORT.search(text))), None)
    if said is None:
        return None
    transfer = any(_TRANSFER.search(text) for text in texts)
    mooncake_tcp = any(_MOONCAKE_TCP.search(text) for text in texts)
    launch = evidence.launch
    facts = [f"the error: {said.group(0)}: connect(2)'s EADDRNOTAVAIL, no free local port for a new connection"]
    if transfer:
        facts.append("the connection was the KV-cache transfer's" +
                     (" (Mooncake's TCP transport)" if mooncake_tcp else ""))
    steps = [
        "count this host's sockets by state (ss's summary) and read its local port range (the kernel setting "
        "net.ipv4.ip_local_port_range): many thousands of connections in TIME_WAIT against the range is this failure",
    ]
    if mooncake_tcp:
        steps.append(
            "Mooncake's TCP transport opens a new connection for each transfer unless its connection pool is on: the "
            "Mooncake releases that have the pool read MC_TCP_ENABLE_CONNECTION_POOL (off by default where it was "
            "added, on by default later); a newer Mooncake, or RDMA devices for the transfer, avoid the churn")
    elif transfer:
        steps.append("a transfer backend that reuses its connections (or RDMA) avoids the churn: check whether the "
                     "transfer engine's release keeps connections open between transfers")
    if transfer and (backends := _other_backends(launch)):
        steps.append(backends)
    steps.append("general guidance: a wider local port range, or letting TIME_WAIT sockets be reused for new outgoing "
                 "connections (net.ipv4.tcp_tw_reuse), are the host administrator's settings; they raise the ceiling, "
                 "connection reuse removes the cause")
    what = "The KV-cache transfer" if transfer else "A connection"
    return Diagnosis(
        pattern=RULE_ID,
        title="This host ran out of local ports for new connections (connect: Cannot assign requested address)",
        category="network",
        root_cause=(
            f"{what} failed in connect() with EADDRNOTAVAIL ('Cannot assign requested address'): the kernel had no "
            "free local (ephemeral) port left for a new outgoing connection. That happens when a program opens many "
            "short-lived connections under load, each closed one holding its port in TIME_WAIT for a while; the far "
            "side was never asked, so it is not an address that cannot be reached, and checks of addresses, "
            "firewalls and handshakes do not apply."
        ),
        fix=Fix(
            summary="Make the transfer reuse its connections, or switch to a transfer backend that does; the host's "
            "local port range only raises the ceiling." if transfer else
            "Make the program reuse its connections; the host's local port range only raises the ceiling.",
            steps=tuple(steps),
        ),
        engine=launch.engine,
        engine_version=launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
        references=SOURCES,
    )


def _other_backends(launch: LaunchInfo) -> str | None:
    """SGLang's transfer backends as the release's catalog lists them (every known release's when it is unknown)."""
    if launch.engine != "sglang":
        return None
    name = ENGINE_NAMES["sglang"]
    if launch.engine_version and (catalog := catalogs.load("sglang", launch.engine_version)) is not None:
        info = catalog.find(_BACKEND_FLAG)
        if info is None or not info.choices:
            return None
        listed = f"{name} {launch.engine_version}: {', '.join(info.choices)}"
    else:
        per_release = []
        releases = sorted((version for engine, version in catalogs.available() if engine == "sglang"),
                          key=lambda version: version_key(version) or ())
        for version in releases:
            catalog = catalogs.load("sglang", version)
            info = catalog.find(_BACKEND_FLAG) if catalog is not None else None
            if info is not None and info.choices:
                per_release.append(f"{version}: {', '.join(info.choices)}")
        if not per_release:
            return None
        listed = f"{name} " + "; ".join(per_release)
    return (f"or another transfer backend, the same on the prefill and the decode side: {_BACKEND_FLAG} takes "
            f"{listed} (nixl was reported stable where Mooncake's TCP transfers ran out of ports)")
