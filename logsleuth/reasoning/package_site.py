"""The check of a package the engine runs (flashinfer, sgl-kernel, xgrammar, transformers) behind a failure, as the
same evidence as an engine's own check (docs/how-it-reasons.md, "The engine's own code"): where it raised, under
which `if`s, and which releases of the package hold it.

The package's release is, in order: the one the log shows (an environment dump, pip list: facts/package_sites.py);
else the one the engine release pins (requires.json), said to be the pin and not observed; else the releases whose
lines hold the frame's line number; else every indexed release that holds the check.  Only a failure whose
innermost frame of engine or package code is the package's is looked up, and only a `raise` or `assert` that can
have raised the failure's type: a call on the line that failed says nothing of a condition.  The package's index
is opened only when a frame names it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from logsleuth.facts import requires
from logsleuth.facts.package_sites import PACKAGES, versions_shown
from logsleuth.facts.raise_sites import (
    ENGINE_PACKAGES,
    RaiseSite,
    engine_file,
    find,
    framed_sentence,
    release_span,
    where,
)
from logsleuth.models import ENGINE_NAMES, Failure, FailureGroup, LaunchInfo


@dataclass(frozen=True, slots=True)
class PackageSite:
    """Where a package the engine runs raised the failure, and which of its versions was looked up."""

    site: RaiseSite
    shown: str | None  # the package's version the log shows
    pinned: str | None  # "SGLang 0.5.9 pins transformers==4.57.1" when the pin gave the version looked up
    unplaced: bool = False  # no indexed release has the check at the frame's line: the line shown is the frame's
    moved_from: int | None = None  # the frame's line, when the version looked up has the check at another line


def package_site_of(failure: Failure, launch: LaunchInfo, lines: tuple[str, ...] | list[str] = ()) -> PackageSite | None:
    """The indexed check of a package the failure's last exception was raised in, or None."""
    final = failure.final
    if not final.type:
        return None  # no exception line: the innermost frame may be a call the error came through
    frame, package = next(((f, name) for f in reversed(final.frames) for name in (*ENGINE_PACKAGES, *PACKAGES)
                           if engine_file(f.file, name) is not None), (None, None))
    if frame is None or package not in PACKAGES:
        return None  # no package frame, or the engine's own code is nearer the raise (reasoning/raise_site.py)
    shown = versions_shown([*launch.package_lines, *failure.context, *lines], package)
    pinned = None
    version = shown[0] if len(shown) == 1 else None  # two versions shown: several environments, none chosen
    if version is None and not shown and launch.engine_version_source in ("log", "user"):
        pin = requires.pin(launch.engine or "", launch.engine_version, PACKAGES[package].distribution)
        if pin is not None and pin.specifier.startswith("==") and "," not in pin.specifier:
            version = pin.specifier.removeprefix("==")
            engine = ENGINE_NAMES.get(launch.engine or "", launch.engine)
            pinned = f"{engine} {launch.engine_version} pins {pin.requirement}"
    site = find(package, frame.file, frame.function, frame.line, frame.source, version, (final.type, final.message))
    if site is None or site.kind == "log":
        return None  # a logged error raises nothing: the failure came from elsewhere on that line
    unplaced = site.version is None and not site.framed and frame.line is not None
    if unplaced and frame.line is not None:  # the traceback's own line, not another release's: the check was found
        site = replace(site, line=frame.line)  # by its source line or its message
    moved = frame.line if site.version is not None and frame.line is not None and site.version not in site.framed else None
    return PackageSite(site, version if pinned is None else None, pinned, unplaced, moved)


def sentences(found: PackageSite) -> tuple[str, ...]:
    site = found.site
    name = PACKAGES[site.engine].shown
    out = [where(name, site)]
    indexed = f"{site.indexed[0]} to {site.indexed[-1]}"
    holds = f"of the {name} releases indexed ({indexed}) it is in {release_span(site)}"
    looked_up = found.shown or (found.pinned.rsplit("==", 1)[-1] if found.pinned else None)
    if looked_up is not None:
        has = ("which has this check" if site.version is not None
               else "which the index did not read" if looked_up not in site.indexed
               else "which does not hold this check as indexed")
        said = (f"The log shows {name} {found.shown}" if found.shown is not None
                else f"{found.pinned} (the pin, not a version the log shows)")
        out.append(f"{said}, {has}; {holds}.")
    else:
        out.append(f"Of the {name} releases indexed ({indexed}), this check is in {release_span(site)}.")
    if found.moved_from is not None:
        out.append(f"The traceback shows line {found.moved_from}, where {name} {site.version} does not have it: the "
                   f"{name} that ran is likely not {site.version}.")
    if found.unplaced:
        out.append(f"No {name} release indexed has this check at line {site.line}: the release that ran is not one "
                   "the index read.")
    elif site.version is None and site.framed and len(site.framed) < len(site.releases):
        out.append(framed_sentence(name, site))
    return tuple(out)


def with_package_site(group: FailureGroup, found: PackageSite | None) -> FailureGroup:
    """The group with the package's check that raised it, when the engine's own index placed none."""
    if group.diagnosis is None or found is None or group.diagnosis.raised_at:
        return group
    return replace(group, diagnosis=replace(group.diagnosis, raised_at=sentences(found)))
