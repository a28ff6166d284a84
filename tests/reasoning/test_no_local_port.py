"""A connect that found no local port (EADDRNOTAVAIL, "Cannot assign requested address"): this host's local ports ran
out, not an address that cannot be reached (man 2 connect, ERRORS).

The logs are our own text in the engines' wordings: Mooncake's TcpTransport::startTransfer record
(mooncake-transfer-engine/src/transport/tcp_transport/tcp_transport.cpp), SGLang's Mooncake sender
("Session {id} failed.", "Failed to send kv chunk of {room} to {host:port}", sglang/srt/disaggregation/mooncake/conn.py)
and its scheduler's "Prefill transfer failed for request rank=…" (disaggregation/prefill.py), KVTransferError's str
(disaggregation/common/conn.py); the shape of split 20's B-01 (sgl-project/sglang#23272)."""

from __future__ import annotations

from pathlib import Path

from logsleuth.models import LaunchInfo
from logsleuth.reasoning.no_local_port import RULE_ID, _other_backends
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import first_diagnosis

PD_UNDER_LOAD = """\
[2026-02-11 09:14:02] Prefill batch, #new-seq: 3, #new-token: 4096, #cached-token: 120, token usage: 0.41, #running-req: 0, #queue-req: 11
E0211 09:14:03.120044   812 tcp_transport.cpp:542] TcpTransport::startTransfer encountered an ASIO exception. Slice details - source_addr: 0x7f00aa000000, length: 262144, opcode: 1, target_id: 3. Exception: connect: Cannot assign requested address
[2026-02-11 09:14:03] Session 10.4.0.21:16012 failed.
[2026-02-11 09:14:03] Prefill transfer failed for request rank=0 req.rid='9f1c' req.bootstrap_room=5512 with exception KVTransferError(bootstrap_room=5512): Failed to send kv chunk of 5512 to 10.4.0.21:16012
"""


def test_a_kv_transfer_connect_without_a_local_port_is_port_exhaustion_not_reachability() -> None:
    diagnosis = first_diagnosis(PD_UNDER_LOAD)
    assert diagnosis.pattern == RULE_ID and diagnosis.category == "network" and diagnosis.basis == "rule"
    assert "EADDRNOTAVAIL" in diagnosis.root_cause and "not an address that cannot be reached" in diagnosis.root_cause
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and fix.command is None
    steps = " ".join(fix.steps)
    assert "MC_TCP_ENABLE_CONNECTION_POOL" in steps and "net.ipv4.ip_local_port_range" in steps
    assert "--disaggregation-transfer-backend takes SGLang 0.4.10.post2: mooncake, nixl" in steps
    assert "firewall" not in fix.summary + steps and "bootstrap" not in steps


def test_the_backends_are_the_releases_own() -> None:
    """The catalog's choices of the release in use; every known release's, in release order, when it is unknown."""
    known = _other_backends(LaunchInfo(engine="sglang", engine_version="0.5.9"))
    assert known is not None and "SGLang 0.5.9: mooncake, nixl, ascend, fake, mori (" in known
    unknown = _other_backends(LaunchInfo(engine="sglang"))
    assert unknown is not None and unknown.index("0.4.10.post2:") < unknown.index("0.5.9:") < unknown.index("0.5.23:")
    assert _other_backends(LaunchInfo(engine="vllm", engine_version="0.11.2")) is None


def test_a_bind_that_cannot_assign_the_address_is_left_alone(tmp_path: Path) -> None:
    """bind(2)'s EADDRNOTAVAIL is an address that is not this host's (a rendezvous host given to the wrong node):
    another failure, not local ports running out.  Real CPython binding an address no interface of this host has."""
    run = traceback_of_installed(tmp_path, {}, "import socket\nsocket.socket().bind(('192.0.2.77', 0))\n")
    assert "Cannot assign requested address" in run.stderr
    assert first_diagnosis(run.stderr).pattern != RULE_ID
