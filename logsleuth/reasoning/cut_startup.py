"""What a traceback cut before its exception line while the engine was being set up leaves to check (issue 28,
stop 57: "no category, no advice beyond paste more").

The frames stop in the engine's construction (SGLang's Scheduler, its TpModelWorker and ModelRunner, the model class
being built; vLLM's engine client, LLMEngine, its executor, the engine core) and show no step after it (a forward
pass, the KV cache's sizing, serving), or the traceback starts right after the start-up's own lines and shows no frame.
What fails there is most often the model against the release: its architecture not implemented by the installed
release (vllm-project/vllm#12502, Qwen2.5-VL on a release before it; sgl-project/sglang#4062, a vision model SGLang
0.4.3 did not implement), its quantization not built for this model type (sgl-project/sglang#2362, W4A16 on a
DeepSeek MoE; #1100, GPTQ on Qwen2-MoE; vllm-project/vllm#12682, a partly quantized bitsandbytes checkpoint), a
transformers newer than the release was made for (vllm-project/vllm#52768, Gemma 4 on vLLM 0.27.1 with transformers
5.15), or a regression of a development commit (sgl-project/sglang#8194, a main-branch build).  None of that is
proven by a cut traceback: the steps are general guidance, each built on what the log names (the model, the release,
the quantization, transformers' version) and saying so, and the category stays unclassified."""

from __future__ import annotations

from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from logsleuth.diagnosis.grouping import names_no_cause
from logsleuth.facts import requires
from logsleuth.facts.package_sites import versions_shown
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Frame
from logsleuth.reasoning.call_frames import own_frames
from logsleuth.reasoning.category_score import AFTER_BUILD_CALLS, called_by
from logsleuth.reasoning.engine_api_calls import ENGINE_FRAME, code_path
from logsleuth.reasoning.evidence import Evidence
from logsleuth.reasoning.launch_quantization import launch_model

# The engines' set-up calls, as a frame's function or the call its line makes: SGLang's scheduler process and the
# workers and runner it builds (sglang/srt/managers/scheduler.py, tp_worker.py, model_executor/model_runner.py), vLLM's
# engine client and engine (entrypoints/openai/api_server.py, engine/llm_engine.py, engine/multiprocessing/engine.py,
# v1/engine/core.py, executor/), the config they build first (engine/arg_utils.py create_engine_config) and both
# engines' model loaders.  A process's entry (run_scheduler_process, run_mp_engine, run_engine_core) runs its serving
# loop too, so it counts only by the set-up call its line makes; a device's set-up (init_device) is no model's.
_SETUP_CALLS = frozenset({
    "Scheduler", "TpWorkerClass", "TpModelWorker", "TpModelWorkerClient", "ModelRunner",
    "load_model", "get_model", "_initialize_model", "initialize_model", "model_class",
    "build_async_engine_client", "build_async_engine_client_from_engine_args", "create_engine_config",
    "from_engine_args", "from_vllm_config", "MQLLMEngine", "LLMEngine", "executor_class",
    "_init_executor", "EngineCore", "EngineCoreProc", "make_client",
    "create_model_config", "get_config", "ModelConfig",
})
# A step after the set-up: the weights were in place and the engine ran something (category_score's steps after the
# build), or its serving loop ran (SGLang's event loops, vLLM's engine loops).
_AFTER_SETUP = AFTER_BUILD_CALLS | {"event_loop_normal", "event_loop_overlap", "run_engine_loop",
                                    "_process_input_queue", "run_busy_loop"}
# An engine's source tree (a checkout or an editable install): its package under the repository's own directory
# (`…/sglang/python/sglang/srt/…`, `…/vllm/vllm/engine/…`), not under site-packages.
_SOURCE_TREE = compile_lazily(r"^(?P<tree>.*?/sglang/python)/sglang/|^(?P<vtree>.*?/vllm)/vllm/")
_INSTALLED = compile_lazily(r"/(?:site|dist)-packages/")
LABEL = "General guidance, not a proven fix:"


def setup_frame(evidence: Evidence) -> Frame | None:
    """The innermost engine frame of a cut traceback that stops in the engine's set-up, with no step after it."""
    failure = evidence.failure
    if not names_no_cause(failure):
        return None
    frames = [frame for frame in own_frames(failure) if ENGINE_FRAME.search(frame.file)]
    if any(frame.function in _AFTER_SETUP or called_by(frame) in _AFTER_SETUP for frame in failure.final.frames):
        return None
    return next((frame for frame in reversed(frames)
                 if frame.function in _SETUP_CALLS or called_by(frame) in _SETUP_CALLS), None)


def _started_then_cut(evidence: Evidence) -> bool:
    """A cut traceback that shows no frame at all, in a log that shows the engine's start (its release's banner, its
    settings or its command) and no line saying the server came up or served before it (LaunchInfo.up_before): the
    paste's start-up is what ran before it."""
    failure = evidence.failure
    launch = evidence.launch
    shown = launch.named_version is not None or bool(launch.server_args) or bool(launch.command)
    return names_no_cause(failure) and not failure.final.frames and shown and not launch.up_before


