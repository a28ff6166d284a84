"""An upgrade past a check the engine relaxed later (issue 29): when the failure's raise site is a check that a
later release no longer makes for the same launch (facts/relaxed_checks.toml, each row proven by a real run of
that release), the fix gains "or upgrade to that release", after the fix for the user's own release.

The upgrade comes second: the first fix is proven on the user's release, while an upgrade changes more than this
one check.  Nothing is offered when the user's release is already that release or newer (then this is not the
check that raised), nor for a check that only moved to another file, nor when the later release takes only some
launches (a row's `launch_has`, `launch_lacks`, `launch_same`) and the launch is not known to be one of them.
"""

from __future__ import annotations

from dataclasses import replace

from logsleuth import versions
from logsleuth.command_line import flag_value
from logsleuth.facts.raise_sites import RaiseSite
from logsleuth.facts.relaxed_checks import RelaxedCheck, relaxed_checks
from logsleuth.models import ENGINE_NAMES, FailureGroup, Fix, LaunchInfo


def relaxed_check_of(site: RaiseSite) -> RelaxedCheck | None:
    for row in relaxed_checks():
        if (row.engine == site.engine and row.file == site.file
                and (site.function == row.function or site.function.endswith(f".{row.function}"))
                and row.guard in (site.condition, *site.guards)
                and site.releases and site.releases[-1] == row.last):
            return row
    return None


def launch_is_taken(row: RelaxedCheck, launch: LaunchInfo) -> bool:
    """Whether the relaxing release takes this launch: always, for a row without launch conditions; else only a
    launch whose flags are known (its command, or a whole `server_args=` dump) and meet them."""
    if not row.launch_has and not row.launch_lacks and not row.launch_same:
        return True
    if launch.command is None and not launch.server_args_complete:
        return False  # the log does not say which launch failed: an upgrade could walk into the same check
    def given(spellings: tuple[str, ...]) -> str | None:
        return next((value for flag in spellings if (value := flag_value(launch, flag)) is not None), None)

    for flag, allowed in row.launch_has:
        value = flag_value(launch, flag)
        if value is None or (allowed and value.upper() not in {choice.upper() for choice in allowed}):
            return False
    if any(flag_value(launch, flag) is not None for flag in row.launch_lacks):
        return False
    values = {given(spellings) for spellings in row.launch_same}
    return not values or (len(values) == 1 and None not in values)


def upgrade_past(row: RelaxedCheck, version: str | None) -> Fix:
    name = ENGINE_NAMES.get(row.engine, row.engine)
    since = f"from {name} {row.relaxed_in} on, {row.change} ({row.source})"
    target = row.upgrade_release
    if version is None:
        summary = f"Or, if upgrading is an option, upgrade: this launch gets past that check {since}."
    else:
        summary = f"Or upgrade {name} from {version} to {target} or later: this launch gets past that check {since}."
    return Fix(summary=summary, steps=(f'pip install --upgrade "{row.engine}>={target}"',))


def with_relaxed_check(group: FailureGroup, site: RaiseSite | None, launch: LaunchInfo) -> FailureGroup:
    """The group with the upgrade past a relaxed check among its fix's alternatives (unchanged when none applies).
    `site`: the check that raised the failure (reasoning/raise_site.py's `site_of`)."""
    diagnosis = group.diagnosis
    if diagnosis is None or diagnosis.fix is None or not diagnosis.raised_at:
        return group
    row = relaxed_check_of(site) if site is not None else None
    if row is None or not launch_is_taken(row, launch):
        return group
    known = launch.named_version
    running, relaxed = versions.version_key(known) if known else None, versions.version_key(row.relaxed_in)
    if running is not None and relaxed is not None and running >= relaxed:
        return group
    fix = diagnosis.fix
    return replace(group, diagnosis=replace(diagnosis, fix=replace(fix, alternatives=(*fix.alternatives, upgrade_past(row, known)))))
