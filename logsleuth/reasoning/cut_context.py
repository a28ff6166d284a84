"""What the paste around a traceback cut before its exception line adds to its frames (issue 28, stop 55).

A cut traceback whose frames have no shape (reasoning/frame_shapes.py) and pass through no subsystem that names a
category still sits in a paste that says more: a package's warning printed just above the cut, by a package the frames
run under (kvcached's `[kvcached][WARNING] … kvcached is only tested with page_size=1 for SGLang.` over a scheduler cut
under its engine integration, ovg-project/kvcached#198), or the GPU the paste names when the cut is in the model's
forward pass (an RTX 2080 Ti, compute capability 7.5, under SGLang's FlashInfer kernels built for 8.0 and later,
sgl-project/sglang#748 and #931).  Each is read as a shape of its own, labelled a guess: the exception line decides."""

from __future__ import annotations

from collections.abc import Sequence

from logsleuth.command_line import flag_value
from logsleuth.facts import gpus as gpu_facts
from logsleuth.facts.frame_shapes import FrameShape
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.release_flags import range_note, releases_with
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Frame
from logsleuth.reasoning.category_score import building_model_frame, cut_in_model_loader
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.launch_quantization import launch_model, launch_quantization, mixture_of_experts_name
from logsleuth.tracebacks.grammar import REFUSED_FLUSH

# A warning record of a named program, in the formats packages print their own (never the engine's own record, whose
# logger is the engine's): kvcached's `[kvcached][WARNING][date][file:line] text`, Python logging's default
# `WARNING:name.module:text` and the common `name - WARNING - text`.
_WARNINGS = (
    compile_lazily(r"^\[(?P<name>[A-Za-z][\w-]{2,40})\]\s*\[(?:WARNING|WARN)\](?:\[[^\]]*\])*\s*(?P<text>\S.*)$"),
    compile_lazily(r"^WARNING:(?P<name>[a-z][\w-]{2,40})(?:\.[\w.]+)?:(?P<text>\S.*)$"),
    compile_lazily(r"^(?P<name>[a-z][\w-]{2,40})(?:\.[\w.]+)?\s+-\s+WARNING\s+-\s+(?P<text>\S.*)$"),
)
# Loggers every run goes through, whose warning says nothing of a wrapper: Python's own (`WARNING:root:`, `py.warnings`).
_EVERY_RUN = frozenset({"root", "main", "__main__", "py.warnings", "warnings"})
# A warning that states a limit of what the package supports (kvcached's "kvcached is only tested with page_size=1 for
# SGLang.", interfaces.py): an ordinary warning (a default used, a deprecation) says nothing of the failure.
_STATES_A_LIMIT = compile_lazily(
    r"\b(?:only (?:been )?(?:tested|supported|validated|works?)\b|not (?:yet )?(?:been )?(?:supported|tested|compatible)"
    r"|unsupported|untested|incompatible|may not work|might not work|does not work)")
# An installed package's directory: a frame's file under site-packages/dist-packages
_INSTALLED = compile_lazily(r"/(?:site|dist)-packages/")
# the lines of content above the cut traceback a warning is read from (the nearest first)
_NEAR = 3
# The engines' forward pass: the frames that run the model on a batch (SGLang's ModelRunner.forward/forward_extend/
# forward_decode, its TpModelWorker.forward_batch_generation; vLLM's execute_model) and the attention layers' files.
_FORWARD_FUNCTIONS = frozenset({"forward", "forward_extend", "forward_decode", "forward_idle", "forward_batch_generation",
                                "forward_prefill_batch", "forward_decode_batch", "execute_model", "_run_model"})
_ATTENTION_PATHS = ("layers/attention/", "attention/backends/", "v1/attention/", "layers/radix_attention.py")
_ENGINE_PATHS = ("sglang/", "vllm/")


def cut_context_shape(evidence: Evidence) -> FrameShape | None:
    """The reading the paste's lines give a cut traceback the frames alone leave unclassified, or None."""
    return pending_flush_shape(evidence) or _wrapper_warning(evidence) or _forward_on_older_gpu(evidence)


