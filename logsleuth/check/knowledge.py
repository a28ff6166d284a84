"""What the rest of logsleuth already knows about flags, read from where it lives: the flag catalogs, the vLLM
names (fixes/builders/arguments.py), and the pattern library (a pattern's title, its `replacements`, its fix
builder).  `check` keeps no second copy of any of it."""

from __future__ import annotations

from functools import lru_cache
from typing import Any

from logsleuth import versions
from logsleuth.command_line import CommandLine
from logsleuth.diagnosis.schema import Pattern
from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.builders.arguments import VLLM_TO_SGLANG, fitting_choice, suggest_flag
from logsleuth.fixes.catalog import Catalog
from logsleuth.fixes.context import FixContext
from logsleuth.models import ExceptionBlock, Failure, LaunchInfo

__all__ = ["VLLM_TO_SGLANG", "fitting_choice"]  # re-exported: the checks read them here


@lru_cache(maxsize=1)
def _bundled() -> dict[str, Pattern]:
    from logsleuth.diagnosis.library import load_patterns

    return {found.id: found for found in load_patterns(include_user=False).patterns}


def pattern(pattern_id: str) -> Pattern | None:
    """A bundled pattern by id (the user's own patterns are not read: a check must not depend on them)."""
    return _bundled().get(pattern_id)


def split_replacement(flag: str) -> str | None:
    """The flag a release split `flag` into and that keeps its meaning (the ambiguous-option pattern's data)."""
    found = pattern("sglang-ambiguous-option")
    replacements: dict[str, Any] = dict(found.fix.get("replacements", {})) if found is not None else {}
    value = replacements.get(flag)
    return str(value) if value else None


def _ordered(engine: str) -> list[tuple[versions.VersionKey, str]]:
    return sorted((key, version) for e, version in catalogs.available()
                  if e == engine and (key := versions.version_key(version)) is not None)


def removed_after(engine: str, flag: str, catalog: Catalog) -> tuple[str | None, str | None]:
    """(the last older release that had `flag`, the first newer one that has it), by the shipped catalogs."""
    here = versions.version_key(catalog.version)
    having = [(key, version) for key, version in _ordered(engine) if version in catalogs.versions_with(engine, flag)]
    older = [version for key, version in having if here is not None and key < here]
    newer = [version for key, version in having if here is not None and key > here]
    return (older[-1] if older else None), (newer[0] if newer else None)


def renamed_in_older(engine: str, flag: str, version: str) -> str | None:
    """What an older release's catalog says replaces `flag` (a deprecated flag's `renamed_to`)."""
    older = catalogs.load(engine, version)
    info = older.find(flag) if older is not None else None
    return info.renamed_to if info is not None else None


def fix_context(catalog: Catalog | None, command: CommandLine | None, version: str | None,
                failure: Failure | None = None) -> FixContext:
    """What a fix builder is given, for a command that has not run yet: no log, so no failure of its own
    unless the caller names the one the command would raise."""
    stand_in = failure or Failure(kind="bare", exceptions=(ExceptionBlock("", ""),), line=0, offset=0, end_offset=0)
    launch = LaunchInfo(engine="sglang", engine_version=version, engine_version_source="user" if version else None,
                        command=command.render() if command is not None else None,
                        command_source="user" if command is not None else None)
    return FixContext(stand_in, {}, launch, command, catalog)


def close_flag(flag: str, catalog: Catalog) -> str | None:
    """The flag of this catalog that `flag` most likely means (underscores for dashes, a near spelling): the
    suggestion `diagnose` gives for an unrecognized argument."""
    suggestion = suggest_flag(flag, fix_context(catalog, None, catalog.version))
    return suggestion if suggestion != flag else None
