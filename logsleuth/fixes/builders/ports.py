"""Builders for ports: one already in use (HTTP, NCCL, rendezvous), and the gRPC port that must differ from --port."""

from __future__ import annotations

import re
from dataclasses import replace
from typing import Any

from logsleuth.facts.sglang_ports import own_port
from logsleuth.fixes.builders.laid_out_ports import HOLDER, laid_out_port
from logsleuth.fixes.builders.memory import server_arg
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp

_PORT_FLAGS = (
    (compile_lazily_regex(r"(?i)nccl"), "--nccl-port", "nccl_port"),
    (compile_lazily_regex(r"(?i)dist[_ -]?init|TCPStore|c10d|server socket"), "--dist-init-addr", "dist_init_addr"),
)


# The HTTP port each engine listens on when --port is not given: vLLM's api server 8000, SGLang's 30000.
DEFAULT_HTTP_PORTS = {"vllm": 8000, "sglang": 30000}


def default_http_port(ctx: FixContext, data: dict[str, Any]) -> int:
    """The pattern's `default_port`, else the default of the engine the launch ran."""
    if "default_port" in data:
        return int(data["default_port"])
    return DEFAULT_HTTP_PORTS.get(ctx.launch.engine or "sglang", 30000)


# SGLang picks some of its ports itself, next to the ones the launch gives (sglang/srt/server_args.py PortArgs.init_new,
# 0.5.9): the NCCL port is a free port it finds (0.4.x: --port + a random 100-1000) unless --nccl-port is given; with
# DP attention its ZMQ sockets sit at the rendezvous port + 1 to + 5, the rendezvous port being --dist-init-addr's or,
# on one node without it, --port + 233 (ZMQ_TCP_PORT_DELTA).  Two of the server's own ports can then be the same one.
ZMQ_TCP_PORT_DELTA = 233
DERIVED_ZMQ_PORTS = 5
OWN_PORTS_STEP = (
    "the port may be one the server picks for itself rather than another program's: SGLang's NCCL port (a free port it "
    "finds, or --nccl-port), its rendezvous at --dist-init-addr and, with DP attention, its ZMQ ports at that port + 1 "
    "to + 5 (on one node without --dist-init-addr: --port + 233 and up). If ss shows the server's own process, or "
    "nothing once it has exited, give its ports room apart (--port, --nccl-port, --dist-init-addr) instead of "
    "looking for another process"
)
# vLLM's own: its internal ports come from VLLM_PORT upward, one after another (vllm/utils get_open_port).
VLLM_OWN_PORTS_STEP = (
    "the port may be one the server picks for itself rather than another program's: vLLM takes its internal ports from "
    "VLLM_PORT upward, one after another, so a VLLM_PORT at or just below the HTTP --port makes the server collide with "
    "its own ports. If ss shows the server's own process, or nothing once it has exited, move VLLM_PORT away from --port"
)


def own_ports(ctx: FixContext) -> dict[int, list[str]]:
    """The ports this SGLang launch itself uses, each with what it is to the server (the flags its command or settings
    dump give; a port can be two things at once, which is the collision)."""
    def given(flag: str, arg: str) -> str | None:
        return (ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg)

    ports: dict[int, list[str]] = {}
    http = given("--port", "port")
    http_port = int(http) if http and http.isdigit() else DEFAULT_HTTP_PORTS["sglang"]
    ports.setdefault(http_port, []).append("its HTTP port (--port)")
    nccl = given("--nccl-port", "nccl_port")
    if nccl and nccl.isdigit():
        ports.setdefault(int(nccl), []).append("its --nccl-port")
    rendezvous = (given("--dist-init-addr", "dist_init_addr") or "").strip("'\"").rpartition(":")[2]
    dp_attention = bool(ctx.command and ctx.command.has("--enable-dp-attention")) or (
        server_arg(ctx, "enable_dp_attention") == "True")
    base = int(rendezvous) if rendezvous.isdigit() else (http_port + ZMQ_TCP_PORT_DELTA if dp_attention else None)
    if base is not None:
        ports.setdefault(base, []).append(
            "its rendezvous port" + (" (--dist-init-addr)" if rendezvous.isdigit() else " (--port + 233)"))
        if dp_attention:
            for offset in range(1, DERIVED_ZMQ_PORTS + 1):
                ports.setdefault(base + offset, []).append(f"a ZMQ port it derives (its rendezvous port + {offset})")
    return ports


