"""Builders for ports: one already in use (HTTP, NCCL, rendezvous), and the gRPC port that must differ from --port."""

from __future__ import annotations

from typing import Any

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


def free_port(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """The HTTP port (or the NCCL / dist-init port) is taken: pick the next one."""
    what = ctx.captures.get("what", "")
    taken = ctx.captures.get("port")
    flag, arg = "--port", "port"
    for pattern, candidate_flag, candidate_arg in _PORT_FLAGS:
        if pattern.search(what):
            flag, arg = candidate_flag, candidate_arg
            break
    steps = (
        f"see who holds it: ss -ltnp | grep ':{taken or '<port>'}' (often an earlier server that is still running)",
        "stop that process, or start this server on a free port as below",
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
    current_raw = (ctx.command.value(flag) if ctx.command else None) or server_arg(ctx, arg) or taken
    try:
        base = int(current_raw) if current_raw else (default_http_port(ctx, data) if flag == "--port" else None)
    except ValueError:
        base = None
    new_port = str(base + int(data.get("step", 1))) if base is not None else None
    return Fix(
        summary=f"Port {taken or base or ''} is already in use: start the server on another {flag}.".replace("  ", " "),
        flags=(FlagOp("set", flag, new_port),),
        steps=steps,
    )


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
