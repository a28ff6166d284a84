"""Network on the host (issue 28, class 6): the server's own request to itself answered by an HTTP proxy, and a
port or rendezvous address that is taken or unreachable.

A proxy: the server asks itself (SGLang's warm-up GETs `{host}:{port}/model_info`, sglang/srt/entrypoints/
http_server.py `_execute_server_warmup` / `_wait_and_warmup`, 0.4.10.post2-0.5.23) with `requests`, which sends
every URL through `http_proxy`/`HTTPS_PROXY` unless `NO_PROXY` names the host.  A response to a local address
that is a 403/407/502/503/504, an HTML page, a proxy's words, or a JSON decoding error on the warm-up's own
reply are the proxy's answer (sgl-project/sglang#9814, #4935, #16855, #9155; PR#7341).

A connect that found no local port (`EADDRNOTAVAIL`): reasoning/no_local_port.py.

A port: `EADDRINUSE` / `[Errno 98]` / torch's TCPStore "server socket has failed to listen" name the port in use;
a TCPStore client that "failed to connect" or a refused connection to a rendezvous names the address that is not
reachable.  The engines' own port-in-use patterns come first (patterns/*/port-in-use.toml); this rule answers
what they leave: vLLM's internal and rendezvous ports, and a log that shows no engine."""

from __future__ import annotations

import regex

from logsleuth.diagnosis.grouping import names_no_cause
from logsleuth.fixes.build import build_fix
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Diagnosis, Fix, LaunchInfo
from logsleuth.reasoning.catalog_flags import release_flag, releases_with, setting_fix
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.multinode import topology_facts
from logsleuth.reasoning.no_local_port import no_local_port
from logsleuth.tracebacks.rendezvous_warnings import rendezvous_warning

_NO_PROXY = "localhost,127.0.0.1,0.0.0.0"
_LOCAL = compile_lazily_regex(r"(?<![\w.])(?:127\.0\.0\.1|localhost|0\.0\.0\.0|\[?::1\]?)(?::(?P<port>\d{2,5}))?(?![\w.])")
# Every pattern here is bounded: a host name is at most 253 characters and is tried only where one can start
# (tests/reasoning/test_network.py times them on long lines).
# A response came back (a proxy answers; a server that is down refuses the connection instead).
_PROXY_STATUS = compile_lazily_regex(r"<Response \[(?P<status>403|407|502|503|504)\]>|\b(?P<status>407) Proxy Authentication Required")
_PROXY_WORDS = compile_lazily_regex(r"(?i)ProxyError|Unable to connect to proxy|\bsquid\b|proxy[ -]server|Proxy Authentication|via:\s*\S*proxy")
_HTML = compile_lazily_regex(r"(?i)<(?:!DOCTYPE html|html\b|body\b|title\b)")
_JSON_DECODE = compile_lazily_regex(r"JSONDecodeError|Expecting value: line 1 column 1 \(char 0\)")
_PROXY_ENV = compile_lazily_regex(r"\b(?:https?_proxy|HTTPS?_PROXY|all_proxy|ALL_PROXY)\s*[=:]\s*['\"]?(?P<value>\S+?)['\"]?(?:\s|,|$)")
_WARMUP_FUNCTIONS = compile_lazily_regex(r"warmup|wait_for_server|wait_until_ready|health")