# SGLang's scheduler refusing a flush while requests run (sglang/srt/managers/scheduler.py flush_cache, every release
# from 0.1 on: "Cache not flushed because there are pending requests. #queue-req: N, #running-req: M"; later releases
# list `waiting=…, running=…`).  A caller (an RL trainer between rollout and weight update: verl, AReaL) that goes on
# to release or replace the engine's memory while that request runs leaves the scheduler working on freed memory
# (sgl-project/sglang#6630, split 20's B-06, verl-project/verl#1686's fix of the async rollout's illegal access).
# The refusal alone is routine (slime calls flush_cache as a probe until no request runs, THUDM/slime#26) and frees
# nothing, so it leads only where it is evidence: the cut is in SGLang's scheduler, nothing between the refusal and the
# cut shows the requests served on normally (a batch record) or the cache flushed after all, the frames do not stop in
# the KV pool's allocator (whose failure is the pool running out: "Decode out of memory"), and a program driving the
# engine is shown (a wrapper: verl's Ray actor).  The scanner drops the refusal from the context once a batch record or
# a successful flush follows it (tracebacks/grammar.SERVED_AFTER_FLUSH).
_SCHEDULER_FILE = "sglang/srt/managers/scheduler.py"
# the lines of content above the cut the warning is read from: the scheduler logs it in the same loop step
_FLUSH_NEAR = 8


def pending_flush_shape(evidence: Evidence) -> FrameShape | None:
    """The engine's refusal to flush its cache with requests still pending, just above a cut traceback in its
    scheduler, in a run a program drives: that program released or replaced memory under a running request.  It leads
    over the serving step's guess from the frames."""
    near = [line.strip() for line in evidence.failure.context if line.strip()][-_FLUSH_NEAR:]
    warning = next((line for line in reversed(near) if REFUSED_FLUSH.search(line)), None)
    if warning is None:
        return None
    frames = evidence.failure.final.frames
    if (not any(frame.file.replace("\\", "/").endswith(_SCHEDULER_FILE) for frame in frames)
            or (frames and (frames[-1].function or "").startswith("alloc_"))
            or not evidence.launch.wrapper):
        return None
    return _guess(
        shape="flush-pending-requests", category="illegal-memory-access",
        title="Failed after the engine refused to flush its cache with requests still running (the caller's ordering)",
        # (quoted in single quotes: the report then shows the warning's line above the cut, render/view.py)
        reading=(f"the engine's warning just above the cut ('{warning}', SGLang's scheduler refusing flush_cache): "
                 "the program driving the engine (an RL trainer between rollout "
                 "and weight update) asked it to flush its cache while a request was still running (the flush itself "
                 "freed nothing), and if it then released or replaced the engine's memory anyway, the scheduler went "
                 "on with that request over memory being freed or replaced, which ends in an "
                 "illegal memory access or a corrupted batch; a guess from the lines around the cut, not a finding"),
        checks=(
            "The exception line right after the last frame says what failed (a CUDA illegal memory access, an "
            "internal check of the batch or the memory pool): paste the lines after the last frame.",
            "The caller's ordering: every request sent to the engine must have finished or been aborted before the "
            "program asks it to flush its cache, release its memory or update its weights; the warning's "
            "#running-req/#queue-req counts say how many were still in flight.",
            "A release of the program that drives the engine (the RL trainer) and of the engine made for each other: "
            "the trainers fixed this ordering in their rollouts (waiting for or aborting pending requests before "
            "releasing memory).",
        ))


def pending_flush_check(evidence: Evidence) -> str | None:
    """The engine's refused flush just above a cut it does not lead (pending_flush_shape): a check beside the other
    reading, since the refusal alone is routine."""
    near = [line.strip() for line in evidence.failure.context if line.strip()][-_FLUSH_NEAR:]
    warning = next((line for line in reversed(near) if REFUSED_FLUSH.search(line)), None)
    if warning is None or pending_flush_shape(evidence) is not None:
        return None
    return (f"The engine refused a flush of its cache just above the cut ('{warning}'): the flush freed nothing. "
            "Only when the program driving the engine went on to release its memory or update its weights with "
            "those requests still running is the ordering the cause: every request must finish or be aborted first.")


def _guess(*, shape: str, category: str, title: str, reading: str, checks: tuple[str, ...]) -> FrameShape:
    """A reading of the paste's lines carried as a frame shape (what general.py shows for a cut): the fields that match
    a row's frames are empty, as no frames are matched."""
    return FrameShape(shape=shape, category=category, title=title, reading=reading, checks=checks, innermost=1,
                      every=False, functions=frozenset(), paths=(), files=(), innermost_functions=frozenset(),
                      sources=(), unless_sources=(), when_sources=())


