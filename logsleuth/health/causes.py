"""A finding's likely causes, ranked against what the launch says about itself.

Each cause of a health pattern may carry conditions (`[[cause.when]]`): the engine version, flag values,
flags left out, a log line.  A cause whose condition the launch meets is likely and comes first; one with no
condition, or one the log cannot decide (no version printed, the flag not shown), stays possible in the
pattern's order; one every condition of which the launch contradicts is ruled out and dropped.  A finding
always keeps at least its last cause: "no cause fits" is not an answer a user can act on.
"""

from __future__ import annotations

from collections.abc import Collection

from logsleuth import versions
from logsleuth.command_line import flag_value
from logsleuth.health.library import CauseRule, Condition, HealthPattern
from logsleuth.health.model import Cause
from logsleuth.models import ENGINE_NAMES, LaunchInfo

Verdict = bool | None  # True: holds; False: the launch contradicts it; None: the log cannot tell


def _knows_flags(launch: LaunchInfo) -> bool:
    """Whether a flag missing from the launch means it was not set: a whole `server_args=` dump lists every
    field.  A command line alone also counts (the user's own, or the log's)."""
    return launch.server_args_complete or launch.command is not None


def _judge(condition: Condition, launch: LaunchInfo, seen: Collection[str], dropped: bool | None) -> Verdict:
    verdicts: list[Verdict] = []
    if condition.after_healthy_start is not None and dropped is not None:
        # `true`: a drop mid-run is evidence, no drop rules it out.  `false`: a drop rules it out, and a signal
        # there from the start is merely what the rest of the condition is about (no verdict of its own).
        if condition.after_healthy_start:
            verdicts.append(dropped)
        elif dropped:
            verdicts.append(False)
    if condition.versions:
        version = launch.engine_version
        verdicts.append(None if version is None else versions.matches(condition.versions, version))
    for flag, expected in condition.flags:
        value = flag_value(launch, flag)
        if value is None:
            verdicts.append(False if _knows_flags(launch) else None)
        else:
            verdicts.append(expected.search(value) is not None)
    for flag in condition.absent_flags:
        value = flag_value(launch, flag)
        verdicts.append(None if value is None and not _knows_flags(launch) else value is None)
    if condition.log_line is not None:
        verdicts.append(True if condition.log_line.pattern in seen else None)  # not seen: perhaps only not read
    if False in verdicts:
        return False
    return True if verdicts and all(verdict is True for verdict in verdicts) else None


def _verdict(rule: CauseRule, launch: LaunchInfo, seen: Collection[str], dropped: bool | None) -> Verdict:
    if not rule.when:
        return None
    verdicts = [_judge(condition, launch, seen, dropped) for condition in rule.when]
    if True in verdicts:
        return True
    return False if all(verdict is False for verdict in verdicts) else None


def _evidence(rule: CauseRule, launch: LaunchInfo, dropped: bool | None) -> str:
    parts = []
    for condition in rule.when:
        if condition.after_healthy_start and dropped:
            parts.append("it was healthy earlier in the same run")
        if condition.versions and launch.engine_version:
            parts.append(f"{ENGINE_NAMES.get(launch.engine or '', launch.engine or 'version')} {launch.engine_version}")
        for flag, _ in condition.flags:
            value = flag_value(launch, flag)
            if value is not None:
                parts.append(f"{flag} {value}".rstrip())
        parts.extend(f"no {flag}" for flag in condition.absent_flags if flag_value(launch, flag) is None)
    return ", ".join(dict.fromkeys(parts))


def rank_causes(
    pattern: HealthPattern, launch: LaunchInfo, seen: Collection[str], dropped: bool | None = None
) -> tuple[Cause, ...]:
    """The pattern's causes for this launch: likely ones first, then possible ones, ruled-out ones dropped
    (`seen`: the `log_line` regexes a line of the launch matched; `dropped`: the signal followed
    a healthy stretch of the run, None when that is not a question for this signal)."""
    likely: list[Cause] = []
    possible: list[Cause] = []
    for rule in pattern.causes:
        if rule.fixed_in and launch.engine_version and versions.matches((f">={rule.fixed_in}",), launch.engine_version):
            continue  # this release no longer has the cause
        verdict = _verdict(rule, launch, seen, dropped)
        if verdict is False:
            continue
        cause = Cause(rule.text, rule.fix, rule.id, _evidence(rule, launch, dropped) if verdict else "")
        (likely if verdict else possible).append(cause)
    ranked = tuple(likely + possible)
    if ranked:
        return ranked
    last = pattern.causes[-1]
    return (Cause(last.text, last.fix, last.id),)