_IN_USE = compile_lazily_regex(
    r"(?i)EADDRINUSE|\[Errno 98\]|Address already in use|address in use|server socket has failed to listen"
)
# host:port, never a source location FILE:LINE (a Rust panic's "panicked at src/server.rs:212:45", a Python frame's
# "scheduler.py:123"): its line number is no port.
_IN_USE_PORT = compile_lazily_regex(
    r"(?:\('[^']*', (?P<port>\d{2,5})\)|port:? (?P<port>\d{2,5})\b|addr='\w+://[^']*:(?P<port>\d{2,5})'|"
    r"(?<![\w.\[:-])(?![\w.-]*\.(?:rs|py|pyx|c|cc|cpp|cu|cuh|h|hpp|go|java|js|ts):\d)"
    r"(?:[\w.-]{1,253}|\[[\w:]{1,45}\]):(?P<port>\d{2,5})\b)"
)
_UNREACHABLE = compile_lazily_regex(
    r"(?i)client socket has failed to connect|client socket has timed out|Connection refused|connect\(\) timed out|No route to host|"
    r"Connection timed out|timed out after \d+ seconds? while connecting"
)
# What torch's c10d warnings above a cut traceback say of the store's socket (tracebacks/rendezvous_warnings.py), the
# most telling first: a read or a connect that timed out, a refusal, a connection the store's side closed.
_STORE_SOCKET_SAID = (
    compile_lazily_regex(r"timed out after \d{1,9}ms|timed out after \S{1,40} while trying to connect to \S{1,300}"),
    compile_lazily_regex(r"failed to connect to \S{1,300} \(errno: \d{1,4} - [^)]{1,80}\)"),
    compile_lazily_regex(r"Connection refused|Connection reset by peer|Broken pipe|likely a timeout|timed out"),
)
_POLL_ONLY = compile_lazily_regex(r"\[c10d\] waitForInput: poll for socket")
# the address torch's SocketConnectOp tried: `failed to connect to [10.1.2.3]:5000 (errno…` (tryConnect), `timed out
# after 600s while trying to connect to (node-0, 29500).` (throwTimeoutError)
_CONNECT_TO = compile_lazily_regex(
    r"(?:failed to connect to|trying to connect to) (?:\[(?P<host>[^\]\s]{1,253})\]:(?P<port>\d{2,5})\b|"
    r"\((?P<host>\w[\w.:-]{0,252}), (?P<port>\d{2,5})\))"
)
# the far end of torch's SocketImpl (`SocketImpl(fd=…, addr=[this host]:port, remote=[store host]:port)`)
# a host name, not an address literal (IPv4 dotted, IPv6 with colons)
_HOST_NAME = compile_lazily_regex(r"(?=[\w.-]*[a-zA-Z])[a-zA-Z][\w-]{0,62}(?:\.[\w-]{1,63}){0,10}")
_REMOTE = compile_lazily_regex(r"\bremote=\[(?P<host>[\w.:-]{1,253})\]:(?P<port>\d{2,5})\b")
_RENDEZVOUS_WORDS = compile_lazily_regex(r"(?i)TCPStore|c10d|rendezvous|dist[_-]init|MASTER_ADDR|MASTER_PORT|init_process_group|DistNetworkError|DistStoreError")
_ADDRESS = compile_lazily_regex(
    r"(?:network address of|trying to connect to) \((?P<host>\w[\w.:-]*), (?P<port>\d{2,5})\)|"
    r"(?<![\w.-])(?:tcp://)?(?P<host>(?:\d{1,3}\.){3}\d{1,3}|"
    # a host name, never a source location FILE:LINE (the c10 record's `[W302 … socket.cpp:752]`)
    r"(?![\w.-]*\.(?:rs|py|pyx|c|cc|cpp|cu|cuh|h|hpp|go|java|js|ts):\d)[a-zA-Z][\w-]{0,62}\.[\w.-]{1,190}):(?P<port>\d{2,5})\b"
)


def network(evidence: Evidence) -> Diagnosis | None:
    """A proxy answering the server's own request, a port in use, or a rendezvous address not reachable."""
    text = evidence.message_text
    return (no_local_port(evidence) or _proxy(evidence, text) or _port_in_use(evidence, text)
            or _unreachable(evidence, text) or _unreachable_above_cut(evidence))


def _unreachable_above_cut(evidence: Evidence) -> Diagnosis | None:
    """A traceback cut before its exception line under torch's c10d warnings that the store's socket timed out, was
    refused or closed (tracebacks/rendezvous_warnings.py): the ranks never reached the rendezvous, whatever the cut
    traceback was doing (split 19's B-03, sgl-project/sglang#7478: a scheduler cut in its TP worker's start)."""
    failure = evidence.failure
    if not names_no_cause(failure):
        return None
    # The scanner keeps the warnings as context only when they are the last lines before the failure's first line
    # (scanner._age_rendezvous_warnings): a start-up that went on past them recovered.  waitForInput's poll line alone
    # ("returned 0, likely a timeout") is a wait torch retries, with no timeout, refusal or reset of its own.
    warned = [line for line in failure.context if rendezvous_warning(line)]
    if not any(not _POLL_ONLY.search(line) for line in warned):
        return None
    said = next((found for pattern in _STORE_SOCKET_SAID for line in warned if (found := pattern.search(line))), None)
    if said is None:
        return None
    return _unreachable(evidence, "\n".join(warned), said=said)


def _around(evidence: Evidence) -> list[str]:
    return [*evidence.failure.context, *evidence.lines]


