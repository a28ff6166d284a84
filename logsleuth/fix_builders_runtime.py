"""Fix builders for runtime failures (memory, ports, parallel layout).

A pattern names one of these with `[fix] builder = "name"` when the right change
depends on the launch: the current `--mem-fraction-static`, the port that was taken,
which incompatible flags were actually given.  Each builder also works without the
command (flag operations then carry no value, or the engine default is assumed).

Registered with `logsleuth.fixes.builder`; `logsleuth.matcher` imports this module so
the builders exist whenever patterns are loaded.
"""

from __future__ import annotations

from typing import Any

import regex

from logsleuth.fixes import FixContext, builder, interpolate, static_fix
from logsleuth.models import Fix, FlagOp

NAMES = frozenset({"mem_fraction", "free_port", "pp_incompatible", "ensure_flags", "lora_config"})

_MEM = "--mem-fraction-static"
_FLOAT = regex.compile(r"\d*\.\d+|\d+")


def _server_arg(ctx: FixContext, name: str) -> str | None:
    for key, value in ctx.launch.server_args:
        if key == name:
            return value.strip("'\"")
    return None


def current_mem_fraction(ctx: FixContext) -> float | None:
    """--mem-fraction-static as launched: the command, the `server_args=` line, or the message."""
    candidates = [
        ctx.command.value(_MEM) if ctx.command else None,
        _server_arg(ctx, "mem_fraction_static"),
        ctx.captures.get("current"),
    ]
    for raw in candidates:
        if raw and (m := _FLOAT.search(raw)):
            try:
                return float(m.group(0))
            except ValueError:
                continue
    return None


