"""The switches that localise a runtime fault of the engine's serving step (issue 28, stop 56: a traceback cut in
SGLang's scheduler loop or vLLM's engine core loop got "paste more" or a generic CUDA checklist).

A fault while serving is narrowed down by turning off, one at a time, the paths the step runs through: overlap
scheduling (SGLang's event_loop_overlap, on by default from 0.4.x: --disable-overlap-schedule, 0.3.6 on), CUDA graphs
(SGLang's --disable-cuda-graph, vLLM's --enforce-eager, every catalogued release), the speculative path when the launch
turned it on (its flags), vLLM's async scheduling when given; and, on NVIDIA GPUs, CUDA_LAUNCH_BLOCKING=1, which makes
a kernel's fault surface at its own launch.  Only switches the paste does not show already set are offered, and only
flags of the release's catalog when the paste names a catalogued release (fixes/release_flags.py marks the others
when the report is built)."""

from __future__ import annotations

from logsleuth.command_line import flag_value
from logsleuth.fixes.release_flags import range_note
from logsleuth.lazyre import compile_lazily
from logsleuth.reasoning.evidence import Evidence

PLACEHOLDER = "{serving_switches}"
# A platform other than NVIDIA's in the frames or the paste: ROCm/HIP, Ascend (torch_npu), Intel (XPU, Habana), TPU
_OTHER_PLATFORM = compile_lazily(r"(?i)\brocm\b|/rocm|\bhip error|torch_npu|vllm_ascend|\bascend\b|habana|\bxpu\b"
                                 r"|torch_xla|\btpu\b")
_SPECULATIVE = {"sglang": ("--speculative-algorithm",), "vllm": ("--speculative-config", "--speculative-model")}


def with_serving_switches(checks: tuple[str, ...], evidence: Evidence, engine: str | None) -> tuple[str, ...]:
    """The checks, the placeholder replaced by the switches for this launch (dropped when none applies)."""
    text = serving_switches(evidence, engine)
    return tuple(check.replace(PLACEHOLDER, text) if PLACEHOLDER in check else check
                 for check in checks if PLACEHOLDER not in check or text)


def serving_switches(evidence: Evidence, engine: str | None) -> str:
    """One check naming, for the engine, the switches that turn off each path of the serving step the launch has on."""
    launch = evidence.launch
    frames = evidence.failure.final.frames
    offered: list[str] = []
    if engine == "sglang":
        overlap = any(frame.function == "event_loop_overlap" for frame in frames)
        if overlap and flag_value(launch, "--disable-overlap-schedule") is None:
            offered.append(_flag("sglang", "--disable-overlap-schedule", "overlap scheduling off"))
        if flag_value(launch, "--disable-cuda-graph") is None:
            offered.append(_flag("sglang", "--disable-cuda-graph", "CUDA graphs off"))
    elif engine == "vllm":
        if flag_value(launch, "--enforce-eager") is None:
            offered.append(_flag("vllm", "--enforce-eager", "CUDA graphs off"))
        if flag_value(launch, "--async-scheduling") is not None:
            offered.append("the launch without --async-scheduling")
    speculative = [flag for flag in _SPECULATIVE.get(engine or "", ()) if flag_value(launch, flag) is not None]
    if speculative:
        offered.append(f"the launch without its speculative flags ({', '.join(speculative)})")
    shown = "\n".join([*(frame.file for frame in frames), *evidence.failure.context, *evidence.lines])
    nvidia = not _OTHER_PLATFORM.search(shown)
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


def _flag(engine: str, flag: str, does: str) -> str:
    """`flag` (what it does; the releases that have it when only some do)."""
    note = range_note(engine, flag)
    return f"{flag} ({does}{'; ' + note.split(': ', 1)[1] if note else ''})"