def _proxy(evidence: Evidence, text: str) -> Diagnosis | None:
    failure = evidence.failure
    own_request = any(_WARMUP_FUNCTIONS.search(frame.function or "") for block in failure.exceptions for frame in block.frames)
    local = _LOCAL.search(text)
    if not (own_request or local):
        return None
    status = _PROXY_STATUS.search(text)
    html = _HTML.search(text)
    words = _PROXY_WORDS.search(text)
    undecodable = own_request and _JSON_DECODE.search(text)
    proxy_env = next((found for line in _around(evidence) if (found := _PROXY_ENV.search(line))), None)
    # 407, 502 and 504 are a gateway's answers; a server can answer 403 or 503 itself (a key refused, not ready
    # yet), so those need another sign of a proxy.
    gateway = status is not None and status["status"] in ("407", "502", "504")
    if not (gateway or html or words or undecodable or (status and proxy_env)):
        return None
    found_signs = [
        f"the reply was HTTP {status['status']}: a response came back, so something answered in the server's place"
        if status else "",
        "the reply is an HTML page, not the server's JSON" if html else "",
        f"the error names a proxy ({words.group(0)})" if words else "",
        "the server's own reply could not be read as JSON" if undecodable else "",
        f"the environment sets a proxy ({regex.split(r'[=:]', proxy_env.group(0))[0].strip()})" if proxy_env else "",
    ]
    target = local.group(0) if local else _server_address(evidence.launch)
    facts = [
        f"the request went to {target}, this host itself" if target else "the request was the server's own warm-up "
        "request to itself",
        *(sign for sign in found_signs if sign),
    ]
    return Diagnosis(
        pattern="rule-network-proxy-answers-local-request",
        title="An HTTP proxy answered a request the server sent to this host itself",
        category="network",
        root_cause=(
            "The environment routes HTTP through a proxy (http_proxy / HTTPS_PROXY), and NO_PROXY does not name "
            f"the local addresses, so the server's own request to {target or 'itself'} went to the proxy, which "
            "cannot reach this host's port and answered with an error page. The server itself may be fine."
        ),
        fix=Fix(
            summary="Exempt the local addresses from the proxy: set NO_PROXY (and no_proxy, which some libraries "
            f"read instead) to {_NO_PROXY} in the server process's environment.",
            env=(("NO_PROXY", _NO_PROXY), ("no_proxy", _NO_PROXY)),
            steps=(
                "keep any hosts NO_PROXY already lists, adding these three; set both spellings, as tools read one or the other",
                "in a container or a service manager, set them where the server process's environment is defined",
                "or unset http_proxy / https_proxy for the server once the model is downloaded",
            ),
        ),
        engine=evidence.launch.engine,
        engine_version=evidence.launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
        references=("sglang/srt/entrypoints/http_server.py: _execute_server_warmup `assert res.status_code == 200, "
                    "f\"{res=}, {res.text=}\"` (0.5.9 line 1679, 0.5.23 line 2376)",
                    "sgl-project/sglang#9814, #4935, #16855, #9155, PR#7341"),
    )


def _server_address(launch: LaunchInfo) -> str | None:
    values = dict(launch.server_args)
    host, port = values.get("host", "").strip("'\""), values.get("port", "").strip("'\"")
    return f"{host}:{port}" if host and port else None


def _port_in_use(evidence: Evidence, text: str) -> Diagnosis | None:
    if not _IN_USE.search(text):
        return None
    found = _IN_USE_PORT.search(text)
    port = found["port"] if found else None
    launch = evidence.launch
    fix = _port_fix(evidence, port, text)
    facts = [f"the message: {_IN_USE.search(text).group(0)}" + (f", port {port}" if port else "")]
    if port and port == _api_port(launch):
        facts.append(f"{port} is the server's HTTP port (--port)")
    return Diagnosis(
        pattern="rule-network-port-in-use",
        title=f"Port {port} is already in use" if port else "A port the server needs is already in use",
        category="port-in-use",
        root_cause=(
            f"The server could not listen on {f'port {port}' if port else 'a port it needs'}: another process holds it, most often an "
            "earlier server that is still running or still shutting down, or another job on the same host; or a second port the "
            "engine picks itself for its ranks (its NCCL or rendezvous port, its ZMQ or internal ports) is one the same server "
            "already uses."
        ),
        fix=fix,
        engine=launch.engine,
        engine_version=launch.engine_version,
        basis="rule",
        evidence=tuple(facts),
    )