@builder("mem_fraction")
def _mem_fraction(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Move --mem-fraction-static down (more room for activations and CUDA graphs) or up
    (more room for the KV cache), by `step`, within [`floor`, `ceiling`]."""
    direction = data.get("direction", "lower")
    step = float(data.get("step", 0.1))
    current = current_mem_fraction(ctx)
    if current is None:
        new = float(data.get("default", 0.8 if direction == "lower" else 0.9))
    elif direction == "lower":
        new = max(float(data.get("floor", 0.5)), current - step)
    else:
        new = min(float(data.get("ceiling", 0.95)), current + step)
    value = f"{new:.2f}".rstrip("0").rstrip(".")
    was = f" (was {current:g})" if current is not None else ""
    summary = interpolate(str(data.get("summary", "")), {**ctx.captures, "value": value, "was": was})
    if not summary:
        verb = "Lower" if direction == "lower" else "Raise"
        summary = f"{verb} {_MEM} to {value}{was}."
    return Fix(
        summary=summary,
        flags=(FlagOp("set", _MEM, value),),
        steps=tuple(interpolate(str(s), ctx.captures) for s in data.get("steps", ())),
        alternatives=tuple(static_fix(alt, ctx.captures) for alt in data.get("alternatives", ())),
    )


_PORT_FLAGS = (
    (regex.compile(r"(?i)nccl"), "--nccl-port", "nccl_port"),
    (regex.compile(r"(?i)dist[_ -]?init|TCPStore|c10d|server socket"), "--dist-init-addr", "dist_init_addr"),
)


@builder("free_port")
def _free_port(ctx: FixContext, data: dict[str, Any]) -> Fix:
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
        current = (ctx.command.value(flag) if ctx.command else None) or _server_arg(ctx, arg)
        host, _, port = (current or "").rpartition(":")
        new = f"{host}:{int(port) + 1}" if host and port.isdigit() else None
        return Fix(
            summary=f"The rendezvous port of --dist-init-addr{f' ({taken})' if taken else ''} is in use: "
            "give every node the same new HOST:PORT.",
            flags=(FlagOp("set", flag, new),),
            steps=steps,
        )
    current_raw = (ctx.command.value(flag) if ctx.command else None) or _server_arg(ctx, arg) or taken
    try:
        base = int(current_raw) if current_raw else (30000 if flag == "--port" else None)
    except ValueError:
        base = None
    new_port = str(base + int(data.get("step", 1))) if base is not None else None
    return Fix(
        summary=f"Port {taken or base or ''} is already in use: start the server on another {flag}.".replace("  ", " "),
        flags=(FlagOp("set", flag, new_port),),
        steps=steps,
    )


_SPEC_FLAGS = (
    "--speculative-algorithm",
    "--speculative-draft-model-path",
    "--speculative-num-steps",
    "--speculative-eagle-topk",
    "--speculative-num-draft-tokens",
)


@builder("pp_incompatible")
def _pp_incompatible(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Pipeline parallelism (0.4.x-0.5.9) needs the overlap scheduler off, no speculative
    decoding and no mixed chunked prefill."""
    cmd = ctx.command
    ops: list[FlagOp] = []
    if cmd is None or not cmd.has("--disable-overlap-schedule"):
        ops.append(FlagOp("add", "--disable-overlap-schedule"))
    if data.get("remove_speculative", True):
        ops.extend(FlagOp("remove", flag) for flag in _SPEC_FLAGS if cmd is None or cmd.has(flag))
    if cmd is None or cmd.has("--enable-mixed-chunk"):
        ops.append(FlagOp("remove", "--enable-mixed-chunk"))
    summary = str(data.get("summary", "")) or (
        "Pipeline parallelism runs without the overlap scheduler, speculative decoding and mixed chunked "
        "prefill: add --disable-overlap-schedule and drop the others."
    )
    pp_flag = "--pp-size" if cmd is None or cmd.has("--pp-size") else "--pipeline-parallel-size"
    return Fix(
        summary=interpolate(summary, ctx.captures),
        flags=tuple(ops),
        alternatives=(
            Fix(
                summary="Or keep speculative decoding and drop pipeline parallelism (use --tp-size for the GPUs).",
                flags=(FlagOp("remove", pp_flag),),
            ),
        ),
    )


@builder("ensure_flags")
def _ensure_flags(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """Add the listed flags, but keep a value the user already gave for one of them."""
    cmd = ctx.command
    ops = tuple(
        FlagOp(f["op"], f["flag"], interpolate(str(f["value"]), ctx.captures) if f.get("value") is not None else None)
        for f in data.get("flags", ())
        if not (f["op"] == "add" and cmd is not None and cmd.has(f["flag"]))
    )
    return Fix(
        summary=interpolate(str(data.get("summary", "")), ctx.captures),
        flags=ops,
        steps=tuple(interpolate(str(s), ctx.captures) for s in data.get("steps", ())),
        alternatives=tuple(static_fix(alt, ctx.captures) for alt in data.get("alternatives", ())),
    )


@builder("lora_config")
def _lora_config(ctx: FixContext, data: dict[str, Any]) -> Fix:
    """One fix per LoRA assert in check_lora_server_args (0.4.10.post2 - 0.5.23)."""
    detail = ctx.captures.get("detail", "")
    cmd = ctx.command
    if detail.startswith("When no initial --lora-paths"):
        ops = tuple(
            FlagOp("add", flag, value)
            for flag, value in (("--max-lora-rank", "64"), ("--lora-target-modules", "all"))
            if cmd is None or not cmd.has(flag)
        )
        return Fix(
            summary="Without --lora-paths at launch, give the largest adapter rank you will load and the modules "
            "adapters may target (or load an adapter at launch with --lora-paths NAME=PATH).",
            flags=ops,
        )
    if detail.startswith("max_loaded_loras should be"):
        per_batch, loaded = ctx.captures.get("per_batch"), ctx.captures.get("loaded")
        return Fix(
            summary=f"Raise --max-loaded-loras to {per_batch}: every adapter of a batch must be loaded at once.",
            flags=(FlagOp("set", "--max-loaded-loras", per_batch),),
            alternatives=(
                Fix(summary=f"Or lower --max-loras-per-batch to {loaded}.", flags=(FlagOp("set", "--max-loras-per-batch", loaded),)),
            ),
        )
    if detail.startswith("The number of LoRA paths"):
        paths = ctx.captures.get("paths")
        return Fix(
            summary=f"Raise --max-loaded-loras to {paths} (the number of --lora-paths given).",
            flags=(FlagOp("set", "--max-loaded-loras", paths),),
        )
    if detail.startswith("If 'all'"):
        return Fix(
            summary="Give --lora-target-modules either 'all' alone or a list of module names.",
            flags=(FlagOp("set", "--lora-target-modules", "all"),),
        )
    if detail.startswith("Currently LoRA is only compatible with NGRAM"):
        return Fix(
            summary="LoRA works only with NGRAM speculative decoding in this version: drop the speculative "
            "flags (or serve the adapters without speculative decoding).",
            flags=tuple(
                FlagOp("remove", flag)
                for flag in (
                    "--speculative-algorithm", "--speculative-draft-model-path", "--speculative-num-steps",
                    "--speculative-eagle-topk", "--speculative-num-draft-tokens",
                )
                if cmd is None or cmd.has(flag)
            ),
            alternatives=(Fix(summary="Or keep speculative decoding and drop LoRA.", flags=(FlagOp("remove", "--enable-lora"),)),),
        )
    if detail.startswith("compatibility of lora and radix"):
        given = cmd.int_value("--max-loras-per-batch") if cmd else None
        if given is not None and given <= 0:  # 0.4.x checks both in one assert
            return Fix(summary="--max-loras-per-batch must be at least 1.", flags=(FlagOp("set", "--max-loras-per-batch", "8"),))
        return Fix(
            summary="This SGLang version cannot combine LoRA with the radix cache: add --disable-radix-cache.",
            flags=(FlagOp("add", "--disable-radix-cache"),),
        )
    return Fix(
        summary="--max-loras-per-batch must be at least 1.",
        flags=(FlagOp("set", "--max-loras-per-batch", "8"),),
    )
