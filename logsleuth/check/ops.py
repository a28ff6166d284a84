"""The flag operations a model proposed (`--explain`), each checked against the catalog of the log's engine
version: ✓ or ✗ with the reason, as `check` marks the flags of a command (flags.read_flags)."""

from __future__ import annotations

from logsleuth.check.flags import read_flags
from logsleuth.check.verify import ENGINE, catalog_for
from logsleuth.fixes.catalog import Catalog
from logsleuth.models import FlagCheck, FlagOp, LaunchInfo


def check_flag_ops(ops: tuple[FlagOp, ...], launch: LaunchInfo) -> tuple[FlagCheck, ...]:
    """One FlagCheck per operation, in order.  An operation that adds or sets a flag is checked as that flag with
    its value; a removal only needs the flag to exist in the version; a rename checks the new name."""
    catalog, note = catalog_for(launch.engine_version)
    where = f" (checked against SGLang {catalog.version}: the log names no version)" if note else ""
    return tuple(_check(op, catalog, where) for op in ops)


def _check(op: FlagOp, catalog: Catalog, where: str) -> FlagCheck:
    if op.op == "remove":
        words = [op.flag]
        if catalog.find(op.flag) is not None:  # removing a switch or a valued flag: the name alone is enough
            return FlagCheck(op, True, f"{op.flag} is a flag of SGLang {catalog.version}{where}")
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
