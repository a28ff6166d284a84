"""Multi-node launches (issue 28, class 6): the rendezvous of a launch over several nodes failing for a reason the
log names, read from the libraries' own messages, never from one thread's wording.

- An address that is a shell variable's name (`$MASTER_ADDR`, `${HEAD_IP}`) where a host belongs: the variable was
  not expanded (not set or not exported in the shell that ran the command, or the command never went through a
  shell).  torch prints the host it was given in its c10d messages (torch/csrc/distributed/c10d/socket.cpp
  SocketConnectOp::tryConnect: "The {IPv4 |IPv6 |}network addresses of ({host}, {port}) cannot be retrieved (gai
  error: {r} - {gai_strerror})", "The client socket has timed out after …ms while trying to connect to ({host},
  {port})"; TCPStore.cpp: "TCP client failed to connect/validate to host {host}:{port}"), and the engines print
  the setting itself (SGLang's `server_args=` `dist_init_addr=…`, vLLM's `distributed_init_method=tcp://…`).
- A rendezvous host name that does not resolve: getaddrinfo's failure for IPv4 (or for any family), or TCPStore's
  client naming the resolver's error.  IPv6 alone is no such sign: c10d tries both families and healthy runs print
  the IPv6 warning when only IPv4 resolves.
- Gloo's full mesh between the ranks not connecting (torch/csrc/distributed/c10d/ProcessGroupGloo.cpp: "Gloo
  connectFullMesh failed with …", the CPU process group both engines create beside NCCL's), often after Gloo fell
  back to the loopback address because the node's host name does not resolve to its own address
  (ProcessGroupGloo.cpp createDefaultDevice: "Unable to resolve hostname to a (local) address. Using the loopback
  address as fallback. Manually set the network interface to bind to with GLOO_SOCKET_IFNAME.").  Threads:
  sgl-project/sglang#3226, vllm-project/vllm#7074, aws-samples/aws-do-eks#50.
- An interface variable naming no interface of this node: Gloo's device look-up ("Unable to find address for: …")
  and NCCL's bootstrap ("Bootstrap : no socket interface found").  marin-community/marin#6940, #7018.
- An IPv6 address written into a `tcp://host:port` URL without brackets: urllib cannot tell the port from the
  address (CPython urllib/parse.py `port`: "Port could not be cast to integer value as …", reached from torch's
  distributed/rendezvous.py `_tcp_rendezvous_handler`).  Threads: vllm-project/vllm#18986, areal-project/AReaL#134,
  NovaSky-AI/SkyRL#612.

The rendezvous store giving up on ranks that never joined (TCPStore.cpp "… M/K clients joined.") is left to the
nccl category's general checks, which say a rank never arrived and name the release's own timeout flag.

Advice names environment variables and the release's own flags (release_flags), never a command the log did not
give; a value only the user knows (which interface, which address) is asked for (`needs_input`)."""

from __future__ import annotations

import regex

from logsleuth.command_line import flag_value
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Diagnosis, Fix, LaunchInfo
from logsleuth.reasoning.catalog_flags import release_flag, releases_with
from logsleuth.reasoning.evidence import Evidence

# Lines longer than this are read only up to it: every pattern below is anchored on a literal and bounded.
_LINE_LIMIT = 8192

