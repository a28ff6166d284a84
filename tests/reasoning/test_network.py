"""Network on the host (issue 28, class 6): a proxy answering the server's request to itself, a port in use, a
rendezvous address not reachable.

The logs are our own text in the real wordings: SGLang's warm-up assert (sglang/srt/entrypoints/http_server.py
_execute_server_warmup, 0.5.9 line 1679), torch's TCPStore messages, the shapes of the threads each test cites."""

from __future__ import annotations

import re

from logsleuth.api import DiagnoseOptions, diagnose_text
from tests.reasoning.diagnosed import OPTIONS, app_traceback, category_of, first_diagnosis

# The shape of sgl-project/sglang#16855 and #9814: --host 0.0.0.0, a proxy in the environment, the warm-up's GET
# answered 502 with an empty body.
WARMUP_502 = """\
[2026-01-10 13:23:00] server_args=ServerArgs(model_path='/data/ckpt-30', host='0.0.0.0', port=18089, tp_size=4, ...)
[2026-01-10 13:23:20] INFO:     Uvicorn running on http://0.0.0.0:18089 (Press CTRL+C to quit)
[2026-01-10 13:23:27] Initialization failed. warmup error: Traceback (most recent call last):
  File "/opt/conda/lib/python3.11/site-packages/sglang/srt/entrypoints/http_server.py", line 1679, in _execute_server_warmup
    assert res.status_code == 200, f"{res=}, {res.text=}"
AssertionError: res=<Response [502]>, res.text=''
"""


def test_the_warmup_answered_by_a_gateway_status_is_a_proxy_and_gets_no_proxy() -> None:
    diagnosis = first_diagnosis(WARMUP_502)
    assert diagnosis.basis == "rule" and diagnosis.category == "network"
    fix = diagnosis.fix
    assert fix is not None
    assert dict(fix.env) == {"NO_PROXY": "localhost,127.0.0.1,0.0.0.0", "no_proxy": "localhost,127.0.0.1,0.0.0.0"}
    assert fix.command is None and not fix.flags  # an environment change: no launch flag is invented
    assert any("0.0.0.0:18089" in fact for fact in diagnosis.evidence)
    assert any("HTTP 502" in fact for fact in diagnosis.evidence)


# The shape of sgl-project/sglang#4935: a squid page (HTML) in the reply to the warm-up's GET.
WARMUP_HTML_403 = """\
[2025-03-30 10:00:00] Initialization failed. warmup error: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/sglang/srt/entrypoints/http_server.py", line 990, in _wait_and_warmup
    assert res.status_code == 200, f"{res=}, {res.text=}"
AssertionError: res=<Response [403]>, res.text='<!DOCTYPE html><html><head><title>ERROR: The requested URL could not be retrieved</title></head><body><p>Access Denied.</p></body></html>'
"""


def test_a_403_with_an_html_page_on_the_warmup_is_a_proxy() -> None:
    diagnosis = first_diagnosis(WARMUP_HTML_403)
    assert diagnosis.category == "network" and diagnosis.pattern == "rule-network-proxy-answers-local-request"
    assert "the reply is an HTML page, not the server's JSON" in diagnosis.evidence


def test_a_403_alone_is_not_called_a_proxy() -> None:
    # A server can refuse a request itself (a key it does not accept): a 403 needs another sign of a proxy.
    log = WARMUP_HTML_403.replace(
        "res.text='<!DOCTYPE html><html><head><title>ERROR: The requested URL could not be retrieved</title></head>"
        "<body><p>Access Denied.</p></body></html>'", "res.text='{\"detail\": \"Forbidden\"}'"
    )
    assert category_of(log) != "network"


