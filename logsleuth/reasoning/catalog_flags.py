"""A rule's flag advice, checked against the release's catalog: which spelling of a flag the user's release has,
and the fix that sets it, printed as a corrected command only when the user's own launch command is known."""

from __future__ import annotations

from logsleuth.fixes import catalog as catalogs
from logsleuth.fixes.build import build_fix
from logsleuth.fixes.builders.parallel import flag_as_given
from logsleuth.fixes.context import FixContext
from logsleuth.models import ENGINE_NAMES, Failure, Fix, FlagOp, LaunchInfo


def release_flag(launch: LaunchInfo, *candidates: str) -> str | None:
    """The first of `candidates` the launch's engine release has (its catalog; the newest when the version is
    unknown), or None: no engine decided, or no such flag in that release."""
    if launch.engine is None:
        return None
    catalog = catalogs.load(launch.engine, launch.engine_version)
    if catalog is None:
        return None
    return next((flag for flag in candidates if catalog.find(flag) is not None), None)


def releases_with(engine: str, flag: str) -> str:
    """"SGLang 0.4.10.post2, 0.5.9": the shipped catalogs that have `flag`, for advice whose release is unknown."""
    name = ENGINE_NAMES.get(engine, engine)
    found = catalogs.versions_with(engine, flag)
    return f"{name} {', '.join(found)}" if found else f"no {name} release logsleuth knows"


def setting_fix(failure: Failure, launch: LaunchInfo, summary: str, sets: tuple[tuple[str, str], ...],
                steps: tuple[str, ...] = (), alternatives: tuple[Fix, ...] = ()) -> Fix | None:
    """A fix that sets flags (each spelled as the user's command spells it) through the fix machinery: the
    corrected command is the user's own launch with those flags changed, and no command without one."""

    def build(ctx: FixContext, _data: dict[str, object]) -> Fix:
        ops = tuple(FlagOp("set", flag_as_given(ctx, flag), value) for flag, value in sets)
        return Fix(summary=summary, flags=ops, steps=steps, alternatives=alternatives)

    return build_fix({"builder": "rule"}, failure, {}, launch, builders={"rule": build})
