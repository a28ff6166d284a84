"""Multi-node launches (issue 28, class 6; reasoning/multinode.py): the rendezvous failing for a reason the libraries'
own messages name.

The messages are the libraries' own: torch's c10d client (torch/csrc/distributed/c10d/socket.cpp "The {IPv4 |IPv6
|}network addresses of ({host}, {port}) cannot be retrieved (gai error: {r} - {gai_strerror})", "The client socket has
timed out after …ms while trying to connect to ({host}, {port})."), Gloo's mesh (ProcessGroupGloo.cpp "Gloo
connectFullMesh failed with …", "Unable to resolve hostname to a (local) address. Using the loopback address as
fallback. …"), and CPython's
urllib refusing a bare IPv6 address in torch's tcp:// URL (real tracebacks of our own code).  The shapes are those of
sgl-project/sglang#3226, vllm-project/vllm#7074, aws-samples/aws-do-eks#50 (Gloo), vllm-project/vllm#18986,
areal-project/AReaL#134, NovaSky-AI/SkyRL#612 (IPv6), vllm-project/vllm#570 (a look-up warning alone)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from logsleuth.api import DiagnoseOptions, diagnose_text
from logsleuth.diagnosis.library import PatternSet
from tests.helpers import traceback_of_installed
from tests.reasoning.diagnosed import OPTIONS, app_traceback, first_diagnosis
from tests.test_fuzz import no_hang  # the suite's hang guard (SIGALRM, 20 s)

NO_PATTERNS = PatternSet(patterns=[], errors=[])  # so that every failure reaches the rules

# torch's rendezvous handler as it parses the init method (torch/distributed/rendezvous.py _tcp_rendezvous_handler:
# `result = urlparse(url)`, `if not result.port:`): CPython's urllib raises for a bare IPv6 address.
_RENDEZVOUS = '''\
from urllib.parse import urlparse


def _tcp_rendezvous_handler(url):
    result = urlparse(url)
    if not result.port:
        raise ValueError("port number missing")
    return result.hostname, result.port


def init_process_group(init_method):
    return next(iter([_tcp_rendezvous_handler(init_method)]))
'''


def _bare_ipv6_traceback(tmp_path: Path) -> str:
    done = traceback_of_installed(
        tmp_path, {"torch/distributed/rendezvous.py": _RENDEZVOUS},
        "from torch.distributed.rendezvous import init_process_group\n"
        "init_process_group('tcp://2605:340:cd51:4b00::18d2:35825')\n",
    )
    assert "Port could not be cast to integer value" in done.stderr
    return done.stderr


def test_a_bare_ipv6_address_in_the_rendezvous_url_is_named(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_bare_ipv6_traceback(tmp_path))
    assert diagnosis.pattern == "rule-multinode-ipv6-address-unbracketed" and diagnosis.category == "network"
    assert any("IPv6 address's colons" in fact for fact in diagnosis.evidence)
    assert diagnosis.fix is not None and diagnosis.fix.command is None and not diagnosis.fix.flags


def test_the_same_traceback_cut_before_its_message_is_read_from_its_frames(tmp_path: Path) -> None:
    # vllm-project/vllm#18986's paste ends on urllib's `port` frame under torch's rendezvous handler
    cut = "\n".join(line for line in _bare_ipv6_traceback(tmp_path).splitlines() if not line.startswith("ValueError"))
    assert first_diagnosis(cut + "\n").pattern == "rule-multinode-ipv6-address-unbracketed"


def test_a_port_that_is_no_number_but_no_ipv6_address_is_not_called_ipv6(tmp_path: Path) -> None:
    done = traceback_of_installed(
        tmp_path, {"torch/distributed/rendezvous.py": _RENDEZVOUS},
        "from torch.distributed.rendezvous import init_process_group\ninit_process_group('tcp://node0:port')\n",
    )
    assert first_diagnosis(done.stderr).pattern != "rule-multinode-ipv6-address-unbracketed"


# SGLang's scheduler failing in Gloo's mesh (the shape of sgl-project/sglang#3226): our own code raising torch's words.
_SCHEDULER = '''\
def new_group(ranks, backend):
    raise RuntimeError("Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error")


def init_torch_distributed():
    return new_group([0, 1], backend="gloo")


def run_scheduler_process():
    init_torch_distributed()
'''


def _gloo_log(tmp_path: Path, before: str = "") -> str:
    done = traceback_of_installed(
        tmp_path, {"sglang/srt/managers/scheduler.py": _SCHEDULER},
        "from sglang.srt.managers.scheduler import run_scheduler_process\nrun_scheduler_process()\n",
    )
    return (
        "$ python3 -m sglang.launch_server --model-path /models/m --tp 16 --nnodes 2 --node-rank 1 "
        "--dist-init-addr 10.0.0.1:5000\n"
        f"{before}"
        "[rank10]:[E130 18:11:34.707542570 ProcessGroupGloo.cpp:143] Gloo connectFullMesh failed with "
        "[../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n"
        f"{done.stderr}"
    )


def test_gloo_s_mesh_failing_across_nodes_asks_for_the_interface_and_invents_no_value(tmp_path: Path) -> None:
    diagnosis = first_diagnosis(_gloo_log(tmp_path))
    assert diagnosis.pattern == "rule-multinode-gloo-interface" and diagnosis.category == "network"
    fix = diagnosis.fix
    assert fix is not None and "GLOO_SOCKET_IFNAME" in fix.summary and "NCCL_SOCKET_IFNAME" in fix.summary
    assert fix.needs_input and not fix.env and not fix.flags and fix.command is None


def test_gloo_s_loopback_fallback_before_the_failure_is_named(tmp_path: Path) -> None:
    warning = ("[rank9]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using "
               "the loopback address as fallback. Manually set the network interface to bind to with "
               "GLOO_SOCKET_IFNAME. (function operator())\n")
    diagnosis = first_diagnosis(_gloo_log(tmp_path, warning))
    assert any("fell back to the loopback address" in fact for fact in diagnosis.evidence)


def test_gloo_s_loopback_warning_before_an_unrelated_failure_is_not_blamed() -> None:
    log = (
        "[rank0]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the "
        "loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.\n"
        "Traceback (most recent call last):\n"
        '  File "/app/run.py", line 3, in <module>\n'
        "    load()\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.10 GiB\n"
    )
    assert first_diagnosis(log).pattern != "rule-multinode-gloo-interface"


# torch's client retrying a host that is a shell variable's name: what c10d prints while it waits (the brief's shape:
# `$MASTER_ADDR` printed literally), alone in the paste.
UNEXPANDED_WARNINGS = "".join(
    f"[W{stamp} socket.cpp:752] [c10d] The IPv6 network addresses of ($MASTER_ADDR, 29500) cannot be retrieved (gai "
    "error: -2 - Name or service not known).\n"
    for stamp in ("1203 10:00:01.1", "1203 10:00:02.1", "1203 10:00:03.1")
)


def test_a_rendezvous_host_that_is_a_variable_s_name_is_an_unexpanded_variable() -> None:
    diagnosis = first_diagnosis(UNEXPANDED_WARNINGS)
    assert diagnosis.pattern == "rule-multinode-unexpanded-address-variable" and diagnosis.category == "network"
    assert "$MASTER_ADDR" in diagnosis.title and "MASTER_ADDR was not set" in diagnosis.root_cause
    fix = diagnosis.fix
    assert fix is not None and fix.command is None and not fix.flags and not fix.env
    said = " ".join((fix.summary, *fix.steps))
    assert not re.search(r"\b(export|echo|nslookup|ping|nc|telnet)\s+\S", said), "no command the log did not give"


def test_a_braced_variable_in_the_timeout_message_is_named_too() -> None:
    log = (
        "$ vllm serve /models/m --tensor-parallel-size 8 --pipeline-parallel-size 2\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (${HEAD_IP}, 29500).\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-unexpanded-address-variable" and "HEAD_IP" in diagnosis.root_cause


def test_a_host_name_that_does_not_resolve_for_ipv4_is_named() -> None:
    log = (
        "[W1203 10:00:01.100 socket.cpp:752] [c10d] The IPv4 network addresses of (node-0.cluster, 20000) cannot be "
        "retrieved (gai error: -2 - Name or service not known).\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (node-0.cluster, 20000).\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-rendezvous-host-unresolved" and diagnosis.category == "network"
    assert "node-0.cluster" in diagnosis.title


def test_the_ipv6_look_up_warning_alone_is_the_failure_with_its_doubt_said() -> None:
    # vllm-project/vllm#570: the paste is these warnings and nothing else
    log = "".join(
        "(Worker pid=22514) [W socket.cpp:601] [c10d] The IPv6 network addresses of (__internal_head__, 16516) cannot "
        "be retrieved (gai error: -2 - Name or service not known).\n" for _ in range(3)
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-rendezvous-host-unresolved"
    assert "harmless when the other address family resolves" in diagnosis.root_cause


def test_the_ipv6_look_up_warning_before_a_healthy_start_is_no_failure() -> None:
    log = (
        "[W socket.cpp:601] [c10d] The IPv6 network addresses of (node-0, 29500) cannot be retrieved (gai error: -2 - "
        "Name or service not known).\n"
        "INFO:     Started server process [2310]\nINFO:     Waiting for application startup.\n"
        "INFO:     Application startup complete.\n"
    )
    assert not diagnose_text(log, OPTIONS).failures


def test_a_settings_dump_holding_the_variable_s_name_is_read_too() -> None:
    # SGLang prints its settings at start (`server_args=ServerArgs(…, dist_init_addr='…', …)`): the value it was given
    log = (
        "[2026-01-05 10:00:00] server_args=ServerArgs(model_path='/models/m', tp_size=16, nnodes=2, node_rank=1, "
        "dist_init_addr='$MASTER_ADDR:5000')\n"
        "torch.distributed.DistNetworkError: The client socket has failed to connect to any network address on "
        "($MASTER_ADDR, 5000).\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-unexpanded-address-variable" and "$MASTER_ADDR" in diagnosis.title


@pytest.mark.parametrize("lead,filler", [
    ("Gloo connectFullMesh failed remote=[", "127.0.0."), ("network addresses of (", "$a"),
    ("Port could not be cast to integer value as '", "a:"), ("to host ", "a-"), ("dist_init_addr='", "$"),
])
def test_the_rules_read_a_long_line_in_one_pass(lead: str, filler: str) -> None:
    message = "RuntimeError: " + lead + filler * (60_000 // len(filler))
    with no_hang():
        report = diagnose_text(app_traceback(message), DiagnoseOptions(), patterns=NO_PATTERNS)
    assert report.failures


_C10D = '''\
class DistBackendError(RuntimeError):
    pass


def init_process_group(message):
    raise DistBackendError(message)
'''
_NCCL_NO_INTERFACE = (
    "NCCL error in: /pytorch/torch/csrc/distributed/c10d/NCCLUtils.hpp:275, invalid usage (run with NCCL_DEBUG=WARN "
    "for details), NCCL version 2.21.5\\nncclInvalidUsage: This usually reflects invalid usage of NCCL library.\\n"
    "Last error:\\nBootstrap : no socket interface found"
)


def test_nccl_finding_no_interface_asks_for_the_one_this_node_has(tmp_path: Path) -> None:
    # NCCL's bootstrap (src/bootstrap.cc) when NCCL_SOCKET_IFNAME matches no interface (marin-community/marin#6940)
    done = traceback_of_installed(
        tmp_path, {"torch/distributed/distributed_c10d.py": _C10D},
        f"from torch.distributed.distributed_c10d import init_process_group\ninit_process_group('{_NCCL_NO_INTERFACE}')\n",
    )
    diagnosis = first_diagnosis(done.stderr)
    assert diagnosis.pattern == "rule-multinode-socket-interface-not-found" and diagnosis.category == "nccl"
    assert diagnosis.fix is not None and "NCCL_SOCKET_IFNAME" in diagnosis.fix.summary and diagnosis.fix.needs_input


def test_gloo_given_an_interface_list_says_it_takes_one_name(tmp_path: Path) -> None:
    # gloo/transport/tcp/device.cc lookupAddrForIface, given NCCL's exclusion syntax
    done = traceback_of_installed(
        tmp_path, {"torch/distributed/distributed_c10d.py": _C10D},
        "from torch.distributed.distributed_c10d import init_process_group\n"
        "init_process_group('[enforce fail at /pytorch/third_party/gloo/gloo/transport/tcp/device.cc:84] ifa != "
        "nullptr. Unable to find address for: ^lo')\n",
    )
    diagnosis = first_diagnosis(done.stderr)
    assert diagnosis.pattern == "rule-multinode-socket-interface-not-found" and diagnosis.category == "network"
    assert "no interface named ^lo" in " ".join(diagnosis.evidence)


def test_a_rendezvous_timeout_says_the_launch_s_node_arithmetic() -> None:
    # the numbers the command shows: tp x pp over the nodes, and a node rank past the launch's own node count
    log = (
        "$ python3 -m sglang.launch_server --model-path /models/m --tp-size 16 --nnodes 2 --node-rank 2 "
        "--dist-init-addr 10.1.0.5:5000\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (10.1.0.5, 5000).\n"
    )
    facts = first_diagnosis(log).evidence
    assert "the launch runs tp 16 x pp 1 = 16 GPUs over 2 nodes: 8 on each node" in facts
    assert "this node's rank is 2, of 0 to 1: out of range" in facts


def test_a_data_parallel_start_rank_past_the_size_is_said() -> None:
    log = (
        "$ vllm serve /models/m --headless --data-parallel-size 2 --data-parallel-size-local 1 "
        "--data-parallel-start-rank 2 --data-parallel-address 10.1.0.5 --data-parallel-rpc-port 13345\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (10.1.0.5, 13345).\n"
    )
    assert "this node runs data-parallel ranks 2 to 2 of 2: past the last rank, 1" in first_diagnosis(log).evidence


def test_an_interface_the_command_sets_but_a_remote_worker_lacks_is_said() -> None:
    # vllm-project/vllm#7074's shape: the variable set in the serve command's shell, a Ray worker on the other node
    # falling back to the loopback address
    log = (
        "$ GLOO_SOCKET_IFNAME=eth0 NCCL_SOCKET_IFNAME=eth0 vllm serve /models --tensor-parallel-size 16\n"
        "(RayWorkerWrapper pid=1978, ip=10.41.0.8) [rank9]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve "
        "hostname to a (local) address. Using the loopback address as fallback. Manually set the network interface to "
        "bind to with GLOO_SOCKET_IFNAME. (function operator())\n"
        "(RayWorkerWrapper pid=1890, ip=10.41.0.8) [rank8]:[E ProcessGroupGloo.cpp:144] Gloo connectFullMesh failed "
        "with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n"
        "(RayWorkerWrapper pid=1890, ip=10.41.0.8) ERROR 08-02 08:50:03 worker_base.py:382] RuntimeError: Gloo "
        "connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-gloo-interface"
    assert any(fact.startswith("the launch command sets GLOO_SOCKET_IFNAME=eth0") for fact in diagnosis.evidence)
    assert diagnosis.fix is not None and any("where Ray starts on each node" in step for step in diagnosis.fix.steps)


def test_gloo_s_loopback_warning_before_a_device_failure_under_init_device_is_not_blamed(tmp_path: Path) -> None:
    """Review H1 of stop 48: containers print Gloo's loopback warning on healthy single-node runs; an invalid device
    ordinal under vLLM's worker start-up (init_device) is no Gloo interface fault."""
    files = {"vllm/__init__.py": "", "vllm/v1/__init__.py": "", "vllm/v1/worker/__init__.py": "",
             "vllm/v1/worker/gpu_worker.py": "def init_device():\n    raise RuntimeError('CUDA error: invalid device ordinal')\n"}
    traceback = traceback_of_installed(tmp_path, files, "from vllm.v1.worker.gpu_worker import init_device\ninit_device()\n").stderr
    log = ("[rank0]:[W ProcessGroupGloo.cpp:721] Warning: Unable to resolve hostname to a (local) address. Using the "
           "loopback address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.\n"
           + traceback)
    assert first_diagnosis(log).pattern != "rule-multinode-gloo-interface"


