"""A port SGLang lays out itself, named by its "NAME at PORT is not available" message: which port it is, what moves
it, and never the HTTP port's flag for it unless the launch proves the port follows --port.

With DP attention SGLang's processes talk over TCP at a rendezvous port and the ports after it (facts/sglang_ports.toml,
from PortArgs.init_new in 0.5.9 and 0.5.23).  Split 20's E-02 (gpustack/gpustack#5842: "metrics_port at … is not
available", held by a process named sglang) was answered with "set --port <the metrics port + 1>", as if the failing
port were the HTTP port: the metrics port is the rendezvous port + 4 and moves only with --dist-init-addr's port, or
with --port on one node without --dist-init-addr."""

from __future__ import annotations

import regex

from logsleuth.facts.sglang_ports import OwnPort, last_offset, rendezvous_delta
from logsleuth.fixes.builders.memory import server_arg
from logsleuth.fixes.context import FixContext
from logsleuth.lazyre import compile_lazily_regex
from logsleuth.models import Fix, FlagOp

# SGLang's wait_port_available names the process that holds the port (0.5.x: "… is used by a process already.
# process.name()=… process.cmdline()=[…] … pid=N"); a paste may cut it after the name.  Bounded: an unclosed list
# or a line without pid= must not be rescanned from every start.
HOLDER = compile_lazily_regex(
    r"process\.cmdline\(\)=\[(?P<cmdline>[^\]\n]{0,2000})\][^\n]{0,300}?\bpid=(?P<pid>\d+)")
_HOLDER_NAME = compile_lazily_regex(r"process\.name\(\)='(?P<name>[^'\n]{1,80})'")
# An SGLang server by its own words, not a path that has "sglang" in it (a venv): its process titles ("sglang::
# scheduler"), its launcher module or CLI, or a process named sglang.
_ENGINE_HELD = compile_lazily_regex(r"(?i)^sglang$|sglang::|\bsglang\.launch_server\b|\bsglang serve\b")
# The layout PortArgs.init_new logs just before it re-raises (logger.exception, 0.5.5 to 0.5.23): the ports it
# really laid out, whatever the release's overflow, elastic-EP joiner or SGLANG_RUST_SERVER rules made of them.
_LOGGED_LAYOUT = compile_lazily_regex(
    r"Port is already in use\. dist_init_port=(?P<dist>\d{1,5}) port_base=(?P<base>\d{1,5}) "
    r"detokenizer_port=(?P<detokenizer>\d{1,5}) nccl_port=\S+ scheduler_input_port=(?P<scheduler>\d{1,5})")
# Flags under which 0.5.19+ lays the ports out otherwise (an elastic-EP joiner's port_base is --port + 233).
_OTHER_LAYOUT_FLAGS = ("--ep-join-mode",)
_LAST_PORT = 65535


def _logged_layout(ctx: FixContext, text: str) -> regex.Match[str] | None:
    lines = (text, *ctx.failure.context, *ctx.failure.error_context, *ctx.lines)
    return next((found for line in lines if (found := _LOGGED_LAYOUT.search(line))), None)


def _modelled(rendezvous: int, room: int) -> bool:
    """The table's layout holds: every port after the rendezvous port below 65536 (0.5.15+ lays them out below it
    otherwise, sglang/srt/server_args.py PortArgs.init_new)."""
    return rendezvous > 0 and rendezvous + room - 1 <= _LAST_PORT


def _engine_held(words: str, name: str) -> bool:
    return bool(_ENGINE_HELD.search(name.strip())) or any(_ENGINE_HELD.search(word) for word in words.split())