# A shell variable's name as the shell would have expanded it: `$NAME` or `${NAME}`.
_VAR = r"\$(?:\{[A-Za-z_]\w{0,63}\}|[A-Za-z_]\w{0,63})"
# Where a host stands in torch's c10d messages and in the settings the engines print.
_UNEXPANDED_HOST = compile_lazily_regex(
    rf"(?:network addresses of|trying to connect to|network address on) \((?P<host>{_VAR}), (?P<port>\d{{1,5}}|{_VAR})\)"
    rf"|to host (?P<host>{_VAR}):(?P<port>\d{{1,5}}|{_VAR})"
    rf"|remote=\[(?P<host>{_VAR})\]:(?P<port>\d{{1,5}})"
    rf"|tcp://(?P<host>{_VAR})(?::(?P<port>\d{{1,5}}|{_VAR}))?"
    rf"|\b(?P<setting>dist_init_addr|nccl_init_addr|master_addr|data_parallel_address|data_parallel_master_ip|rdzv_endpoint)"
    rf"['\"]?\s{{0,3}}[=:]\s{{0,3}}['\"](?P<host>{_VAR})(?::(?P<port>\d{{1,5}}|{_VAR}))?['\"]"
)
# getaddrinfo failing for IPv4 or for every family (older torch printed no family); TCPStore's client naming the
# resolver's error; musl's and glibc's wordings of EAI_NONAME / EAI_AGAIN.
_UNRESOLVED_HOST = compile_lazily_regex(
    r"The (?:IPv4 )?network addresses of \((?P<host>[^\s,()]{1,253}), (?P<port>\d{1,5})\) cannot be retrieved"
    r" \(gai error: (?P<code>-?\d{1,3}) - (?P<why>[^()\n]{1,80})\)"
    r"|to host (?P<host>[^\s:\[\]]{1,253}):(?P<port>\d{1,5}) - (?P<why>Name or service not known|Temporary failure in name resolution|Name does not resolve)"
)
# The failure's type when the paste's only failure is c10d's look-up warning (facts/incapacity_warnings.toml).
_UNRESOLVED_WARNING = "rendezvous host unresolved"
_C10D_LOOKUP = compile_lazily_regex(
    r"network addresses of \((?P<host>[^\s,()]{1,253}), (?P<port>\d{1,5})\) cannot be retrieved \(gai error: -?\d{1,3} - (?P<why>[^()\n]{1,80})\)"
)
_GLOO_MESH = "Gloo connectFullMesh failed"
_LOOPBACK_FALLBACK = "Using the loopback address as fallback"
_GLOO_LOOPBACK_PEER = compile_lazily_regex(r"(?P<side>remote|local)=\[(?P<address>127\.\d{1,3}\.\d{1,3}\.\d{1,3}|::1)\]")
_GLOO_REASON = compile_lazily_regex(r"(?i)\b(timed out connecting|connection refused|connection reset by peer|no route to host)")
# An interface variable naming no interface of this node: Gloo's device look-up (gloo/transport/tcp/device.cc
# lookupAddrForIface: "Unable to find address for: <name>") and NCCL's bootstrap (src/bootstrap.cc: "Bootstrap : no
# socket interface found", when NCCL_SOCKET_IFNAME matches none).  marin-community/marin#6940, #7018.
_GLOO_NO_INTERFACE = compile_lazily_regex(r"Unable to find address for: (?P<name>\S{1,64})")
_NCCL_NO_INTERFACE = "Bootstrap : no socket interface found"
_INTERFACE_GIVEN = compile_lazily_regex(r"\b(?:GLOO|NCCL)_SOCKET_IFNAME=[\w^,=.:-]{1,64}")
# An IPv6 address in a URL without brackets: what urllib took for the port holds the address's own colons.
_PORT_CAST = compile_lazily_regex(r"Port could not be cast to integer value as (?:\{port!r\}: )?'(?P<value>[0-9A-Fa-f.:%\w-]{1,120})'")

_INTERFACE_VARIABLES = "GLOO_SOCKET_IFNAME and NCCL_SOCKET_IFNAME"


def multinode(evidence: Evidence) -> Diagnosis | None:
    """A rendezvous of several nodes failing for a reason the log names."""
    texts = _texts(evidence)
    return (
        _unexpanded_variable(evidence, texts)
        or _unresolved_host(evidence, texts)
        or _unbracketed_ipv6(evidence, texts)
        or _interface_not_found(evidence, texts)
        or _gloo_mesh(evidence, texts)
    )


def _texts(evidence: Evidence) -> tuple[str, ...]:
    """The failure's own text, the lines printed just before it, and the launch lines the reader kept."""
    failure = evidence.failure
    found = [evidence.message_text, *failure.context, *evidence.lines]
    return tuple(text[:_LINE_LIMIT] for text in found if text)