# torch's TCPStore server (c10d socket.cpp) in a vLLM worker: the vLLM port-in-use pattern covers the API server's
# own bind only (patterns/vllm/port-in-use.toml), so this is the rule's.
VLLM_TCPSTORE_IN_USE = """\
INFO 05-02 10:00:00 [api_server.py:1] vLLM API server version 0.11.2
(EngineCore_DP0 pid=812) ERROR 05-02 10:00:40 [core.py:708] EngineCore failed to start.
(EngineCore_DP0 pid=812) ERROR 05-02 10:00:40 [core.py:708] Traceback (most recent call last):
(EngineCore_DP0 pid=812) ERROR 05-02 10:00:40 [core.py:708]   File "/usr/local/lib/python3.12/dist-packages/torch/distributed/rendezvous.py", line 189, in _create_c10d_store
(EngineCore_DP0 pid=812) ERROR 05-02 10:00:40 [core.py:708]     return TCPStore(
(EngineCore_DP0 pid=812) ERROR 05-02 10:00:40 [core.py:708] torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 29500, useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use
"""


def test_a_vllm_rendezvous_port_in_use_names_vllm_s_own_setting_not_sglang_s_flags() -> None:
    diagnosis = first_diagnosis(VLLM_TCPSTORE_IN_USE)
    assert diagnosis.basis == "rule" and diagnosis.category == "port-in-use" and diagnosis.engine == "vllm"
    fix = diagnosis.fix
    assert fix is not None and not fix.flags
    assert dict(fix.env) == {"VLLM_PORT": "29600"}
    assert "--dist-init-addr" not in fix.summary and "--nccl-port" not in fix.summary
    assert any("ss -ltnp | grep ':29500'" in step for step in fix.steps)


def test_the_vllm_api_port_in_use_sets_port_in_the_user_s_own_command() -> None:
    log = VLLM_TCPSTORE_IN_USE.replace("port: 29500", "port: 8001")
    options = DiagnoseOptions(include_user_patterns=False, command="vllm serve Qwen/Qwen3-8B --port 8001")
    diagnosis = first_diagnosis(log, options)
    assert diagnosis.fix is not None and diagnosis.fix.command == "vllm serve Qwen/Qwen3-8B --port 8002"


def test_sglang_s_port_in_use_pattern_keeps_precedence() -> None:
    log = (
        "[2026-01-01 10:00:00] server_args=ServerArgs(model_path='/m', port=30000, ...)\n"
        "[2026-01-01 10:00:05] ERROR:    [Errno 98] error while attempting to bind on address ('0.0.0.0', 30000): "
        "address already in use\n"
    )
    report = diagnose_text(log, OPTIONS)
    diagnoses = [group.diagnosis for group in report.failures if group.diagnosis is not None]
    assert diagnoses and diagnoses[0].pattern == "sglang-port-in-use" and diagnoses[0].basis == "pattern"


# torch's TCPStore client giving up on the rendezvous (the message of modelscope/DiffSynth-Studio#538 and
# hpcaitech/Open-Sora#667, here on an SGLang second node).
SGLANG_RENDEZVOUS_TIMEOUT = """\
$ python3 -m sglang.launch_server --model-path /models/m --tp-size 16 --nnodes 2 --node-rank 1 --dist-init-addr 10.1.0.5:5000
[2026-02-01 08:31:10 TP9] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py", line 189, in _create_c10d_store
    return TCPStore(
torch.distributed.DistNetworkError: The client socket has timed out after 600000ms while trying to connect to (10.1.0.5, 5000).
"""


def test_a_rendezvous_not_reachable_names_the_address_and_the_release_s_flag() -> None:
    diagnosis = first_diagnosis(SGLANG_RENDEZVOUS_TIMEOUT)
    assert diagnosis.basis == "rule" and diagnosis.category == "network"
    assert "the rendezvous address is 10.1.0.5:5000" in diagnosis.evidence
    fix = diagnosis.fix
    assert fix is not None and "--dist-init-addr" in fix.summary and fix.command is None
    assert any("reaches 10.1.0.5 on port 5000" in step for step in fix.steps)
    assert not any(re.search(r"\b(nc|telnet|curl)\s", step) for step in fix.steps), "no command the log did not give"