def _own_collision(ctx: FixContext, taken: str | None, flag: str) -> str | None:
    """The taken port, when it is two of this server's own ports, or one of its own the failing bind was not for."""
    if not taken or not taken.isdigit():
        return None
    uses = own_ports(ctx).get(int(taken), [])
    if len(uses) >= 2:
        return f"port {taken} is both {uses[0]} and {uses[1]}: two of this server's own ports are the same one"
    if uses and (flag == "--port") != uses[0].startswith("its HTTP port"):
        return f"port {taken} is also {uses[0]}: two of this server's own ports are the same one"
    return None


# The flags whose ports free_port moves itself; a port given inside any other flag's value is that flag's.
_MOVED_FLAGS = ("--port", "--nccl-port", "--dist-init-addr")
_DP_FLAGS = (("--dp-size", "dp_size"), ("--data-parallel-size", "dp_size"), ("--dp", "dp_size"))


def _flag_giving(ctx: FixContext, taken: str) -> str | None:
    """The launch's flag whose value names the taken port (`--kv-events-config '{"endpoint": "tcp://*:5557"}'`,
    `--disaggregation-bootstrap-port 8998`), other than the ones free_port moves itself."""
    if ctx.command is None:
        return None
    # HOST:PORT or a JSON `"port": N` inside the value, or a port flag's own value (never a size that equals it)
    after_colon = re.compile(r":\s*" + re.escape(taken) + r"(?![\d.])")
    return next((flag for flag, values in ctx.command.options
                 if flag not in _MOVED_FLAGS
                 and any(after_colon.search(value) or ("port" in flag and value == taken) for value in values)), None)


def _data_parallel_size(ctx: FixContext) -> int:
    for flag, arg in _DP_FLAGS:
        raw = (ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg)
        if raw and raw.isdigit():
            return int(raw)
    return 1


def _rank_collision(ctx: FixContext, taken: str, flag: str) -> Fix | None:
    """The taken port is one the launch gives inside another flag's value, and the server runs several data-parallel
    ranks: each rank binds the port that flag gives, so a rank after the first finds it held by its sibling (SGLang's
    KV-events publisher offset by the attention-DP rank, 0 for every rank without DP attention: sgl-project/sglang
    PR#29211).  Moving --port cannot free it."""
    dp = _data_parallel_size(ctx)
    failing = dict(ctx.failure.meta.ranks).get("DP")
    if dp <= 1 and not failing:
        return Fix(summary=f"Port {taken} is the one {flag} gives, not --port: give {flag} a free port (moving --port "
                           "does not free it).",
                   steps=(f"see who holds it: ss -ltnp | grep ':{taken}' (often an earlier server that is still running)",))
    who = f"rank DP{failing} failed" if failing else f"one of its {dp} data-parallel ranks failed"
    single = next((f for f, _ in _DP_FLAGS if ctx.catalog is not None and ctx.catalog.find(f) is not None), None)
    return Fix(
        summary=(f"Port {taken} comes from {flag}, and every data-parallel rank of this server binds the port {flag} "
                 f"gives: {who} because a sibling rank of the same server already held it. It collides with its own "
                 "rank, not with another program, so moving --port or stopping other processes does not help."),
        steps=(
            f"run one data-parallel rank per server ({single} 1, several servers behind a router), or leave {flag} out "
            "until the ranks get ports of their own" if single else
            f"run one data-parallel rank per server, or leave {flag} out until the ranks get ports of their own",
            "an engine that derives one port per rank (the configured port + the rank) does not collide: when this "
            "release gives every rank the same port, that is a bug of the release; search its issues for the message "
            f"and the flag ({flag} with data parallelism) for the release that fixes it",
        ),
    )


