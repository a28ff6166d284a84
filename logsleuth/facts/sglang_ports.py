"""The ports SGLang lays out for its own processes (sglang_ports.toml, with its sources): which one a
"NAME at PORT is not available" message names, and what sets it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from logsleuth.facts.table import parsed_toml, table_rows


@dataclass(frozen=True)
class OwnPort:
    """One port PortArgs.init_new checks before binding it: the name its message prints, what it is to the server,
    its distance from the rendezvous port (None: not laid out from it) and the one flag that sets it alone."""

    name: str
    what: str
    offset: int | None
    flag: str | None
    releases: tuple[str, ...]  # provenance: the indexed releases whose code prints this name (not checked per launch)


@cache
def own_ports() -> dict[str, OwnPort]:
    """The table's ports by the name SGLang's message prints."""
    return {
        row["name"]: OwnPort(row["name"], row["what"], row.get("offset"), row.get("flag"), tuple(row["releases"]))
        for row in table_rows("sglang_ports.toml", "port")
    }


def own_port(name: str) -> OwnPort | None:
    """The port a wait_port_available message names, or None for a name PortArgs does not check."""
    return own_ports().get(name)


def rendezvous_delta() -> int:
    """--port + this is the rendezvous port on one node without --dist-init-addr (ZMQ_TCP_PORT_DELTA)."""
    return int(parsed_toml("sglang_ports.toml")["rendezvous_delta"])


def last_offset() -> int:
    """The farthest port after the rendezvous port that a server may use: two servers' rendezvous ports closer than
    this + 1 share ports."""
    return max(port.offset or 0 for port in own_ports().values())


SOURCES = "facts/sglang_ports.toml (sglang/srt/server_args.py PortArgs.init_new, 0.5.9 and 0.5.23)"
