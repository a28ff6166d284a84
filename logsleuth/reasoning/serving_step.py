"""The switches that localise a runtime fault of the engine's serving step (issue 28, stop 56: a traceback cut in
SGLang's scheduler loop or vLLM's engine core loop got "paste more" or a generic CUDA checklist).

A fault while serving is narrowed down by turning off, one at a time, the paths the step runs through: overlap
scheduling (SGLang's event_loop_overlap*, on by default from 0.3.6: --disable-overlap-schedule; 0.3.4 to 0.4.1.post1 had
it opt-in, --enable-overlap-schedule), CUDA graphs
(SGLang's --disable-cuda-graph, vLLM's --enforce-eager, every catalogued release), the speculative path when the launch
turned it on (its flags), vLLM's async scheduling (its batch queue's step, or the launch's setting:
--no-async-scheduling, 0.10.0 on); and, on NVIDIA GPUs, CUDA_LAUNCH_BLOCKING=1, which makes
a kernel's fault surface at its own launch.  Only switches the paste does not show already set are offered, only
flags of the release's catalog when the paste names a catalogued release, and a switch the launch's other settings
make the release refuse (_NEEDS_THE_PATH) only together with leaving that setting out."""

from __future__ import annotations

from logsleuth.command_line import flag_value
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.cross_engine import find, normalized
from logsleuth.fixes.release_flags import range_note
from logsleuth.models import LaunchInfo
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.platform import platform_of

PLACEHOLDER = "{serving_switches}"
_SPECULATIVE = {"sglang": ("--speculative-algorithm",), "vllm": ("--speculative-config", "--speculative-model")}
# Settings that need the path a switch turns off, so the release refuses the switch beside them at start-up (a second
# failure): (engine, switch, the launch's flag, its value or "" for any), each with the refusal's site
_NEEDS_THE_PATH = (
    # sglang/srt/managers/prefill_delayer.py PrefillDelayer.__init__: "To use PrefillDelayer, disable_overlap_schedule
    # must be False." (0.5.8 on)
    ("sglang", "--disable-overlap-schedule", "--enable-prefill-delayer", ""),
    # sglang/srt/mem_cache/kv_cache_configurator.py _calculate_mamba_ratio: "Lazy extra buffer requires overlap schedule
    # (--disable-overlap-schedule is incompatible)"
    ("sglang", "--disable-overlap-schedule", "--mamba-radix-cache-strategy", "extra_buffer_lazy"),
    # vllm/config/vllm.py VllmConfig._validate_adaptive_verification: "Adaptive verification is not currently
    # compatible with enforce_eager/cudagraph_mode=none"
    ("vllm", "--enforce-eager", "--speculative-config", "enable_adaptive_verification"),
)


def with_serving_switches(checks: tuple[str, ...], evidence: Evidence, engine: str | None) -> tuple[str, ...]:
    """The checks, the placeholder replaced by the switches for this launch (dropped when none applies)."""
    text = serving_switches(evidence, engine)
    return tuple(check.replace(PLACEHOLDER, text) if PLACEHOLDER in check else check
                 for check in checks if PLACEHOLDER not in check or text)


def serving_switches(evidence: Evidence, engine: str | None) -> str:
    """One check naming, for the engine, the switches that turn off each path of the serving step the launch has on."""
    launch = evidence.launch
    frames = evidence.failure.final.frames
    functions = {frame.function or "" for frame in frames}
    offered: list[str] = []
    if engine == "sglang":
        # (PD disaggregation runs event_loop_overlap_disagg_prefill/decode)
        overlap = any(function.startswith("event_loop_overlap") for function in functions)
        if _given(launch, "--enable-overlap-schedule"):  # 0.3.4 to 0.4.1.post1: overlap was opt-in
            offered.append("the launch without --enable-overlap-schedule (overlap scheduling off)")
        elif overlap and not _given(launch, "--disable-overlap-schedule"):
            offered.append(_switch(launch, "sglang", "--disable-overlap-schedule", "overlap scheduling off"))
        if not _given(launch, "--disable-cuda-graph"):
            offered.append(_switch(launch, "sglang", "--disable-cuda-graph", "CUDA graphs off"))
    elif engine == "vllm":
        if not _given(launch, "--enforce-eager"):
            offered.append(_switch(launch, "vllm", "--enforce-eager", "CUDA graphs off"))
        # async scheduling runs the batch queue's step (vllm/v1/engine/core.py step_with_batch_queue); its switch is the
        # negation whatever the default of the release
        if ((_given(launch, "--async-scheduling") or "step_with_batch_queue" in functions)
                and not _given(launch, "--no-async-scheduling") and _in_release(launch, "vllm", "--no-async-scheduling")):
            offered.append(_switch(launch, "vllm", "--no-async-scheduling", "async scheduling off"))
    speculative = [flag for flag in _SPECULATIVE.get(engine or "", ()) if flag_value(launch, flag) is not None]
    if speculative:
        offered.append(f"the launch without its speculative flags ({', '.join(speculative)})")
    offered = [text for text in offered if text]
    # CUDA_LAUNCH_BLOCKING only where no other accelerator ran: the one platform decision (reasoning/platform.py), which
    # would otherwise leave out the whole check, switches and all, for naming an NVIDIA-only switch
    decided = platform_of(evidence.failure, launch)
    nvidia = decided is None or decided[0].fallback
    if not offered and not nvidia:
        return ""
    parts = []
    if offered:
        parts.append("Serve again with one path of the serving step turned off at a time, each a flag of the release: "
                     f"{'; '.join(offered)}. The one whose absence makes the failure go is the path at fault (slower, "
                     "for a test).")
    if nvidia:
        parts.append("On NVIDIA GPUs, a reproduction with CUDA_LAUNCH_BLOCKING=1 reports a kernel's fault at its own "
                     "launch, so the traceback names the kernel (slow: for a reproduction only).")
    return " ".join(parts)


def _given(launch: LaunchInfo, flag: str) -> bool:
    """The launch sets the switch: its command or server_args (flag_value), or a settings dump's True (vLLM's
    `non-default args: {…}`, LaunchInfo.switches_on)."""
    return flag_value(launch, flag) is not None or flag.lstrip("-").replace("-", "_") in launch.switches_on


def _in_release(launch: LaunchInfo, engine: str, flag: str) -> bool:
    """The named release's catalog has the flag (True when the release or its catalog is unknown: the range is said)."""
    catalog = catalogs.load(engine, launch.named_version) if launch.named_version else None
    return catalog is None or find(normalized(flag, engine), engine, catalog) is not None


def _switch(launch: LaunchInfo, engine: str, flag: str, does: str) -> str:
    """`flag` (what it does; the releases that have it when only some do); together with leaving out a setting of the
    launch that needs the path it turns off (_NEEDS_THE_PATH), "" when the release lacks it."""
    if not _in_release(launch, engine, flag):
        return ""
    needing = [f"{needs} {value}".strip() for owner, switch, needs, value in _NEEDS_THE_PATH if owner == engine and switch == flag
               and (given := flag_value(launch, needs)) is not None and value in given]
    note = range_note(engine, flag)
    said = f"{flag} ({does}{'; ' + note.split(': ', 1)[1] if note and launch.named_version is None else ''})"
    if needing:
        return f"{said} together with the launch without {', '.join(needing)} (the release refuses the two together)"
    return said