def test_the_interface_step_names_only_the_engine_s_own_host_address_variable() -> None:
    """The address setting each engine reads for the rendezvous (vllm/envs.py VLLM_HOST_IP, which get_ip() feeds to
    the distributed init; SGLang's --dist-init-addr, its SGLANG_HOST_IP being read by disaggregation and Mooncake
    connections only, never for the TCPStore), never the other engine's, and a VPN's interface never as the one to pin
    (split 20's H-04, vllm-project/vllm-metal#58 and #625)."""
    sglang_steps = " ".join(first_diagnosis(SGLANG_RENDEZVOUS_TIMEOUT).fix.steps)
    assert "set --dist-init-addr (the same address on every node) and GLOO_SOCKET_IFNAME" in sglang_steps
    assert "HOST_IP" not in sglang_steps
    assert "never to the VPN's, or disconnect the VPN" in sglang_steps
    vllm_log = SGLANG_RENDEZVOUS_TIMEOUT.replace(
        "$ python3 -m sglang.launch_server --model-path /models/m --tp-size 16 --nnodes 2 --node-rank 1 "
        "--dist-init-addr 10.1.0.5:5000", "$ vllm serve /models/m --tensor-parallel-size 16"
    ).replace("[2026-02-01 08:31:10 TP9] Scheduler hit an exception: ", "(EngineCore_DP0 pid=812) ERROR ")
    vllm_steps = " ".join(first_diagnosis(vllm_log).fix.steps)
    assert "VLLM_HOST_IP" in vllm_steps and "SGLANG_HOST_IP" not in vllm_steps


def test_a_port_in_use_on_a_log_that_shows_no_engine_names_each_engine_s_setting_and_sets_no_flag() -> None:
    diagnosis = first_diagnosis(app_traceback("OSError: [Errno 98] Address already in use", 'sock.bind(("0.0.0.0", 8000))'))
    assert diagnosis.basis == "rule" and diagnosis.category == "port-in-use" and diagnosis.engine is None
    fix = diagnosis.fix
    assert fix is not None and not fix.flags and fix.command is None
    assert "SGLang" in fix.summary and "vLLM" in fix.summary


# requests' ProxyError on a request to localhost (the proxy set for downloads is not reachable from the job): the
# shape of sgl-project/sglang#9155 and PR#7341's motivation.
def test_a_proxy_error_on_a_local_request_is_a_proxy() -> None:
    log = (
        "Traceback (most recent call last):\n"
        '  File "/usr/local/lib/python3.10/dist-packages/requests/adapters.py", line 694, in send\n'
        "    raise ProxyError(e, request=request)\n"
        "requests.exceptions.ProxyError: HTTPConnectionPool(host='127.0.0.1', port=30000): Max retries exceeded with "
        "url: http://127.0.0.1:30000/model_info (Caused by ProxyError('Unable to connect to proxy', "
        "OSError('Tunnel connection failed: 503 Service Unavailable')))\n"
    )
    diagnosis = first_diagnosis(log)
    assert diagnosis.category == "network" and diagnosis.fix is not None
    assert ("NO_PROXY", "localhost,127.0.0.1,0.0.0.0") in diagnosis.fix.env


# Stop 38's blind split (issue 28): a port clash between the ranks of one server was blamed on another process.
# SGLang derives its DP-attention ZMQ ports from the rendezvous port (sglang/srt/server_args.py PortArgs.init_new,
# 0.5.9: --dist-init-addr's port + 1 to + 5); here the first of them is the HTTP --port.  zmq's own wording.
OWN_PORTS = """\
python -m sglang.launch_server --model-path Qwen/Qwen2-7B --tp 2 --dp 2 --enable-dp-attention --port 30000 --dist-init-addr 127.0.0.1:29999
[2025-01-01 00:00:00 TP1] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/zmq/sugar/socket.py", line 311, in bind
    super().bind(addr)
zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30000')
"""


def test_a_port_that_is_two_of_the_servers_own_ports_is_said_to_be_so() -> None:
    diagnosis = first_diagnosis(OWN_PORTS)
    assert diagnosis.category == "port-in-use" and diagnosis.fix is not None
    said = diagnosis.fix.steps[0]
    assert "port 30000 is both its HTTP port (--port) and a ZMQ port it derives (its rendezvous port + 1)" in said
    assert "the same server" in diagnosis.root_cause or "the server's own" in diagnosis.root_cause


