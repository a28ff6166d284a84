"""Advice checked against the user's release: no fix offers a flag that release lacks (issue 29, item 4).

Applied to every diagnosis, whatever gave it (a pattern's data, a builder, a rule, the general guidance), once the
log or the user names the launch's release and logsleuth has that exact release's catalog (its real parser's, else
the one read from its source: static_catalogs.py).  A flag operation whose flag the release lacks is dropped, and
with it the corrected command built on it, and an alternative that was nothing but such flags; a mention in the
fix's words is kept, with a note at the end of its sentence, "(--x is not in SGLang 0.3.0: added in 0.3.1)", as
the engine's own instructions are checked (reasoning/engine_words.py).
Only the engine's flags are judged: a `--word` no release of the engine has (pip's, docker's) is left alone, and
so are the flags of the user's own command.  A release that is unknown, or only guessed from the code layout, drops
nothing: each flag offered that only some releases have is said with its range instead.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from logsleuth import versions
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes import static_catalogs
from logsleuth.fixes.catalog import Catalog
from logsleuth.fixes.cross_engine import find, normalized
from logsleuth.lazyre import compile_lazily
from logsleuth.models import ENGINE_NAMES, Diagnosis, Fix, FlagOp, LaunchInfo

_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*")  # compiled on first use (lazyre.py)
NOT_IN = "not in"  # the note's words: "(--x is not in SGLang 0.3.0: added in 0.3.1)"


def with_release_flags(diagnosis: Diagnosis | None, launch: LaunchInfo,
                       possible: tuple[str, ...] = ()) -> Diagnosis | None:
    """`diagnosis` with every fix (and alternative) kept to the flags of the launch's release.  `possible`: the
    releases that can have written the log when its release is not known (those whose code holds the check that
    raised it, from the raise site index), or () when nothing bounds them."""
    if diagnosis is None or diagnosis.fix is None:
        return diagnosis
    engine = diagnosis.engine or launch.engine
    # Only a release the log or the user names is judged exactly: one inferred from the code layout is a guess, and
    # a wrong guess would drop a flag the real release has.  A guessed release gets the ranges, as an unknown one.
    named = launch.named_version
    catalog = catalogs.load(engine, named) if engine in ENGINE_NAMES and named else None
    own = _command_flags(launch.command)
    if catalog is None:
        if engine not in ENGINE_NAMES:
            return diagnosis  # no engine: no release to judge by
        # The release is not known (or has no catalog): say which releases have each flag offered, so the user can
        # tell whether theirs does, rather than offer it as if every release had it.
        fix = _with_ranges(diagnosis.fix, str(engine), own, possible)
    else:
        fix = _kept(diagnosis.fix, catalog, own)
    return diagnosis if fix == diagnosis.fix else replace(diagnosis, fix=fix)


def _with_ranges(fix: Fix, engine: str, own: frozenset[str], possible: tuple[str, ...]) -> Fix:
    """`fix` with a note after its summary for each flag it offers (in its words or its flag operations) that
    not every release of the engine has: "(--x: SGLang 0.4.3 and later)"."""
    offered = [*_FLAG.findall(fix.summary), *(flag for step in fix.steps for flag in _FLAG.findall(step)),
               *(_offered(op) for op in fix.flags if op.op != "remove")]
    removed = {op.flag.split("=", 1)[0] for op in fix.flags if op.op == "remove"}  # the user's, said to go
    # (a step that names the flag with its range already says it: reasoning/serving_step.py's switches)
    notes = [note for flag in dict.fromkeys(offered)
             if flag not in own and flag not in removed and (note := range_note(engine, flag, possible))
             and not any(flag in step and note.split(": ", 1)[1] in step for step in fix.steps)]
    summary = fix.summary
    if notes and not all(note in summary for note in notes):
        summary = f"{summary} ({'; '.join(note for note in notes if note not in summary)})"
    alternatives = tuple(_with_ranges(alternative, engine, own, possible) for alternative in fix.alternatives)
    return replace(fix, summary=summary, alternatives=alternatives)


def range_note(engine: str, flag: str, possible: tuple[str, ...] = ()) -> str | None:
    """"--x: SGLang 0.4.3 and later" (or "0.4.3 to 0.5.12", "up to 0.5.12") for a flag that only some releases of
    the engine have; None for one every covered release (or every `possible` one) has, or one no release has."""
    name = normalized(flag.split("=", 1)[0], engine)
    if name not in _engine_flags(engine):
        return None
    having, every = releases_with(engine, name), static_catalogs.releases(engine)
    if not having or not every or in_every_known_release(engine, name):
        return None
    if possible and set(possible) <= set(having):
        return None  # every release that can have written the log has it
    first = "" if having[0] == every[0] else having[0]
    last = "" if having[-1] == every[-1] else having[-1]
    span = f"{first} to {last}" if first and last else (f"{first} and later" if first else f"up to {last}")
    return f"{flag}: {ENGINE_NAMES[engine]} {span}"


def _kept(fix: Fix, catalog: Catalog, own: frozenset[str]) -> Fix:
    lacking = lambda flag: flag not in own and _lacks(catalog, flag)  # noqa: E731 - one test, used thrice
    ops = tuple(op for op in fix.flags if op.op == "remove" or not lacking(_offered(op)))
    command = fix.command
    if command is not None and (len(ops) < len(fix.flags) or any(lacking(f) for f in _FLAG.findall(command))):
        command = None  # built on a flag the release lacks: no command rather than a wrong one
    alternatives = tuple(_kept(alternative, catalog, own) for alternative in fix.alternatives
                         if not _only_lacking(alternative, lacking))
    return replace(
        fix,
        summary=_marked(fix.summary, catalog, own),
        steps=tuple(_marked(step, catalog, own) for step in fix.steps),
        flags=ops,
        command=command,
        needs_input=tuple(flag for flag in fix.needs_input if not lacking(flag)),
        alternatives=alternatives,
    )


def _only_lacking(fix: Fix, lacking: Callable[[str], bool]) -> bool:
    """An alternative that is nothing but flags the release lacks ("Or use another attention backend" through
    --attention-backend): nothing of it can be done on that release, so it is left out."""
    return bool(fix.flags) and not fix.env and not fix.steps and not fix.alternatives and all(
        op.op != "remove" and lacking(_offered(op)) for op in fix.flags)


def _offered(op: FlagOp) -> str:
    return (op.to if op.op == "rename" and op.to else op.flag).split("=", 1)[0]


def _lacks(catalog: Catalog, flag: str) -> bool:
    """True when `flag` is the engine's (some release has it) and this release lacks it."""
    name = normalized(flag.split("=", 1)[0], catalog.engine)
    return name in _engine_flags(catalog.engine) and find(name, catalog.engine, catalog) is None