def _first(texts: tuple[str, ...], pattern: regex.Pattern[str]) -> regex.Match[str] | None:
    """The first match of `pattern` in `texts`, in their order."""
    return next((m for text in texts if (m := pattern.search(text)) is not None), None)


def _address_flag(launch: LaunchInfo) -> str:
    """The release's own setting for the rendezvous address, or each engine's when none is decided."""
    # vLLM's --data-parallel-address is the rendezvous only of a data-parallel launch (review L3, stop 48).
    data_parallel = _data_parallel_size(launch) > 1
    candidates = ("--dist-init-addr", "--data-parallel-address", "--master-addr") if data_parallel else (
        "--dist-init-addr", "--master-addr")
    flag = release_flag(launch, *candidates)
    if flag:
        return flag
    return ("the rendezvous address (SGLang --dist-init-addr; vLLM --data-parallel-address or --master-addr, "
            f"{releases_with('vllm', '--master-addr')}; torchrun MASTER_ADDR)")


def _diagnosis(evidence: Evidence, pattern: str, title: str, root_cause: str, fix: Fix, facts: list[str],
               category: str = "network") -> Diagnosis:
    launch = evidence.launch
    return Diagnosis(
        pattern=pattern, title=title, category=category, root_cause=root_cause, fix=fix,
        engine=launch.engine, engine_version=launch.engine_version, basis="rule",
        evidence=(*facts, *topology_facts(launch)),
    )


def _number(launch: LaunchInfo, *flags: str) -> int | None:
    """The first of `flags` the launch sets to a whole number (its command, else its settings dump)."""
    for flag in flags:
        value = flag_value(launch, flag)
        if value is not None and value.isdigit():
            return int(value)
    return None


def _data_parallel_size(launch: LaunchInfo) -> int:
    """The data-parallel degree the launch sets, in either engine's spelling (1 when it sets none)."""
    return _number(launch, "--dp-size", "--dp", "--data-parallel-size") or 1


def topology_facts(launch: LaunchInfo) -> list[str]:
    """The node and GPU arithmetic of a multi-node launch, from the numbers its command or settings dump shows: the
    GPUs each node runs, and a node rank or data-parallel rank range outside the launch's own count."""
    facts = []
    nnodes = _number(launch, "--nnodes")
    data_parallel = _data_parallel_size(launch)
    if nnodes is not None and nnodes > 1:
        # With data parallelism the per-node share depends on how the engine places its replicas: left out (review L2).
        if data_parallel == 1:
            tp = _number(launch, "--tp-size", "--tp", "--tensor-parallel-size") or 1
            pp = _number(launch, "--pp-size", "--pp", "--pipeline-parallel-size") or 1
            share = (f": {tp * pp // nnodes} on each node" if tp * pp % nnodes == 0
                     else f", which {nnodes} nodes cannot share evenly")
            facts.append(f"the launch runs tp {tp} x pp {pp} = {tp * pp} GPUs over {nnodes} nodes{share}")
        rank = _number(launch, "--node-rank")
        if rank is not None:
            facts.append(f"this node's rank is {rank}, of 0 to {nnodes - 1}" + ("" if rank < nnodes else ": out of range"))
    size, local, start = (_number(launch, "--data-parallel-size"), _number(launch, "--data-parallel-size-local"),
                          _number(launch, "--data-parallel-start-rank"))
    if size is not None and local is not None and start is not None:
        fits = start + local <= size
        facts.append(f"this node runs data-parallel ranks {start} to {start + local - 1} of {size}" + ("" if fits else
                     f": past the last rank, {size - 1}"))
    return facts


