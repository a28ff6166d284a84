"""A program's own argument parser given to the engine's parser builder, refused for an option both define (issue 28,
split 20 F-03: such a paste got an unclassified report, or an invalid-flag-value guess when it was cut).

A program that runs the engine (a serving wrapper, a benchmark, an RL trainer) builds its parser with its own options,
then lets the engine add its launch options to it: vLLM's `EngineArgs.add_cli_args` and `AsyncEngineArgs.add_cli_args`
(vllm/engine/arg_utils.py), `make_arg_parser` (vllm/entrypoints/openai/cli_args.py), SGLang's `ServerArgs.add_cli_args`
(sglang/srt/server_args.py).  CPython's argparse refuses an option string a parser already has (Lib/argparse.py:
`_ActionsContainer._add_action` calls `_check_conflict`, whose default handler `_handle_conflict_error` raises
`ArgumentError(action, 'conflicting option string: %s')`, 'strings' for several, Python 2's 'string(s)').  The
program's options were fixed when its release was made; the engine's grow with every release: the engine release
installed added an option the program already defines, so the program's release was made for an older engine
release (kserve/kserve#4076: vLLM 0.6.4 added `--task`, which kserve's huggingfaceserver defines; vllm-project/vllm#19221:
a program's own parser handed to AsyncEngineArgs.add_cli_args, broken by a later vLLM release's parser).

The engine's own callers (`vllm serve`, SGLang's launch_server: every frame outside argparse is the engine's) are
not this: a conflict there is the engine's own bug.  A paste cut before the exception line reads the same when its
frames go on into argparse's adding of an option (`_add_action`, `_check_conflict`, `_handle_conflict_error`, whose
only refusal is the conflict) below the engine's builder: a labelled guess.  `add_argument` alone is not enough: it
refuses other things itself (an uncallable type, a metavar that does not fit nargs) before it adds the action.
"""

from __future__ import annotations

from dataclasses import dataclass

from logsleuth.facts.message_templates import short_type
from logsleuth.ingest.engine_evidence import console_script_engine
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Failure, Fix, Frame, engine_subpackage_host
from logsleuth.reasoning.engine_api_calls import engine_of_frame, package_path
from logsleuth.reasoning.evidence import Evidence

_CONFLICT = compile_lazily(r"^argument (?P<argument>[^\s:]{1,200}+): conflicting option strings?(?:\(s\))?: (?P<strings>[^\n]{1,400})")
# The engines' functions that add their launch options to a parser they are given.
_PARSER_BUILDERS = frozenset({"add_cli_args", "make_arg_parser"})
# argparse's steps of adding an option, below add_argument: the conflict check is their only refusal.
_ADDING_ACTION = frozenset({"_add_action", "_check_conflict", "_handle_conflict_error"})
# The option an engine's source line adds (`parser.add_argument("--task", …)`, `group.add_argument('--task', …)`).
# The standard library's files (argparse.py, runpy.py), not the packages installed beside it.
_STDLIB = compile_lazily(r"(?:^|/)lib/python\d(?:\.\d+)?/(?!(?:site|dist)-packages/)")
_ADDED_OPTION = compile_lazily(r"""add_argument\(\s*["'](?P<option>--?[\w][\w-]{0,80})["']""")


@dataclass(frozen=True, slots=True)
class OptionClash:
    """A program's call of the engine's parser builder refused for an option both define."""

    engine: str  # "sglang" or "vllm"
    caller: Frame  # the program's frame that called the engine's builder
    builder: Frame  # the engine's builder (add_cli_args, make_arg_parser)
    option: str | None  # the option both define, when the log names it
    cut: bool  # the paste stops before the exception line: read from the frames alone


def option_clash(failure: Failure) -> OptionClash | None:
    """The clash, when the final exception is argparse's conflict (or a paste cut inside argparse's adding of an
    option) raised under the engine's parser builder that a program other than the engine called."""
    final = failure.final
    frames = final.frames
    at = next((i for i, frame in enumerate(frames)
               if frame.function in _PARSER_BUILDERS and engine_of_frame(frame.file)), None)
    if at is None:
        return None
    caller = next((frame for frame in reversed(frames[:at]) if not engine_of_frame(frame.file)), None)
    if caller is None or not _program_frame(caller):
        return None
    conflict = _CONFLICT.match(final.message or "") if short_type(final.type) == "ArgumentError" else None
    cut = conflict is None and final.truncated and not final.type and not final.message
    if conflict is None and not (cut and any(frame.function in _ADDING_ACTION and _argparse(frame)
                                             for frame in frames[at + 1:])):
        return None
    option = conflict["argument"].split("/", 1)[0] if conflict else _option_added(frames[at:])
    return OptionClash(engine_of_frame(frames[at].file) or "", caller, frames[at], option, cut)


