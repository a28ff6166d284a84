"""`check` as functions over plain values: a command, bare flags or an assistant's answer in, a CheckResult out.

`verify_fix(text, version)` is what `diagnose --verify-fix` calls, with the version the report's launch info names
(and, when the log gives it, the launch command: the answer's changes are then applied to it and the corrected
command is what gets checked and validated).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from logsleuth.check.flags import Given, read_flags
from logsleuth.check.model import CheckResult, FlagVerdict, Validation
from logsleuth.check.traps import SPECULATIVE_SIZES, find_traps, partial_size_removal
from logsleuth.check.validation import validate_locally
from logsleuth.check.words import Command, parse_command_text, parse_words, read_suggestion
from logsleuth.command_line import CommandLine
from logsleuth.errors import UsageError
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.catalog import Catalog
from logsleuth.models import FlagOp

ENGINE = "sglang"
ENTRY = "python -m sglang.launch_server"


def catalog_for(version: str | None) -> tuple[Catalog, str | None]:
    """The catalog to check against, and a note when it is not exactly the version asked for."""
    catalog = catalogs.load(ENGINE, version)
    if catalog is None and version is not None:
        # No nearest-release guess: its flags could be missing from this release (issue 29).
        raise UsageError(f"no flag catalog for SGLang {version}: logsleuth has one for each release from 0.3.0 on; "
                         "give the release's exact version with --engine-version")
    if catalog is None:
        raise UsageError("no SGLang flag catalog is installed with logsleuth")  # a broken install
    if version is None:
        return catalog, f"no version given (--engine-version): checked against the newest catalog, SGLang {catalog.version}"
    if catalog.source == "static":
        return catalog, (f"SGLang {catalog.version}'s catalog is read from its source: it proves a flag exists in that "
                         "release, not that its value passes the release's validation")
    return catalog, None


def check_words(words: Sequence[str], version: str | None, *, validate: bool = True) -> CheckResult:
    """Bare flags or a whole command, as words after `--`.  One word holding spaces is read as pasted text."""
    if len(words) == 1 and any(space in words[0] for space in " \t\n"):
        return check_text(words[0], version, validate=validate)
    try:
        command = parse_words(list(words))
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    return check_command(command, version, validate=validate, user_named=True)


def check_command(command: Command, version: str | None, *, validate: bool = True,
                  notes: tuple[str, ...] = (), user_named: bool = False) -> CheckResult:
    """`user_named`: the user typed the command as words, so the validation may read a local model directory in it
    (one a log or a pasted answer names is never read: validation.local_arguments)."""
    if command.engine != ENGINE:
        raise UsageError(f"check knows SGLang's flags; this is a {command.engine} command")
    catalog, version_note = catalog_for(version)
    verdicts, given = read_flags(command.args, catalog, ENGINE)
    positional_model = any((verdict.suggestion or "").startswith("--model-path ") for verdict in verdicts)
    if command.whole and not positional_model and not any(item.info is not None and item.info.dest == "model_path"
                                                          for item in given):
        verdicts.append(FlagVerdict("--model-path", (), False, "required by every SGLang release, and not given"))
    as_line = _command_line(command)
    traps = find_traps(given, catalog, as_line, whole=command.whole)
    validation = _validation(command, version, validate, user_named)
    corrected = None
    if command.whole and (rewrite := _bad_flags_rewritten(verdicts)):
        # No corrected command still holds a flag marked ✗: a trap's has them rewritten; else one of its own.
        traps = tuple(replace(trap, corrected=_rewritten(trap.corrected, rewrite, catalog)) for trap in traps)
        corrected = None if any(trap.corrected for trap in traps) else _rewritten(command.text, rewrite, catalog)
    return CheckResult(ENGINE, version, catalog.version, version_note, command.text, tuple(verdicts), traps,
                       validation, notes, corrected)


def check_text(text: str, version: str | None, *, command: str | None = None, validate: bool = True) -> CheckResult:
    """An answer as pasted: a whole command in it is checked as one; else the flags it adds are checked (applied
    to `command` when the launch command is known) and the flags it removes are listed."""
    suggestion = read_suggestion(text)
    if suggestion.command is not None:
        return check_command(suggestion.command, version, validate=validate,
                             notes=("checked the launch command the text gives",))
    if not suggestion.added and not suggestion.removed:
        raise UsageError("no flag or launch command found in the text")
    catalog, _note = catalog_for(version)
    if command is not None:
        return _applied(suggestion.added, suggestion.removed, command, version, catalog, validate)
    # Nothing added and no command: validating an empty command would put a ✓ beside nothing.
    result = _flags_only(suggestion.added, version, catalog, validate and bool(suggestion.added))
    trap = partial_size_removal(suggestion.removed, suggestion.added, catalog)
    removed = tuple(_removal(flag, catalog, trap) for flag in suggestion.removed)
    notes = ("the launch command is not known: the flags the text adds were checked on their own",)
    return CheckResult(result.engine, result.version, result.catalog_version, result.version_note, result.command,
                       result.flags + removed, result.traps, result.validation, notes)


def verify_fix(text: str, version: str | None, *, command: str | None = None, validate: bool = True) -> CheckResult:
    """The fix an assistant gave, checked flag by flag against `version`'s catalog and, where the oracle has that
    version, through SGLang's own validation.  `command`: the launch command of the log, when known."""
    return check_text(text, version, command=command, validate=validate)