def _unexpanded_variable(evidence: Evidence, texts: tuple[str, ...]) -> Diagnosis | None:
    found = _first(texts, _UNEXPANDED_HOST)
    if found is None:
        return None
    host = found["host"]
    name = host.strip("${}")
    where = _address_flag(evidence.launch)
    facts = [f"the address the process was given is the text {host}{':' + found['port'] if found['port'] else ''}, "
             "a shell variable's name, not a host"]
    return _diagnosis(
        evidence,
        "rule-multinode-unexpanded-address-variable",
        f"The rendezvous address is the unexpanded shell variable {host}",
        f"The process was given the text {host} as the address of the rendezvous host: the shell never replaced it "
        f"with a value. {name} was not set (or not exported) in the shell that ran the command on this node, or the "
        "command did not go through a shell at all (single quotes around it, a container or job spec whose command "
        "list is run without a shell), so no host of that name exists and the nodes cannot meet.",
        Fix(
            summary=f"Give {where} a real address: {name} set to node 0's address (and exported) in the shell that "
            "runs the command on every node, or node 0's address written in its place.",
            steps=(
                f"check where {name} is set: it must be set before the launch command runs, in the same shell or "
                "environment (a job script's variables are not seen by a command started elsewhere)",
                "in a container or job spec, run the command through a shell if it relies on the shell to expand "
                "variables, or let the orchestrator substitute the value",
                "every node must be given the same address: node 0's, as the other nodes reach it",
            ),
            needs_input=(f"the value of {name}: node 0's address",),
        ),
        facts,
    )


def _unresolved_host(evidence: Evidence, texts: tuple[str, ...]) -> Diagnosis | None:
    found = _first(texts, _UNRESOLVED_HOST)
    alone = found is None  # the paste's only failure may be c10d's look-up warning for one family
    if found is None and (found := _lookup_warning_alone(evidence)) is None:
        return None
    host, port, why = found["host"], found["port"], found["why"]
    where = _address_flag(evidence.launch)
    facts = [f"the resolver's answer for {host}: {why}"]
    if alone:
        title = f"The paste ends on torch's failed look-up of the rendezvous host {host}"
        root_cause = (
            f"torch's distributed client could not look up {host} ({why}) for the rendezvous at {host}:{port} and "
            "keeps retrying until its connect timeout, printing nothing else meanwhile. The warning alone is harmless "
            "when the other address family resolves and the launch goes on; a launch that stops here is waiting for a "
            "host it cannot find or reach.")
        summary = (f"Check that {host} resolves on this node and that node 0 listens at {host}:{port}; give {where} "
                   "node 0's IP address if the name is not known on every node.")
        facts.append("the paste shows no other failure, and nothing after the warning says the launch went on")
    else:
        title = f"The rendezvous host name {host} does not resolve on this node"
        root_cause = (
            f"This node could not look up an address for {host} ({why}), so it cannot reach the rendezvous at "
            f"{host}:{port}: the name is misspelled, is known only on another node (its own /etc/hosts, a pod name "
            "without a DNS record), or this node's resolver cannot reach its DNS server.")
        summary = (f"Give {where} an address every node can resolve: node 0's IP address, or a name with a DNS record "
                   "(or an /etc/hosts entry) on every node.")
        facts.append(f"the rendezvous address is {host}:{port}")
    steps = (
        f"{host} must be node 0's name as the other nodes know it, not a name only node 0 knows",
        "on Kubernetes, a pod's own name resolves only through a headless service; the leader's address from the "
        "orchestrator (or its IP) works without one",
        "start node 0 first, and give every node the same address: node 0's, as the other nodes reach it; its port "
        "must be open between the nodes",
    )
    return _diagnosis(evidence, "rule-multinode-rendezvous-host-unresolved", title, root_cause,
                      Fix(summary=summary, steps=steps), facts)


def _lookup_warning_alone(evidence: Evidence) -> regex.Match[str] | None:
    """c10d's look-up warning as the paste's only failure (facts/incapacity_warnings.toml), read for its host."""
    blocks = evidence.failure.exceptions
    if not blocks or blocks[-1].type != _UNRESOLVED_WARNING:
        return None
    return _C10D_LOOKUP.search(blocks[-1].message)