def _api_port(launch: LaunchInfo) -> str | None:
    values = dict(launch.server_args)
    if "port" in values:
        return values["port"].strip("'\"")
    if launch.command:
        found = regex.search(r"--port[= ](\d+)", launch.command)
        if found:
            return found.group(1)
    return {"vllm": "8000", "sglang": "30000"}.get(launch.engine or "")


def _port_fix(evidence: Evidence, port: str | None, text: str) -> Fix | None:
    launch, failure = evidence.launch, evidence.failure
    steps = (f"see who holds it: ss -ltnp | grep ':{port}'" if port else "see who holds the port: ss -ltnp",
             "stop that process, or give this server another free port")
    rendezvous = bool(_RENDEZVOUS_WORDS.search(text))
    if launch.engine == "sglang":
        # SGLang's own builder knows its ports (--port, --nccl-port, --dist-init-addr).
        what = "dist-init" if rendezvous and _flag_given(launch, "--dist-init-addr") else ("nccl" if rendezvous else "")
        return build_fix({"builder": "free_port"}, failure, {"what": what, **({"port": port} if port else {})}, launch)
    if launch.engine == "vllm":
        if port is not None and port == _api_port(launch) and (flag := release_flag(launch, "--port")):
            return setting_fix(failure, launch, f"Port {port} is already in use: start the server on another {flag}.",
                               ((flag, str(int(port) + 1)),), steps)
        if rendezvous and _flag_given(launch, "--master-port") and (flag := release_flag(launch, "--master-port")):
            return Fix(summary=f"The rendezvous port {port or ''} is in use: give {flag} a free port, the same on "
                       "every node.".replace("  ", " "), steps=steps)
        return Fix(
            summary="vLLM picks its internal ports itself (from VLLM_PORT when it is set): set VLLM_PORT to a free "
            "base port, or stop what holds the port.",
            env=(("VLLM_PORT", str(int(port) + 100)),) if port else (),
            steps=(*steps, "vLLM takes its internal ports from VLLM_PORT upward, one after another: a VLLM_PORT at or just "
                   "below the HTTP --port (or another server's) makes the server collide with its own ports"),
        )
    return Fix(
        summary="Free the port or move the server to another one: the HTTP port is --port in both engines; SGLang's "
        "rendezvous port is in --dist-init-addr (several nodes) or --nccl-port, vLLM's in --master-port "
        f"({releases_with('vllm', '--master-port')}) or the VLLM_PORT environment variable.",
        steps=steps,
    )


def _flag_given(launch: LaunchInfo, flag: str) -> bool:
    field = flag.lstrip("-").replace("-", "_")
    return bool(launch.command and flag in launch.command) or any(key == field for key, _ in launch.server_args)


# The address a process advertises is the one its engine picks unless a variable names it: vLLM's get_ip()
# (vllm/utils/network_utils.py, 0.11.2 and 0.33.0) reads VLLM_HOST_IP (vllm/envs.py) and feeds the distributed init;
# torch's Gloo and NCCL pick an interface unless GLOO_SOCKET_IFNAME / NCCL_SOCKET_IFNAME name one.  SGLang's rendezvous
# is --dist-init-addr's TCPStore: its SGLANG_HOST_IP / HOST_IP (get_local_ip_auto) is read by the disaggregation and
# Mooncake connections only (srt/disaggregation/*/conn.py 0.4.10.post2; also shm_broadcast and parallel_state helpers
# in 0.5.9), never for that store, so it is not named here.  A VPN's tunnel is the interface picked on some hosts, an
# address nothing else reaches (split 20's H-04, vllm-project/vllm-metal#58, with the sibling #625: the tunnel address
# from get_ip(), fixed by VLLM_HOST_IP).
_HOST_ADDRESS = {"vllm": "the engine's host address (VLLM_HOST_IP)",
                 "sglang": "--dist-init-addr (the same address on every node)"}


_NO_SOURCE_ADDRESS = compile_lazily_regex(r"errno:? 99\b|Cannot assign requested address")


def _interfaces_step(launch: LaunchInfo) -> str:
    """Which interface and address the ranks use, by the settings the engine and torch read for the rendezvous."""
    host_ip = _HOST_ADDRESS.get(launch.engine or "",
                                "the rendezvous address (SGLang: --dist-init-addr; vLLM: VLLM_HOST_IP for its own)")
    return (f"with several network interfaces (a VPN or tunnel among them), the address and interface picked can be "
            f"one the other ranks, or this process itself, cannot reach: set {host_ip} and GLOO_SOCKET_IFNAME / "
            "NCCL_SOCKET_IFNAME to the address and interface the nodes share (on a single node, the loopback "
            "address), never to the VPN's, or disconnect the VPN")