def test_the_ipv6_look_up_warning_for_localhost_in_a_start_cut_while_loading_is_no_failure() -> None:
    """Review H2 of stop 48: a single node's ranks meet at localhost, which resolves over IPv4: the IPv6 warning for it
    is the healthy case, also in a paste cut while the weights load."""
    log = (
        "[W1203 10:00:01.100 socket.cpp:752] [c10d] The IPv6 network addresses of (localhost, 41235) cannot be "
        "retrieved (gai error: -2 - Name or service not known).\n"
        "INFO 12-03 10:00:02 [parallel_state.py:1064] rank 0 in world size 2 is assigned as DP rank 0, PP rank 0, TP rank 0\n"
        "Loading safetensors checkpoint shards:  25% Completed | 1/4 [00:01<00:03,  1.10s/it]\n"
    )
    assert not diagnose_text(log, OPTIONS).failures


# Review 2 of stop 48 (M1, M4, L2, L3, L7): each fact and flag only where the paste shows what it rests on.

def test_a_mesh_that_timed_out_with_the_interface_set_does_not_claim_a_rank_lacked_it(tmp_path: Path) -> None:
    # Gloo's own reason for a firewall or a wrong interface (pair.cc "Connect timeout"), and no loopback fallback
    log = _gloo_log(tmp_path).replace("no error\n", "Connect timeout [10.0.0.2]:41233\n", 1)
    log = "$ export GLOO_SOCKET_IFNAME=eth0\n" + log.replace("$ python3", "$ GLOO_SOCKET_IFNAME=eth0 python3", 1)
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-gloo-interface"
    given = [fact for fact in diagnosis.evidence if fact.startswith("the launch command sets GLOO_SOCKET_IFNAME")]
    assert given and all("did not inherit" not in fact and "names the interface" in fact for fact in given)


