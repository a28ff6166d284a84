"""The engine's own check behind a failure, as evidence for any diagnosis (docs/how-it-reasons.md, "The engine's
own code"): where it raised, under which condition, which flags that condition reads (with the values the launch
gave them, when its command is known), and which of the indexed releases hold the check.

This says what the code tested, not what to change: a bare `AssertionError` from `server_args.py` then names the
settings it is about, which is where the seed incident's engineer lost an hour.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from functools import lru_cache

from logsleuth.command_line import CommandLine
from logsleuth.facts.raise_sites import (
    ENGINE_PACKAGES,
    RaiseSite,
    engine_file,
    find,
    framed_sentence,
    release_span,
    where,
)
from logsleuth.fixes import catalog as catalogs
from logsleuth.models import ENGINE_NAMES, Failure, FailureGroup, LaunchInfo
from logsleuth.redact import secret_by_name


def site_of(failure: Failure, launch: LaunchInfo) -> RaiseSite | None:
    """The indexed check the innermost engine frame of the failure's last exception stands in.  api.py asks it for
    every failure, and the general category and the parallelism rule ask again for theirs: looked up once, by what
    the answer depends on (the failure, the decided engine, a release the log or the user names)."""
    known = launch.named_version
    return _site_of(failure, launch.engine, known)


@lru_cache(maxsize=64)
def _site_of(failure: Failure, decided: str | None, known: str | None) -> RaiseSite | None:
    if not failure.final.type:
        # The paste lost the exception line: the innermost frame shown may be a call the error came through, not
        # the check that raised it, and nothing says a check was false (an assert named there would mislead).
        return None
    # Only the innermost engine frame: when it is not an indexed check, an outer one is not the raiser.
    found = next(((f, engine) for f in reversed(failure.final.frames) for engine in ENGINE_PACKAGES
                  if engine_file(f.file, engine) is not None), None)
    if found is None:
        return None
    frame, engine = found
    if decided not in (None, engine):
        # The other engine's code run by this one (SGLang releases import vLLM's layers): the index holds that
        # engine's own releases, not the one this launch pinned, and its settings are not this launch's flags.
        return None
    final = failure.final
    return find(engine, frame.file, frame.function, frame.line, frame.source, known, (final.type, final.message))


def with_version_from_frames(launch: LaunchInfo, site: RaiseSite | None) -> LaunchInfo:
    """A launch whose release was guessed from the code layout, with the release the raising frame's line numbers
    match instead when the guess is not one of them: the newest of those releases, still marked "inferred".  A
    release the log or the user names is never changed, and none is made up where nothing was guessed: a frame's
    line can fall inside a check's lines by chance in a release the index lacks, so the lines only correct a
    guess (the report's "raised at" still says which releases they match)."""
    if site is None or not site.framed or launch.engine_version_source != "inferred" or launch.engine_version is None:
        return launch
    if launch.engine_version in site.framed:
        return launch
    return replace(launch, engine=site.engine, engine_version=site.framed[-1], engine_version_source="inferred")


def _flags(site: RaiseSite, launch: LaunchInfo) -> list[str]:
    catalog = catalogs.load(site.engine, site.version or launch.engine_version)
    flags = []
    for field in site.fields:
        info = catalog.by_field(field) if catalog is not None else None
        if info is not None and info.name not in flags:
            flags.append(info.name)
    return flags


# Settings whose default is no safe run to try: the weights' dtype (auto is bfloat16, which GPUs before Ampere lack),
# the device the engine runs on; and the settings a checkpoint needs to load at all (a quantized checkpoint's method,
# a model's own code, its weights', tokenizer's or config's format): a run without one fails on loading instead, a
# known second failure (vLLM refusing a quantized config without the method it names, transformers refusing remote
# code without trust).
_NO_DEFAULT_RUN = frozenset({"--dtype", "--device", "--quantization", "-q", "--trust-remote-code", "--load-format",
                             "--tokenizer-mode", "--config-format"})


def given_settings(site: RaiseSite, launch: LaunchInfo) -> list[tuple[str, str]]:
    """The flags the check reads that the launch's command gives, with their values: only settings with a default to
    fall back on (a choice or a switch, not deprecated), so that leaving one out is a run the release can make."""
    if launch.command is None:
        return []
    catalog = catalogs.load(site.engine, site.version or launch.engine_version)
    options = dict(CommandLine.parse(launch.command).options)
    return settable_given(catalog, options, _flags(site, launch))


def settable_given(catalog: catalogs.Catalog | None, options: Mapping[str, Sequence[str]], flags: list[str]
                   ) -> list[tuple[str, str]]:
    """Those of `flags` the command's `options` give that a run can leave out: a choice or a switch of the catalog,
    not deprecated, with a default that is a safe run (_NO_DEFAULT_RUN), and no secret; with their values."""
    given = []
    for flag in dict.fromkeys(flags):
        info = catalog.find(flag) if catalog is not None else None
        settable = info is not None and not info.deprecated and (info.choices or not info.takes_value)
        if settable and flag in options and flag not in _NO_DEFAULT_RUN and not secret_by_name(flag, " ".join(options[flag])):
            given.append((flag, " ".join(options[flag])))
    return given


def _given(flags: list[str], launch: LaunchInfo) -> str:
    """`--speculative-eagle-topk 1, --speculative-num-draft-tokens 16; not given: --speculative-num-steps`."""
    if launch.command is None:
        return ""
    command = CommandLine.parse(launch.command)
    options = dict(command.options)
    given = [flag if secret_by_name(flag, " ".join(options[flag])) else f"{flag} {' '.join(options[flag])}".rstrip()
             for flag in flags if flag in options]  # a secret's value is never repeated, even before redaction
    missing = [flag for flag in flags if flag not in options]
    parts = [f"given: {', '.join(given)}"] if given else []
    parts += [f"not given: {', '.join(missing)}"] if missing else []
    return f" ({'; '.join(parts)})" if parts else ""


def sentences(site: RaiseSite, launch: LaunchInfo) -> tuple[str, ...]:
    name = ENGINE_NAMES.get(site.engine, site.engine)
    out = [where(name, site)]
    flags = _flags(site, launch)
    if flags:
        out.append(f"That check reads {', '.join(flags)}{_given(flags, launch)}.")
    span = release_span(site)
    indexed = f"{site.indexed[0]} to {site.indexed[-1]}"
    if site.version is not None:
        out.append(f"Your release, {name} {site.version}, has this check; of the releases indexed ({indexed}) it is in {span}.")
    else:
        out.append(f"Of the {name} releases indexed ({indexed}), this check is in {span}.")
        if site.framed and len(site.framed) < len(site.releases):
            # Only among the releases read: an older one (or one between) may hold the same line too.
            out.append(framed_sentence(name, site))
    return tuple(out)


def with_raise_site(group: FailureGroup, site: RaiseSite | None, launch: LaunchInfo) -> FailureGroup:
    """The group with the engine's check that raised it (`site_of`) in its diagnosis (unchanged without one)."""
    if group.diagnosis is None or site is None:
        return group
    return replace(group, diagnosis=replace(group.diagnosis, raised_at=sentences(site, launch)))