def _unbracketed_ipv6(evidence: Evidence, texts: tuple[str, ...]) -> Diagnosis | None:
    found = _first(texts, _PORT_CAST)
    value = found["value"] if found is not None else None
    frames = [frame for block in evidence.failure.exceptions for frame in block.frames]
    in_rendezvous = any(frame.function == "_tcp_rendezvous_handler" for frame in frames)
    cut_at_port = bool(frames) and frames[-1].function == "port" and frames[-1].file.endswith("urllib/parse.py")
    # A paste cut before the exception's line: the frames alone say urllib's port parse failed under the handler.
    unsaid = found is None and not evidence.failure.exceptions[-1].message
    # urllib raises the same error for any URL holding a bare IPv6 address (a proxy, a hub endpoint): only torch's
    # rendezvous handler in the frames, or a tcp:// URL in the paste, makes it the rendezvous URL (review M4, stop 48).
    rendezvous = in_rendezvous or any("tcp://" in text for text in texts)
    if not rendezvous or not ((value is not None and value.count(":") >= 2) or (unsaid and cut_at_port)):
        return None
    facts = ["torch's tcp:// rendezvous URL could not be parsed: urllib read part of the address as the port"]
    if value is not None:
        facts.append(f"what it read as the port: '{value}', which holds an IPv6 address's colons")
    return _diagnosis(
        evidence,
        "rule-multinode-ipv6-address-unbracketed",
        "An IPv6 rendezvous address was written into a tcp:// URL without brackets",
        "The process group's init method is a URL tcp://host:port. An IPv6 address has colons of its own, so it must "
        "be written in brackets (tcp://[2001:db8::1]:29500); written bare, urllib takes the address's last groups for "
        "the port and fails. The program that built the URL (the engine or the trainer above it, in the frames) put "
        "a bare IPv6 address there: the host it was given, or the one it found for this node, is IPv6.",
        # The variables each engine's get_ip reads, in every indexed release (review L1 of stop 48): vllm/envs.py
        # VLLM_HOST_IP (0.11.2, 0.33.0); sglang srt/utils.py (0.4.10.post2), srt/utils/common.py (0.5.9),
        # srt/utils/network.py (0.5.23): os.getenv("SGLANG_HOST_IP", "") or os.getenv("HOST_IP", "").
        Fix(
            summary="Give the rendezvous an IPv4 address of node 0, or run a release of the program that builds the "
            "URL which writes IPv6 addresses in brackets.",
            steps=(
                "where the address is a flag of the form host:port, an IPv6 address goes in brackets ([address]:port) "
                "only when the release parses that form; an IPv4 address works in every release",
                "when the program finds the address itself (this node's address), the host's IPv4 address set where "
                "the program reads it (VLLM_HOST_IP for vLLM, SGLANG_HOST_IP for SGLang) avoids the IPv6 one",
            ),
        ),
        facts,
    )


def _interface_not_found(evidence: Evidence, texts: tuple[str, ...]) -> Diagnosis | None:
    gloo = _first(texts, _GLOO_NO_INTERFACE)
    nccl = any(_NCCL_NO_INTERFACE in text for text in texts)
    if gloo is None and not nccl:
        return None
    variable = "GLOO_SOCKET_IFNAME" if gloo is not None else "NCCL_SOCKET_IFNAME"
    nccl_set = gloo is None and any("NCCL_SOCKET_IFNAME" in text for text in (*texts, evidence.launch.command or ""))
    # NCCL says the same when NCCL_SOCKET_FAMILY, or a namespace without a usable interface, leaves it none: the
    # variable is blamed only where the paste shows it set (review L7, stop 48).
    allows = variable if gloo is not None or nccl_set else "NCCL_SOCKET_IFNAME (if set) or NCCL_SOCKET_FAMILY"
    facts = [f"Gloo found no interface named {gloo['name']} on this node" if gloo is not None
             else f"NCCL's bootstrap found no network interface that {allows} allows"]
    named = gloo is not None or nccl_set
    cause = (f"The distributed layer binds its sockets to the interface {variable} names, and this node has none by "
             "that name" if named else
             "NCCL's bootstrap binds its sockets to an interface NCCL_SOCKET_IFNAME allows (when set) of the address "
             "family NCCL_SOCKET_FAMILY asks for (when set), and this node has none it may use")
    summary = (f"Set {variable} on this node to the name of an interface it has: the one holding the address the other "
               "nodes reach it on." if named else
               "Check NCCL_SOCKET_IFNAME and NCCL_SOCKET_FAMILY in the server's environment (the paste shows neither): "
               "unset them, or set NCCL_SOCKET_IFNAME to an interface this node has, the one holding the address the "
               "other nodes reach it on.")
    return _diagnosis(
        evidence,
        "rule-multinode-socket-interface-not-found",
        f"{variable} names no network interface of this node" if named
        else "NCCL found no network interface it may use on this node",
        f"{cause} (interface names differ between hosts, and inside a container the host's names are not seen unless "
        "it uses the host's network). Gloo takes one concrete interface name; NCCL also takes a prefix list or an "
        "exclusion (^lo,docker), and a leading '=' asks for an exact match, which some NCCL builds read differently.",
        Fix(
            summary=summary,
            steps=(
                "GLOO_SOCKET_IFNAME takes one concrete name (eth0, bond0), never a list or an exclusion",
                "NCCL_SOCKET_IFNAME may be a prefix (eth) or an exclusion (^lo,docker); unset it to let NCCL choose",
                "the name can differ between nodes: set it per node",
            ),
            needs_input=("the network interface this node reaches the other nodes on",),
        ),
        facts,
        category="network" if gloo is not None else "nccl",
    )