def cut_setup_steps(evidence: Evidence) -> tuple[str, ...]:
    """General guidance for a traceback cut while the engine was being set up, each step on what the log names."""
    frame = setup_frame(evidence)
    if frame is None and not _started_then_cut(evidence):
        return ()
    launch = evidence.launch
    lines = [*evidence.failure.context, *evidence.lines]
    engine = launch.engine if launch.engine in ENGINE_NAMES else None
    name = ENGINE_NAMES[engine] if engine else "the engine"
    version = launch.named_version
    release = f"{name} {version}" if version else f"the installed {name}"
    model = launch_model(launch, lines)
    named = [f"the model {model}" if model else "", f"the release {name} {version}" if version else ""]
    said = " and ".join(part for part in named if part)
    stage = (f"the traceback stops while {name} was being set up (in {code_path(frame.file)} in {frame.function}), "
             "before it served" if frame is not None else
             f"the traceback stops at its first line, in a paste that shows {name}'s start and nothing of it serving: "
             "if it was raised during the start-up")
    steps = [f"{LABEL} {stage}. What fails "
             "there is most often the model against the release: an architecture the release does not implement, a "
             "quantization not built for this model type, a transformers the release was not made for, or the "
             "release's own code." + (f" The log names {said}." if said else "")]
    check_release = "" if version else f" ({'pip show ' + engine if engine else 'pip show vllm or sglang'} says which)"
    steps.append(f"{LABEL} check that {release}{check_release} implements "
                 f"{model or 'this model'}: the \"architectures\" entry of the checkpoint's config.json "
                 f"against the release's supported models; a model published after the release needs a newer one.")
    if (transformers := _transformers_step(engine, version, lines, launch.package_lines)) is not None:
        steps.append(transformers)
    if frame is not None and (tree := _source_tree(evidence)) is not None:
        steps.append(f"{LABEL} the frames run from a source tree ({tree}), as a checkout or the engine's container "
                     "image runs it: if it is a commit of a development branch rather than a release's tag, a "
                     "regression of that commit is possible; the same launch on a release (or a newer commit) tells "
                     "them apart.")
    return tuple(steps)


def _transformers_step(engine: str | None, version: str | None, lines: list[str],
                       package_lines: tuple[str, ...]) -> str | None:
    """transformers' version the log shows against what the named release requires (facts/requires.json).  Most of
    vLLM's rows are a floor only (`>=4.45.2`): a transformers within it may still be much newer than the release
    (vllm-project/vllm#52768, transformers 5.15 under 0.27.1's `>=5.5.3`), so within an open floor is said as a guess
    to rule out, never as fine."""
    pin = requires.pin(engine, version, "transformers") if engine and version else None
    shown = versions_shown([*package_lines, *lines], "transformers")
    if pin is None or not pin.specifier:
        return None
    try:
        specifier = SpecifierSet(pin.specifier)
        within = Version(shown[0]) in specifier if shown else None
    except (InvalidSpecifier, InvalidVersion):
        return None
    name = ENGINE_NAMES.get(engine or "", engine)
    extras = [extra for extra in (*pin.included_by, *pin.extras) if extra == "srt"] or [*pin.extras]
    who = f"{name} {version}'s [{extras[0]}] extra" if extras else f"{name} {version}"
    open_floor = not any(spec.operator in ("<", "<=", "==", "===", "~=") for spec in specifier)
    newer = ("a guess, not a finding: a transformers much newer than the release (published well after it) can fail "
             "to read a new model's config the release reads; the transformers of the release's own time rules that "
             "out.")
    if within is False:
        return (f"{LABEL} the log shows transformers {shown[0]}, outside what {who} requires ({pin.requirement}, its "
                "package metadata): installing a transformers within it rules that out.")
    if within and not open_floor:
        return None
    if within:
        return (f"{LABEL} the log shows transformers {shown[0]}; {who} requires only {pin.requirement} (its package "
                f"metadata, no upper bound), so being within it rules nothing out: {newer}")
    if open_floor:
        return (f"{LABEL} {who} requires {pin.requirement} (its package metadata, no upper bound): pip show "
                f"transformers says which one is installed; {newer}")
    return (f"{LABEL} {who} requires {pin.requirement} (its package metadata): pip show transformers says whether the "
            "installed one is within it; a transformers outside it can fail to read a model's config the release "
            "reads.")


def _source_tree(evidence: Evidence) -> str | None:
    """The engine's source tree the frames run from, when none is under site-packages."""
    files = [frame.file for frame in evidence.failure.final.frames if ENGINE_FRAME.search(frame.file)]
    if not files or any(_INSTALLED.search(file) for file in files):
        return None
    found = next((m for file in files if (m := _SOURCE_TREE.search(file))), None)
    return (found["tree"] or found["vtree"]) if found else None