def laid_out_port(ctx: FixContext, port: OwnPort, taken: str | None, http: str, launch_known: bool) -> Fix:
    """The fix for a port of SGLang's own layout that is in use: who holds it (when the message says), what moves
    it, and a flag change only when the launch's flags put this port exactly at `taken` and the moved layout is
    clear of every layout that can hold `taken`."""
    given = (ctx.command.value("--dist-init-addr") if ctx.command else None) or server_arg(ctx, "dist_init_addr")
    host, _, dist_port = (given or "").strip("'\"").rpartition(":")
    delta, room = rendezvous_delta(), last_offset() + 1
    offset = port.offset or 0
    text = "\n".join(f"{block.type}: {block.message}" for block in ctx.failure.exceptions)
    logged = _logged_layout(ctx, text)
    other_layout = any((ctx.command and ctx.command.value(flag)) or server_arg(ctx, flag.lstrip("-").replace("-", "_"))
                       for flag in _OTHER_LAYOUT_FLAGS)
    base: int | None = None
    mover: str | None = None
    if dist_port.isdigit():
        base, mover = int(dist_port), "--dist-init-addr"
        rendezvous = f"--dist-init-addr's port, {base}"
    elif launch_known and http.isdigit():
        base, mover = int(http) + delta, "--port"
        rendezvous = f"--port {http} + {delta}, this launch having no --dist-init-addr"
    else:
        rendezvous = f"--dist-init-addr's port, or on one node without it --port + {delta}"
    if logged is not None:
        dist = int(logged["dist"])
        fits = (int(logged["base"]), int(logged["detokenizer"]), int(logged["scheduler"])) == (dist + 1, dist + 2,
                                                                                                dist + 5)
        if not fits or (base is not None and base != dist):
            base, mover = None, None  # a layout the table does not model, or not this launch's: no numbers of ours
    modelled = base is not None and not other_layout and _modelled(base, room)
    verified = modelled and taken is not None and taken.isdigit() and int(taken) == (base or 0) + offset
    where = "the rendezvous port itself" if offset == 0 else f"the rendezvous port + {offset}"
    number = f"Port {taken}" if taken else "The port"
    setter = (f"{port.flag}'s port sets it (on one node without it, --port + {delta})" if offset == 0 and port.flag
              else "no flag sets it alone")
    summary = (f"{number} is SGLang's {port.name}, {port.what}: with DP attention SGLang lays it out itself at {where} "
               f"({rendezvous}); it is not the HTTP port, and {setter}.")
    holder, name = HOLDER.search(text), _HOLDER_NAME.search(text)
    if holder is not None or name is not None:
        words = " ".join(part.strip().strip("'\"") for part in holder["cmdline"].split(",")) if holder else ""
        who = (f"pid {holder['pid']} ({words})" if holder else f"a process named '{name['name']}'")
        engine_held = _engine_held(words, name["name"] if name else "")
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
    moved = _moved(mover, host, int(taken), delta, room) if verified and mover and taken else None
    if moved is not None and mover is not None:
        value, first = moved
        return Fix(
            summary=summary,
            steps=tuple(steps),
            alternatives=(Fix(summary=f"Or, if that process must keep running: this launch puts {port.name} at {taken} "
                                      f"through {mover}. A server whose ports hold {taken} uses none above "
                                      f"{first - 1}: {mover} {value} starts this launch's ports at {first}, "
                                      "past all of them" + (" (the same new address on every node)."
                                                            if mover == "--dist-init-addr" else
                                                            "; --port is also the HTTP port, so clients must use the "
                                                            "new one."),
                              flags=(FlagOp("set", mover, value),)),),
        )
    if logged is not None and base is None:
        steps.append("the line 'Port is already in use. dist_init_port=…' above the error gives the ports this launch "
                     "laid out: a layout other than rendezvous + 1 to + 6 (near port 65535, an elastic-EP joiner, "
                     "SGLANG_RUST_SERVER) or another launch's; read the holder from ss before moving a flag")
    elif modelled and base is not None and taken and not verified:
        steps.append(f"this launch's flags put its rendezvous port at {base}, which would place {port.name} at "
                     f"{base + offset}, not {taken}: the port the message names may be another server's layout or "
                     "another release's; read it from ss before moving a flag")
    return Fix(summary=summary, steps=tuple(steps))


def _moved(mover: str, host: str, taken: int, delta: int, room: int) -> tuple[str, int] | None:
    """The flag's new value and the new rendezvous port: taken + room, the first port above every layout that can
    hold `taken` (a layout of `room` ports holding it starts at `taken` at most), or None when that layout would pass
    65535 (0.5.15+ would then lay it out below, elsewhere than this promises)."""
    first = taken + room
    if not _modelled(first, room):
        return None
    if mover == "--dist-init-addr":
        return f"{host}:{first}", first
    http = first - delta
    return (str(http), first) if http > 0 else None
