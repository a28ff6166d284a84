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

The program must call the builder itself: the frame right above the outermost builder (the standard library's frames
skipped) is the program's.  When the engine's own code calls it (`vllm serve`, SGLang's launch_server, and a program that
only starts the engine's CLI `main()`: vllm/entrypoints/cli/serve.py subparser_init -> make_arg_parser), the parser and
its options are the engine's, and a conflict there is the engine's own bug.  Only an installed program has releases:
a script of the user's own (`python bench.py`) is led by its own parser's option.  The engine's catalogued releases
say when it added the option: a release later than the oldest known is named; an option every known release has was
not added by a newer engine release.  A paste cut before the exception line reads the same when its
frames go on into argparse's adding of an option (`_add_action`, `_check_conflict`, `_handle_conflict_error`, whose
only refusal is the conflict) below the engine's builder: a labelled guess.  `add_argument` alone is not enough: it
refuses other things itself (an uncallable type, a metavar that does not fit nargs) before it adds the action.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from logsleuth.facts.message_templates import short_type
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.release_flags import releases_with
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
# The standard library's files (argparse.py, runpy.py), not the packages installed beside it: POSIX's
# `lib/python3.10/`, and Windows' `Python310\\Lib\\runpy.py` (a file named after a standard module right under lib/).
_STDLIB = compile_lazily(r"(?:^|/)lib/python\d(?:\.\d+)?/(?!(?:site|dist)-packages/)")
_LIB_MODULE = compile_lazily(r"(?i)(?:^|/)lib/(?P<module>\w+)(?:\.py$|/)")
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
    # The builder's own caller, the standard library's frames (functools, runpy) skipped: an engine frame there means
    # the engine built the parser (its CLI's main), whoever started the engine.
    caller = next((frame for frame in reversed(frames[:at]) if not _library_frame(frame)), None)
    if caller is None or engine_of_frame(caller.file) or console_script_engine(caller.file):
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


def _library_frame(frame: Frame) -> bool:
    """A pseudo-file (`<frozen runpy>`) or the standard library's file: never the program that called the builder."""
    path = frame.file.replace("\\", "/")
    if path.startswith("<") or _STDLIB.search(path):
        return True
    lib = _LIB_MODULE.search(path)
    return lib is not None and lib["module"] in sys.stdlib_module_names


def installed_program(clash: OptionClash) -> bool:
    """The caller is an installed package's code (below site-packages, or a package's checkout holding its own
    engine-named subpackage), which has releases; else a script of the user's own (`/home/me/bench.py`)."""
    path = clash.caller.file.replace("\\", "/")
    return "/site-packages/" in path or "/dist-packages/" in path or engine_subpackage_host(path) is not None


def option_added_in(engine: str, option: str | None) -> tuple[str | None, str | None]:
    """(the release that added `option`, when it is later than the oldest release catalogued; the oldest release,
    when every catalogued release from the oldest on has it): both None when the catalogs do not know the option."""
    having, every = (releases_with(engine, option), static_catalogs.releases(engine)) if option else ((), ())
    if not having or not every:
        return None, None
    return (None, every[0]) if having[0] == every[0] else (having[0], None)


def _argparse(frame: Frame) -> bool:
    return frame.file.replace("\\", "/").rsplit("/", 1)[-1] == "argparse.py"


def _option_added(frames: tuple[Frame, ...]) -> str | None:
    """The option the innermost engine frame's source line adds, when it names one."""
    for frame in reversed(frames):
        if engine_of_frame(frame.file) and (m := _ADDED_OPTION.search(frame.source or "")):
            return m["option"]
    return None


