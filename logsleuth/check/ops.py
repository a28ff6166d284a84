"""The flag operations a model proposed (`--explain`), each checked against the log's engine version: ✓, ✗ or
not verified, with the reason.

✓ means what it means in `check`: the change, applied to the log's launch command, passes the version's known traps
and SGLang's own validation.  A flag that exists is worded as such and is not verified; a removal cannot be judged
without the launch command (except the known trap of removing only some speculative sizes, which is ✗).

A flag that exists is not enough either when its value holds shell syntax (`$(touch x)`, `a; rm`, a pipe, a
redirection): that is what an injected log or a confused model writes, never what an engine flag takes, so it is ✗
whatever the flag."""

from __future__ import annotations

from dataclasses import replace

from logsleuth.check.flags import read_flags
from logsleuth.check.model import CheckResult
from logsleuth.check.render import headline
from logsleuth.check.traps import SPECULATIVE_SIZES, partial_size_removal
from logsleuth.check.verify import ENGINE, catalog_for, check_changes
from logsleuth.errors import UsageError
from logsleuth.fixes.catalog import Catalog
from logsleuth.lazyre import compile_lazily
from logsleuth.models import FlagCheck, FlagOp, LaunchInfo

# Command substitution, command separators and redirections: shell syntax, harmless only once quoted.
_SHELL_SYNTAX = compile_lazily(r"\$\(|`|[;|&<>\n\r]")


def check_flag_ops(ops: tuple[FlagOp, ...], launch: LaunchInfo) -> tuple[FlagCheck, ...]:
    """One FlagCheck per operation, in order: first each on its own (the flag, its value), then, when all pass,
    the change as a whole: applied to the launch command when the log gives it, else the known traps only."""
    catalog, note = catalog_for(launch.engine_version)
    where = f" (checked against SGLang {catalog.version}: the log names no version)" if note else ""
    own = tuple(_check(op, catalog, where) for op in ops)
    if not all(check.ok for check in own):
        return own
    if launch.command is None:
        return _without_command(own, catalog)
    try:
        result = check_changes(ops, launch.command, launch.engine_version)
    except UsageError as error:  # a launch command the checks cannot read: the change stays unverified
        return tuple(replace(check, reason=f"{check.reason}; not verified: {error}") for check in own)
    return tuple(_as_a_whole(check, result) for check in own)


def _as_a_whole(check: FlagCheck, result: CheckResult) -> FlagCheck:
    if result.verified:
        return replace(check, verified=True, reason=f"with this change, the launch command passes SGLang "
                       f"{result.catalog_version}'s validation and the known traps")
    if not result.passed:
        return replace(check, ok=False, reason=f"with this change, the launch command still fails: {_failure(result)}")
    not_run = result.validation.message if result.validation is not None else "not validated"
    return replace(check, reason=f"{check.reason}; the changed launch command springs no known trap, {not_run}")


def _failure(result: CheckResult) -> str:
    """What fails in the changed command, in one clause: the trap's pattern, the validation's error, or the flags."""
    if result.traps:
        return "; ".join(f"{trap.title} ({trap.pattern})" for trap in result.traps)
    if result.validation is not None and result.validation.state == "rejected":
        return result.validation.message
    return headline(result).lstrip("✗ ")


def _without_command(own: tuple[FlagCheck, ...], catalog: Catalog) -> tuple[FlagCheck, ...]:
    removed = [check.op.flag for check in own if check.op.op == "remove"]
    added = [check.op.flag for check in own if check.op.op != "remove"]
    trap = partial_size_removal(removed, added, catalog)
    checked = []
    for check in own:
        info = catalog.find(check.op.flag)
        if check.op.op == "remove" and trap is not None and info is not None and info.name in SPECULATIVE_SIZES:
            checked.append(replace(check, ok=False, reason=trap))
        elif check.op.op == "remove":
            checked.append(replace(check, reason=f"{check.reason}: cannot be judged without the launch command"))
        else:
            checked.append(replace(check, reason=f"{check.reason}; not verified: the launch command is not known"))
    return tuple(checked)


def _check(op: FlagOp, catalog: Catalog, where: str) -> FlagCheck:
    syntax = _SHELL_SYNTAX.search(op.value or "")
    if op.value is not None and syntax and op.op != "remove":
        return FlagCheck(op, False, f"its value holds shell syntax ({syntax[0]!r}), which no {op.flag} value needs: "
                         "do not run it")
    if op.op == "remove":
        words = [op.flag]
        if catalog.find(op.flag) is not None:  # removing a switch or a valued flag: the name alone is enough
            return FlagCheck(op, True, f"{op.flag}: flag exists in SGLang {catalog.version}{where}")
    elif op.op == "rename":
        words = [op.to or op.flag]
    else:
        words = [op.flag, *([op.value] if op.value is not None else [])]
    verdicts, _ = read_flags(words, catalog, ENGINE)
    if not verdicts:
        return FlagCheck(op, False, "not a flag")
    first = verdicts[0]
    problems = [verdict for verdict in verdicts if not verdict.ok]
    verdict = problems[0] if problems else first
    return FlagCheck(op, verdict.ok, verdict.reason + where)