def test_a_port_no_other_setting_of_the_launch_uses_gets_only_the_general_word_on_own_ports() -> None:
    log = OWN_PORTS.replace("127.0.0.1:29999", "127.0.0.1:40000")
    fix = first_diagnosis(log).fix
    assert fix is not None and not any("is both" in step or "is also" in step for step in fix.steps)
    assert any("picks for itself" in step for step in fix.steps)


def test_a_source_location_s_line_number_is_not_read_as_the_port_in_use() -> None:
    """Rust's panic handler prints "thread '<name>' panicked at FILE:LINE:COL:" then the message (sgl-router is Rust,
    sgl-project/sglang#6491); an unwrap of a bind error then names no port: "server.rs:212" is a line, not a port."""
    log = ("thread 'tokio-runtime-worker' panicked at src/server.rs:212:45:\n"
           "called `Result::unwrap()` on an `Err` value: Os { code: 98, kind: AddrInUse, message: \"Address already in use\" }\n")
    diagnosis = first_diagnosis(log)
    assert diagnosis.pattern == "rule-network-port-in-use", diagnosis.pattern
    assert "212" not in diagnosis.title and "212" not in diagnosis.root_cause


# The shape of sgl-project/sglang PR#29211: pure data parallelism (--dp-size 2, no DP attention) with KV events; every
# DP rank's publisher binds the configured endpoint offset by its attention-DP rank, 0 for every rank, so the second
# rank's bind fails on the port its sibling holds.
KV_EVENTS_DP = """\
python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B --dp-size 2 --kv-events-config '{"publisher": "zmq", "endpoint": "tcp://*:5557"}' --port 30000
[2026-06-20 10:00:05 DP1 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.12/dist-packages/sglang/srt/disaggregation/kv_events.py", line 200, in __init__
    self._pub.bind(self._endpoint)
  File "/usr/local/lib/python3.12/dist-packages/zmq/sugar/socket.py", line 311, in bind
    super().bind(addr)
zmq.error.ZMQError: Address already in use (addr='tcp://*:5557')
"""


def test_a_port_every_data_parallel_rank_binds_is_a_collision_with_its_own_rank() -> None:
    """Issue 28, stop 39 class 4: the port is the one --kv-events-config gives, not --port; moving --port (the old
    advice) cannot free it.  The fix says the server collides with its own rank and names only flags the release has."""
    diagnosis = first_diagnosis(KV_EVENTS_DP)
    assert diagnosis.category == "port-in-use" and diagnosis.fix is not None
    fix = diagnosis.fix
    assert "--kv-events-config" in fix.summary and "its own rank" in fix.summary and "DP1" in fix.summary
    assert not fix.flags and fix.command is None  # no --port 30001: that port is not the one taken
    assert any("--dp-size 1" in step for step in fix.steps)
    assert any("bug of the release" in step for step in fix.steps)


def test_a_port_another_flag_gives_on_a_single_rank_server_is_that_flags() -> None:
    log = KV_EVENTS_DP.replace("--dp-size 2 ", "").replace(" DP1 TP0]", " TP0]")
    fix = first_diagnosis(log).fix
    assert fix is not None and fix.summary.startswith("Port 5557 is the one --kv-events-config gives, not --port")
    assert not fix.flags


def test_a_size_equal_to_the_port_is_not_the_flag_that_gives_it() -> None:
    """--max-total-tokens 5557 is a size, not a port: the port stays unexplained by it."""
    log = KV_EVENTS_DP.replace(""" --kv-events-config '{"publisher": "zmq", "endpoint": "tcp://*:5557"}'""", " --max-total-tokens 5557")
    fix = first_diagnosis(log).fix
    assert fix is not None and "--max-total-tokens" not in fix.summary