def _gloo_mesh(evidence: Evidence, texts: tuple[str, ...]) -> Diagnosis | None:
    if not any(_GLOO_MESH in text for text in texts):
        # Gloo's loopback warning alone says nothing of nodes: containers whose host name does not resolve print it on
        # healthy single-node runs, before failures of any kind (review H1 of stop 48: an invalid device ordinal).
        return None
    loopback = any(_LOOPBACK_FALLBACK in text for text in texts)
    peer = _first(texts, _GLOO_LOOPBACK_PEER)
    reason = _first(texts, _GLOO_REASON)
    facts = ["Gloo's full mesh between the ranks did not connect (Gloo connectFullMesh failed)"]
    if reason is not None:
        facts.append(f"the connection's error: {reason.group(0)}")
    if loopback:
        facts.append("Gloo fell back to the loopback address: this node's host name does not resolve to an address of its own")
    if peer is not None:
        facts.append(f"a rank advertised {peer['address']}, which no other node can reach")
    if (given := _INTERFACE_GIVEN.search(evidence.launch.command or "")) is not None:
        if loopback or peer is not None:
            # Only Gloo's loopback fallback shows a rank that did not bind to the named interface (review M1, stop 48).
            facts.append(f"the launch command sets {given.group(0)}: a rank that did not bind to it runs in a process "
                         "that did not inherit it (another node's worker)")
        else:
            facts.append(f"the launch command sets {given.group(0)}: check that it names the interface the nodes share")
    return _diagnosis(
        evidence,
        "rule-multinode-gloo-interface",
        "The ranks on different nodes could not connect to each other (Gloo's network interface)",
        "Both engines create a Gloo process group (CPU-side, beside NCCL's) in which every rank connects to every "
        "other rank. Each rank binds to the address its node's host name resolves to, or to the interface "
        "GLOO_SOCKET_IFNAME names; when the name does not resolve, Gloo falls back to 127.0.0.1, which the other nodes "
        "cannot reach. A wrong interface, a firewall between the nodes, or a container on a private network makes the "
        "connections time out or be refused the same way.",
        Fix(
            summary=f"Set {_INTERFACE_VARIABLES} to the network interface the nodes reach each other on, in the "
            "environment of the server on every node.",
            steps=(
                "GLOO_SOCKET_IFNAME takes one interface name (eth0, bond0); NCCL_SOCKET_IFNAME also takes a list or an "
                "exclusion (^lo,docker): give Gloo the concrete name",
                "the interface is the one holding the address the other nodes use for this node; its name can differ "
                "between nodes, so set it per node",
                "or make this node's host name resolve to that address (/etc/hosts or DNS)",
                "in a container, use the host's network, or open the ports between the containers of the nodes",
                "with Ray, the workers on the other nodes run in the environment Ray was started with there: set the "
                "variables where Ray starts on each node, not only in the shell of the serve command",
            ),
            needs_input=("the network interface the nodes share",),
        ),
        facts,
    )