def _marked(text: str, catalog: Catalog, own: frozenset[str]) -> str:
    """The text, with a note at its end naming each flag it mentions that the release lacks."""
    said = [flag for flag in dict.fromkeys(_FLAG.findall(text))
            if flag not in own and _lacks(catalog, flag) and not_in_note(flag, catalog) not in text]
    if not said:
        return text
    return text + " (" + "; ".join(not_in_note(flag, catalog) + _when(catalog, flag) for flag in said) + ")"


def not_in_note(flag: str, catalog: Catalog) -> str:
    """"--x is not in SGLang 0.3.0": how a mention of a flag the release lacks is marked."""
    return f"{flag} is {NOT_IN} {ENGINE_NAMES[catalog.engine]} {catalog.version}"


def _when(catalog: Catalog, flag: str) -> str:
    """": added in X" or ": last in Y": where the flag is, from the static catalogs."""
    having = releases_with(catalog.engine, normalized(flag, catalog.engine))
    mine = versions.version_key(catalog.version)
    later = [v for v in having if (key := versions.version_key(v)) is not None and mine is not None and key > mine]
    if later:
        return f": added in {later[0]}"
    return f": last in {having[-1]}" if having else ""


def in_every_known_release(engine: str, flag: str) -> str | None:
    """The oldest release of a static catalog when every release logsleuth knows has `flag` (range_note says nothing
    of it then; the general guidance says how far back that is: reasoning/guidance_text.py), else None."""
    having, every = releases_with(engine, flag), static_catalogs.releases(engine)
    return every[0] if having and every and having[0] == every[0] and having[-1] == every[-1] else None


def releases_with(engine: str, flag: str) -> tuple[str, ...]:
    """The releases whose static catalog has `flag`, oldest first."""
    return static_catalogs.releases_with(engine, flag)


def _engine_flags(engine: str) -> frozenset[str]:
    """Every flag some release of the engine has (the static catalogs cover the real-parser releases too, with the
    same names: tests/test_static_catalog.py)."""
    return static_catalogs.all_flags(engine)


def _command_flags(command: str | None) -> frozenset[str]:
    """The flags the user's own command names: advice may speak of them whatever the release has."""
    return frozenset(_FLAG.findall(command or ""))