def _wrapper_warning(evidence: Evidence) -> FrameShape | None:
    """A warning of a package just above the cut, the package one the frames run under (its name a directory of
    their paths)."""
    near = [line.strip() for line in evidence.failure.context if line.strip()][-_NEAR:]
    engine_names = {"sglang", "vllm", evidence.launch.engine or ""}
    files = [frame.file for frame in evidence.failure.final.frames]
    for line in reversed(near):
        found = next((m for pattern in _WARNINGS if (m := pattern.match(line))), None)
        if found is None or found["name"].lower() in engine_names | _EVERY_RUN:
            continue
        name = found["name"]
        if not _STATES_A_LIMIT.search(found["text"]) or not _runs_through(name.lower(), files, engine_names):
            continue
        text = found["text"].strip()
        return _guess(
            shape="wrapper-warning", category="feature-conflict",
            title=f"Failed under {name}, which warned just before the cut (what {name} supports of this model and launch)",
            # (quoted in single quotes: the report then shows the warning's line above the cut, render/view.py)
            reading=(f"a warning of {name} just above the cut ('{text}'), a package the frames run under (their paths "
                     f"hold {name}'s directory): the engine's step the traceback stops in ran with {name}'s changes, so "
                     f"what {name} supports of this model and launch is the likeliest at fault; a guess from the lines "
                     "around the cut, not a finding"),
            checks=(
                f"The exception line right after the last frame says what failed; {name}'s warning above it says what "
                f"{name} has not been made or tested for (\"{text}\").",
                f"The same launch without {name} (the stock engine): if it starts, the failure is {name}'s support of "
                f"this model or setting (a model with another attention or cache layout than {name} handles, a "
                f"setting it has not been tested with); {name}'s issues and releases say which models and engine "
                "releases it supports.",
                f"{name}'s release against the engine's: an integration is made for certain engine releases.",
            ))
    return None


def _runs_through(name: str, files: Sequence[str], engine_names: set[str]) -> bool:
    """The frames run through an installed package `name` (its directory under site-packages), or the engine's own
    files installed inside its tree (kvcached's `kvcached/engine_integration/…/site-packages/sglang/`), and no frame
    of the user's own code sits under a directory of that name (`/app/app/batching.py`: the user's program)."""
    through = False
    for file in files:
        low = file.lower()
        installed = _INSTALLED.search(low)
        if installed is None:
            if f"/{name}/" in low:
                return False  # the user's own program (or a checkout) of that name
            continue
        inside, before = low[installed.end():], low[:installed.start()]
        if inside.startswith(f"{name}/") or (inside.split("/", 1)[0] in engine_names
                                             and (f"/{name}/" in before or f"-{name}-" in before)):
            through = True
    return through


def _forward_on_older_gpu(evidence: Evidence) -> FrameShape | None:
    """A cut in SGLang's forward pass when every GPU the paste shows is below FlashInfer's floor (facts/gpus.toml's
    flashinfer row: compute capability 7.5), FlashInfer being SGLang's default attention and sampling backend on CUDA,
    and the launch has not switched it off."""
    engine = evidence.launch.engine or _engine_of(evidence.failure.final.frames)
    if engine != "sglang" or not _in_forward(evidence.failure.final.frames) or _flashinfer_switched_off(evidence):
        return None
    floor = gpu_facts.feature("flashinfer")
    if floor is None or floor.minimum is None:
        return None
    shown = [gpu for gpu in gpu_facts.gpus_in([*evidence.failure.context, *evidence.lines, *evidence.launch.gpu_lines])
             if gpu.capability is not None]
    # every GPU the paste shows below the floor: a paste naming another machine's GPU beside the host's says nothing
    if not shown or any(gpu.capability >= floor.minimum for gpu in shown if gpu.capability is not None):
        return None
    gpu = shown[0]
    need = gpu_facts.show(floor.minimum)
    return _guess(
        shape="forward-older-gpu", category="gpu-arch-unsupported",
        title="Failed in the model's forward pass on a GPU older than the default attention kernels support",
        reading=(f"a cut in the model's forward pass on {gpu.describe()}, which the paste names: SGLang's default "
                 f"attention and sampling backend on CUDA (FlashInfer) supports compute capability {need} and later, "
                 "so its kernels may not run on this GPU; a guess from where the process was and the GPU, not a "
                 "finding"),
        checks=(
            "The exception line right after the last frame names the kernel's error (a CUDA error such as `too many "
            "resources requested for launch` or `no kernel image is available`, FlashInfer's own message).",
            f"Backends that run on this GPU, switched with the release's own flags: {_switches(evidence)} (the "
            "release's --help says which it has); Triton's kernels are compiled for the GPU at run time.",
        ))