# An HTTP client parsing an endpoint URL that holds a bare IPv6 address: urllib's same error, no rendezvous.
_HTTP_CLIENT = '''\
from urllib.parse import urlparse


def endpoint_port(url):
    return urlparse(url).port


def fetch(url):
    return endpoint_port(url)
'''


def test_urllib_s_port_error_outside_the_rendezvous_is_not_called_the_rendezvous_url(tmp_path: Path) -> None:
    done = traceback_of_installed(
        tmp_path, {"httpclient/session.py": _HTTP_CLIENT},
        "from httpclient.session import fetch\nfetch('http://fd00:1:2::5:8080/v1/models')\n",
    )
    assert "Port could not be cast to integer value" in done.stderr
    assert first_diagnosis(done.stderr).pattern != "rule-multinode-ipv6-address-unbracketed"


def test_node_arithmetic_leaves_out_the_per_node_share_when_data_parallelism_is_given() -> None:
    log = (
        "$ python3 -m sglang.launch_server --model-path /models/m --tp-size 8 --dp-size 2 --nnodes 2 --node-rank 1 "
        "--dist-init-addr 10.1.0.5:5000\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to (10.1.0.5, 5000).\n"
    )
    facts = first_diagnosis(log).evidence
    assert not any("on each node" in fact or "GPUs over" in fact for fact in facts)
    assert "this node's rank is 1, of 0 to 1" in facts