def free_port(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """The HTTP port (or the NCCL / dist-init port) is taken: pick the next one."""
    what = ctx.captures.get("what", "")
    taken = ctx.captures.get("port")
    if taken and ctx.launch.engine != "vllm" and (giving := _flag_giving(ctx, taken)) is not None:
        collided = _rank_collision(ctx, taken, giving)
        if collided is not None:
            return collided
    laid_out = own_port(what) if ctx.launch.engine != "vllm" else None
    if laid_out is not None and laid_out.offset is not None:
        # a port of SGLang's own layout the message names (PortArgs.init_new): never the HTTP port's flag by default
        return laid_out_port(ctx, laid_out, taken, _http_port(ctx), _launch_known(ctx))
    flag, arg = "--port", "port"
    for pattern, candidate_flag, candidate_arg in _PORT_FLAGS:
        if pattern.search(what):
            flag, arg = candidate_flag, candidate_arg
            break
    vllm = ctx.launch.engine == "vllm"
    collision = None if vllm else _own_collision(ctx, taken, flag)
    if not vllm and flag == "--dist-init-addr" and _launch_known(ctx) and not _given(ctx, "--dist-init-addr", "dist_init_addr"):
        # Without --dist-init-addr, SGLang's ranks meet at 127.0.0.1:<its NCCL port> (model_runner's
        # init_torch_distributed): the TCPStore that failed to listen is on the NCCL port, not a rendezvous address.
        flag = "--nccl-port"
    steps = (
        *((f"{collision}: move one of them (--port, --nccl-port, --dist-init-addr) so that they stay apart",) if collision else ()),
        f"see who holds it: ss -ltnp | grep ':{taken or '<port>'}' (often an earlier server that is still running)",
        "stop that process, or start this server on a free port as below",
        VLLM_OWN_PORTS_STEP if vllm else OWN_PORTS_STEP,
    )
    if flag == "--dist-init-addr":
        current = (ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg)
        host, _, port = (current or "").rpartition(":")
        new = f"{host}:{int(port) + 1}" if host and port.isdigit() else None
        return Fix(
            summary=f"The rendezvous port of --dist-init-addr{f' ({taken})' if taken else ''} is in use: "
            "give every node the same new HOST:PORT.",
            flags=(FlagOp("set", flag, new),),
            steps=steps,
        )
    if flag == "--nccl-port" and arg != "nccl_port":
        arg = "nccl_port"
    current_raw = (ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg) or taken
    try:
        base = int(current_raw) if current_raw else (default_http_port(ctx, data) if flag == "--port" else None)
    except ValueError:
        base = None
    new_port = str(base + int(data.get("step", 1))) if base is not None else None
    moved = Fix(
        summary=f"Port {taken or base or ''} is already in use: start the server on another {flag}.".replace("  ", " "),
        flags=(FlagOp("set", flag, new_port),),
        steps=steps,
    )
    if collision is None and not vllm:
        return _engine_chosen_port(ctx, taken, flag) or _held_by_an_earlier_launch(ctx, taken, flag, moved) or moved
    return moved


# A ZMQ socket SGLang binds on the loopback address: one of the ports it picks itself, never the HTTP port (uvicorn's)
# nor one a flag's value names (_flag_giving answers those first).  sglang/srt/server_args.py PortArgs.init_new (0.5.9):
# with DP attention on one node the ranks' ZMQ sockets sit at tcp://127.0.0.1:<--port + 233> + 1 to + 5;
# sglang/srt/distributed/device_communicators/shm_broadcast.py: the message queue binds tcp://127.0.0.1:<get_open_port()>,
# a port found free at start-up and bound later.  Both collided with the server's own ports in released code
# (sgl-project/sglang#4599, fixed by #4648; sgl-project/sglang#29547): patterns/sglang/internal-port-in-use.toml.
_ZMQ_LOOPBACK = compile_lazily_regex(r"(?:ZMQError|zmq\.error)[^\n]{0,200}?addr='tcp://127\.0\.0\.1:(?P<port>\d{1,5})'")
ENGINE_CHOSEN_PORT_RELEASE = (
    "first, likely the engine's own allocation: SGLang hands these ports out itself, and some releases gave one out "
    "twice (DP attention's ZMQ ports colliding with its other ports; a port found free at start-up taken again before "
    "it was bound). Search SGLang's issues for this message with the options this launch uses (DP attention, data "
    "parallelism, the entry point); a newer release may bind these ports safely, so try it with the same launch"
)
# PortArgs.init_new (0.4.10, 0.5.9, 0.5.23): with DP attention on one node and no --dist-init-addr, its rendezvous
# port is --port + ZMQ_TCP_PORT_DELTA (233) and its ZMQ ports the next five; only --port moves them.
_DP_ATTENTION_DELTA, _DP_ATTENTION_PORTS = 233, 5
ENGINE_CHOSEN_PORT_BASES = (
    "meanwhile, if this launch uses DP attention on one node: its ZMQ ports follow --port (its rendezvous port at "
    "--port + 233, its ZMQ ports the next five), so two servers on this host whose --port values are less than six "
    "apart derive the same ones; setting their --port values further apart is the workaround"
)
# get_open_port() (sglang/srt/utils.py 0.4.10, utils/common.py 0.5.9, utils/network.py 0.5.23) starts from the
# SGLANG_PORT environment variable, else asks the OS for a free port: no flag of the launch moves it.
ENGINE_CHOSEN_PORT_NO_FLAG = (
    "no flag of the launch sets this port: SGLang's get_open_port() picks it, starting from the SGLANG_PORT "
    "environment variable when that is set, else a port the OS reports free"
)


def _derived_from_http_port(ctx: FixContext, taken: str) -> bool:
    """`taken` is one of the ports DP attention derives from --port on one node (PortArgs.init_new)."""
    http = _http_port(ctx)
    if not (http.isdigit() and taken.isdigit()):
        return False
    offset = int(taken) - int(http)
    return _DP_ATTENTION_DELTA <= offset <= _DP_ATTENTION_DELTA + _DP_ATTENTION_PORTS


def _engine_chosen_port(ctx: FixContext, taken: str | None, flag: str) -> Fix | None:
    """A ZMQ port on 127.0.0.1 that the launch did not set: SGLang chose it for its own processes, so the likeliest
    reading is its own allocation colliding (some releases did: sgl-project/sglang#4599, #29547), and another process
    holding it (an earlier launch's scheduler that did not exit) the second check (split 14 graded "another process
    holds it, stop it" as the lead for such a port a misleading one: in its thread nothing else held it).  Moving
    --port is offered only for a port DP attention derives from it; the message queue's port no flag moves."""
    text = "\n".join(f"{block.type}: {block.message}" for block in ctx.failure.exceptions)
    found = _ZMQ_LOOPBACK.search(text)
    if found is None or found["port"] != taken or flag != "--port" or taken == _http_port(ctx):
        return None
    http = ""
    if _launch_known(ctx):
        http = f" ({_http_port(ctx)}, {'--port' if _given(ctx, '--port', 'port') else 'the default'})"
    derived = _derived_from_http_port(ctx, found["port"])
    workaround = "or, with DP attention, move --port further from other servers'" if derived else "no flag moves it"
    return Fix(
        summary=(f"Port {taken} is one SGLang picked itself, not its HTTP port{http} nor one a flag names: likely its "
                 f"own allocation colliding (some releases do; a newer one may not), {workaround}. Another process "
                 "holding the port (an earlier launch that did not exit) is the second check."),
        steps=(
            ENGINE_CHOSEN_PORT_RELEASE,
            ENGINE_CHOSEN_PORT_BASES if derived else ENGINE_CHOSEN_PORT_NO_FLAG,
            f"second check, another process: ss -ltnp | grep ':{taken}' while the server starts; if it shows a process "
            "of an earlier launch that did not exit (a scheduler or detokenizer) or another server on this host, stop "
            "it or give the two servers ports apart",
        ),
    )


# SGLang's wait_port_available names the process that holds the port (laid_out_ports.HOLDER); zmq's bind error names
# only the address.
_ZMQ = compile_lazily_regex(r"ZMQError|zmq\.error")


def _held_by_an_earlier_launch(ctx: FixContext, taken: str | None, flag: str, moved: Fix) -> Fix | None:
    """A port held by an engine process the message names, or a ZMQ port that is not the HTTP port: most often the
    processes of an earlier launch of the same server that are still alive (a scheduler or detokenizer that outlived
    its server).  Stopping them is the fix; moving a port is the other way, never the first (stop 40: a fix that led
    with another --port where the port in use was one the ranks open among themselves)."""
    text = "\n".join(f"{block.type}: {block.message}" for block in ctx.failure.exceptions)
    holder = HOLDER.search(text)
    if holder is not None:
        words = " ".join(part.strip().strip("'\"") for part in holder["cmdline"].split(","))
        if "sglang" not in words and "vllm" not in words:
            return None
        who = f"pid {holder['pid']} ({words})"
    elif _ZMQ.search(text) and taken and taken != _http_port(ctx) and flag == "--port":
        who = ""
    else:
        return None
    held = f"port {taken}" if taken else "the port"
    return Fix(
        summary=(f"The message names who holds {held}: {who}, an engine process still running (an earlier launch "
                 "that did not exit, or another server on this host). Stop it, then launch again; no port needs to "
                 "change." if who else
                 f"Port {taken} is one of the ZMQ ports the server's own processes talk over, not its HTTP port: "
                 "another process holds it, most often one of an earlier launch that did not exit, or a second server "
                 "on this host (a prefill and a decode instance) that took the same port. Stop the earlier launch's "
                 "processes; two servers on one host need their ports apart."),
        steps=(
            f"see who holds it: ss -ltnp | grep ':{taken}'" if taken else "see who holds the port: ss -ltnp",
            "an earlier server's scheduler or detokenizer processes can outlive it: stop every process of that launch",
            OWN_PORTS_STEP,
        ),
        alternatives=(replace(moved, summary=f"Or, if that process must keep running, start this server on another {flag}.",
                              steps=()),),
    )


def _launch_known(ctx: FixContext) -> bool:
    return ctx.command is not None or bool(ctx.launch.server_args)


def _given(ctx: FixContext, flag: str, arg: str) -> bool:
    return bool((ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg))


def _http_port(ctx: FixContext) -> str:
    given = (ctx.command.value("--port") if ctx.command else None) or server_arg(ctx, "port")
    return given.strip("'\"") if given else str(DEFAULT_HTTP_PORTS["sglang"])


def grpc_port(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """--grpc-port equal to --port: --port + 10000 (the offset SGLang itself used for it), or - 10000 near the top."""
    raw = ctx.captures.get("port") or (ctx.command.value("--port") if ctx.command else None) or server_arg(ctx, "port")
    port = int(raw) if raw and raw.isdigit() else 30000
    new = port + 10000 if port + 10000 <= 65535 else port - 10000
    return Fix(
        summary=f"Give the gRPC server its own port: --grpc-port {new} (any free port other than --port {port}).",
        flags=(FlagOp("set", "--grpc-port", str(new)),),
        alternatives=(Fix(summary="Or drop --grpc-port to serve HTTP only.", flags=(FlagOp("remove", "--grpc-port"),)),),
    )