def program_name(clash: OptionClash) -> str:
    """The caller's package (`huggingfaceserver`), else its file's name."""
    host = engine_subpackage_host(clash.caller.file)
    if host:
        return host
    path = package_path(clash.caller.file)
    return path.split("/", 1)[0] if path != clash.caller.file and "/" in path else path.rsplit("/", 1)[-1]


def _program_frame(frame: Frame) -> bool:
    """A frame of a program's own code: not a pseudo-file (`<frozen runpy>`), the standard library or the engine's
    console script (`/usr/local/bin/vllm`, whose `main` is the engine's own caller)."""
    return not (frame.file.startswith("<") or _STDLIB.search(frame.file) or console_script_engine(frame.file))


def _argparse(frame: Frame) -> bool:
    return frame.file.replace("\\", "/").rsplit("/", 1)[-1] == "argparse.py"


def _option_added(frames: tuple[Frame, ...]) -> str | None:
    """The option the innermost engine frame's source line adds, when it names one."""
    for frame in reversed(frames):
        if engine_of_frame(frame.file) and (m := _ADDED_OPTION.search(frame.source or "")):
            return m["option"]
    return None


def clash_diagnosis(clash: OptionClash, evidence: Evidence, needs_input: tuple[str, ...]) -> Diagnosis:
    """The clash as general guidance (category dependency-version): the program's release against the engine's."""
    name = ENGINE_NAMES.get(clash.engine, clash.engine)
    program = program_name(clash)
    option = clash.option or "an option"
    builder = f"{name}'s {clash.builder.function} ({clash.builder.module_path}:{clash.builder.line})"
    caller = f"{clash.caller.module_path}:{clash.caller.line}"
    version = evidence.launch.engine_version if evidence.launch.engine in (clash.engine, None) else None
    installed = f"{name} {version}" if version else f"the installed {name} release"
    if clash.cut:
        seen = (f"A guess from the frames, the exception line not in the paste: {program} ({caller}) hands its own "
                f"argument parser to {builder}, and the paste stops inside argparse's check that an option is not "
                f"defined twice (_check_conflict), whose only refusal is 'argument {option}: conflicting option "
                f"string'.")
    else:
        seen = (f"{program} ({caller}) hands its own argument parser to {builder}, and argparse refused "
                f"{option}: the parser already had it (argparse's 'conflicting option string').")
    return Diagnosis(
        pattern="general-dependency-version",
        title=f"Likely a {program} release made for an older {name} release: both define {option}",
        category="dependency-version",
        root_cause=(f"{seen} {program} defines {option} itself and {installed} defines it too: the two releases do "
                    f"not fit. Most often {name} added the option in a release later than the one this {program} "
                    f"release was made for, so the {program} release is older than {installed}."),
        fix=Fix(
            summary=(f"General guidance: a {program} release made for this {name} release, or the {name} release "
                     f"{program} pins."),
            steps=(
                f"A {program} release made for {installed}: its release notes or requirements name the {name} "
                f"releases it supports (pip show of its package lists the requirements of the one installed).",
                f"Or the {name} release {program} pins or documents, in a fresh virtual environment, so that pip "
                f"resolves it (pip show {clash.engine}: the release installed now).",
                f"When {program} is your own code: leave {option} to {name}'s parser (read it from the parsed "
                f"arguments) or rename yours.",
            ),
            needs_input=needs_input),
        references=("CPython Lib/argparse.py: _ActionsContainer._check_conflict -> _handle_conflict_error, "
                    "'argument %s: conflicting option string: %s'",
                    "kserve/kserve#4076 (vLLM 0.6.4 added --task, which kserve's huggingfaceserver defines); "
                    "vllm-project/vllm#19221 (a program's own parser given to AsyncEngineArgs.add_cli_args, broken "
                    "by a later vLLM release)"),
        engine=clash.engine,
        engine_version=version,
        basis="general",
    )