def test_a_tensor_parallel_vllm_launch_is_not_pointed_at_the_data_parallel_address() -> None:
    log = (
        "$ vllm serve /models/m --tensor-parallel-size 16 --nnodes 2 --node-rank 1 --master-addr $HEAD_IP\n"
        "torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect "
        "to ($HEAD_IP, 29500).\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-multinode-unexpanded-address-variable"
    assert diagnosis.fix is not None and "--data-parallel-address" not in diagnosis.fix.summary


def test_nccl_finding_no_interface_blames_the_variable_only_where_it_is_set(tmp_path: Path) -> None:
    done = traceback_of_installed(
        tmp_path, {"torch/distributed/distributed_c10d.py": _C10D},
        f"from torch.distributed.distributed_c10d import init_process_group\ninit_process_group('{_NCCL_NO_INTERFACE}')\n",
    )
    unset = first_diagnosis(done.stderr)
    assert unset.title == "NCCL found no network interface it may use on this node"
    assert any("NCCL_SOCKET_FAMILY" in fact for fact in unset.evidence)
    assert unset.fix is not None and "the paste shows neither" in unset.fix.summary  # review 1 L1 of stop 49
    assert "NCCL_SOCKET_IFNAME names" not in unset.root_cause
    command = "$ NCCL_SOCKET_IFNAME=ib9 python3 -m sglang.launch_server --model-path /m --tp 2\n"
    given = diagnose_text(command + done.stderr, DiagnoseOptions(), patterns=NO_PATTERNS).failures[0].diagnosis
    assert given is not None
    assert given.title == "NCCL_SOCKET_IFNAME names no network interface of this node"