def clash_diagnosis(clash: OptionClash, evidence: Evidence, needs_input: tuple[str, ...]) -> Diagnosis:
    """The clash as general guidance: an installed program's release against the engine's (dependency-version), or a
    script's own parser defining an option the engine's builder adds (named by the catalogs' first release of it)."""
    name = ENGINE_NAMES.get(clash.engine, clash.engine)
    program = program_name(clash)
    option = clash.option or "an option"
    builder = f"{name}'s {clash.builder.function} ({clash.builder.module_path}:{clash.builder.line})"
    caller = f"{clash.caller.module_path}:{clash.caller.line}"
    version = evidence.launch.engine_version if evidence.launch.engine in (clash.engine, None) else None
    installed = f"{name} {version}" if version else f"the installed {name} release"
    added, oldest = option_added_in(clash.engine, clash.option)
    if clash.cut:
        seen = (f"A guess from the frames, the exception line not in the paste: {program} ({caller}) hands its own "
                f"argument parser to {builder}, and the paste stops inside argparse's check that an option is not "
                f"defined twice (_check_conflict), whose only refusal is 'argument {option}: conflicting option "
                f"string'.")
    else:
        seen = (f"{program} ({caller}) hands its own argument parser to {builder}, and argparse refused "
                f"{option}: the parser already had it (argparse's 'conflicting option string').")
    if added:
        when = f"{name} added {option} in {added} (the first release logsleuth knows with it)"
    elif oldest:
        when = (f"every {name} release logsleuth knows has {option} ({oldest} and later), so no newer {name} release "
                f"added it")
    else:
        when = ""
    own_fix = (f"leave {option} to {name}'s parser (read it from the parsed arguments) or rename yours")
    references = ("CPython Lib/argparse.py: _ActionsContainer._check_conflict -> _handle_conflict_error, "
                  "'argument %s: conflicting option string: %s'",
                  "kserve/kserve#4076 (vLLM 0.6.4 added --task, which kserve's huggingfaceserver defines); "
                  "vllm-project/vllm#19221 (a program's own parser given to AsyncEngineArgs.add_cli_args, broken "
                  "by a later vLLM release)")
    if not installed_program(clash):
        return Diagnosis(
            pattern="general-dependency-version" if added else "general-unclassified",
            title=f"{program}'s own parser defines {option}, which {name}'s {clash.builder.function} adds too",
            category="dependency-version" if added else "unclassified",
            root_cause=(f"{seen} {program} is not an installed package but a script of your own: its parser defines "
                        f"{option}, and {name}'s builder adds it to the parser it is given."
                        + (f" {when.capitalize()}: the script was written for an older {name} release."
                           if added else f" {when[:1].upper()}{when[1:]}." if when else "")),
            fix=Fix(summary=f"General guidance: in {program}, {own_fix}.",
                    steps=((f"Or the {name} release before {added}, which lacks {option}, when the script must keep "
                            f"it (pip show {clash.engine}: the release installed now).",) if added else ()),
                    needs_input=needs_input),
            references=references,
            engine=clash.engine,
            engine_version=version,
            basis="general",
        )
    if added:
        reading = (f"{when}, so the {program} release is likely older than {installed}, made for a {name} release "
                   f"before {added}.")
    elif oldest:
        reading = f"The two do not fit, though {when}: check which {name} releases this {program} release supports."
    else:
        reading = (f"The two releases do not fit. Most often {name} added the option in a release later than the one "
                   f"this {program} release was made for, so the {program} release is older than {installed}.")
    return Diagnosis(
        pattern="general-dependency-version",
        title=(f"Likely a {program} release made for an older {name} release: both define {option}" if not oldest
               else f"{program}'s parser and {name}'s {clash.builder.function} both define {option}"),
        category="dependency-version",
        root_cause=f"{seen} {program} defines {option} itself and {installed} defines it too. {reading}",
        fix=Fix(
            summary=(f"General guidance: a {program} release made for this {name} release, or the {name} release "
                     f"{program} pins."),
            steps=(
                f"A {program} release made for {installed}: its release notes or requirements name the {name} "
                f"releases it supports (pip show of its package lists the requirements of the one installed).",
                f"Or the {name} release {program} pins or documents, in a fresh virtual environment, so that pip "
                f"resolves it (pip show {clash.engine}: the release installed now).",
                f"When {program} is your own code: {own_fix}.",
            ),
            needs_input=needs_input),
        references=references,
        engine=clash.engine,
        engine_version=version,
        basis="general",
    )