# Stop 40 (issue 28, class 3): a port the ranks of one server open among themselves, where the fix led with another
# HTTP --port.  Without --dist-init-addr SGLang's ranks meet at 127.0.0.1:<NCCL port> (model_runner
# init_torch_distributed), so torch's TCPStore names the NCCL port; the wording is torch's (c10d's socket.cpp).
TCPSTORE_ONE_NODE = """\
$ python3 -m sglang.launch_server --model-path /models/Qwen3-32B --tp 2 --port 30000
[2026-01-10 10:00:01 TP0] Scheduler hit an exception: Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/torch/distributed/rendezvous.py", line 189, in _create_c10d_store
    return TCPStore(
torch.distributed.DistNetworkError: The server socket has failed to listen on any local network address. port: 31542, useIpv6: false, code: -98, name: EADDRINUSE, message: address already in use
"""


def test_the_tcpstore_port_of_one_node_without_dist_init_addr_is_the_nccl_port() -> None:
    fix = first_diagnosis(TCPSTORE_ONE_NODE).fix
    assert fix is not None
    assert [(op.flag, op.value) for op in fix.flags] == [("--nccl-port", "31543")]


def test_with_dist_init_addr_given_the_tcpstore_port_stays_its_port() -> None:
    log = TCPSTORE_ONE_NODE.replace("--port 30000", "--port 30000 --dist-init-addr 10.0.0.5:31542")
    fix = first_diagnosis(log).fix
    assert fix is not None and [op.flag for op in fix.flags] == ["--dist-init-addr"]


ZMQ_NOT_HTTP = """\
$ python3 -m sglang.launch_server --model-path /models/Qwen3-32B --tp 2 --port 30000
[2026-01-10 10:00:01] Traceback (most recent call last):
  File "/usr/local/lib/python3.10/dist-packages/zmq/sugar/socket.py", line 311, in bind
    super().bind(addr)
zmq.error.ZMQError: Address already in use (addr='tcp://127.0.0.1:30233')
"""


def test_a_zmq_port_that_is_not_the_http_port_leads_with_the_earlier_launch_not_another_port() -> None:
    """A ZMQ socket bound on every address (a port a configuration gave): stopping the earlier launch comes first."""
    fix = first_diagnosis(ZMQ_NOT_HTTP.replace("tcp://127.0.0.1:", "tcp://*:")).fix
    assert fix is not None and not fix.flags
    assert fix.summary.startswith("Port 30233 is one of the ZMQ ports") and "not its HTTP port" in fix.summary
    assert [op.flag for alternative in fix.alternatives for op in alternative.flags] == ["--port"]


def test_a_loopback_zmq_port_leads_with_the_engines_own_allocation() -> None:
    """On 127.0.0.1 the port is one SGLang picked itself (tests/test_ports_and_symbols_s51.py): its own allocation
    first, no port moved by a flag value, another process the last step."""
    fix = first_diagnosis(ZMQ_NOT_HTTP).fix
    assert fix is not None and not fix.flags and not fix.alternatives
    assert fix.summary.startswith("Port 30233 is one SGLang picked itself")


# SGLang 0.5.x wait_port_available (sglang/srt/utils/common.py) names the process that holds the port.
HELD_BY = """\
$ python3 -m sglang.launch_server --model-path /models/m --port 30000
Traceback (most recent call last):
  File "/opt/venv/lib/python3.11/site-packages/sglang/srt/utils/common.py", line 716, in wait_port_available
    raise ValueError(
ValueError: nccl_port at 30412 is not available in 30 seconds. nccl_port is used by a process already. process.name()='python3'' process.cmdline()=['python3', '-m', 'sglang.launch_server', '--port', '30000'] process.status()='sleeping' pid=48213
"""


def test_a_port_the_message_says_an_engine_process_holds_leads_with_that_process() -> None:
    fix = first_diagnosis(HELD_BY).fix
    assert fix is not None and not fix.flags
    assert "pid 48213 (python3 -m sglang.launch_server --port 30000)" in fix.summary
    assert [op.flag for alternative in fix.alternatives for op in alternative.flags] == ["--nccl-port"]
    other = HELD_BY.replace("'python3', '-m', 'sglang.launch_server', '--port', '30000'", "'redis-server'")
    moved = first_diagnosis(other).fix
    assert moved is not None and [op.flag for op in moved.flags] == ["--nccl-port"]