def _flags_only(words: Sequence[str], version: str | None, catalog: Catalog, validate: bool) -> CheckResult:
    command = Command((), None, None, ENGINE, tuple(words))
    verdicts, given = read_flags(words, catalog, ENGINE, prose=True)
    as_line = _command_line(command)
    traps = find_traps(given, catalog, as_line, whole=False)
    _catalog, version_note = catalog_for(version)
    validation = _validation(command, version, validate, user_named=False)
    return CheckResult(ENGINE, version, catalog.version, version_note, " ".join(words), tuple(verdicts), traps, validation)


def _applied(added: Sequence[str], removed: Sequence[str], original: str, version: str | None, catalog: Catalog,
             validate: bool) -> CheckResult:
    """The answer's changes applied to the launch command, and the corrected command checked whole."""
    _verdicts, given = read_flags(added, catalog, ENGINE, prose=True)
    ops = [FlagOp("remove", flag) for flag in removed]
    ops += [FlagOp("set", item.written, item.values[-1] if item.values else "") for item in given]
    return check_changes(tuple(ops), original, version, validate=validate)


def check_changes(ops: tuple[FlagOp, ...], original: str, version: str | None, *, validate: bool = True) -> CheckResult:
    """Flag operations applied to a launch command (the log's, or --cmd), and the changed command checked whole:
    its flags, the known traps and, where it runs, SGLang's own validation."""
    catalog, _note = catalog_for(version)
    try:
        line = CommandLine.parse(original, catalog.boolean_flags(), trusted=True)
    except ValueError:
        raise UsageError("the launch command has an unbalanced quote") from None
    corrected = line.apply(ops).render()
    try:
        command = parse_command_text(corrected)
    except ValueError:
        raise UsageError("the launch command is not an SGLang launch command") from None
    result = check_command(command, version, validate=validate)
    note = f"the text's changes applied to the launch command: {', '.join(_describe(op) for op in ops)}"
    return replace(result, notes=(note,))


def _bad_flags_rewritten(verdicts: Sequence[FlagVerdict]) -> tuple[FlagOp, ...]:
    """Each ✗ flag out of the command and, where the check names what SGLang calls it, that flag in, with the
    value given (a vLLM name, a misspelling): a corrected command never still holds a flag marked ✗."""
    ops: list[FlagOp] = []
    for verdict in verdicts:
        if verdict.ok:
            continue
        ops.append(FlagOp("remove", verdict.flag))
        instead = verdict.suggestion.split(maxsplit=1) if verdict.suggestion else []
        if instead and instead[0].startswith("--"):
            value = instead[1] if len(instead) > 1 else (verdict.values[-1] if verdict.values else "")
            ops.append(FlagOp("set", instead[0], value))
    return tuple(ops)


def _rewritten(command: str | None, ops: tuple[FlagOp, ...], catalog: Catalog) -> str | None:
    if command is None or not ops:
        return command
    try:
        return CommandLine.parse(command, catalog.boolean_flags(), trusted=True).apply(ops).render()
    except ValueError:
        return None


def _describe(op: FlagOp) -> str:
    if op.op == "rename":
        return f"rename {op.flag} to {op.to}"
    return f"remove {op.flag}" if op.op == "remove" else f"{op.op} {op.flag}" + (f" {op.value}" if op.value else "")


def _removal(flag: str, catalog: Catalog, trap: str | None) -> FlagVerdict:
    """A flag the suggestion removes, without the launch command: the known trap (`trap`) is ✗; anything else
    cannot be judged, since what a removal does depends on the rest of the command."""
    info = catalog.find(flag)
    if trap is not None and info is not None and info.name in SPECULATIVE_SIZES:
        return FlagVerdict(flag, (), False, f"removed by the suggestion: {trap}")
    if info is None:  # the release would reject it anyway: taking it out is right whatever the command
        return FlagVerdict(flag, (), True, f"removed by the suggestion: SGLang {catalog.version} has no such flag, "
                           "so it goes in any command")
    return FlagVerdict(flag, (), True, f"removed by the suggestion (SGLang {catalog.version} has it): cannot be "
                       "judged without the launch command", judged=False)


def _command_line(command: Command) -> CommandLine | None:
    """The command as the fix builders read it (bare flags behind the launcher)."""
    text = command.text if command.whole else f"{ENTRY} {command.text}"
    try:
        return CommandLine.parse(text, trusted=True)
    except ValueError:
        return None


def _validation(command: Command, version: str | None, validate: bool, user_named: bool) -> Validation | None:
    if not validate:
        return None
    return validate_locally(command, version, user_named=user_named)


__all__ = ["Given", "check_changes", "check_command", "check_text", "check_words", "verify_fix"]