def _unreachable(evidence: Evidence, text: str, said: regex.Match[str] | None = None) -> Diagnosis | None:
    """`said`: what torch's c10d warnings above a cut traceback say of the store's socket (_unreachable_above_cut)."""
    above_cut = said is not None
    said = said or _UNREACHABLE.search(text)
    if said is None or not _RENDEZVOUS_WORDS.search(text):
        return None
    # above a cut traceback, only the store's own words name the address (torch's warnings carry a socket.cpp:LINE)
    address = _REMOTE.search(text) or _CONNECT_TO.search(text) or (None if above_cut else _ADDRESS.search(text))
    host, port = (address["host"], address["port"]) if address else (None, None)
    launch = evidence.launch
    flag = release_flag(launch, "--dist-init-addr") or release_flag(launch, "--master-addr")
    where = flag or "the rendezvous address (SGLang --dist-init-addr; vLLM --master-addr / --master-port; torchrun MASTER_ADDR / MASTER_PORT)"
    facts = ([f"torch's c10d warnings just above the traceback the paste cut: {said.group(0)}"] if above_cut
             else [f"the message: {said.group(0)}"])
    if host:
        facts.append(f"the rendezvous address is {host}:{port}")
        if _LOCAL.search(host):
            facts.append(f"{host} is this host itself: with several nodes, every node must be given node 0's address")
    facts.extend(topology_facts(launch))
    steps = [
        "start the first node (node rank 0) first: it opens the rendezvous port, the others connect to it",
        f"give every node the same {where}: node 0's address as the other nodes reach it, not 127.0.0.1",
        # In words, not a command: logsleuth prints no command the log or the user did not give.
        f"check that this node reaches {host} on port {port} and that no firewall closes the port" if host else
        "check that this node reaches node 0 and that no firewall closes the port",
        _interfaces_step(launch),
    ]
    if _NO_SOURCE_ADDRESS.search(text):
        # connect's EADDRNOTAVAIL at a rendezvous: most often a destination of an address family this host has no
        # address in (a name resolving to IPv6 on an IPv4-only host or container: pytorch/PiPPy#158, moby/moby#37616)
        steps.append("errno 99 (Cannot assign requested address) on this connect: this host has no source address of "
                     "the destination's family, most often an IPv6 address (IPv6 turned off here): give the "
                     "rendezvous an IPv4 address")
    if host and _HOST_NAME.fullmatch(host) and not _LOCAL.search(host):
        # torch resolves a name with getaddrinfo and may take its IPv6 address first (sgl-project/sglang#7478, tagged
        # IPv6): the nodes may reach each other over IPv4 only.
        steps.append(f"{host} is a host name: check what it resolves to on every node (an IPv6 address where the "
                     "nodes reach each other over IPv4 only, or another machine); giving node 0's IP address instead "
                     "of its name rules that out")
    if above_cut:
        # the traceback's own exception line is missing: the warnings are the likeliest reading, not a proven one
        root_cause = ("A guess from what the paste shows (the traceback is cut before its exception line): torch's "
                      "c10d warnings right above it say " + (f"the rendezvous store at {host}:{port}" if host else
                                                             "the rendezvous store") +
                      " did not answer or refused the connection, so the ranks likely never reached the rendezvous: "
                      "node 0 not listening there (not started yet, or failed), an address this node cannot reach, or "
                      "a firewall closing the port.  The missing exception line would confirm it.")
    elif host:
        root_cause = (f"The process group's rendezvous ({host}:{port}) refused or did not answer the connection: node "
                      "0 is not listening there (not started yet, or failed), the address is not one this node can "
                      "reach, or a firewall closes the port.")
    else:
        root_cause = ("The process group's rendezvous refused or did not answer the connection: node 0 is not "
                      "listening (not started yet, or failed), the address is not one this node can reach, or a "
                      "firewall closes the port.")
    return Diagnosis(
        pattern="rule-network-rendezvous-unreachable",
        title="The rendezvous address of the distributed launch cannot be reached",
        category="network",
        root_cause=root_cause,
        fix=Fix(summary=f"Make {where} reachable from every node and start node 0 first.", steps=tuple(steps)),
        engine=launch.engine,
        engine_version=launch.engine_version,
        basis="general" if above_cut else "rule",
        evidence=tuple(facts),
    )
