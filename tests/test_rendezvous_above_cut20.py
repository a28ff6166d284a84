"""torch's c10d warnings of a store socket that timed out, was refused or closed, right above a traceback the paste cut
before its exception line: a rendezvous the ranks never reached (issue 28, stop 56, branch cuda20; split 19's B-03,
sgl-project/sglang#7478).  Lines rebuilt from torch's own templates (torch/csrc/distributed/c10d/socket.cpp
SocketImpl::waitForInput and SocketConnectOp::tryConnect, printed through C10D_WARNING as `[c10d] …` in a c10 record)
with made-up hosts, never a user's paste."""

from __future__ import annotations

import pytest

from logsleuth.api import diagnose_text
from logsleuth.tracebacks.rendezvous_warnings import rendezvous_warning
from tests.test_fatal_output_shapes import OPTIONS

_SOCKET = "SocketImpl(fd=41, addr=[{host}]:51234, remote=[{host}]:{port})"
_CUT_SCHEDULER = [
    "[2025-03-02 10:00:00 TP3] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process',
    "    scheduler = Scheduler(server_args, port_args, gpu_id, tp_rank, dp_rank)",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 300, in __init__',
    "    self.tp_worker = TpWorkerClass(",
]


def _warning(rank: int, site: str, said: str) -> str:
    return f"[rank{rank}]:[W302 10:00:00.123456789 {site}] [c10d] {said}"


def _timeouts(host: str, port: int) -> list[str]:
    socket = _SOCKET.format(host=host, port=port)
    return [
        _warning(3, "socket.cpp:460", f"waitForInput: poll for socket {socket} returned 0, likely a timeout"),
        _warning(3, "socket.cpp:485", f"waitForInput: socket {socket} timed out after 1800000ms"),
    ]


def _first(log: list[str]):
    report = diagnose_text("\n".join(log) + "\n", OPTIONS)
    assert report.failures
    return report.failures[0]


@pytest.mark.parametrize(("above", "host", "port"), [
    # waitForInput (torch 2.4+): the SocketImpl's remote=[host]:port
    (_timeouts("head-node.cluster.example", 29500), "head-node.cluster.example", "29500"),
    # tryConnect, a c10 record of torch 2.4+ whose `socket.cpp:752` tag is a source location, no address
    ([_warning(5, "socket.cpp:752", "The client socket has failed to connect to [10.1.2.3]:5000 "
                                    "(errno: 111 - Connection refused).")], "10.1.2.3", "5000"),
    # tryConnect in torch 2.0-2.3's glog record: `[W socket.cpp:663]`
    (["[W socket.cpp:663] [c10d] The client socket has failed to connect to [node-0.cluster.example]:29500 "
      "(errno: 110 - Connection timed out)."], "node-0.cluster.example", "29500"),
    # throwTimeoutError, torch's `(host, port)` form
    ([_warning(2, "socket.cpp:1001", "The client socket has timed out after 600s while trying to connect to "
                                     "(10.9.8.7, 29501).")], "10.9.8.7", "29501"),
    # the store's socket read (TCPStore's recvValue), its remote=[host]:port
    ([_warning(1, "TCPStore.cpp:142", "recvValue failed on SocketImpl(fd=12, addr=[10.0.0.2]:40000, "
                                      "remote=[10.0.0.1]:29502): Connection reset by peer")], "10.0.0.1", "29502"),
])
def test_store_socket_warnings_above_a_cut_traceback_are_a_rendezvous_not_reached(above, host, port) -> None:
    group = _first([*above, *_CUT_SCHEDULER])
    diagnosis = group.diagnosis
    assert diagnosis is not None and diagnosis.category == "network"
    assert diagnosis.pattern == "rule-network-rendezvous-unreachable"
    # a guess from the warnings, the exception line being missing: labelled, never a rule's proven cause
    assert diagnosis.basis == "general" and diagnosis.root_cause.startswith("A guess")
    assert any("c10d warnings just above the traceback" in fact for fact in diagnosis.evidence)
    assert f"{host}:{port}" in diagnosis.root_cause
    assert f"the rendezvous address is {host}:{port}" in diagnosis.evidence
    text = " ".join((diagnosis.root_cause, *diagnosis.evidence, *diagnosis.fix.steps))
    assert ".cpp" not in text.replace("socket.cpp:", "")  # (the quoted warning's own tag aside)
    assert not any(".cpp" in step for step in diagnosis.fix.steps)
    assert any(f"{host} is a host name" in step for step in diagnosis.fix.steps) == host[0].isalpha()


