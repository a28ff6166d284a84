"""A port SGLang lays out itself, named by its "NAME at PORT is not available" message: which port it is, what moves
it, and never the HTTP port's flag for it unless the launch proves the port follows --port.

With DP attention SGLang's processes talk over TCP at a rendezvous port and the ports after it (facts/sglang_ports.toml,
from PortArgs.init_new in 0.5.9 and 0.5.23).  Split 20's E-02 (gpustack/gpustack#5842: "metrics_port at … is not
available", held by a process named sglang) was answered with "set --port <the metrics port + 1>", as if the failing
port were the HTTP port: the metrics port is the rendezvous port + 4 and moves only with --dist-init-addr's port, or
with --port on one node without --dist-init-addr."""

from __future__ import annotations

from logsleuth.facts.sglang_ports import OwnPort, last_offset, rendezvous_delta
from logsleuth.fixes.builders.memory import server_arg
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp

# SGLang's wait_port_available names the process that holds the port (0.5.x: "… is used by a process already.
# process.name()=… process.cmdline()=[…] … pid=N"); a paste may cut it after the name.
HOLDER = compile_lazily_regex(r"process\.cmdline\(\)=\[(?P<cmdline>[^\]]*)\][^\n]*?\bpid=(?P<pid>\d+)")
_HOLDER_NAME = compile_lazily_regex(r"process\.name\(\)='(?P<name>[^'\n]{1,80})'")
_ENGINE_WORDS = ("sglang",)


def laid_out_port(ctx: FixContext, port: OwnPort, taken: str | None, http: str, launch_known: bool) -> Fix:
    """The fix for a port of SGLang's own layout that is in use: who holds it (when the message says), what moves
    it, and a flag change only when the launch's flags put this port exactly at `taken`."""
    given = (ctx.command.value("--dist-init-addr") if ctx.command else None) or server_arg(ctx, "dist_init_addr")
    host, _, dist_port = (given or "").strip("'\"").rpartition(":")
    delta, room = rendezvous_delta(), last_offset() + 1
    offset = port.offset or 0
    base: int | None = None
    mover, moved = None, None
    if dist_port.isdigit():
        base, mover = int(dist_port), "--dist-init-addr"
        moved = f"{host}:{base + room}"
        rendezvous = f"--dist-init-addr's port, {base}"
    elif launch_known and http.isdigit():
        base, mover = int(http) + delta, "--port"
        moved = str(int(http) + room)
        rendezvous = f"--port {http} + {delta}, this launch having no --dist-init-addr"
    else:
        rendezvous = f"--dist-init-addr's port, or on one node without it --port + {delta}"
    verified = base is not None and taken is not None and taken.isdigit() and int(taken) == base + offset
    where = "the rendezvous port itself" if offset == 0 else f"the rendezvous port + {offset}"
    number = f"Port {taken}" if taken else "The port"
    summary = (f"{number} is SGLang's {port.name}, {port.what}: with DP attention SGLang lays it out itself at {where} "
               f"({rendezvous}); it is not the HTTP port, and no flag sets it alone.")
    text = "\n".join(f"{block.type}: {block.message}" for block in ctx.failure.exceptions)
    holder, name = HOLDER.search(text), _HOLDER_NAME.search(text)
    engine_held = False
    if holder is not None or name is not None:
        words = " ".join(part.strip().strip("'\"") for part in holder["cmdline"].split(",")) if holder else ""
        who = (f"pid {holder['pid']} ({words})" if holder else f"a process named '{name['name']}'")
        engine_held = any(word in f"{words} {name['name'] if name else ''}".lower() for word in _ENGINE_WORDS)
        summary += (f" The message names who holds it: {who}" +
                    (", likely another SGLang server on this host (an earlier launch that did not exit, or one "
                     "running beside this one) whose own ports sit where this one's do." if engine_held else "."))
    steps = [
        f"see who holds it: ss -ltnp | grep ':{taken}'" if taken else "see who holds the port: ss -ltnp",
        "if it is a server of an earlier launch that did not exit (its scheduler or detokenizer processes can outlive "
        "it), stop every process of that launch; no port needs to change",
        f"two SGLang servers with DP attention on one host use their rendezvous port and up to the {room - 1} ports after it: "
        f"give them rendezvous ports at least {room} apart (--dist-init-addr's port; on one node without it, --port "
        "moves them)",
    ]
    if not launch_known:
        starter = ctx.launch.wrapper or "a program that starts SGLang for you (a serving platform, a cluster manager)"
        steps.append(f"when {starter} starts the servers, it chooses these flags: give each instance its own ports "
                     "there, or stop the instance it left running")
    if verified and mover is not None and moved is not None:
        return Fix(
            summary=summary,
            steps=tuple(steps),
            alternatives=(Fix(summary=f"Or, if that process must keep running: this launch puts {port.name} at {taken} "
                                      f"through {mover}; moving {mover} by {room} moves all of these ports past the "
                                      "other server's" + (" (the same new address on every node)."
                                                          if mover == "--dist-init-addr" else "."),
                              flags=(FlagOp("set", mover, moved),)),),
        )
    if base is not None and taken:
        steps.append(f"this launch's flags put its rendezvous port at {base}, which would place {port.name} at "
                     f"{base + offset}, not {taken}: the port the message names may be another server's layout or "
                     "another release's; read it from ss before moving a flag")
    return Fix(summary=summary, steps=tuple(steps))
