"""The flags a failure touches, with their real names, choices and defaults from our catalogs.

An assistant reading a log cites flags and versions from memory; these rows say what the engine version of
the log really has.  A flag is in the case when the failure names it (`--flag` in a message, a `ServerArgs`
field in a source line), when logsleuth's fix changes it, when the launch gave it and it shares a word with
where the failure happened (`--speculative-eagle-topk` for `_handle_speculative_decoding`), or when a line just
before the failure names it; strongest reason first.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from logsleuth import versions
from logsleuth.case.model import FlagFacts, FlagReason, FlagRow
from logsleuth.command_line import CommandLine
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.catalog import Catalog, FlagInfo
from logsleuth.lazyre import compile_lazily
from logsleuth.models import Failure, FailureGroup, Fix, LaunchInfo

MAX_FLAG_ROWS = 12
MAX_CHOICES_CHARS = 240
COMMAND_FLAGS = 3  # a line naming this many flags is a command line (the launch's, shown apart), not a hint

_FLAG = compile_lazily(r"(?<![\w-])--[a-z][a-z0-9]*(?:-[a-z0-9]+)*")
# A snake_case name (`speculative_num_draft_tokens`, `self.mem_fraction_static`): maybe a ServerArgs field.
_FIELD = compile_lazily(r"\b[a-z][a-z0-9]*(?:_[a-z0-9]+)+\b")
_WORD = compile_lazily(r"[a-z][a-z0-9]+")
# Words too common to relate a flag to a failure ("--max-running-requests" and "max_len" share nothing).
_COMMON_WORDS = frozenset(
    ["enable", "disable", "max", "min", "num", "size", "path", "model", "server", "args", "type", "mode", "backend", "self", "none", "true", "false", "init", "main", "launch", "run", "python", "file", "line", "module", "call", "with", "from", "config", "value", "values", "port", "host", "name"]
)


def choose_catalogs(launch: LaunchInfo) -> tuple[tuple[Catalog, ...], str]:
    """The catalogs the rows come from, and how they were chosen: the log's version (its real parser's catalog,
    else its static one), else every real-parser catalog, since the defaults and choices differ between releases."""
    engine = launch.engine
    if engine is None:
        return (), "the engine is not named in the log: no flag catalog applies"
    shipped = sorted(
        (v for e, v in catalogs.available() if e == engine), key=lambda v: versions.version_key(v) or ((0,), (0,), 0, 0)
    )
    if not shipped:
        return (), f"no flag catalog is shipped for {engine}"
    if launch.engine_version is None:
        loaded = tuple(c for v in shipped if (c := catalogs.load(engine, v)) is not None)
        return loaded, f"the log does not name the {engine} version: rows from every shipped catalog"
    chosen = catalogs.load(engine, launch.engine_version)
    if chosen is None:
        return (), f"no flag catalog for {engine} {launch.engine_version}"
    if chosen.source == "static":
        return (chosen,), (f"the {engine} {chosen.version} catalog read from its source: it proves which flags exist, "
                           "not which values its validation accepts")
    return (chosen,), f"the {engine} {chosen.version} catalog"


def _words(text: str) -> set[str]:
    return {word for word in _WORD.findall(text.lower().replace("_", " ")) if len(word) >= 4 and word not in _COMMON_WORDS}


def _named_in(texts: Iterable[str], known: list[Catalog]) -> Iterator[str]:
    """`--flags` in the texts, then the flags of the ServerArgs fields they name."""
    texts = list(texts)
    for text in texts:
        yield from (flag.partition("=")[0] for flag in _FLAG.findall(text))
    for text in texts:
        for field in _FIELD.findall(text):
            info = next((found for catalog in known if (found := catalog.by_field(field)) is not None), None)
            if info is not None:
                yield info.name


def _failure_texts(failure: Failure) -> list[str]:
    """What the failure itself says: its messages, header and source lines (a kill notice's message is the
    killed command line, whose flags are the launch's, not the failure's)."""
    texts = [failure.header or ""]
    for block in failure.exceptions:
        if failure.kind != "killed":
            texts.append(block.message)
        texts.extend(frame.source or "" for frame in block.frames)
    return texts


def _fix_flags(fix: Fix | None) -> Iterator[str]:
    if fix is None:
        return
    for op in fix.flags:
        yield op.flag
        if op.to:
            yield op.to
    for alternative in fix.alternatives:
        yield from _fix_flags(alternative)


def _failure_words(failure: Failure) -> set[str]:
    final = failure.final
    words = _words(final.message.split("\n", 1)[0] if final.message else "")
    for frame in [f for f in final.frames if f.in_app][-3:] or final.frames[-1:]:
        words |= _words(frame.function or "") | _words(frame.source or "")
    return words


def _parse(command: str | None) -> CommandLine | None:
    if not command:
        return None
    try:
        return CommandLine.parse(command)
    except ValueError:
        return None


def touched_flags(group: FailureGroup, launch: LaunchInfo, before: Iterable[str], known: list[Catalog]) -> list[tuple[str, FlagReason]]:
    """(flag, reason) for each flag the failure touches, strongest reason first, each flag once."""
    failure = group.failure
    command = _parse(launch.command)
    related: list[str] = []
    if command is not None:
        words = _failure_words(failure)
        related = [flag for flag, _ in command.options if flag.startswith("--") and _words(flag) & words]
    found: dict[str, FlagReason] = {}
    candidates: list[tuple[Iterable[str], FlagReason]] = [
        (_named_in(_failure_texts(failure), known), "named in the failure"),
        (_fix_flags(group.diagnosis.fix if group.diagnosis else None), "in logsleuth's fix"),
        (related, "related, in the launch command"),
        (_named_in([line for line in before if len(_FLAG.findall(line)) < COMMAND_FLAGS], []), "named just before"),
    ]
    for flags, reason in candidates:
        for flag in flags:
            name = _canonical(flag, known)
            if name not in found and _worth_a_row(name, reason, failure, known):
                found[name] = reason
    return list(found.items())[:MAX_FLAG_ROWS]


def _worth_a_row(flag: str, reason: FlagReason, failure: Failure, known: list[Catalog]) -> bool:
    """A flag of the consulted catalogs; or, named by the failure, one of another release (removed, or newer)
    or any flag of an argparse error ("unrecognized arguments: --foo").  Other `--words` in log text (pip's
    `--upgrade` in an install hint) are not launch flags."""
    if any(catalog.find(flag) for catalog in known):
        return True
    if reason not in ("named in the failure", "in logsleuth's fix") or not known:
        return False
    return failure.kind == "usage" or reason == "in logsleuth's fix" or bool(catalogs.versions_with(known[0].engine, flag))


def _canonical(flag: str, known: list[Catalog]) -> str:
    info = next((found for catalog in known if (found := catalog.find(flag)) is not None), None)
    return info.name if info is not None else flag


def _facts(catalog: Catalog, flag: str) -> FlagFacts:
    info: FlagInfo | None = catalog.find(flag)
    if info is None:
        return FlagFacts(catalog.version, present=False)
    choices = tuple(info.choices)
    return FlagFacts(
        version=catalog.version,
        present=True,
        choices=choices,
        default=repr(info.default),
        switch=not info.takes_value,
        deprecated=info.deprecated,
        renamed_to=info.renamed_to,
    )


def _given(flag: str, command: CommandLine | None, launch: LaunchInfo, known: list[Catalog]) -> str | None:
    """The flag's value in the launch command ("" for a switch), or its server_args value when only those are
    known; None when the launch did not give it (or is not known)."""
    if command is not None:
        info = next((found for catalog in known if (found := catalog.find(flag)) is not None), None)
        for name in (flag, *(info.aliases if info else ())):
            value = command.value(name)
            if value is not None:
                return value
        return None
    for catalog in known:
        info = catalog.find(flag)
        if info is not None and info.dest:
            return dict(launch.server_args).get(info.dest)
    return None


def flag_rows(group: FailureGroup, launch: LaunchInfo, before: Iterable[str], known: tuple[Catalog, ...]) -> tuple[FlagRow, ...]:
    """The catalog rows of the flags the failure touches."""
    if not known:
        return ()
    consulted = list(known)
    command = _parse(launch.command)
    rows = []
    engine = consulted[0].engine
    for flag, reason in touched_flags(group, launch, before, consulted):
        facts = tuple(_facts(catalog, flag) for catalog in consulted)
        elsewhere = () if any(f.present for f in facts) else catalogs.versions_with(engine, flag)
        rows.append(FlagRow(flag, reason, _given(flag, command, launch, consulted), facts, elsewhere))
    return tuple(rows)
