"""Turn a matched pattern into a Fix: flag operations, and the corrected command when the launch command is known.

A pattern's `[fix]` is either static data (static.py) or names a builder (builders/) when the right change
depends on the command that was run: which flags were given, their values, and the flags that exist in that
engine version (catalog.py).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, Literal

from logsleuth.command_line import CommandLine
from logsleuth.facts import entry_points
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.builders import BUILDERS
from logsleuth.fixes.context import Builder, FixContext
from logsleuth.fixes.cut_command import cut_launch_note
from logsleuth.fixes.static import CommandValues, static_fix
from logsleuth.models import Failure, Fix, LaunchInfo


def build_fix(
    fix_data: dict[str, Any],
    failure: Failure,
    captures: dict[str, str],
    launch: LaunchInfo,
    builders: Mapping[str, Builder] = BUILDERS,
    lines: Sequence[str] = (),
) -> Fix | None:
    if not fix_data:
        return None
    engine = launch.engine or "sglang"
    catalog = catalogs.load(engine, launch.engine_version)
    command = None
    if launch.command:
        try:
            # Parsed without knowing which flags are switches: a stray `true` after a switch
            # then stays attached to it, where a fix can clear it.
            command = CommandLine.parse(launch.command, trusted=launch.command_source == "user")
        except ValueError:
            command = None  # unbalanced quotes: no corrected command, the flag ops still stand
    values = {**captures, "cmd": CommandValues(command)}

    def build(data: dict[str, Any]) -> Fix | None:
        name = data.get("builder")
        if not name:
            return static_fix(data, values, build)
        builder = builders.get(name)
        if builder is None:
            return None  # a user pattern naming a builder this version does not have (reported at load)
        return builder(context, data)

    context = FixContext(failure, captures, launch, command, catalog, build, lines)

    fix = build(fix_data)
    fix = fit_to_command(fix, command) if fix is not None else None
    if fix is None:
        return None
    assembler = assembled_by(launch, fix)
    withheld = (_assembled_note(assembler) if assembler
                else entry_point_note(command, fix, catalog) or cut_launch_note(launch, command, fix, catalog))
    return _with_origin(with_commands(fix, command, withheld), launch.command_source if command is not None else None)


def entry_point_note(command: CommandLine | None, fix: Fix, catalog: catalogs.Catalog | None) -> str | None:
    """Why no corrected command is printed for a command of another program of the engine (facts/entry_points.py),
    else None.  A program whose parser adds all of the server's flags (SGLang's offline benchmarks) is edited as the
    server's command is, when every flag the fix or an alternative sets, adds or renames to is a flag of the release's
    catalog (a removal takes away a word the program refused: safe whatever it is); one that adds only the engine's
    arguments (vLLM's benchmarks, its simple api_server) never is: which of the flags it takes is not in the catalogs,
    which are the server's, so the note names the flags to look up in its own help."""
    program = entry_points.other_entry_point(" ".join(command.prefix)) if command is not None else None
    if program is None:
        return None
    name, takes = program
    changed = sorted({op.to or op.flag if op.op == "rename" else op.flag
                      for option in (fix, *fix.alternatives) for op in option.flags if op.op != "remove"})
    if takes == "server" and catalog is not None and all(catalog.find(flag) is not None for flag in changed):
        return None
    taken = "the server's arguments and its own" if takes == "server" else "the engine's arguments, not all of the server's"
    unverified = ", ".join(f"`{flag}`" for flag in changed)
    check = f"; check `{name} --help` for {unverified}" if unverified else ""
    return (f"the launch ran `{name}`, which takes {taken}: make this change in its arguments{check} (no corrected "
            "command is printed, since that program may not take every flag of the change)")


def _assembled_note(assembler: str) -> str:
    return (f"the launch was assembled by {assembler}: make this change where it takes the engine's arguments "
            "(no corrected command is printed, since the engine's command alone is not what you ran)")


# Programs that run the engine inside another job, not a command the user typed: Ray is the engine's own executor.
NOT_ASSEMBLERS = frozenset({"Ray"})


def assembled_by(launch: LaunchInfo, fix: Fix) -> str | None:
    """What put the launch together when a corrected command cannot be printed as the user would run it: a trainer,
    harness or server that builds the engine's argv itself (verl, OpenRLHF, LLaMA-Factory, Xinference: it would set
    its own values again over a command edited by hand), or a wrapper whose words the log does not give whole (a
    YAML file, a `docker run …` continued over several lines, a `bash -c` string).  A container run kept in front of the command
    (`docker run … IMAGE python3 -m …`) is edited in place, except where the fix touches the model or the positional
    words (what the image's own entrypoint reads them as is unknown: vllm-project/vllm#27389, #22072) or sets the
    environment (it would go to `docker`, not to the engine).  None: the corrected command is safe to print."""
    if launch.command_source != "log":
        return None
    if launch.wrapper and launch.wrapper not in NOT_ASSEMBLERS:
        return launch.wrapper
    if launch.command_wrapper is None:
        return None
    if not launch.command_wrapper_kept or _touches_shape(fix):
        return launch.command_wrapper
    return None


def _touches_shape(fix: Fix) -> bool:
    """The fix (or an alternative) sets the environment, moves a positional word or changes the model flag."""
    return any(
        option.env or any(not op.flag.startswith("-") or op.flag in _MODEL_FLAGS for op in option.flags)
        for option in (fix, *fix.alternatives)
    )


_MODEL_FLAGS = frozenset({"--model", "--model-path"})


def _with_origin(fix: Fix, origin: Literal["user", "log", "server_args"] | None) -> Fix:
    """Each corrected command says what it was built on (a command rebuilt from `server_args=` is labelled)."""
    alternatives = tuple(_with_origin(alt, origin) for alt in fix.alternatives)
    return replace(fix, command_origin=origin if fix.command else None, alternatives=alternatives)


# Flags whose value only the user knows; an `add` of one without a value cannot be rendered.
_VALUE_FLAGS = frozenset({"--model-path", "--tokenizer-path", "--speculative-draft-model-path", "--lora-paths"})


def _needs_input(fix: Fix) -> tuple[str, ...]:
    """Flags the fix changes without a value logsleuth can know: a `set` with no value (e.g. a size that
    depends on the command, when it is not known), a `rename` with no new name (an abbreviation that could
    be several flags), an `add` of a flag such as --model-path; and those the builder named itself (an `add`
    of a setting the other engine measures differently)."""
    computed = (
        op.flag
        for op in fix.flags
        if (op.op == "set" and op.value is None)
        or (op.op == "rename" and not op.to)
        or (op.op == "add" and op.value is None and op.flag in _VALUE_FLAGS)
    )
    return tuple(dict.fromkeys((*fix.needs_input, *computed)))


def _fitted(fix: Fix, command: CommandLine) -> Fix | None:
    """The fix without operations on flags the command does not have (removing or renaming a flag that was
    never given is advice the command contradicts).  None when nothing of it applies to this command."""
    kept = tuple(op for op in fix.flags if op.op not in ("remove", "rename") or not op.flag.startswith("-") or command.has(op.flag))
    if fix.flags and not kept and not fix.env and not fix.steps:
        return None
    return replace(fix, flags=kept)


def fit_to_command(fix: Fix, command: CommandLine | None) -> Fix | None:
    """`fix` and its alternatives with what the known command contradicts taken out; an alternative takes the
    place of a fix that does not apply at all."""
    if command is None:
        return fix
    options = [fitted for option in (replace(fix, alternatives=()), *fix.alternatives) if (fitted := _fitted(option, command))]
    if not options:
        return None
    first, *rest = options
    if first.summary != fix.summary:  # an alternative became the fix: it no longer starts with "Or"
        summary = first.summary.removeprefix("Or, ").removeprefix("Or ")
        first = replace(first, summary=summary[:1].upper() + summary[1:])
    return replace(first, alternatives=tuple(rest))


def with_commands(fix: Fix, command: CommandLine | None, withheld: str | None = None) -> Fix:
    """Fill in what the fix needs from the user and, when the command is known, the corrected command of the
    fix and of each alternative.  A fix that needs a value only the user knows gets no command: a half-filled
    command would not run.  `withheld`: why the command the log shows cannot be edited into the one to run (a
    launch assembled by another program: assembled_by; a line cut or wrapped: cut_command.py); the change is said,
    with that reason, and no command is printed."""
    alternatives = tuple(with_commands(alt, command, withheld) for alt in fix.alternatives)
    needs = _needs_input(fix)
    rendered = None
    if command is not None and fix.flags and not needs and withheld is not None:
        return replace(fix, needs_input=needs, alternatives=alternatives, steps=(*fix.steps, withheld))
    if command is not None and fix.flags and not needs:
        try:
            # Every name and value is quoted by the command: env values can hold log text (captures).
            rendered = command.apply(fix.flags).with_env(fix.env).render()
        except ValueError:
            rendered = None  # an env name that is not a variable name: no command rather than a wrong one
    return replace(fix, command=rendered, needs_input=needs, alternatives=alternatives)