# SGLang's switches away from FlashInfer, attention and sampling together (FlashInfer's sampling kernel failed in
# sgl-project/sglang#748: flashinfer/sampling.cuh): the pair of each generation of its flags, per the static catalogs
# (--attention-backend/--sampling-backend from 0.3.1, --disable-flashinfer/--disable-flashinfer-sampling up to
# 0.4.1.post1; sglang/srt/server_args.py).
_SWITCHES = ((("--attention-backend", "triton"), ("--sampling-backend", "pytorch")),
             (("--disable-flashinfer", ""), ("--disable-flashinfer-sampling", "")))
# the flags that choose SGLang's attention backend (one for both phases, or each phase's)
_BACKEND_FLAGS = ("--attention-backend", "--prefill-attention-backend", "--decode-attention-backend")


def _flashinfer_switched_off(evidence: Evidence) -> bool:
    """The launch already runs another attention backend, or has FlashInfer switched off (command or server_args)."""
    launch = evidence.launch
    if any((value := flag_value(launch, flag)) and value != "flashinfer" for flag in _BACKEND_FLAGS):
        return True
    return flag_value(launch, "--disable-flashinfer") is not None


def _switches(evidence: Evidence) -> str:
    """The pairs of switches: only the release's own when the paste names a release the catalogs hold, else each pair
    with its releases."""
    version = evidence.launch.named_version
    known = version is not None and version in static_catalogs.releases("sglang")
    pairs, every = [], []
    for pair in _SWITCHES:
        words = " with ".join(f"`{flag} {value}`" if value else f"`{flag}`" for flag, value in pair)
        note = range_note("sglang", pair[0][0])
        every.append(f"{words} ({note.split(': ', 1)[1]})" if note else words)
        if known and all(version in releases_with("sglang", flag) for flag, _ in pair):
            pairs.append(words)
    return " or ".join(pairs or every)


def _engine_of(frames: Sequence[Frame]) -> str | None:
    return next((name.rstrip("/") for frame in frames for name in _ENGINE_PATHS if f"/{name}" in frame.file), None)


def _in_forward(frames: Sequence[Frame]) -> bool:
    """The innermost engine frames run the model on a batch (the forward functions, or an attention layer's file)."""
    own = [frame for frame in frames if any(f"/{name}" in frame.file for name in _ENGINE_PATHS)][-3:]
    return bool(own) and any(frame.function in _FORWARD_FUNCTIONS or any(p in frame.file for p in _ATTENTION_PATHS)
                             for frame in own)


def quantized_moe_steps(evidence: Evidence) -> tuple[str, ...]:
    """A cut while the model was built (its loader, a model class's or a layer's constructor) in a launch that sets a
    quantization method (its command or its settings: a checkpoint's name alone sets nothing) on a checkpoint whose name
    says it is a mixture-of-experts model: the method's support for the expert layers, which comes apart from the dense
    layers', is one thing to rule out (sgl-project/sglang#1100, GPTQ on Qwen2-57B-A14B; #2362, W4A16 on a DeepSeek
    MoE).  A labelled step, never the category: the name says what the model is, not that its quantization failed
    (stop 47: the blind split's guesses from a quantization flag were often wrong; Qwen3-30B-A3B with fp8 is a
    supported pairing)."""
    failure = evidence.failure
    built = building_model_frame(failure) or cut_in_model_loader(failure)
    lines = [*failure.context, *evidence.lines]
    method = launch_quantization(evidence.launch, lines) if built is not None else None
    model = launch_model(evidence.launch, lines) if method else None
    moe = mixture_of_experts_name(model)
    if built is None or method is None or method.startswith("the checkpoint's name") or moe is None:
        return ()
    release = evidence.launch.named_version
    at_release = f"the release the log names ({release})" if release else "the installed release (pip show says which)"
    return (f"General guidance, not the category: the launch sets a quantization ({method}) on a mixture-of-experts "
            f"checkpoint ({moe} in its name {model}). A method's support for expert layers comes apart from, and often "
            f"later than, its support for dense layers: whether {at_release} runs this method on MoE expert layers is "
            "what the engine's quantization docs and release notes say; the same model unquantized, or quantized with "
            "a method the release lists for MoE models, tells it apart.",)