_SERVING_CUT = [
    "[2025-03-02 11:00:01 TP1] Scheduler hit an exception: Traceback (most recent call last):",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 2400, in run_scheduler_process',
    "    scheduler.event_loop_overlap()",
    '  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/managers/scheduler.py", line 700, in event_loop_overlap',
    "    result = self.run_batch(batch)",
]


@pytest.mark.parametrize("log", [
    # a start-up that went on past the warnings (it recovered), a failure an hour later
    [*_timeouts("head-node", 20000), "[2025-03-02 10:05:00 TP1] Init torch distributed ends. mem usage=0.00 GB",
     "[2025-03-02 10:05:30] The server is fired up and ready to roll!", *_SERVING_CUT],
    # torch's IPv6 fallback (errno 97, EAFNOSUPPORT): it goes on to the IPv4 address (microsoft/vidur#49 reached 100%)
    ["[W socket.cpp:663] [c10d] The client socket has failed to connect to [localhost]:29500 "
     "(errno: 97 - Address family not supported by protocol).", *_SERVING_CUT],
    # waitForInput's poll line alone: a wait torch retries, no timeout of its own
    [_timeouts("head-node", 20000)[0], *_SERVING_CUT],
])
def test_warnings_the_run_got_past_are_no_rendezvous_reading(log: list[str]) -> None:
    diagnosis = _first(log).diagnosis
    assert diagnosis is None or diagnosis.pattern != "rule-network-rendezvous-unreachable"


def test_a_ctrl_c_under_a_store_socket_warning_is_no_nccl_cascade() -> None:
    poll = _warning(1, "socket.cpp:460", "waitForInput: poll for socket SocketImpl(fd=41, addr=[worker-1]:51234, "
                                         "remote=[head-node]:20000) returned 0, likely a timeout")
    log = [poll, "Traceback (most recent call last):", *_SERVING_CUT[1:], "KeyboardInterrupt"]
    diagnosis = _first(log).diagnosis
    assert diagnosis is None or diagnosis.category not in ("nccl", "network")


def test_a_source_location_is_no_rendezvous_address() -> None:
    diagnosis = _first([*_timeouts("10.0.0.7", 20000), *_CUT_SCHEDULER]).diagnosis
    assert diagnosis is not None
    assert "10.0.0.7:20000" in diagnosis.root_cause and "socket.cpp" not in diagnosis.root_cause
    assert not any("is a host name" in step for step in diagnosis.fix.steps)  # an address, not a name


@pytest.mark.parametrize("line", [
    # a line with "timeout" that is no c10d socket's
    "[2025-03-02 09:59:59] WARNING: request timeout after 30s, retrying",
    # a c10d warning of something else
    _warning(0, "ProcessGroupNCCL.cpp:1000", "Using a default timeout of 600000ms for the process group"),
])
def test_other_timeout_lines_are_no_rendezvous_warning(line: str) -> None:
    assert not rendezvous_warning(line)
    diagnosis = _first([line, *_CUT_SCHEDULER]).diagnosis
    assert diagnosis is None or diagnosis.category != "network"


def test_a_traceback_with_its_exception_line_is_read_from_that_line() -> None:
    log = [*_timeouts("head-node.cluster.example", 29500), *_CUT_SCHEDULER,
           "ValueError: The model's max seq len (32768) is larger than the maximum number of tokens that can be "
           "stored in KV cache (8192)."]
    diagnosis = _first(log).diagnosis
    assert diagnosis is not None and diagnosis.category != "network"
