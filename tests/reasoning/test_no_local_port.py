"""A connect that found no local port (EADDRNOTAVAIL, "Cannot assign requested address"): this host's local ports ran
out, not an address that cannot be reached (man 2 connect, ERRORS).

The logs are our own text in the engines' wordings: Mooncake's TcpTransport::startTransfer record
(mooncake-transfer-engine/src/transport/tcp_transport/tcp_transport.cpp), SGLang's Mooncake sender
("Session {id} failed.", "Failed to send kv chunk of {room} to {host:port}", sglang/srt/disaggregation/mooncake/conn.py)
and its scheduler's "Prefill transfer failed for request rank=…" (disaggregation/prefill.py), KVTransferError's str
(disaggregation/common/conn.py); the shape of split 20's B-01 (sgl-project/sglang#23272)."""

from __future__ import annotations

from pathlib import Path

import pytest

from logsleuth.models import LaunchInfo
from logsleuth.reasoning.no_local_port import RULE_ID, _other_backends
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import app_traceback, first_diagnosis

PD_UNDER_LOAD = """\
[2026-02-11 09:14:02] Prefill batch, #new-seq: 3, #new-token: 4096, #cached-token: 120, token usage: 0.41, #running-req: 0, #queue-req: 11
E0211 09:14:03.120044   812 tcp_transport.cpp:542] TcpTransport::startTransfer encountered an ASIO exception. Slice details - source_addr: 0x7f00aa000000, length: 262144, opcode: 1, target_id: 3. Exception: connect: Cannot assign requested address
[2026-02-11 09:14:03] Session 10.4.0.21:16012 failed.
[2026-02-11 09:14:03] Prefill transfer failed for request rank=0 req.rid='9f1c' req.bootstrap_room=5512 with exception KVTransferError(bootstrap_room=5512): Failed to send kv chunk of 5512 to 10.4.0.21:16012
"""


def test_a_kv_transfer_connect_without_a_local_port_is_port_exhaustion_not_reachability() -> None:
    diagnosis = first_diagnosis(PD_UNDER_LOAD)
    assert diagnosis.pattern == RULE_ID and diagnosis.category == "network" and diagnosis.basis == "rule"
    assert "EADDRNOTAVAIL" in diagnosis.root_cause and "most likely the kernel had no free local" in diagnosis.root_cause
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and fix.command is None
    steps = " ".join(fix.steps)
    assert "MC_TCP_ENABLE_CONNECTION_POOL" in steps and "net.ipv4.ip_local_port_range" in steps
    assert "besides mooncake and mooncake_tcp, --disaggregation-transfer-backend takes SGLang 0.4.10.post2: nixl" in steps
    assert "firewall" not in fix.summary + steps and "bootstrap" not in steps


def test_the_backends_are_the_releases_own_without_the_failed_one_or_the_warm_up_stub() -> None:
    """The catalog's choices of the release in use; every known release's, in release order, when it is unknown.
    `fake` transfers no KV (disaggregation/fake/conn.py) and the backend that failed is no alternative to itself."""
    known = _other_backends(LaunchInfo(engine="sglang", engine_version="0.5.9"), ("mooncake",))
    assert known is not None and "SGLang 0.5.9: nixl, ascend, mori (" in known
    unknown = _other_backends(LaunchInfo(engine="sglang"), ("mooncake", "mooncake_tcp"))
    assert unknown is not None and unknown.index("0.4.10.post2:") < unknown.index("0.5.9:") < unknown.index("0.5.23:")
    listed = unknown.split("takes ", 1)[1]
    assert "fake" not in listed and "mooncake" not in listed.split(" (nixl")[0]
    assert _other_backends(LaunchInfo(engine="vllm", engine_version="0.11.2")) is None


# torch's c10d client (torch/csrc/distributed/c10d/socket.cpp) warns of each address it tries; its IPv6 attempt at
# localhost fails with errno 99 before IPv4 succeeds (pytorch/PiPPy#158): a warning, never what ended the process.
TORCH_WARNING_THEN_WEIGHTS = """\
[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 (errno: 99 - Cannot assign requested address).
[2026-03-02 10:00:01 TP0] Load weight begin. avail mem=70.10 GB
[2026-03-02 10:00:09 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/model_loader/loader.py", line 310, in load_model
    assert param.shape == loaded_weight.shape
AssertionError
"""
RETRIED_WARNING_THEN_OTHER = """\
[2026-03-02 10:00:01] WARNING: bootstrap retry: connect: Cannot assign requested address (attempt 1), retrying
[2026-03-02 10:07:30] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/lib/python3/dist-packages/sglang/srt/managers/scheduler.py", line 800, in event_loop_normal
    result = self.run_batch(batch)
RuntimeError: shape mismatch in the fused kernel
"""


@pytest.mark.parametrize("log", [TORCH_WARNING_THEN_WEIGHTS, RETRIED_WARNING_THEN_OTHER])
def test_a_connect_error_in_a_warning_before_another_failure_is_not_that_failure(log: str) -> None:
    assert first_diagnosis(log).pattern != RULE_ID


def test_a_rendezvous_connect_with_errno_99_keeps_the_rendezvous_advice() -> None:
    """torch's TCPStore client failing with errno 99: an address family this host lacks, most often, not exhausted
    ports; the rendezvous steps apply, with the address family's."""
    log = ("$ python3 -m sglang.launch_server --model-path /m --tp-size 16 --nnodes 2 --node-rank 1 "
           "--dist-init-addr head.example:6000\n"
           "Traceback (most recent call last):\n"
           '  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py", line 189, in '
           "_create_c10d_store\n    return TCPStore(\n"
           "torch.distributed.DistNetworkError: The client socket has failed to connect to [head.example]:6000 "
           "(errno: 99 - Cannot assign requested address).\n")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-network-rendezvous-unreachable"
    fix = diagnosis.fix
    assert fix is not None and any("errno 99" in step and "IPv4" in step for step in fix.steps)
    assert not any("SGLANG_HOST_IP" in step for step in fix.steps)  # not read for --dist-init-addr's store


def test_a_connect_to_localhost_names_the_address_family_as_the_usual_cause(tmp_path: Path) -> None:
    """aiohttp's ClientConnectorError to localhost: ::1 where IPv6 is off gives EADDRNOTAVAIL (moby/moby#37616)."""
    log = app_traceback("aiohttp.client_exceptions.ClientConnectorError: Cannot connect to host localhost:30000 "
                        "ssl:default [Cannot assign requested address]", "session.post(url)")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == RULE_ID
    assert "the usual cause is that this host has no address of that family" in diagnosis.root_cause
    assert diagnosis.evidence[0].startswith("the error: 'connect to host localhost:30000 ssl:default [Cannot assign "
                                            "requested address]'")


def test_a_bind_that_cannot_assign_the_address_is_left_alone(tmp_path: Path) -> None:
    """bind(2)'s EADDRNOTAVAIL is an address that is not this host's (a rendezvous host given to the wrong node):
    another failure, not local ports running out.  Real CPython binding an address no interface of this host has."""
    run = traceback_of_installed(tmp_path, {}, "import socket\nsocket.socket().bind(('192.0.2.77', 0))\n")
    assert "Cannot assign requested address" in run.stderr
    assert first_diagnosis(run.stderr).pattern != RULE_ID
